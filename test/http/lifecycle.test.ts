import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

const OIDC = '/protocol/openid-connect';

for (const dialect of dialects()) {
  describe(`userinfo, introspection and revocation (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    const other = basic('rs-other', 'other-secret');
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
      await createClient(ts.store, { realmId: REALM, clientId: 'rs-other', redirectUris: ['https://o.example/cb'], secret: 'other-secret' });
    });
    after(() => ts.close());

    async function tokens(scope = 'openid profile email core_data offline_access'): Promise<{ access_token: string; refresh_token: string }> {
      const r = await runAuthorization(ts, { query: { scope } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    const form = (path: string, body: Record<string, string>, authorization?: string) =>
      ts.app.inject({
        method: 'POST',
        url: realmPath(path),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        payload: new URLSearchParams(body).toString(),
      });
    const introspect = (token: string, authorization = auth, hint?: string) => form(`${OIDC}/token/introspect`, { token, ...(hint ? { token_type_hint: hint } : {}) }, authorization);
    const revoke = (token: string, authorization = auth) => form(`${OIDC}/revoke`, { token }, authorization);
    const userinfo = (token?: string) => ts.app.inject({ method: 'GET', url: realmPath(`${OIDC}/userinfo`), headers: token ? { authorization: `Bearer ${token}` } : {} });

    test('UserInfo returns the claims the scopes release (OIDC Core 5.3)', async () => {
      const t = await tokens();
      const res = await userinfo(t.access_token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { sub: ts.user.id, preferred_username: 'alice', email: 'alice@example.com', email_verified: false, organization: ['acme'] });
      assert.equal(res.headers['cache-control'], 'no-store');
      const post = await form(`${OIDC}/userinfo`, { access_token: t.access_token });
      assert.equal(post.statusCode, 200);
      // openid alone releases the claims of the default scopes profile and email (as Keycloak does).
      const narrow = await tokens('openid core_data');
      assert.deepEqual(Object.keys((await userinfo(narrow.access_token)).json()).sort(), ['email', 'email_verified', 'organization', 'preferred_username', 'sub']);
    });

    test('UserInfo errors follow RFC 6750 3.1', async () => {
      const none = await userinfo();
      assert.equal(none.statusCode, 401);
      assert.equal(none.headers['www-authenticate'], `Bearer realm="${REALM}"`);
      const bad = await userinfo('not.a.token');
      assert.equal(bad.statusCode, 401);
      assert.match(bad.headers['www-authenticate'] as string, /^Bearer realm="test", error="invalid_token"/);
      const noOpenid = await tokens('core_data offline_access');
      const scoped = await userinfo(noOpenid.access_token);
      assert.equal(scoped.statusCode, 403);
      assert.match(scoped.headers['www-authenticate'] as string, /error="insufficient_scope"/);
      const t = await tokens();
      const both = await ts.app.inject({
        method: 'POST',
        url: realmPath(`${OIDC}/userinfo`),
        headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `access_token=${t.access_token}`,
      });
      assert.equal(both.statusCode, 400);
      ts.clock.advance(259_201);
      assert.equal((await userinfo(t.access_token)).statusCode, 401, 'expired');
    });

    test('introspection describes active tokens to the realm\'s confidential clients (RFC 7662 2.2)', async () => {
      const t = await tokens();
      const a = (await introspect(t.access_token)).json();
      assert.equal(a.active, true);
      assert.equal(a.client_id, ts.client.id);
      assert.equal(a.sub, ts.user.id);
      assert.equal(a.username, 'alice');
      assert.equal(a.token_type, 'Bearer');
      assert.equal(a.scope, 'openid profile email core_data offline_access');
      assert.equal(typeof a.exp, 'number');
      const r = (await introspect(t.refresh_token, auth, 'refresh_token')).json();
      assert.equal(r.active, true);
      assert.equal(r.token_type, 'refresh_token');
      // Any confidential client of the realm (a resource server) may introspect an access token, and
      // learns which client it was issued to; refresh tokens are described to their own client only.
      const seen = (await introspect(t.access_token, other)).json();
      assert.equal(seen.active, true);
      assert.equal(seen.client_id, ts.client.id);
      assert.equal(seen.azp, ts.client.id);
      assert.equal(seen.typ, 'Bearer');
      // Unknown, used tokens and other clients' refresh tokens say nothing but active: false.
      assert.deepEqual((await introspect('garbage')).json(), { active: false });
      assert.deepEqual((await introspect(t.refresh_token, other)).json(), { active: false });
      const next = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth });
      assert.equal(next.statusCode, 200);
      assert.deepEqual((await introspect(t.refresh_token)).json(), { active: false });
    });

    test("a disabled user's tokens are inactive", async () => {
      const t = await tokens();
      await ts.store.users.update(ts.user.id, { enabled: false });
      try {
        assert.deepEqual((await introspect(t.access_token)).json(), { active: false });
        assert.deepEqual((await introspect(t.refresh_token)).json(), { active: false });
      } finally {
        await ts.store.users.update(ts.user.id, { enabled: true });
      }
    });

    test('introspection needs a confidential client', async () => {
      const t = await tokens();
      assert.equal((await form(`${OIDC}/token/introspect`, { token: t.access_token })).statusCode, 401);
      const pub = await form(`${OIDC}/token/introspect`, { token: t.access_token, client_id: ts.publicClient.id });
      assert.equal(pub.statusCode, 401);
      assert.equal(pub.json().error, 'invalid_client');
    });

    test('revoking a refresh token ends its chain and the access tokens from it (RFC 7009)', async () => {
      const t = await tokens();
      const res = await revoke(t.refresh_token);
      assert.equal(res.statusCode, 200);
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth })).json().error, 'invalid_grant');
      assert.deepEqual((await introspect(t.access_token)).json(), { active: false });
      assert.equal((await userinfo(t.access_token)).statusCode, 401);
    });

    test('revoking an access token rejects it; its refresh token keeps working', async () => {
      const t = await tokens();
      assert.equal((await revoke(t.access_token)).statusCode, 200);
      assert.deepEqual((await introspect(t.access_token)).json(), { active: false });
      assert.equal((await userinfo(t.access_token)).statusCode, 401);
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth })).statusCode, 200);
    });

    test("unknown tokens and other clients' tokens answer 200 and change nothing", async () => {
      const t = await tokens();
      assert.equal((await revoke('unknown-token')).statusCode, 200);
      assert.equal((await revoke(t.refresh_token, other)).statusCode, 200);
      assert.equal((await revoke(t.access_token, other)).statusCode, 200);
      assert.equal((await introspect(t.access_token)).json().active, true);
      assert.equal((await introspect(t.refresh_token)).json().active, true);
      assert.equal((await revoke(t.refresh_token, basic(ts.client.id, 'wrong'))).statusCode, 401);
    });

    test("the realm's not-before time makes older access tokens inactive", async () => {
      const t = await tokens();
      ts.clock.advance(5);
      await ts.store.realms.update(REALM, { notBefore: Math.floor(ts.clock.nowMs() / 1000) });
      try {
        assert.deepEqual((await introspect(t.access_token)).json(), { active: false });
        assert.equal((await userinfo(t.access_token)).statusCode, 401);
      } finally {
        await ts.store.realms.update(REALM, { notBefore: 0 });
      }
    });

    test('discovery lists the endpoints', async () => {
      const d = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json();
      const base = `${ts.config.authUrl}/auth/realms/${REALM}${OIDC}`;
      assert.equal(d.userinfo_endpoint, `${base}/userinfo`);
      assert.equal(d.introspection_endpoint, `${base}/token/introspect`);
      assert.equal(d.revocation_endpoint, `${base}/revoke`);
    });
  });
}
