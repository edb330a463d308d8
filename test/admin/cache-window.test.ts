import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, type AdminTestServer } from './helpers.js';

// With a long cache time (REALMGATE_CACHE_TTL_MS), a change made through this server's admin API still
// applies to the very next login: the API clears the server's own cache. (Other processes see it within
// the cache time; that is the documented bound.)
for (const dialect of dialects()) {
  describe(`admin API changes within the cache window (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect, config: { cacheTtlMs: 3_600_000 } });
    });
    after(() => ts.close());

    test('whitelisting a redirect URI, disabling a client and rotating its secret apply at once', async () => {
      const extra = 'https://app.example.com/second';
      // Warm the caches first.
      assert.ok((await runAuthorization(ts)).code);
      await assert.rejects(runAuthorization(ts, { query: { redirect_uri: extra } }));
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { redirectUris: [ts.client.redirectUri, extra] });
      const r = await runAuthorization(ts, { query: { redirect_uri: extra } });
      assert.ok(r.code);
      const { value } = await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'web-app' });
      const old = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: extra }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(old.statusCode, 401);
      const r2 = await runAuthorization(ts);
      const fresh = await tokenRequest(ts, { grant_type: 'authorization_code', code: r2.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, value!) });
      assert.equal(fresh.statusCode, 200);
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { enabled: false });
      await assert.rejects(runAuthorization(ts));
    });
  });
}
