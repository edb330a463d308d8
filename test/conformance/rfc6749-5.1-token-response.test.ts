import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { Harness, assertNoStoreJson } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 5.1 successful token response (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    function assertTokenResponse(res: LightMyRequestResponse, scope: string): void {
      assert.equal(res.statusCode, 200, res.body);
      assertNoStoreJson(res);
      const body = res.json();
      assert.equal(typeof body.access_token, 'string');
      assert.ok(body.access_token.length > 0);
      // token_type is case-insensitive; Bearer (RFC 6750) is what the clients of this server expect.
      assert.equal(body.token_type.toLowerCase(), 'bearer');
      assert.ok(Number.isInteger(body.expires_in) && body.expires_in > 0);
      assert.equal(typeof body.refresh_token, 'string');
      assert.equal(body.scope, scope);
      // Parameters are top-level members of one JSON object; none is repeated (JSON.parse keeps the last).
      for (const name of ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope']) {
        assert.equal(res.body.split(`"${name}":`).length, 2, name);
      }
    }

    test('RFC 6749 5.1 / 4.1.4: the code exchange answers JSON with access_token, token_type, expires_in, refresh_token, scope', async () => {
      assertTokenResponse(await h.exchange(await h.code({ scope: 'core_data offline_access' })), 'core_data offline_access');
    });

    test('RFC 6749 5.1 / 6: the refresh answers the same way', async () => {
      const t = await h.tokens({ scope: 'core_data exports offline_access' });
      assertTokenResponse(await h.refresh(t.refresh_token), 'core_data exports offline_access');
      const narrowed = await h.refresh((await h.tokens({ scope: 'core_data exports offline_access' })).refresh_token, { scope: 'exports' });
      assertTokenResponse(narrowed, 'exports');
    });

    test('RFC 6749 5.1: Cache-Control: no-store and Pragma: no-cache on every response carrying tokens', async () => {
      const t = await h.tokens();
      for (const res of [await h.refresh(t.refresh_token), await h.exchange(await h.code())]) {
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['pragma'], 'no-cache');
      }
    });

    test('RFC 6749 5.1 / 3.3: when the issued scope differs from the one granted, scope says which it is', async () => {
      const t = await h.tokens({ scope: 'core_data exports offline_access' });
      // The operator takes exports away from the client: the next access token is narrower, and says so.
      const client = (await ts.store.clients.get(REALM, ts.client.id))!;
      await ts.store.clients.update(REALM, ts.client.id, { scopes: client.scopes.filter((s) => s !== 'exports') });
      try {
        const res = await h.refresh(t.refresh_token);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().scope, 'core_data offline_access');
      } finally {
        await ts.store.clients.update(REALM, ts.client.id, { scopes: client.scopes });
      }
    });
  });
}
