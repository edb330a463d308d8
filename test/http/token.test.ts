import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

const TOKEN_KEYS = ['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'token_type', 'not-before-policy', 'session_state', 'scope'].sort();
// With the openid scope, OIDC adds the id token.
const OIDC_KEYS = [...TOKEN_KEYS, 'id_token'].sort();

for (const dialect of dialects()) {
  describe(`token endpoint (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    async function code(query: Record<string, string> = {}): Promise<string> {
      const r = await runAuthorization(ts, { query });
      assert.ok(r.code, 'no code');
      return r.code;
    }

    async function exchange(c: string, extra: Record<string, string> = {}, authorization = auth) {
      return tokenRequest(ts, { grant_type: 'authorization_code', code: c, redirect_uri: ts.client.redirectUri, ...extra }, { authorization });
    }

    async function tokens(): Promise<{ access_token: string; refresh_token: string; refresh_expires_in: number; scope: string }> {
      const res = await exchange(await code());
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    const refresh = (rt: string, extra: Record<string, string> = {}, authorization = auth) =>
      tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt, ...extra }, { authorization });

    function assertError(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }, status: number, error: string): void {
      assert.equal(res.statusCode, status);
      const body = res.json() as { error: string; error_description?: string };
      assert.equal(body.error, error);
      assert.match(body.error_description ?? '', /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['pragma'], 'no-cache');
    }

    test('the code exchange returns the Keycloak-shaped token response with no-store headers', async () => {
      const res = await exchange(await code());
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['pragma'], 'no-cache');
      assert.match(res.headers['content-type'] as string, /application\/json/);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), OIDC_KEYS);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 259200);
      assert.equal(body.refresh_expires_in, 15552000);
      assert.equal(body['not-before-policy'], 0);
      assert.equal(body.scope, 'openid core_data offline_access');
      // A compact JWS (refresh-jwt.test.ts checks its header, claims and signature).
      assert.match(body.refresh_token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{86}$/);
    });

    test('without the openid scope the response has exactly the specification fields', async () => {
      const res = await exchange(await code({ scope: 'core_data exports offline_access' }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(Object.keys(res.json()).sort(), TOKEN_KEYS);
    });

    test('the access token is an RS256 JWT that verifies with the JWKS and carries the claims', async () => {
      const { access_token, scope } = await tokens();
      const jwks = (await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/certs') })).json();
      const { payload, protectedHeader } = await jwtVerify(access_token, createLocalJWKSet(jwks), {
        issuer: `${ts.config.authUrl}/auth/realms/${REALM}`,
        audience: 'account',
        currentDate: new Date(ts.clock.nowMs()),
      });
      assert.equal(protectedHeader.alg, 'RS256');
      assert.equal(payload.sub, ts.user.id);
      assert.equal(payload.azp, ts.client.id);
      assert.equal(payload.scope, scope);
      assert.deepEqual(payload.organization, ['acme']);
      assert.equal(typeof payload.sid, 'string');
      assert.equal(typeof payload.jti, 'string');
      assert.equal(payload.exp! - payload.iat!, 259200);
    });

    test('a code works once; a second use fails and revokes the tokens of the first (RFC 6749 4.1.2)', async () => {
      const c = await code();
      const first = await exchange(c);
      assert.equal(first.statusCode, 200);
      assertError(await exchange(c), 400, 'invalid_grant');
      assertError(await refresh(first.json().refresh_token), 400, 'invalid_grant');
    });

    test('a code expires after the realm code lifetime (45 s)', async () => {
      const early = await code();
      ts.clock.advance(44);
      assert.equal((await exchange(early)).statusCode, 200);
      const late = await code();
      ts.clock.advance(46);
      assertError(await exchange(late), 400, 'invalid_grant');
    });

    test('redirect_uri must equal the one of the authorization request', async () => {
      assertError(await exchange(await code(), { redirect_uri: 'http://127.0.0.1:9999/cb' }), 400, 'invalid_grant');
      assertError(await tokenRequest(ts, { grant_type: 'authorization_code', code: await code() }, { authorization: auth }), 400, 'invalid_request');
    });

    test("another client cannot redeem the code", async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'other-app', redirectUris: [ts.client.redirectUri], secret: 'other-secret' });
      assertError(await exchange(await code(), {}, basic('other-app', 'other-secret')), 400, 'invalid_grant');
    });

    test('PKCE: the right verifier works; wrong, missing or downgraded verifiers fail', async () => {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
      const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
      assert.equal((await exchange(await code(pkce), { code_verifier: verifier })).statusCode, 200);
      assertError(await exchange(await code(pkce), { code_verifier: crypto.randomBytes(32).toString('base64url') }), 400, 'invalid_grant');
      assertError(await exchange(await code(pkce)), 400, 'invalid_grant');
      // RFC 9700 4.8.2: a verifier for a code issued without a challenge.
      assertError(await exchange(await code(), { code_verifier: verifier }), 400, 'invalid_grant');
    });

    test('client authentication failures are 401 invalid_client with WWW-Authenticate: Basic', async () => {
      const c = await code();
      for (const authorization of [null, basic(ts.client.id, 'wrong'), basic('nobody', 'x'), 'Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64'), 'Bearer x']) {
        const form = { grant_type: 'authorization_code', code: c, redirect_uri: ts.client.redirectUri };
        const res = await tokenRequest(ts, form, authorization === null ? {} : { authorization });
        assertError(res, 401, 'invalid_client');
        assert.match(res.headers['www-authenticate'] as string, /^Basic/);
      }
      // The failures did not consume the code.
      assert.equal((await exchange(c)).statusCode, 200);
    });

    test('credentials are form-urlencoded before base64 (RFC 6749 2.3.1)', async () => {
      const secret = 'a:b+c d%e/ü';
      await createClient(ts.store, { realmId: REALM, clientId: 'odd:client id', redirectUris: [ts.client.redirectUri], secret });
      const r = await runAuthorization(ts, { query: { client_id: 'odd:client id' } });
      const res = await exchange(r.code!, {}, basic('odd:client id', secret));
      assert.equal(res.statusCode, 200, res.body);
    });

    test('a client created the usual way accepts client_secret_post too; two methods at once is invalid_request', async () => {
      assertError(await exchange(await code(), { client_secret: ts.client.secret }), 400, 'invalid_request');
      const c = await code();
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: c, redirect_uri: ts.client.redirectUri, client_id: ts.client.id, client_secret: ts.client.secret });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('client_secret_post, for a client registered with it (OIDC Core 9)', async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'post-app', redirectUris: [ts.client.redirectUri], secret: 'post-secret', authMethod: 'client_secret_post' });
      const r = await runAuthorization(ts, { query: { client_id: 'post-app' } });
      const form = { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri };
      assertError(await tokenRequest(ts, form, { authorization: basic('post-app', 'post-secret') }), 401, 'invalid_client');
      assertError(await tokenRequest(ts, { ...form, client_id: 'post-app', client_secret: 'wrong' }), 401, 'invalid_client');
      const ok = await tokenRequest(ts, { ...form, client_id: 'post-app', client_secret: 'post-secret' });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    test('repeated bad client secrets are rate-limited per client (RFC 6819 5.2.3.7)', async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'guessed', redirectUris: [ts.client.redirectUri], secret: 'the-real-secret' });
      const form = { grant_type: 'refresh_token', refresh_token: 'x' };
      const attempt = (secret: string, ip = '127.0.0.1') =>
        ts.app.inject({
          method: 'POST',
          url: realmPath('/protocol/openid-connect/token'),
          remoteAddress: ip,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('guessed', secret) },
          payload: new URLSearchParams(form).toString(),
        });
      for (let i = 0; i < 10; i++) assert.equal((await attempt(`guess-${i}`)).statusCode, 401);
      const blocked = await attempt('the-real-secret');
      assert.equal(blocked.statusCode, 401);
      assert.equal(blocked.json().error, 'invalid_client');
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      // From another address the client still works (the right secret reaches the grant).
      assert.equal((await attempt('the-real-secret', '10.1.1.1')).json().error, 'invalid_grant');
      ts.clock.advance(61);
      assert.equal((await attempt('the-real-secret')).json().error, 'invalid_grant');
    });

    test('grant_type: missing is invalid_request, unknown is unsupported_grant_type', async () => {
      assertError(await tokenRequest(ts, { code: 'x' }, { authorization: auth }), 400, 'invalid_request');
      assertError(await tokenRequest(ts, { grant_type: 'implicit', username: 'a', password: 'b' }, { authorization: auth }), 400, 'unsupported_grant_type');
      // The password grant exists, but this client may not use it.
      assertError(await tokenRequest(ts, { grant_type: 'password', username: 'a', password: 'b' }, { authorization: auth }), 400, 'unauthorized_client');
    });

    test('duplicated parameters, GET and JSON bodies are refused with RFC 6749 errors', async () => {
      const dup = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
      });
      assertError(dup, 400, 'invalid_request');
      const get = await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/token?grant_type=refresh_token') });
      assertError(get, 405, 'invalid_request');
      const json = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/json', authorization: auth },
        payload: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x' }),
      });
      assertError(json, 400, 'invalid_request');
      const broken = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/json' }, payload: '{' });
      assertError(broken, 400, 'invalid_request');
    });

    test('an unknown realm answers 404 with an RFC 6749 body', async () => {
      const res = await ts.app.inject({ method: 'POST', url: '/auth/realms/nope/protocol/openid-connect/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=refresh_token' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error, 'invalid_request');
    });

    test('every refresh returns a new refresh token; the old one is dead', async () => {
      let t = await tokens();
      const seen = new Set([t.refresh_token]);
      for (let i = 0; i < 3; i++) {
        ts.clock.advance(60);
        const res = await refresh(t.refresh_token);
        assert.equal(res.statusCode, 200, res.body);
        const next = res.json();
        assert.deepEqual(Object.keys(next).sort(), OIDC_KEYS);
        assert.ok(!seen.has(next.refresh_token));
        assert.notEqual(next.access_token, t.access_token);
        seen.add(next.refresh_token);
        t = next;
      }
    });

    test('a used refresh token revokes the whole chain (RFC 9700 4.14.2)', async () => {
      const t = await tokens();
      const next = (await refresh(t.refresh_token)).json();
      assertError(await refresh(t.refresh_token), 400, 'invalid_grant');
      assertError(await refresh(next.refresh_token), 400, 'invalid_grant');
    });

    test("another client's refresh token fails and stays valid for its owner", async () => {
      const t = await tokens();
      assertError(await refresh(t.refresh_token, {}, basic('other-app', 'other-secret')), 400, 'invalid_grant');
      assert.equal((await refresh(t.refresh_token)).statusCode, 200);
    });

    test('scope may be narrowed, never widened', async () => {
      const t = await tokens();
      const narrow = await refresh(t.refresh_token, { scope: 'core_data' });
      assert.equal(narrow.statusCode, 200, narrow.body);
      assert.equal(narrow.json().scope, 'core_data');
      // The chain keeps its original grant.
      const back = await refresh(narrow.json().refresh_token);
      assert.equal(back.json().scope, 'openid core_data offline_access');
      assertError(await refresh(back.json().refresh_token, { scope: 'core_data exports' }), 400, 'invalid_scope');
    });

    test('a refresh token expires after the idle lifetime', async () => {
      const t = await tokens();
      ts.clock.advance(15552000);
      assertError(await refresh(t.refresh_token), 400, 'invalid_grant');
    });

    test('refresh_expires_in never passes the chain maximum, and the chain ends there', async () => {
      await ts.store.realms.update(REALM, { refreshMaxLifetime: 20_000_000 });
      try {
        let t = await tokens();
        assert.equal(t.refresh_expires_in, 15552000);
        ts.clock.advance(15_000_000);
        let res = await refresh(t.refresh_token);
        assert.equal(res.statusCode, 200, res.body);
        t = res.json();
        assert.equal(t.refresh_expires_in, 5_000_000);
        ts.clock.advance(5_000_000);
        res = await refresh(t.refresh_token);
        assertError(res, 400, 'invalid_grant');
      } finally {
        await ts.store.realms.update(REALM, { refreshMaxLifetime: 730 * 86400 });
      }
    });

    test('refresh chains are kept alive for the 6-24 months of the specification', async () => {
      let t = await tokens();
      let day = 0;
      for (const next of [150, 300, 450, 600, 720]) {
        ts.clock.advance((next - day) * 86400);
        day = next;
        const res = await refresh(t.refresh_token);
        assert.equal(res.statusCode, 200, `day ${day}: ${res.body}`);
        t = res.json();
      }
      // Day 731: past the 730-day chain maximum.
      ts.clock.advance(11 * 86400);
      assertError(await refresh(t.refresh_token), 400, 'invalid_grant');
    });

    test("a realm's not-before time rejects older chains and is reported as not-before-policy", async () => {
      const t = await tokens();
      const nbf = Math.floor(ts.clock.nowMs() / 1000) + 1;
      ts.clock.advance(2);
      await ts.store.realms.update(REALM, { notBefore: nbf });
      try {
        assertError(await refresh(t.refresh_token), 400, 'invalid_grant');
        const fresh = await tokens();
        const res = await refresh(fresh.refresh_token);
        assert.equal(res.json()['not-before-policy'], nbf);
      } finally {
        await ts.store.realms.update(REALM, { notBefore: 0 });
      }
    });

    test('a disabled user can no longer refresh', async () => {
      const t = await tokens();
      await ts.store.users.update(ts.user.id, { enabled: false });
      try {
        assertError(await refresh(t.refresh_token), 400, 'invalid_grant');
      } finally {
        await ts.store.users.update(ts.user.id, { enabled: true });
      }
    });

    test('refresh tokens and client secrets are stored only as hashes', async () => {
      const t = await tokens();
      const hashes = await ts.store.db.kysely.selectFrom('refresh_tokens').select('hash').execute();
      assert.ok(hashes.every((h) => h.hash !== t.refresh_token));
      const expected = crypto.createHash('sha256').update(t.refresh_token).digest('base64url');
      assert.ok(hashes.some((h) => h.hash === expected));
      const clients = await ts.store.db.kysely.selectFrom('clients').select('secret_hash').execute();
      assert.ok(clients.every((c) => c.secret_hash === null || !c.secret_hash.includes(ts.client.secret)));
    });

    test('a public client authenticates with client_id and PKCE', async () => {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
      const r = await runAuthorization(ts, {
        query: { client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri, code_challenge: challenge, code_challenge_method: 'S256' },
      });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.publicClient.redirectUri, client_id: ts.publicClient.id, code_verifier: verifier });
      assert.equal(res.statusCode, 200, res.body);
      const again = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: res.json().refresh_token, client_id: ts.publicClient.id });
      assert.equal(again.statusCode, 200);
      // A confidential client cannot skip authentication by naming itself.
      assertError(await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x', client_id: ts.client.id }), 401, 'invalid_client');
    });
  });
}
