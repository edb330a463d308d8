import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { SignJWT, exportJWK, generateKeyPair, base64url, type CryptoKey, type JWTPayload } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { changeClient, createClient } from '../../src/admin/operations.js';

// JWT-secured authorization requests (RFC 9101; OIDC Core 6.1 "request") over the server's real HTTP
// handling and a real database: the authorization endpoint (GET and POST) and the PAR endpoint.
const AUTH = realmPath('/protocol/openid-connect/auth');
const PAR = realmPath('/protocol/openid-connect/ext/par/request');
const CLIENT = { id: 'jar-app', redirectUri: 'https://jar.example.com/cb' };
const verifier = 'v'.repeat(50);
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');

for (const dialect of dialects()) {
  describe(`request objects (${dialect})`, () => {
    let ts: TestServer;
    let secret: string;
    let key: CryptoKey;
    let otherKey: CryptoKey;
    let issuer: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      issuer = `${ts.config.authUrl}/auth/realms/${REALM}`;
      const pair = await generateKeyPair('ES256');
      key = pair.privateKey;
      otherKey = (await generateKeyPair('ES256')).privateKey;
      const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] });
      // A confidential client with a secret: its request-object keys are the private_key_jwt key sources.
      ({ secret } = (await createClient(ts.store, { realmId: REALM, clientId: CLIENT.id, redirectUris: [CLIENT.redirectUri, 'https://jar.example.com/other'], jwtKeys: { useJwksString: true, jwksString: jwks } })) as { secret: string });
    });
    after(() => ts.close());

    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    /** The usual claims of a request object, `extra` merged (undefined: left out). */
    const claims = (extra: Record<string, unknown> = {}): JWTPayload => {
      const all: Record<string, unknown> = { iss: CLIENT.id, aud: issuer, client_id: CLIENT.id, response_type: 'code', redirect_uri: CLIENT.redirectUri, scope: 'openid', state: 'inside', nonce: 'n-1', code_challenge: challenge, code_challenge_method: 'S256', iat: now(), exp: now() + 300, jti: crypto.randomUUID(), ...extra };
      return Object.fromEntries(Object.entries(all).filter((e) => e[1] !== undefined)) as JWTPayload;
    };
    const sign = (payload: JWTPayload = claims(), o: { alg?: string; with?: CryptoKey | Uint8Array } = {}): Promise<string> =>
      new SignJWT(payload).setProtectedHeader({ alg: o.alg ?? 'ES256', kid: 'k1', typ: 'oauth-authz-req+jwt' }).sign(o.with ?? key);
    const unsigned = (payload: JWTPayload = claims()): string => `${base64url.encode(JSON.stringify({ alg: 'none' }))}.${base64url.encode(JSON.stringify(payload))}.`;
    const authorizeWith = (q: Record<string, string>, jar = new CookieJar()): Promise<LightMyRequestResponse> => inject(ts.app, jar, 'GET', `${AUTH}?${new URLSearchParams(q)}`);
    const withRequest = (request: string, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> => authorizeWith({ client_id: CLIENT.id, request, ...extra });

    function assertErrorPage(res: LightMyRequestResponse, text: RegExp): void {
      assert.equal(res.statusCode, 400, res.body.slice(0, 300));
      assert.equal(res.headers.location, undefined);
      assert.equal(pageKind(res.body), 'error');
      assert.match(res.body, text);
    }
    /** The error went back to the request object's own redirect_uri, with its state. */
    function assertRedirectError(res: LightMyRequestResponse, error: string, description?: RegExp, redirectUri = CLIENT.redirectUri): void {
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      const location = new URL(String(res.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, redirectUri);
      assert.equal(location.searchParams.get('error'), error);
      if (description) assert.match(location.searchParams.get('error_description')!, description);
      assert.equal(location.searchParams.get('state'), 'inside');
    }
    const exchange = (code: string): Promise<LightMyRequestResponse> =>
      tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: CLIENT.redirectUri, code_verifier: verifier }, { authorization: basic(CLIENT.id, secret) });

    test('discovery: request_parameter_supported, the signing algorithms (asymmetric only), request_uri_parameter_supported false', async () => {
      const meta = (await ts.app.inject({ url: realmPath('/.well-known/openid-configuration') })).json();
      assert.equal(meta.request_parameter_supported, true);
      assert.equal(meta.request_uri_parameter_supported, false);
      assert.ok(meta.request_object_signing_alg_values_supported.includes('ES256'));
      assert.ok(!meta.request_object_signing_alg_values_supported.some((a: string) => a === 'none' || a.startsWith('HS')));
    });

    test('a signed request object completes the flow; only its parameters count (redirect_uri, scope, state, response_type outside are ignored)', async () => {
      const request = await sign(claims({ scope: 'openid core_data' }));
      const r = await runAuthorization(ts, { query: { client_id: CLIENT.id, request, redirect_uri: 'https://evil.example/cb', scope: 'openid offline_access', state: 'outside', response_type: 'token' } });
      assert.equal(`${r.location.origin}${r.location.pathname}`, CLIENT.redirectUri);
      assert.equal(r.params.get('state'), 'inside');
      const res = await exchange(r.code!);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(body.scope.split(' ').sort(), ['core_data', 'openid']);
      assert.equal(body.refresh_token !== undefined, true);
      const idToken = JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
      assert.equal(idToken.nonce, 'n-1');
    });

    test('POST to the authorization endpoint takes a request object too; its other redirect URI is used', async () => {
      const jar = new CookieJar();
      const res = await inject(ts.app, jar, 'POST', AUTH, { client_id: CLIENT.id, request: await sign(claims({ redirect_uri: 'https://jar.example.com/other' })) });
      assert.equal(res.statusCode, 303, res.body);
      assert.match(String(res.headers.location), /login-actions/);
    });

    test('a request object not signed by the client is an error page: another key, alg none, HS256, an algorithm other than the configured one', async () => {
      assertErrorPage(await withRequest(await sign(claims(), { with: otherKey })), /could not be verified/);
      assertErrorPage(await withRequest(unsigned()), /unsigned and HMAC request objects are refused/);
      assertErrorPage(await withRequest(await sign(claims(), { alg: 'HS256', with: new TextEncoder().encode(secret) })), /unsigned and HMAC/);
      await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectSignatureAlg: 'RS256' } });
      try {
        assertErrorPage(await withRequest(await sign()), /must be signed with RS256/);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectSignatureAlg: 'ES256' } });
      }
      assert.equal((await withRequest(await sign())).statusCode, 303);
      // Keycloak's "none": kept as configured, but nothing unsigned (or signed) gets through.
      await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectSignatureAlg: 'none' } });
      try {
        assertErrorPage(await withRequest(unsigned()), /Invalid request object/);
        assertErrorPage(await withRequest(await sign()), /Invalid request object/);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectSignatureAlg: null } });
      }
    });

    test('malformed request objects are error pages, never redirects or 500s: not a JWT, bad base64, JSON that is not an object, huge, twice, with request_uri, without client_id, a client without keys', async () => {
      assertErrorPage(await withRequest('not-a-jwt'), /not a signed JWT/);
      assertErrorPage(await withRequest('a!b.c$d.e%f'), /not a signed JWT/);
      assertErrorPage(await withRequest(`${base64url.encode('{"alg":')}.${base64url.encode('{}')}.sig`), /header is not valid/);
      const arrayPayload = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).sign(key);
      const [h, , ] = arrayPayload.split('.');
      assertErrorPage(await withRequest(`${h}.${base64url.encode('[1,2]')}.${arrayPayload.split('.')[2]}`), /could not be verified/);
      const huge = await sign(claims({ padding: 'x'.repeat(20_000) }));
      const res = await inject(ts.app, new CookieJar(), 'POST', AUTH, { client_id: CLIENT.id, request: huge });
      assertErrorPage(res, /acceptable size/);
      const twice = await inject(ts.app, new CookieJar(), 'GET', `${AUTH}?client_id=${CLIENT.id}&request=${await sign()}&request=${await sign()}`);
      assertErrorPage(twice, /more than one request object/);
      assertErrorPage(await withRequest(await sign(), { request_uri: 'urn:ietf:params:oauth:request_uri:abc' }), /both a request object and a request_uri/);
      assertErrorPage(await authorizeWith({ request: await sign() }), /client_id is missing/);
      assertErrorPage(await authorizeWith({ client_id: 'nobody', request: await sign() }), /not registered/);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request: await sign(claims({ client_id: ts.client.id, iss: ts.client.id })) }), /no registered keys/);
    });

    test('a signed request object whose claims fail goes back to its redirect_uri with invalid_request_object: iss, client_id, aud, exp, nbf, nested request/request_uri', async () => {
      assertRedirectError(await withRequest(await sign(claims({ iss: 'someone-else' }))), 'invalid_request_object', /iss/);
      assertRedirectError(await withRequest(await sign(claims({ client_id: ts.client.id }))), 'invalid_request_object', /client_id/);
      assertRedirectError(await withRequest(await sign(claims({ client_id: undefined }))), 'invalid_request_object', /client_id/);
      assertRedirectError(await withRequest(await sign(claims({ aud: 'https://other.example/' }))), 'invalid_request_object', /aud/);
      assertRedirectError(await withRequest(await sign(claims({ aud: undefined }))), 'invalid_request_object', /aud/);
      assertRedirectError(await withRequest(await sign(claims({ exp: now() - 60 }))), 'invalid_request_object', /expired/);
      assertRedirectError(await withRequest(await sign(claims({ nbf: now() + 600 }))), 'invalid_request_object', /nbf/);
      assertRedirectError(await withRequest(await sign(claims({ request: 'x' }))), 'invalid_request_object', /request or request_uri/);
      assertRedirectError(await withRequest(await sign(claims({ request_uri: 'https://x.example/r' }))), 'invalid_request_object', /request or request_uri/);
      // aud as a list naming the issuer, no exp, within the skew: accepted (Keycloak does not require exp).
      assert.match(String((await withRequest(await sign(claims({ aud: [issuer, 'x'], exp: undefined, nbf: now() + 5 })))).headers.location), /login-actions/);
      // An unregistered redirect_uri inside a signed object is still never redirected to.
      assertErrorPage(await withRequest(await sign(claims({ redirect_uri: 'https://evil.example/cb', exp: now() - 60 }))), /not registered/);
      // max_age as a JSON number (OIDC Core 6.1); other parameters as JSON of another type are malformed.
      assert.match(String((await withRequest(await sign(claims({ max_age: 3600 })))).headers.location), /login-actions/);
      assertRedirectError(await withRequest(await sign(claims({ prompt: ['login'] }))), 'invalid_request');
      assertRedirectError(await withRequest(await sign(claims({ nonce: { a: 1 } }))), 'invalid_request', /nonce/);
      // An own "__proto__" member (JSON.parse makes one) changes nothing.
      const proto = JSON.parse(JSON.stringify(claims()).replace(/^\{/, '{"__proto__":{"scope":"openid offline_access"},')) as JWTPayload;
      assert.match(String((await withRequest(await sign(proto))).headers.location), /login-actions/);
      assertErrorPage(await withRequest(await sign(claims({ redirect_uri: null }))), /Invalid request/);
      // The other checks of the request still answer at the redirect URI.
      assertRedirectError(await withRequest(await sign(claims({ response_type: 'token' }))), 'unsupported_response_type');
    });

    test('an empty request parameter counts as absent (as every empty parameter): the plain request goes on', async () => {
      const res = await withRequest('', { redirect_uri: CLIENT.redirectUri, response_type: 'code', scope: 'openid' });
      assert.equal(res.statusCode, 303, res.body);
      assert.match(String(res.headers.location), /login-actions/);
    });

    test('request_uri other than a pushed request: request_uri_not_supported on a page', async () => {
      assertErrorPage(await authorizeWith({ client_id: CLIENT.id, request_uri: 'https://jar.example.com/request.jwt' }), /request_uri_not_supported/);
    });

    test('request.object.required: "request only" sends a plain request back with invalid_request; a request object or a pushed one passes; "request_uri only" wants a pushed request', async () => {
      await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'request only' } });
      try {
        const plain = await authorizeWith({ client_id: CLIENT.id, redirect_uri: CLIENT.redirectUri, response_type: 'code', scope: 'openid', state: 'inside' });
        assertRedirectError(plain, 'invalid_request', /request object/);
        assert.match(String((await withRequest(await sign())).headers.location), /login-actions/);
        // Pushed without a request object: refused at the PAR endpoint.
        const push = await ts.app.inject({ method: 'POST', url: PAR, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT.id, secret) }, payload: new URLSearchParams({ response_type: 'code', redirect_uri: CLIENT.redirectUri, scope: 'openid' }).toString() });
        assert.equal(push.statusCode, 400, push.body);
        assert.equal(push.json().error, 'invalid_request');
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'request_uri only' } });
        assertRedirectError(await withRequest(await sign()), 'invalid_request', /pushed request/);
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'request or request_uri' } });
        assertRedirectError(await authorizeWith({ client_id: CLIENT.id, redirect_uri: CLIENT.redirectUri, response_type: 'code', state: 'inside' }), 'invalid_request');
        assert.match(String((await withRequest(await sign())).headers.location), /login-actions/);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'not required' } });
      }
      assert.match(String((await authorizeWith({ client_id: CLIENT.id, redirect_uri: CLIENT.redirectUri, response_type: 'code', scope: 'openid' })).headers.location), /login-actions/);
    });

    test('PAR with a request object (RFC 9126 3): its parameters are what is pushed; a bad one is invalid_request_object in JSON', async () => {
      const pushRequest = (request: string, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
        ts.app.inject({ method: 'POST', url: PAR, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT.id, secret) }, payload: new URLSearchParams({ request, ...extra }).toString() });
      await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'request only' } });
      try {
        // The body's own redirect_uri beside the object is ignored.
        const res = await pushRequest(await sign(claims({ state: 'inside' })), { redirect_uri: 'https://evil.example/cb', state: 'outside' });
        assert.equal(res.statusCode, 201, res.body);
        const r = await runAuthorization(ts, { query: { client_id: CLIENT.id, request_uri: res.json().request_uri, redirect_uri: undefined, response_type: undefined, scope: undefined, state: undefined } });
        assert.equal(`${r.location.origin}${r.location.pathname}`, CLIENT.redirectUri);
        assert.equal(r.params.get('state'), 'inside');
        assert.equal((await exchange(r.code!)).statusCode, 200);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: CLIENT.id, changes: { requestObjectRequired: 'not required' } });
      }
      for (const bad of [await sign(claims(), { with: otherKey }), unsigned(), await sign(claims({ exp: now() - 60 })), await sign(claims({ client_id: ts.client.id })), 'garbage']) {
        const res = await pushRequest(bad);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().error, 'invalid_request_object');
      }
    });
  });
}
