import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { createClient, updateClient } from '../../src/admin/operations.js';

// What a client sends must not stay in memory per value: floods of unique values, through the real
// HTTP path, against the size of the structure that would keep them.

for (const dialect of dialects()) {
  describe(`memory held for a flood of unique values (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const token = (headers: Record<string, string>, form: Record<string, string>) =>
      ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams(form).toString(),
      });

    test('client ids that name no client (8 KB each) add no key to the client-secret limiters', async () => {
      const { perAddress, perClient } = ts.services.clientFailures;
      const sizes = [perAddress.size, perClient.size];
      for (let i = 0; i < 100; i++) {
        const id = `${i}-${'x'.repeat(8000)}`;
        const post = await token({}, { grant_type: 'client_credentials', client_id: id, client_secret: 'guess' });
        assert.equal(post.statusCode, 401, post.body);
        const header = await token({ authorization: basic(id, 'guess') }, { grant_type: 'client_credentials' });
        assert.equal(header.statusCode, 401, header.body);
      }
      // One key each for all of them (they are still counted, together), not one per id.
      assert.ok(perAddress.size <= sizes[0]! + 1, `per address: ${sizes[0]} keys before, ${perAddress.size} after`);
      assert.ok(perClient.size <= sizes[1]! + 1, `per client: ${sizes[1]} keys before, ${perClient.size} after`);
      // A client id that may name a client is still counted on its own.
      const kept = perClient.size;
      await token({}, { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: 'guess' });
      assert.equal(perClient.size, kept + 1);
    });

    test('preflights naming 1,500 made-up realms do not push a real realm out of the cached origins', async () => {
      // Caching on, unlike the other tests: what is cached is the point.
      const cached = await startTestServer({ dialect, config: { cacheTtlMs: 60_000 } });
      try {
        await createClient(cached.store, { realmId: REALM, clientId: 'spa', redirectUris: ['https://spa.example/cb'], public: true, webOrigins: ['https://spa.example'] });
        const preflight = async (realm: string, origin: string) =>
          (
            await cached.app.inject({
              method: 'OPTIONS',
              url: `/auth/realms/${realm}/protocol/openid-connect/token`,
              headers: { origin, 'access-control-request-method': 'POST' },
            })
          ).headers['access-control-allow-origin'];
        assert.equal(await preflight(REALM, 'https://spa.example'), 'https://spa.example');
        // The realm's origins are cached now: an origin added meanwhile is not seen until they expire.
        await updateClient(cached.store, { realmId: REALM, clientId: 'spa', webOrigins: { add: ['https://new.example'] } });
        assert.equal(await preflight(REALM, 'https://new.example'), undefined);
        // More made-up realms than the cache holds (1,000): nothing is kept for them...
        for (let i = 0; i < 1500; i++) assert.equal(await preflight(`made-up-${i}`, 'https://spa.example'), undefined);
        // ...so the real realm's entry is still the one answering (read again, it would allow the new origin).
        assert.equal(await preflight(REALM, 'https://new.example'), undefined);
        assert.equal(await preflight(REALM, 'https://spa.example'), 'https://spa.example');
      } finally {
        await cached.close();
      }
    });
  });
}
