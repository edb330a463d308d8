import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';

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
  });
}
