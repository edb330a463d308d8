import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { Harness, TOKEN, assertTokenError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 5.2 error response (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
      await createClient(ts.store, { realmId: REALM, clientId: 'post-app', redirectUris: [ts.client.redirectUri], secret: 'post-secret', authMethod: 'client_secret_post' });
    });
    after(() => ts.close());

    test('RFC 6749 5.2: invalid_request (400) for a missing, repeated or malformed parameter', async () => {
      assertTokenError(await h.token({ refresh_token: 'x' }, { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.tokenRaw('grant_type=refresh_token&grant_type=refresh_token', { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.token({ grant_type: 'refresh_token' }, { authorization: h.auth }), 400, 'invalid_request');
    });

    test('RFC 6749 5.2: invalid_client is 401 with WWW-Authenticate matching the Basic scheme the client used', async () => {
      for (const authorization of [basic(ts.client.id, 'wrong'), basic('nobody', 'x'), 'Basic !!!']) {
        const res = await h.token({ grant_type: 'refresh_token', refresh_token: 'x' }, { authorization });
        assertTokenError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic realm="[^"]*"$/);
      }
      // Without the Authorization header 401 is allowed too; it still names the scheme to use.
      const res = await h.token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'post-app', client_secret: 'wrong' });
      assertTokenError(res, 401, 'invalid_client');
      assert.match(String(res.headers['www-authenticate']), /^Basic /);
      h.forgetClientFailures();
    });

    test('RFC 6749 5.2: invalid_grant (400) for an invalid, expired, revoked or foreign grant', async () => {
      assertTokenError(await h.exchange('not-a-code'), 400, 'invalid_grant');
      assertTokenError(await h.refresh('not-a-refresh-token'), 400, 'invalid_grant');
      const t = await h.tokens();
      // An access token is not a refresh token, nor a code.
      assertTokenError(await h.refresh(t.access_token), 400, 'invalid_grant');
      assertTokenError(await h.exchange(t.refresh_token), 400, 'invalid_grant');
    });

    test('RFC 6749 5.2: unsupported_grant_type (400) for grants this server does not serve', async () => {
      for (const grant_type of ['implicit', 'AUTHORIZATION_CODE', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
        assertTokenError(await h.token({ grant_type, username: 'alice', password: ts.user.password }, { authorization: h.auth }), 400, 'unsupported_grant_type');
      }
      // Served, but only for clients the operator enabled them for: unauthorized_client (RFC 6749 5.2).
      for (const grant_type of ['password', 'client_credentials']) {
        assertTokenError(await h.token({ grant_type, username: 'alice', password: ts.user.password }, { authorization: h.auth }), 400, 'unauthorized_client');
      }
    });

    test('RFC 6749 5.2: invalid_scope (400) for a scope beyond the grant or malformed', async () => {
      const t = await h.tokens({ scope: 'core_data offline_access' });
      assertTokenError(await h.refresh(t.refresh_token, { scope: 'core_data exports' }), 400, 'invalid_scope');
      assertTokenError(await h.refresh(t.refresh_token, { scope: 'core_data "quoted"' }), 400, 'invalid_scope');
    });

    test('RFC 6749 5.2: error_description never leaves %x20-21 / %x23-5B / %x5D-7E, even when it quotes the request', async () => {
      // assertTokenError checks the character set; these inputs try to smuggle others into the description.
      for (const grant_type of ['pass"word', 'back\\slash', 'naïve', 'line\nbreak', 'tab\there', '😀']) {
        assertTokenError(await h.token({ grant_type }, { authorization: h.auth }), 400, 'unsupported_grant_type');
      }
      // NUL is refused before any parameter is read: malformed, so invalid_request.
      assertTokenError(await h.token({ grant_type: '\u0000nul' }, { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.token({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(9000) }, { authorization: h.auth }), 400, 'invalid_request');
    });

    test('RFC 6749 5.2: every error is JSON with Cache-Control: no-store and Pragma: no-cache, whatever its status', async () => {
      assertTokenError(await ts.app.inject({ method: 'GET', url: TOKEN }), 405, 'invalid_request');
      assertTokenError(await ts.app.inject({ method: 'POST', url: TOKEN, headers: { 'content-type': 'text/plain' }, payload: 'x' }), 400, 'invalid_request');
      assertTokenError(await ts.app.inject({ method: 'POST', url: TOKEN, headers: { 'content-type': 'application/json' }, payload: '{' }), 400, 'invalid_request');
      assertTokenError(await h.tokenRaw('grant_type=refresh_token&x=' + 'a'.repeat(70 * 1024)), 413, 'invalid_request');
      const unknownRealm = await h.tokenRaw('grant_type=refresh_token&refresh_token=x', {}, '/auth/realms/nope/protocol/openid-connect/token');
      assertTokenError(unknownRealm, 404, 'invalid_request');
    });

    test('RFC 6749 5.2: the body is one JSON object whose error is a single RFC code', async () => {
      const res = await h.token({ grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: h.auth });
      const body = res.json();
      assert.equal(typeof body, 'object');
      assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
      assert.match(body.error, /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
    });
  });
}
