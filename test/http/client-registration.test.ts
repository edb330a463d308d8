import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createRealm } from '../../src/admin/operations.js';
import { createInitialAccess } from '../../src/admin/operations/initial-access.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { tokenHash } from '../../src/crypto/random.js';
import { registrationCallers } from '../helpers/client-registration.js';

// RFC 7591 dynamic client registration and RFC 7592 management at Keycloak's paths, over the server's real
// HTTP handling and a real database.
const REGISTER = realmPath('/clients-registrations/openid-connect');
const verifier = 'v'.repeat(50);
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
const REDIRECT = 'https://rp.example.org/cb';

type Json = Record<string, unknown>;

for (const dialect of dialects()) {
  describe(`dynamic client registration (${dialect})`, () => {
    let ts: TestServer;
    let adminToken: string;
    let userToken: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      ({ adminToken, userToken } = await registrationCallers(ts));
    });
    after(() => ts.close());

    const initialToken = async (o: { count?: number; expiration?: number; realmId?: string } = {}): Promise<string> =>
      (await createInitialAccess(ts.store, { realmId: o.realmId ?? REALM, ...(o.count !== undefined ? { count: o.count } : {}), ...(o.expiration !== undefined ? { expiration: o.expiration } : {}) })).token;
    const post = (body: unknown, token: string | null, o: { contentType?: string; raw?: string; url?: string } = {}): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method: 'POST',
        url: o.url ?? REGISTER,
        headers: { 'content-type': o.contentType ?? 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
        payload: o.raw ?? JSON.stringify(body),
      });
    const manage = (method: 'GET' | 'PUT' | 'DELETE', uri: string, token: string | null, body?: unknown): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method,
        url: new URL(uri).pathname,
        headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    async function registered(body: Json = { redirect_uris: [REDIRECT] }, token?: string): Promise<Json> {
      const res = await post(body, token ?? (await initialToken()));
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as Json;
    }
    function assertError(res: LightMyRequestResponse, status: number, error: string, description?: RegExp): void {
      assert.equal(res.statusCode, status, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(body.error, error);
      assert.equal(typeof body.error_description, 'string');
      if (description) assert.match(body.error_description, description);
      if (status === 401 || status === 403) assert.match(String(res.headers['www-authenticate']), new RegExp(`^Bearer .*error="${error}"`));
    }

    test('201 with the assigned client_id, a secret, the metadata with defaults, a registration access token stored only as its hash', async () => {
      const res = await post({ redirect_uris: [REDIRECT], client_name: 'Relying Party' }, await initialToken());
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.match(body.client_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.match(body.client_secret, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(body.client_secret_expires_at, 0);
      assert.equal(typeof body.client_id_issued_at, 'number');
      assert.equal(body.client_name, 'Relying Party');
      assert.deepEqual(body.redirect_uris, [REDIRECT]);
      assert.equal(body.token_endpoint_auth_method, 'client_secret_basic');
      assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token']);
      assert.deepEqual(body.response_types, ['code']);
      assert.ok(body.scope.split(' ').includes('openid'));
      assert.equal(body.id_token_signed_response_alg, 'RS256');
      assert.equal(body.registration_client_uri, `${ts.config.authUrl}${REGISTER}/${body.client_id}`);
      assert.match(body.registration_access_token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(await ts.store.clientRegistration.registrationTokenHash(REALM, body.client_id), tokenHash(body.registration_access_token));
      const client = await ts.store.clients.get(REALM, body.client_id);
      assert.ok(client);
      assert.equal(client.fullScopeAllowed, false, 'an initial access token registers with full scope disabled');
      assert.deepEqual(client.authMethods, ['client_secret_basic']);
    });

    test('the registered client completes an authorization code flow and refreshes', async () => {
      const reg = await registered({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' });
      const id = reg.client_id as string;
      const r = await runAuthorization(ts, { query: { client_id: id, redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' } });
      assert.ok(r.code);
      const secret = reg.client_secret as string;
      // client_secret_post was registered: Basic is not this client's method.
      const viaBasic = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: basic(id, secret) });
      assert.equal(viaBasic.statusCode, 401, viaBasic.body);
      const r2 = await runAuthorization(ts, { query: { client_id: id, redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }, jar: r.jar });
      const tokens = await tokenRequest(ts, { grant_type: 'authorization_code', code: r2.code!, redirect_uri: REDIRECT, code_verifier: verifier, client_id: id, client_secret: secret });
      assert.equal(tokens.statusCode, 200, tokens.body);
      assert.ok(tokens.json().id_token);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: tokens.json().refresh_token, client_id: id, client_secret: secret });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.ok(refreshed.json().access_token);
    });

    test('a public client (none) gets no secret and signs in with PKCE', async () => {
      const reg = await registered({ redirect_uris: ['http://127.0.0.1/native-cb'], token_endpoint_auth_method: 'none' });
      assert.equal(reg.client_secret, undefined);
      assert.equal(reg.client_secret_expires_at, undefined);
      assert.equal(reg.token_endpoint_auth_method, 'none');
      const client = await ts.store.clients.get(REALM, reg.client_id as string);
      assert.equal(client?.public, true);
      assert.equal(client?.secretHash, null);
      const r = await runAuthorization(ts, { query: { client_id: reg.client_id as string, redirect_uri: 'http://127.0.0.1/native-cb', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' } });
      const tokens = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: 'http://127.0.0.1/native-cb', code_verifier: verifier, client_id: reg.client_id as string });
      assert.equal(tokens.statusCode, 200, tokens.body);
    });

    test('client_credentials registers a service account; password turns on the password grant', async () => {
      const reg = await registered({ grant_types: ['client_credentials', 'password'], response_types: [] });
      assert.deepEqual(reg.grant_types, ['password', 'refresh_token', 'client_credentials']);
      assert.deepEqual(reg.response_types, []);
      const cc = await tokenRequest(ts, { grant_type: 'client_credentials' }, { authorization: basic(reg.client_id as string, reg.client_secret as string) });
      assert.equal(cc.statusCode, 200, cc.body);
      const pw = await tokenRequest(ts, { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'openid' }, { authorization: basic(reg.client_id as string, reg.client_secret as string) });
      assert.equal(pw.statusCode, 200, pw.body);
    });

    test('metadata mapped to client settings; unknown metadata ignored', async () => {
      const reg = await registered({
        redirect_uris: [REDIRECT],
        scope: 'profile email',
        post_logout_redirect_uris: ['https://rp.example.org/bye'],
        id_token_signed_response_alg: 'ES256',
        backchannel_logout_uri: 'https://rp.example.org/bc',
        backchannel_logout_session_required: false,
        frontchannel_logout_uri: 'https://rp.example.org/fc',
        dpop_bound_access_tokens: true,
        require_pushed_authorization_requests: true,
        request_object_signing_alg: 'PS256',
        logo_uri: 'https://rp.example.org/logo.png',
        software_statement: 'whatever',
        'client_name#ja-Jpan-JP': 'クライアント名',
        tos_uri: 42,
      });
      assert.equal(reg.scope, 'openid profile email');
      assert.deepEqual(reg.post_logout_redirect_uris, ['https://rp.example.org/bye']);
      assert.equal(reg.id_token_signed_response_alg, 'ES256');
      assert.equal(reg.backchannel_logout_uri, 'https://rp.example.org/bc');
      assert.equal(reg.backchannel_logout_session_required, false);
      assert.equal(reg.frontchannel_logout_uri, 'https://rp.example.org/fc');
      assert.equal(reg.dpop_bound_access_tokens, true);
      assert.equal(reg.require_pushed_authorization_requests, true);
      assert.equal(reg.request_object_signing_alg, 'PS256');
      for (const k of ['logo_uri', 'software_statement', 'tos_uri', 'client_name#ja-Jpan-JP']) assert.equal(reg[k], undefined, k);
      const c = (await ts.store.clients.get(REALM, reg.client_id as string))!;
      assert.deepEqual(c.scopes, ['openid', 'profile', 'email']);
      assert.equal(c.idTokenAlg, 'ES256');
      assert.equal(c.backchannelLogout.url, 'https://rp.example.org/bc');
      assert.equal(c.frontchannelLogout.enabled, true);
      assert.equal(c.dpopBoundAccessTokens, true);
      assert.equal(c.requirePushedAuthorizationRequests, true);
      assert.equal(c.requestObjectSignatureAlg, 'PS256');
    });

    test('private_key_jwt with jwks or jwks_uri', async () => {
      const { publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'ES256' };
      const inline = await registered({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } });
      assert.equal(inline.client_secret, undefined);
      assert.deepEqual(inline.jwks, { keys: [jwk] });
      const c = (await ts.store.clients.get(REALM, inline.client_id as string))!;
      assert.deepEqual(c.authMethods, ['private_key_jwt']);
      assert.equal(c.jwtKeys?.useJwksString, true);
      const byUrl = await registered({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://rp.example.org/jwks.json' });
      assert.equal(byUrl.jwks_uri, 'https://rp.example.org/jwks.json');
      assert.equal(byUrl.jwks, undefined);
    });

    test('each bad metadata is 400 with its RFC 7591 3.2.2 code; the initial access token is not used up by it', async () => {
      const token = await initialToken({ count: 1 });
      const cases: Array<[unknown, string, RegExp?]> = [
        [{}, 'invalid_redirect_uri', /redirect_uris/],
        [{ redirect_uris: 'https://rp.example.org/cb' }, 'invalid_redirect_uri', /array of strings/],
        [{ redirect_uris: [42] }, 'invalid_redirect_uri'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['http://rp.example.org/cb'] }, 'invalid_redirect_uri', /http/],
        [{ redirect_uris: ['https://rp.example.org/cb#frag'] }, 'invalid_redirect_uri', /fragment/],
        [{ redirect_uris: ['/relative'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: [REDIRECT], post_logout_redirect_uris: ['javascript:alert(1)'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_jwt' }, 'invalid_client_metadata', /token_endpoint_auth_method/],
        [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 7 }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], grant_types: ['implicit'] }, 'invalid_client_metadata', /implicit/],
        [{ redirect_uris: [REDIRECT], grant_types: 'authorization_code' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], grant_types: [] }, 'invalid_client_metadata'],
        [{ grant_types: ['refresh_token'] }, 'invalid_client_metadata', /refresh_token/],
        [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], response_types: ['code id_token'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'], response_types: ['code'] }, 'invalid_client_metadata', /RFC 7591 2.1/],
        [{ redirect_uris: [REDIRECT], response_types: [] }, 'invalid_client_metadata', /RFC 7591 2.1/],
        [{ grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], scope: 'openid not_a_scope' }, 'invalid_client_metadata', /not_a_scope/],
        [{ redirect_uris: [REDIRECT], scope: ['openid'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], client_name: { en: 'x' } }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], client_name: 'x'.repeat(300) }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], id_token_signed_response_alg: 'HS256' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], backchannel_logout_uri: 'not a url' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], frontchannel_logout_uri: 'https://rp.example.org/fc#x' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], dpop_bound_access_tokens: 'yes' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], require_pushed_authorization_requests: 1 }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], request_object_signing_alg: 'HS256' }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /jwks/],
        [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks: [] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], jwks_uri: 'https://rp.example.org/j', jwks: { keys: [] } }, 'invalid_client_metadata', /not both/],
        [{ redirect_uris: [REDIRECT], jwks_uri: 'ftp://rp.example.org/j' }, 'invalid_client_metadata'],
        [[{ redirect_uris: [REDIRECT] }], 'invalid_client_metadata', /JSON object/],
        ['just a string', 'invalid_client_metadata'],
        [null, 'invalid_client_metadata'],
      ];
      for (const [body, error, description] of cases) {
        const res = await post(body, token);
        assertError(res, 400, error, description);
        assert.doesNotMatch(res.body, /stack|at .*\.ts/);
      }
      // Not JSON at all, a form, an over-large document, NUL: still RFC-shaped, never a 500.
      assertError(await post(undefined, token, { raw: '{"redirect_uris": [' }), 400, 'invalid_client_metadata');
      assertError(await post(undefined, token, { raw: `redirect_uris=${REDIRECT}`, contentType: 'application/x-www-form-urlencoded' }), 400, 'invalid_client_metadata', /application\/json/);
      assertError(await post(undefined, token, { raw: 'x', contentType: 'text/plain' }), 400, 'invalid_client_metadata');
      assertError(await post({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(70 * 1024) }, token), 413, 'invalid_request');
      assertError(await post({ redirect_uris: [REDIRECT], client_name: 'a\u0000b' }, token), 400, 'invalid_client_metadata');
      assertError(await post({ redirect_uris: [REDIRECT], __proto__: { x: 1 } }, token, { raw: `{"redirect_uris":["${REDIRECT}"],"__proto__":{"x":1}}` }), 400, 'invalid_client_metadata');
      // Every refusal above gave its registration back: the count-1 token still registers once.
      assert.equal((await post({ redirect_uris: [REDIRECT] }, token)).statusCode, 201);
      assertError(await post({ redirect_uris: [REDIRECT] }, token), 401, 'invalid_token');
    });

    test('a count-1 token registers once; the second use is 401 invalid_token with a Bearer challenge', async () => {
      const token = await initialToken({ count: 1 });
      assert.equal((await post({ redirect_uris: [REDIRECT] }, token)).statusCode, 201);
      const again = await post({ redirect_uris: [REDIRECT] }, token);
      assertError(again, 401, 'invalid_token');
      assert.match(String(again.headers['www-authenticate']), /^Bearer realm="test", error="invalid_token"/);
    });

    test('N parallel registrations with a count-n token (n < N): exactly n are 201, the others 401', async () => {
      const n = 3;
      const token = await initialToken({ count: n });
      const results = await Promise.all(Array.from({ length: 10 }, () => post({ redirect_uris: [REDIRECT] }, token)));
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 201, 201, 401, 401, 401, 401, 401, 401, 401]);
      const ids = new Set(results.filter((r) => r.statusCode === 201).map((r) => r.json().client_id));
      assert.equal(ids.size, n);
    });

    test('expired, unknown, missing, malformed and other-realm initial access tokens are 401', async () => {
      const { access, token } = await createInitialAccess(ts.store, { realmId: REALM, expiration: 60, count: 5 });
      // The server's clock (manual) moved to the expiry, then one second before it.
      const step = access.expiresAt - Math.floor(ts.clock.nowMs() / 1000);
      ts.clock.advance(step);
      try {
        assertError(await post({ redirect_uris: [REDIRECT] }, token), 401, 'invalid_token');
      } finally {
        ts.clock.advance(-step);
      }
      ts.clock.advance(step - 1);
      try {
        assert.equal((await post({ redirect_uris: [REDIRECT] }, token)).statusCode, 201);
      } finally {
        ts.clock.advance(-(step - 1));
      }
      assertError(await post({ redirect_uris: [REDIRECT] }, 'x'.repeat(43)), 401, 'invalid_token');
      assertError(await post({ redirect_uris: [REDIRECT] }, null), 401, 'invalid_token');
      assertError(await post({ redirect_uris: [REDIRECT] }, 'a b c'), 401, 'invalid_token');
      await createRealm(ts.store, { id: 'other' }).catch(() => undefined);
      const otherToken = await initialToken({ realmId: 'other' });
      assertError(await post({ redirect_uris: [REDIRECT] }, otherToken), 401, 'invalid_token');
      // Its registration is still there for its own realm.
      assert.equal((await post({ redirect_uris: [REDIRECT] }, otherToken, { url: '/auth/realms/other/clients-registrations/openid-connect' })).statusCode, 201);
      // No such realm: 404, not a 500.
      assertError(await post({ redirect_uris: [REDIRECT] }, otherToken, { url: '/auth/realms/nope/clients-registrations/openid-connect' }), 404, 'invalid_request');
    });

    test("a manage-clients administrator's bearer registers with default settings; a plain user's token is 403 insufficient_scope", async () => {
      const reg = await registered({ redirect_uris: [REDIRECT] }, adminToken);
      const c = await ts.store.clients.get(REALM, reg.client_id as string);
      assert.equal(c?.fullScopeAllowed, true);
      assert.ok(reg.registration_access_token);
      // The admin event names the administrator who registered it.
      const [created] = await ts.store.adminEvents.list(REALM, { operation: 'CREATE', resourcePath: `clients/${String(reg.client_id)}` });
      assert.equal(created?.authUsername, 'carol');
      assertError(await post({ redirect_uris: [REDIRECT] }, userToken), 403, 'insufficient_scope');
      // A token of this server's other realm is not one of this realm's.
      assertError(await post({ redirect_uris: [REDIRECT] }, `${adminToken.slice(0, -4)}AAAA`), 401, 'invalid_token');
    });

    test("a token of another realm is 401 there, even a master administrator's (the token's realm must be the path's)", async () => {
      await bootstrapAdmin(ts.store, { username: 'root', password: PASSWORD });
      const res = await ts.app.inject({
        method: 'POST',
        url: '/auth/realms/master/protocol/openid-connect/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'root', password: PASSWORD }).toString(),
      });
      assert.equal(res.statusCode, 200, res.body);
      const master = res.json().access_token as string;
      assertError(await post({ redirect_uris: [REDIRECT] }, master), 401, 'invalid_token', /realm test/);
      assert.equal((await post({ redirect_uris: [REDIRECT] }, master, { url: '/auth/realms/master/clients-registrations/openid-connect' })).statusCode, 201);
    });

    test('RFC 7592: GET reads and rotates the registration access token; the old one is refused', async () => {
      const reg = await registered({ redirect_uris: [REDIRECT], client_name: 'Reader' });
      const uri = reg.registration_client_uri as string;
      const first = await manage('GET', uri, reg.registration_access_token as string);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['cache-control'], 'no-store');
      const body = first.json();
      assert.equal(body.client_id, reg.client_id);
      assert.equal(body.client_name, 'Reader');
      assert.equal(body.client_secret, undefined, 'the secret is stored only as a hash');
      assert.equal(body.client_secret_expires_at, 0);
      assert.equal(body.registration_client_uri, uri);
      assert.notEqual(body.registration_access_token, reg.registration_access_token);
      assertError(await manage('GET', uri, reg.registration_access_token as string), 401, 'invalid_token');
      // HEAD would rotate the token and lose the new one: not served, and the token still works.
      const head = await ts.app.inject({ method: 'HEAD', url: new URL(uri).pathname, headers: { authorization: `Bearer ${String(body.registration_access_token)}` } });
      assert.notEqual(head.statusCode, 200);
      assert.equal((await manage('GET', uri, body.registration_access_token)).statusCode, 200);
    });

    test('RFC 7592: two parallel GETs with the same token: exactly one 200', async () => {
      const reg = await registered();
      const results = await Promise.all(Array.from({ length: 4 }, () => manage('GET', reg.registration_client_uri as string, reg.registration_access_token as string)));
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401, 401, 401]);
    });

    test('RFC 7592: PUT replaces the metadata (client_id must match, client_secret if present too), rotates the token', async () => {
      const reg = await registered({ redirect_uris: [REDIRECT], client_name: 'Before', post_logout_redirect_uris: ['https://rp.example.org/bye'] });
      const uri = reg.registration_client_uri as string;
      let token = reg.registration_access_token as string;
      // client_id missing or another, a wrong secret: 400, and the token is still the client's.
      assertError(await manage('PUT', uri, token, { redirect_uris: [REDIRECT] }), 400, 'invalid_client_metadata', /client_id/);
      assertError(await manage('PUT', uri, token, { client_id: 'someone-else', redirect_uris: [REDIRECT] }), 400, 'invalid_client_metadata', /client_id/);
      assertError(await manage('PUT', uri, token, { client_id: reg.client_id, client_secret: 'wrong', redirect_uris: [REDIRECT] }), 400, 'invalid_client_metadata', /client_secret/);
      assertError(await manage('PUT', uri, token, { client_id: reg.client_id, redirect_uris: ['http://bad.example/cb'] }), 400, 'invalid_redirect_uri');
      const res = await manage('PUT', uri, token, {
        ...reg,
        client_name: 'After',
        redirect_uris: ['https://rp.example.org/new-cb'],
        post_logout_redirect_uris: undefined,
        grant_types: ['authorization_code', 'client_credentials'],
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.client_name, 'After');
      assert.deepEqual(body.redirect_uris, ['https://rp.example.org/new-cb']);
      assert.deepEqual(body.post_logout_redirect_uris, [], 'an omitted field is removed (RFC 7592 2.2)');
      assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token', 'client_credentials']);
      assert.equal(body.client_secret, undefined);
      assertError(await manage('GET', uri, token), 401, 'invalid_token');
      token = body.registration_access_token;
      const c = (await ts.store.clients.get(REALM, reg.client_id as string))!;
      assert.equal(c.serviceAccountsEnabled, true);
      assert.equal(c.fullScopeAllowed, false, 'an update leaves fullScopeAllowed as it was');
      // To a public client and back: the secret goes, then a new one is issued (shown once).
      const pub = await manage('PUT', uri, token, { client_id: reg.client_id, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
      assert.equal(pub.statusCode, 200, pub.body);
      assert.equal(pub.json().token_endpoint_auth_method, 'none');
      assert.equal((await ts.store.clients.get(REALM, reg.client_id as string))?.secretHash, null);
      const conf = await manage('PUT', uri, pub.json().registration_access_token, { client_id: reg.client_id, redirect_uris: [REDIRECT] });
      assert.equal(conf.statusCode, 200, conf.body);
      assert.match(conf.json().client_secret, /^[A-Za-z0-9_-]{43}$/);
      // The matching secret is accepted.
      const same = await manage('PUT', uri, conf.json().registration_access_token, { client_id: reg.client_id, client_secret: conf.json().client_secret, redirect_uris: [REDIRECT] });
      assert.equal(same.statusCode, 200, same.body);
    });

    test("RFC 7592: DELETE is 204 and deletes the client; a client's token reads no other client; unknown clients look the same", async () => {
      const a = await registered();
      const b = await registered();
      assertError(await manage('GET', b.registration_client_uri as string, a.registration_access_token as string), 401, 'invalid_token');
      assertError(await manage('DELETE', b.registration_client_uri as string, a.registration_access_token as string), 401, 'invalid_token');
      assertError(await manage('PUT', b.registration_client_uri as string, a.registration_access_token as string, { client_id: b.client_id, redirect_uris: [REDIRECT] }), 401, 'invalid_token');
      assertError(await manage('GET', `${ts.config.authUrl}${REGISTER}/no-such-client`, a.registration_access_token as string), 401, 'invalid_token');
      assertError(await manage('GET', b.registration_client_uri as string, null), 401, 'invalid_token');
      // An admin-made client has no registration access token: nothing opens it.
      assertError(await manage('GET', `${ts.config.authUrl}${REGISTER}/web-app`, a.registration_access_token as string), 401, 'invalid_token');
      const del = await manage('DELETE', a.registration_client_uri as string, a.registration_access_token as string);
      assert.equal(del.statusCode, 204, del.body);
      assert.equal(await ts.store.clients.get(REALM, a.client_id as string), undefined);
      assertError(await manage('GET', a.registration_client_uri as string, a.registration_access_token as string), 401, 'invalid_token');
      // b is untouched.
      assert.equal((await manage('GET', b.registration_client_uri as string, b.registration_access_token as string)).statusCode, 200);
    });

    test('property: any JSON for any metadata field is 201 or an RFC 7591 400, never a 500', async () => {
      const token = await initialToken({ count: 1_000 });
      const fields = ['redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'response_types', 'client_name', 'scope', 'post_logout_redirect_uris', 'id_token_signed_response_alg', 'backchannel_logout_uri', 'frontchannel_logout_uri', 'dpop_bound_access_tokens', 'require_pushed_authorization_requests', 'request_object_signing_alg', 'jwks_uri', 'jwks', 'token_endpoint_auth_signing_alg', 'backchannel_logout_session_required'];
      const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('none', 'private_key_jwt', 'client_credentials', 'ES256', 'https://rp.example.org/x', ['code'], ['password'], ['refresh_token'], { keys: [{ kty: 'EC' }] }));
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 5 }), fc.boolean(), async (extra, withRedirect) => {
          const res = await post({ ...(withRedirect ? { redirect_uris: [REDIRECT] } : {}), ...extra }, token);
          if (res.statusCode === 201) return;
          assert.equal(res.statusCode, 400, res.body);
          assert.ok(['invalid_client_metadata', 'invalid_redirect_uri'].includes(res.json().error), res.body);
        }),
        { numRuns: 150 },
      );
    });

    test('other methods are 405 with Allow; discovery advertises registration_endpoint', async () => {
      const get = await ts.app.inject({ method: 'GET', url: REGISTER });
      assertError(get, 405, 'invalid_request');
      assert.equal(get.headers.allow, 'POST');
      for (const path of [realmPath('/.well-known/openid-configuration'), `/.well-known/oauth-authorization-server/auth/realms/${REALM}`]) {
        const doc = (await ts.app.inject({ method: 'GET', url: path })).json();
        assert.equal(doc.registration_endpoint, `${ts.config.authUrl}${REGISTER}`, path);
      }
    });
  });
}
