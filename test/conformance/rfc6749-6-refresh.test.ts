import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { Harness, assertTokenError } from './helpers.js';

const FULL = 'openid core_data exports offline_access';

for (const dialect of dialects()) {
  describe(`RFC 6749 6 refreshing an access token (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
      await createClient(ts.store, { realmId: REALM, clientId: 'other-app', redirectUris: [ts.client.redirectUri], secret: 'other-secret' });
      await createClient(ts.store, { realmId: REALM, clientId: 'native-2', redirectUris: [ts.publicClient.redirectUri], public: true });
    });
    after(() => ts.close());

    const scopeOf = (res: { statusCode: number; body: string; json(): any }): string => {
      assert.equal(res.statusCode, 200, res.body);
      return res.json().scope;
    };

    test('RFC 6749 6: grant_type and refresh_token are required', async () => {
      const t = await h.tokens();
      assertTokenError(await h.token({ grant_type: 'refresh_token' }, { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.token({ refresh_token: t.refresh_token }, { authorization: h.auth }), 400, 'invalid_request');
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 6: a confidential client must authenticate to refresh', async () => {
      const t = await h.tokens();
      assertTokenError(await h.refresh(t.refresh_token, {}, null), 401, 'invalid_client');
      assertTokenError(await h.refresh(t.refresh_token, { client_id: ts.client.id }, null), 401, 'invalid_client');
      assertTokenError(await h.refresh(t.refresh_token, {}, basic(ts.client.id, 'wrong')), 401, 'invalid_client');
      h.forgetClientFailures();
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 6: the refresh token must have been issued to the authenticated client; a foreign client leaves it intact', async () => {
      const t = await h.tokens();
      assertTokenError(await h.refresh(t.refresh_token, {}, basic('other-app', 'other-secret')), 400, 'invalid_grant');
      assertTokenError(await h.token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: ts.publicClient.id }), 400, 'invalid_grant');
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
      // A public client's token is bound to its client_id the same way.
      const pub = await h.publicTokens();
      assertTokenError(await h.token({ grant_type: 'refresh_token', refresh_token: pub.refresh_token, client_id: 'native-2' }), 400, 'invalid_grant');
      assertTokenError(await h.refresh(pub.refresh_token), 400, 'invalid_grant');
      assert.equal((await h.publicRefresh(pub.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 6: an omitted scope means the scope originally granted', async () => {
      const t = await h.tokens({ scope: FULL });
      assert.equal(scopeOf(await h.refresh(t.refresh_token)), FULL);
    });

    test('RFC 6749 6: a narrower scope may be requested; the new refresh token keeps the original scope', async () => {
      const t = await h.tokens({ scope: FULL });
      const narrow = await h.refresh(t.refresh_token, { scope: 'exports' });
      assert.equal(scopeOf(narrow), 'exports');
      // "If a new refresh token is issued, the refresh token scope MUST be identical to that of the refresh token included".
      const next = await h.refresh(narrow.json().refresh_token);
      assert.equal(scopeOf(next), FULL);
      // Order does not matter (RFC 6749 3.3).
      assert.equal(scopeOf(await h.refresh(next.json().refresh_token, { scope: 'exports core_data' })), 'exports core_data');
    });

    test('RFC 6749 6: a scope not originally granted is invalid_scope, and the refresh token survives the attempt', async () => {
      const t = await h.tokens({ scope: 'core_data offline_access' });
      for (const scope of ['core_data exports', 'profile', 'admin', 'CORE_DATA']) {
        assertTokenError(await h.refresh(t.refresh_token, { scope }), 400, 'invalid_scope');
      }
      assert.equal(scopeOf(await h.refresh(t.refresh_token)), 'core_data offline_access');
    });

    test('RFC 6749 6: the refresh token is validated: an unknown or revoked one is invalid_grant', async () => {
      assertTokenError(await h.refresh('x'.repeat(43)), 400, 'invalid_grant');
      const t = await h.tokens();
      const revoke = await ts.app.inject({
        method: 'POST',
        url: `/auth/realms/${REALM}/protocol/openid-connect/revoke`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: h.auth },
        payload: new URLSearchParams({ token: t.refresh_token }).toString(),
      });
      assert.equal(revoke.statusCode, 200);
      assertTokenError(await h.refresh(t.refresh_token), 400, 'invalid_grant');
    });
  });
}
