import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, createUser, rotateKeys, updateClient } from '../../src/admin/operations.js';

// Issue 8 item 3: the claims users and libraries expect, and a per-client ID token algorithm.
for (const dialect of dialects()) {
  describe(`claims and ID token algorithms (${dialect})`, () => {
    let ts: TestServer;
    let issuer: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      issuer = `${ts.config.authUrl}/auth/realms/${REALM}`;
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: PASSWORD, email: 'bob@example.com', firstName: 'Bob', lastName: 'Ó Briain', emailVerified: true, orgAliases: ['acme'] });
      await createUser(ts.store, { realmId: REALM, username: 'carol', password: PASSWORD, orgAliases: ['acme'] });
    });
    after(() => ts.close());

    const jwks = async (): Promise<{ keys: JWK[] }> => (await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/certs` })).json();
    const discovery = async (): Promise<Record<string, string[]>> => (await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/.well-known/openid-configuration` })).json();

    async function tokens(opts: { username?: string; scope?: string; clientId?: string; secret?: string } = {}): Promise<{ access_token: string; id_token?: string; scope: string }> {
      const clientId = opts.clientId ?? ts.client.id;
      const r = await runAuthorization(ts, { username: opts.username ?? 'bob', query: { client_id: clientId, scope: opts.scope ?? 'openid' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(clientId, opts.secret ?? ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    async function verify(token: string): Promise<Record<string, unknown>> {
      return (await jwtVerify(token, createLocalJWKSet(await jwks()), { issuer, currentDate: new Date(ts.clock.nowMs()) })).payload;
    }

    test('scope=openid alone gives preferred_username, name, given_name, family_name, email and email_verified', async () => {
      const t = await tokens();
      // The granted scope is what was asked for; the default scopes' claims come with it (as in Keycloak).
      assert.equal(t.scope, 'openid');
      const expected = { preferred_username: 'bob', name: 'Bob Ó Briain', given_name: 'Bob', family_name: 'Ó Briain', email: 'bob@example.com', email_verified: true };
      for (const token of [t.id_token!, t.access_token]) {
        const claims = await verify(token);
        for (const [k, v] of Object.entries(expected)) assert.deepEqual(claims[k], v, `${k} in ${String(claims.typ)} token`);
      }
      const info = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/userinfo`, headers: { authorization: `Bearer ${t.access_token}` } });
      assert.equal(info.statusCode, 200, info.body);
      assert.deepEqual({ ...(info.json() as Record<string, unknown>), sub: undefined, organization: undefined }, { ...expected, sub: undefined, organization: undefined });
    });

    test('claims appear only where known; without openid, only the scopes asked for release claims', async () => {
      const carol = await verify((await tokens({ username: 'carol' })).id_token!);
      assert.equal(carol.preferred_username, 'carol');
      for (const k of ['name', 'given_name', 'family_name', 'email', 'email_verified']) assert.equal(carol[k], undefined, k);
      const plain = decodeJwt((await tokens({ scope: 'core_data' })).access_token);
      assert.equal(plain.preferred_username, undefined);
      assert.equal(plain.email, undefined);
    });

    test('a client without the profile and email scopes gets none of their claims', async () => {
      const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'narrow-app', redirectUris: [ts.client.redirectUri], scopes: 'openid core_data' });
      const claims = await verify((await tokens({ clientId: 'narrow-app', secret: secret! })).id_token!);
      assert.equal(claims.preferred_username, undefined);
      assert.equal(claims.email, undefined);
    });

    test('the consent page names the default scopes that openid implies', async () => {
      const jar = new CookieJar();
      const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'consent-app', redirectUris: [ts.client.redirectUri] });
      void secret;
      const q = new URLSearchParams({ client_id: 'consent-app', redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's' });
      let res = await inject(ts.app, jar, 'GET', `/auth/realms/${REALM}/protocol/openid-connect/auth?${q}`);
      const login = await inject(ts.app, jar, 'GET', res.headers.location as string);
      const csrf = /name="csrf" value="([^"]*)"/.exec(login.body)![1]!;
      const action = /<form method="post" action="([^"]*)"/.exec(login.body)![1]!.replace(/&amp;/g, '&');
      res = await inject(ts.app, jar, 'POST', action, { csrf, username: 'bob', password: PASSWORD });
      const consent = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.match(consent.body, /<span class="scope">profile<\/span>/);
      assert.match(consent.body, /<span class="scope">email<\/span>/);
    });

    test('ID tokens are RS256 by default, even when the realm signs access tokens with ES256; a client may choose ES256 or EdDSA', async () => {
      assert.deepEqual((await discovery()).id_token_signing_alg_values_supported, ['RS256']);
      const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'es-app', redirectUris: [ts.client.redirectUri], idTokenAlg: 'ES256' });
      // The key of the chosen algorithm is published as soon as the client chose it.
      assert.ok((await jwks()).keys.some((k) => k.alg === 'ES256'));
      assert.deepEqual((await discovery()).id_token_signing_alg_values_supported, ['RS256', 'ES256']);
      const es = await tokens({ clientId: 'es-app', secret: secret! });
      assert.equal(decodeProtectedHeader(es.id_token!).alg, 'ES256');
      assert.equal(decodeProtectedHeader(es.access_token).alg, 'RS256');
      await verify(es.id_token!);
      await updateClient(ts.store, { realmId: REALM, clientId: 'es-app', idTokenAlg: 'EdDSA' });
      const ed = await tokens({ clientId: 'es-app', secret: secret! });
      assert.equal(decodeProtectedHeader(ed.id_token!).alg, 'EdDSA');
      await verify(ed.id_token!);
      assert.deepEqual((await discovery()).id_token_signing_alg_values_supported, ['RS256', 'EdDSA']);

      // The realm moves its access tokens to ES256: the default client's ID tokens stay RS256.
      await rotateKeys(ts.store, { realmId: REALM, alg: 'ES256' });
      const after = await tokens();
      assert.equal(decodeProtectedHeader(after.access_token).alg, 'ES256');
      assert.equal(decodeProtectedHeader(after.id_token!).alg, 'RS256');
      const claims = await verify(after.id_token!);
      assert.equal(claims.aud, ts.client.id);
    });
  });
}
