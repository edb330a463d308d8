import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { changeClient, createClient, updateRealm } from '../../src/admin/operations.js';
import { tokenHash } from '../../src/crypto/random.js';
import { Collector } from '../../src/collector.js';

// RFC 9126 Pushed Authorization Requests over the server's real HTTP handling and a real database.
const PAR = realmPath('/protocol/openid-connect/ext/par/request');
const AUTH = realmPath('/protocol/openid-connect/auth');
const PREFIX = 'urn:ietf:params:oauth:request_uri:';
const verifier = 'p'.repeat(50);
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
const SPA = { id: 'par-spa', redirectUri: 'http://localhost:5173/app/', origin: 'http://localhost:5173' };

for (const dialect of dialects()) {
  describe(`pushed authorization requests (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createClient(ts.store, { realmId: REALM, clientId: SPA.id, redirectUris: [SPA.redirectUri], public: true, webOrigins: ['+'] });
    });
    after(() => ts.close());

    type Body = Record<string, string | string[]>;
    const form = (b: Body): string => {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(b)) for (const one of Array.isArray(v) ? v : [v]) q.append(k, one);
      return q.toString();
    };
    /** A confidential client's usual request (web-app, HTTP Basic), with `extra` merged in (undefined: left out). */
    const confidential = (extra: Record<string, string | string[] | undefined> = {}): Body => {
      const all: Record<string, string | string[] | undefined> = { response_type: 'code', redirect_uri: ts.client.redirectUri, scope: 'openid core_data', state: 'pushed-state', nonce: 'n-1', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
      return Object.fromEntries(Object.entries(all).filter((e): e is [string, string | string[]] => e[1] !== undefined));
    };
    const push = (body: Body, o: { auth?: string | null; ip?: string; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method: 'POST',
        url: PAR,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(o.auth === null ? {} : { authorization: o.auth ?? basic(ts.client.id, ts.client.secret) }), ...o.headers },
        payload: form(body),
        ...(o.ip ? { remoteAddress: o.ip } : {}),
      });
    async function pushed(body: Body = confidential(), o: { auth?: string | null; ip?: string } = {}): Promise<string> {
      const res = await push(body, o);
      assert.equal(res.statusCode, 201, res.body);
      return res.json().request_uri as string;
    }
    function assertJsonError(res: LightMyRequestResponse, status: number, error: string, description?: RegExp): void {
      assert.equal(res.statusCode, status, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers.location, undefined);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(body.error, error);
      if (description) assert.match(body.error_description, description);
    }
    /** The authorization endpoint answered with an error page: no redirect anywhere. */
    function assertErrorPage(res: LightMyRequestResponse, text: RegExp): void {
      assert.equal(res.statusCode, 400, res.body.slice(0, 300));
      assert.equal(res.headers.location, undefined);
      assert.equal(pageKind(res.body), 'error');
      assert.match(res.body, text);
    }
    const authorizeWith = (q: Record<string, string>, jar = new CookieJar()): Promise<LightMyRequestResponse> => inject(ts.app, jar, 'GET', `${AUTH}?${new URLSearchParams(q)}`);
    const byReference = (requestUri: string, extra: Record<string, string | undefined> = {}) => ({
      client_id: ts.client.id,
      request_uri: requestUri,
      // RFC 9126 4: authorizeQuery's own parameters are ignored; undefined leaves them out.
      redirect_uri: undefined,
      response_type: undefined,
      scope: undefined,
      state: undefined,
      ...extra,
    });

    test('201 with a request_uri URN and expires_in 60, no-store; only the hash of its random part is stored', async () => {
      const res = await push(confidential());
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['expires_in', 'request_uri']);
      assert.equal(body.expires_in, 60);
      assert.match(body.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
      const reference = (body.request_uri as string).slice(PREFIX.length);
      const rows = await ts.db.db.kysely.selectFrom('pushed_authorization_requests').selectAll().execute();
      const row = rows.find((r) => r.hash === tokenHash(reference));
      assert.ok(row, 'stored under the hash');
      assert.equal(row.client_id, ts.client.id);
      assert.equal(Number(row.expires_at) - Number(row.created_at), 60);
      for (const r of rows) assert.ok(!JSON.stringify(r).includes(reference), 'the request_uri itself is nowhere in the table');
      // Two pushes never share a request_uri.
      assert.notEqual(await pushed(), body.request_uri);
    });

    test('the full flow by reference: login, consent, organization; code at the pushed redirect_uri with its state; PKCE at the token endpoint', async () => {
      const requestUri = await pushed();
      const r = await runAuthorization(ts, { query: byReference(requestUri) });
      assert.deepEqual(r.pages, ['login', 'consent', 'organization']);
      assert.equal(`${r.location.origin}${r.location.pathname}`, ts.client.redirectUri);
      assert.equal(r.params.get('state'), 'pushed-state');
      const auth = { authorization: basic(ts.client.id, ts.client.secret) };
      // The pushed code_challenge binds the code: a wrong verifier fails, the right one succeeds.
      const wrong = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri, code_verifier: 'q'.repeat(50) }, auth);
      assert.equal(wrong.json().error, 'invalid_grant');
      const r2 = await runAuthorization(ts, { query: byReference(await pushed()), jar: r.jar });
      const ok = await tokenRequest(ts, { grant_type: 'authorization_code', code: r2.code!, redirect_uri: ts.client.redirectUri, code_verifier: verifier }, auth);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().scope, 'openid core_data');
    });

    test('RFC 9126 4: parameters sent beside request_uri are ignored; the pushed ones are the request', async () => {
      const requestUri = await pushed(confidential({ state: 'only-pushed' }));
      const r = await runAuthorization(ts, {
        query: byReference(requestUri, { redirect_uri: 'http://127.0.0.1:9999/cb', state: 'sent-beside', scope: 'openid offline_access', response_mode: 'fragment', prompt: 'none' }),
      });
      assert.equal(`${r.location.origin}${r.location.pathname}`, ts.client.redirectUri);
      assert.equal(r.location.hash, '');
      assert.equal(r.params.get('state'), 'only-pushed');
    });

    test('a request_uri is used once: the second use is an error page (Keycloak consumes it too)', async () => {
      const requestUri = await pushed();
      const first = await authorizeWith({ client_id: ts.client.id, request_uri: requestUri });
      assert.equal(first.statusCode, 303);
      assert.match(String(first.headers.location), /login-actions/);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request_uri: requestUri }), /expired or was already used/);
    });

    test('an expired request_uri is refused (RFC 9126 4), with the realm\'s parRequestUriLifespan', async () => {
      const requestUri = await pushed();
      ts.clock.advance(60);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request_uri: requestUri }), /expired or was already used/);
      await updateRealm(ts.store, { realmId: REALM, settings: { parRequestUriLifespan: 10 } });
      const res = await push(confidential());
      assert.equal(res.json().expires_in, 10);
      const short = res.json().request_uri as string;
      ts.clock.advance(9);
      const long = await pushed();
      ts.clock.advance(1);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request_uri: short }), /expired or was already used/);
      assert.equal((await authorizeWith({ client_id: ts.client.id, request_uri: long })).statusCode, 303);
      await updateRealm(ts.store, { realmId: REALM, settings: { parRequestUriLifespan: 60 } });
    });

    test("another client's request_uri, an unknown one, or one without client_id is an error page, and does not use it up", async () => {
      const mine = await pushed();
      assertErrorPage(await authorizeWith({ client_id: 'native-app', request_uri: mine }), /expired or was already used/);
      assertErrorPage(await authorizeWith({ request_uri: mine }), /client_id is missing/);
      assertErrorPage(await authorizeWith({ client_id: 'nobody', request_uri: mine }), /not registered/);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request_uri: `${PREFIX}${'A'.repeat(43)}` }), /expired or was already used/);
      assertErrorPage(await authorizeWith({ client_id: ts.client.id, request_uri: 'https://app.example.com/request.jwt' }), /request_uri_not_supported/);
      // Still usable by its own client.
      assert.equal((await authorizeWith({ client_id: ts.client.id, request_uri: mine })).statusCode, 303);
    });

    test('request_uri given twice at the authorization endpoint is an error page', async () => {
      const requestUri = await pushed();
      const res = await inject(ts.app, new CookieJar(), 'GET', `${AUTH}?${form({ client_id: ts.client.id, request_uri: [requestUri, requestUri] })}`);
      assertErrorPage(res, /more than once/);
    });

    test('RFC 9126 2.1: request_uri inside the pushed request is refused', async () => {
      assertJsonError(await push(confidential({ request_uri: `${PREFIX}${'A'.repeat(43)}` })), 400, 'invalid_request', /request_uri/);
    });

    test('the authorization endpoint\'s rules, answered in JSON (RFC 9126 2.3), never a redirect', async () => {
      assertJsonError(await push(confidential({ redirect_uri: 'https://evil.example/cb' })), 400, 'invalid_request', /not registered/);
      assertJsonError(await push(confidential({ redirect_uri: undefined })), 400, 'invalid_request', /redirect_uri is missing/);
      assertJsonError(await push(confidential({ response_type: undefined })), 400, 'invalid_request', /response_type/);
      assertJsonError(await push(confidential({ response_type: 'token' })), 400, 'unsupported_response_type');
      assertJsonError(await push(confidential({ scope: 'openid no-such-scope' })), 400, 'invalid_scope');
      assertJsonError(await push(confidential({ code_challenge_method: 'plain' })), 400, 'invalid_request', /S256/);
      assertJsonError(await push(confidential({ code_challenge: 'short' })), 400, 'invalid_request', /malformed/);
      assertJsonError(await push(confidential({ prompt: 'none login' })), 400, 'invalid_request', /prompt/);
      assertJsonError(await push(confidential({ response_mode: 'jwt' })), 400, 'invalid_request', /response_mode/);
      assertJsonError(await push(confidential({ resource: 'https://not-an-audience.example' })), 400, 'invalid_target');
      // A public client must use PKCE (RFC 9700 2.1.1), as at the authorization endpoint.
      assertJsonError(await push({ client_id: 'native-app', response_type: 'code', redirect_uri: 'http://127.0.0.1/callback', scope: 'openid' }, { auth: null }), 400, 'invalid_request', /PKCE/);
      assert.equal(await ts.db.db.kysely.selectFrom('pushed_authorization_requests').select('hash').where('ip', '=', '10.9.9.9').execute().then((r) => r.length), 0);
    });

    test('RFC 6749 3.1: a repeated parameter is invalid_request; a huge body 413; a huge value 400; only form bodies; only POST', async () => {
      assertJsonError(await push(confidential({ state: ['a', 'b'] })), 400, 'invalid_request', /more than once/);
      assertJsonError(await push(confidential({ redirect_uri: [ts.client.redirectUri, ts.client.redirectUri] })), 400, 'invalid_request', /more than once/);
      assertJsonError(await push(confidential({ scope: ['openid', 'openid'] })), 400, 'invalid_request', /more than once/);
      assertJsonError(await push(confidential({ nonce: 'x'.repeat(9000) })), 400, 'invalid_request', /too long/);
      assertJsonError(await push(confidential({ junk: 'x'.repeat(70_000) })), 413, 'invalid_request');
      const json = await ts.app.inject({ method: 'POST', url: PAR, headers: { 'content-type': 'application/json', authorization: basic(ts.client.id, ts.client.secret) }, payload: JSON.stringify(confidential()) });
      assertJsonError(json, 400, 'invalid_request');
      const get = await ts.app.inject({ method: 'GET', url: `${PAR}?${form(confidential())}` });
      assert.equal(get.statusCode, 405);
      assert.equal(get.headers.allow, 'POST');
      assert.equal((await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/ext/par/request').replace(`/${REALM}/`, '/nowhere/'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ client_id: 'x' }) })).statusCode, 404);
    });

    test('client authentication as at the token endpoint: wrong secret, unknown client, none, a confidential client without its secret: 401 invalid_client', async () => {
      for (const [body, auth] of [
        [confidential(), basic(ts.client.id, 'wrong-secret')],
        [confidential(), basic('nobody', 'x')],
        [confidential(), null],
        [confidential({ client_id: ts.client.id }), null],
        [confidential({ client_id: ts.client.id, client_secret: 'wrong-secret' }), null],
      ] as const) {
        const res = await push(body, { auth, ip: '10.8.0.1' });
        assertJsonError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic realm=/);
      }
      // client_secret_post works as well; two methods at once do not.
      assert.equal((await push(confidential({ client_id: ts.client.id, client_secret: ts.client.secret }), { auth: null })).statusCode, 201);
      assertJsonError(await push(confidential({ client_secret: ts.client.secret })), 400, 'invalid_request');
    });

    test('a public client pushes with client_id alone and signs in by reference', async () => {
      const requestUri = await pushed({ client_id: 'native-app', response_type: 'code', redirect_uri: 'http://127.0.0.1:4321/callback', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', state: 's' }, { auth: null });
      const r = await runAuthorization(ts, { query: { client_id: 'native-app', request_uri: requestUri, redirect_uri: undefined, response_type: undefined, scope: undefined, state: undefined } });
      assert.equal(`${r.location.origin}${r.location.pathname}`, 'http://127.0.0.1:4321/callback');
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, client_id: 'native-app', redirect_uri: 'http://127.0.0.1:4321/callback', code_verifier: verifier });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('require.pushed.authorization.requests: a plain request gets invalid_request at its redirect URI; a pushed one passes; switched off, plain ones pass again', async () => {
      await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { requirePushedAuthorizationRequests: true } });
      try {
        const plain = await authorizeWith({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' });
        assert.equal(plain.statusCode, 303);
        const location = new URL(String(plain.headers.location));
        assert.equal(`${location.origin}${location.pathname}`, ts.client.redirectUri);
        assert.equal(location.searchParams.get('error'), 'invalid_request');
        assert.match(location.searchParams.get('error_description')!, /push/);
        assert.equal(location.searchParams.get('state'), 'st');
        // An unregistered redirect URI is still never redirected to.
        assertErrorPage(await authorizeWith({ client_id: ts.client.id, redirect_uri: 'https://evil.example/', response_type: 'code' }), /not registered/);
        const r = await runAuthorization(ts, { query: byReference(await pushed()) });
        assert.ok(r.code);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { requirePushedAuthorizationRequests: false } });
      }
      const again = await authorizeWith({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid' });
      assert.equal(again.statusCode, 303);
      assert.match(String(again.headers.location), /login-actions/);
    });

    test('CORS as at the token endpoint: an allowed origin gets its headers, another origin is refused before anything is stored', async () => {
      const body = { client_id: SPA.id, response_type: 'code', redirect_uri: SPA.redirectUri, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' };
      const ok = await push(body, { auth: null, headers: { origin: SPA.origin } });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.equal(ok.headers['access-control-allow-origin'], SPA.origin);
      assert.match(String(ok.headers.vary), /Origin/);
      const other = await push(body, { auth: null, headers: { origin: 'https://evil.example' }, ip: '10.7.7.7' });
      assertJsonError(other, 400, 'invalid_request', /origin/);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      assert.equal((await ts.db.db.kysely.selectFrom('pushed_authorization_requests').select('hash').where('ip', '=', '10.7.7.7').execute()).length, 0);
      const pre = await ts.app.inject({ method: 'OPTIONS', url: PAR, headers: { origin: SPA.origin, 'access-control-request-method': 'POST' } });
      assert.equal(pre.statusCode, 204, pre.body);
      assert.equal(pre.headers['access-control-allow-origin'], SPA.origin);
    });

    test('the collector deletes expired pushed requests, used or not, and leaves the others', async () => {
      ts.clock.advance(3600);
      const used = await pushed();
      assert.equal((await authorizeWith({ client_id: ts.client.id, request_uri: used })).statusCode, 303);
      await pushed();
      ts.clock.advance(61);
      const fresh = await pushed();
      const collector = new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 60, eventsRetentionDays: 90, adminEventsRetentionDays: 365 });
      const run = await collector.runOnce();
      await collector.stop();
      assert.ok(run.ran);
      assert.ok((run.deleted.pushed_authorization_requests ?? 0) >= 2, JSON.stringify(run.deleted));
      const left = await ts.db.db.kysely.selectFrom('pushed_authorization_requests').select('hash').execute();
      assert.deepEqual(left.map((r) => r.hash), [tokenHash(fresh.slice(PREFIX.length))]);
    });

    test('a pushed dpop_jkt binds the code as one in the URL does (RFC 9449 10): the exchange needs a proof of that key', async () => {
      const jkt = 'A'.repeat(43);
      const r = await runAuthorization(ts, { query: byReference(await pushed(confidential({ dpop_jkt: jkt }))) });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri, code_verifier: verifier }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.json().error, 'invalid_dpop_proof', res.body);
      assertJsonError(await push(confidential({ dpop_jkt: 'short' })), 400, 'invalid_request', /dpop_jkt/);
    });
  });

  describe(`caps on pushed authorization requests (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { maxInteractionsPerAddress: 3, maxPushedRequestsPerClient: 4, maxInteractions: 9 } });
    });
    after(() => ts.close());

    const ask = (ip: string, who: 'public' | 'confidential'): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method: 'POST',
        url: PAR,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(who === 'confidential' ? { authorization: basic(ts.client.id, ts.client.secret) } : {}) },
        payload: new URLSearchParams({
          ...(who === 'public' ? { client_id: 'native-app', redirect_uri: 'http://127.0.0.1/callback' } : { redirect_uri: ts.client.redirectUri }),
          response_type: 'code',
          scope: 'openid',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }).toString(),
        remoteAddress: ip,
      });
    const statuses = async (n: number, ip: string, who: 'public' | 'confidential'): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await ask(ip, who)).statusCode);
      return out;
    };
    const rows = async (): Promise<number> => (await ts.db.db.kysely.selectFrom('pushed_authorization_requests').select('hash').execute()).length;
    function assertRefused(res: LightMyRequestResponse, where: RegExp): void {
      assert.equal(res.statusCode, 429, res.body);
      assert.equal(res.headers['retry-after'], '60');
      assert.equal(res.json().error, 'temporarily_unavailable');
      assert.match(res.json().error_description, where);
    }

    test('a public client: capped per address; another address still pushes', async () => {
      assert.deepEqual(await statuses(3, '10.5.0.1', 'public'), [201, 201, 201]);
      assertRefused(await ask('10.5.0.1', 'public'), /from this address/);
      assert.equal((await ask('10.5.0.2', 'public')).statusCode, 201);
      assert.equal(await rows(), 4);
      ts.clock.advance(61);
    });

    test('a confidential client: capped per client, whatever the address', async () => {
      assert.deepEqual(await statuses(4, '10.5.1.1', 'confidential'), [201, 201, 201, 201]);
      assertRefused(await ask('10.5.1.2', 'confidential'), /for this client/);
      // The public client is not held back by it.
      assert.equal((await ask('10.5.1.3', 'public')).statusCode, 201);
      ts.clock.advance(61);
    });

    test('the overall cap; once they expire, pushes succeed again', async () => {
      assert.deepEqual(await statuses(4, '10.5.2.1', 'confidential'), [201, 201, 201, 201]);
      assert.deepEqual(await statuses(3, '10.5.2.2', 'public'), [201, 201, 201]);
      assert.deepEqual(await statuses(2, '10.5.2.3', 'public'), [201, 201]);
      assertRefused(await ask('10.5.2.4', 'public'), /on this server/);
      ts.clock.advance(61);
      // The overall count is reused for 5 s of the server's clock: the clock moved on, so it is read again.
      assert.equal((await ask('10.5.2.4', 'public')).statusCode, 201);
    });
  });
}
