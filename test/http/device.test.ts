import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, tokenRequest, type PageKind } from '../helpers/flow.js';
import crypto from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { updateClient } from '../../src/admin/operations.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

for (const dialect of dialects()) {
  describe(`device authorization grant, RFC 8628 (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function authorizeDevice(form: Record<string, string> = { client_id: 'native-app', scope: 'openid core_data offline_access' }, headers: Record<string, string> = {}) {
      return ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/auth/device'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams(form).toString(),
      });
    }

    async function start(): Promise<{ device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; interval: number; expires_in: number }> {
      const res = await authorizeDevice();
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    const poll = (deviceCode: string) => tokenRequest(ts, { grant_type: GRANT, device_code: deviceCode, client_id: 'native-app' });

    /** The user's side: open the verification page, enter the code, log in, consent, choose. */
    async function approve(userCode: string, opts: { consent?: 'allow' | 'deny'; complete?: boolean } = {}): Promise<{ pages: PageKind[]; last: string; consentPage?: string }> {
      const jar = new CookieJar();
      const pages: PageKind[] = [];
      let consentPage: string | undefined;
      const url = realmPath('/device') + (opts.complete ? `?user_code=${encodeURIComponent(userCode)}` : '');
      let page = await inject(ts.app, jar, 'GET', url);
      pages.push(pageKind(page.body));
      let form = parseForm(page.body);
      let res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: opts.complete ? userCode : userCode.toLowerCase().replace('-', ' ') });
      for (let i = 0; i < 6 && res.statusCode === 303; i++) {
        page = await inject(ts.app, jar, 'GET', res.headers.location as string);
        const kind = pageKind(page.body);
        pages.push(kind);
        if (kind === 'consent') consentPage = page.body;
        form = parseForm(page.body);
        const fields: Record<string, string> =
          kind === 'login' ? { username: ts.user.username, password: ts.user.password } : kind === 'consent' ? { decision: opts.consent ?? 'allow' } : { organization: 'acme' };
        res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields });
      }
      pages.push(pageKind(res.body));
      return { pages, last: res.body, ...(consentPage ? { consentPage } : {}) };
    }

    test('the device authorization response (RFC 8628 3.2)', async () => {
      const res = await authorizeDevice();
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.match(body.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      assert.match(body.device_code, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(body.verification_uri, `${ts.config.authUrl}/auth/realms/${REALM}/device`);
      assert.equal(body.verification_uri_complete, `${body.verification_uri}?user_code=${encodeURIComponent(body.user_code)}`);
      assert.equal(body.expires_in, 600);
      assert.equal(body.interval, 5);
      const disc = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json();
      assert.equal(disc.device_authorization_endpoint, `${ts.config.authUrl}/auth/realms/${REALM}/protocol/openid-connect/auth/device`);
      assert.ok(disc.grant_types_supported.includes(GRANT));
    });

    test('client authentication and scope are checked', async () => {
      assert.equal((await authorizeDevice({ scope: 'openid' })).statusCode, 401);
      assert.equal((await authorizeDevice({ scope: 'openid' }, { authorization: basic(ts.client.id, 'wrong') })).json().error, 'invalid_client');
      assert.equal((await authorizeDevice({ scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode, 200);
      assert.equal((await authorizeDevice({ client_id: 'native-app', scope: 'admin' })).json().error, 'invalid_scope');
    });

    test('pending, slow_down, then tokens once the user approves; the device code works once', async () => {
      const d = await start();
      let res = await poll(d.device_code);
      assert.equal(res.json().error, 'authorization_pending');
      res = await poll(d.device_code);
      assert.equal(res.json().error, 'slow_down');
      // The interval grew to 10 s: 9 s is still too fast, and each slow_down adds 5 s more.
      ts.clock.advance(9);
      assert.equal((await poll(d.device_code)).json().error, 'slow_down');
      ts.clock.advance(15);
      assert.equal((await poll(d.device_code)).json().error, 'authorization_pending');

      const user = await approve(d.user_code);
      assert.deepEqual(user.pages, ['device-entry', 'login', 'consent', 'organization', 'device-done']);
      assert.match(user.last, /Your device is connected/);

      res = await poll(d.device_code);
      assert.equal(res.statusCode, 200, res.body);
      const tokens = res.json();
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.scope, 'openid core_data offline_access');
      assert.equal(tokens.expires_in, 259200);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'native-app' });
      assert.equal(refreshed.statusCode, 200);
      assert.equal((await poll(d.device_code)).json().error, 'invalid_grant');
    });

    test('with a DPoP proof (RFC 9449) the device gets a bound access token and, a public client, a refresh chain bound to its key', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = await exportJWK(publicKey);
      const tokenUrl = `${ts.config.authUrl}/auth/realms/${REALM}/protocol/openid-connect/token`;
      const proof = (key = privateKey, header = jwk): Promise<string> =>
        new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl, iat: Math.floor(ts.clock.nowMs() / 1000) }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: header }).sign(key);
      const d = await start();
      await approve(d.user_code);
      ts.clock.advance(6);
      const res = await tokenRequest(ts, { grant_type: GRANT, device_code: d.device_code, client_id: 'native-app' }, { dpop: await proof() });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().token_type, 'DPoP');
      const jkt = await calculateJwkThumbprint(jwk);
      assert.deepEqual((decodeJwt(res.json().access_token) as { cnf?: unknown }).cnf, { jkt });
      const refresh = (headers: Record<string, string>) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: res.json().refresh_token, client_id: 'native-app' }, headers);
      assert.equal((await refresh({})).json().error, 'invalid_dpop_proof');
      const other = await generateKeyPair('ES256');
      assert.equal((await refresh({ dpop: await proof(other.privateKey, await exportJWK(other.publicKey)) })).json().error, 'invalid_dpop_proof');
      assert.equal((await refresh({ dpop: await proof() })).statusCode, 200);
    });

    test('resources named at the device authorization request bind the grant (RFC 8707 2.1); the consent page names them', async () => {
      const API = 'https://api.example.com';
      const OTHER = 'https://other.example.com';
      await updateClient(ts.store, { realmId: REALM, clientId: 'native-app', audiences: { set: [API, OTHER] } });
      try {
        const form = { client_id: 'native-app', scope: 'core_data offline_access' };
        const refused = await authorizeDevice({ ...form, resource: 'https://elsewhere.example.com' });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(refused.json().error, 'invalid_target');
        const started = await authorizeDevice({ ...form, resource: API });
        assert.equal(started.statusCode, 200, started.body);
        const d = started.json();
        const user = await approve(d.user_code);
        assert.deepEqual(user.pages, ['device-entry', 'login', 'consent', 'organization', 'device-done']);
        assert.match(user.consentPage ?? '', /<ul class="resources">\s*<li>https:\/\/api\.example\.com<\/li>/);

        // Another audience of the client, not of this grant: refused, and the device code stays usable.
        const wider = await tokenRequest(ts, { grant_type: GRANT, device_code: d.device_code, client_id: 'native-app', resource: OTHER });
        assert.equal(wider.statusCode, 400, wider.body);
        assert.equal(wider.json().error, 'invalid_target');
        ts.clock.advance(6);
        const res = await poll(d.device_code);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(decodeJwt(res.json().access_token).aud, API);
        assert.deepEqual(decodeJwt(res.json().refresh_token).resource, [API]);
        const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: res.json().refresh_token, client_id: 'native-app', resource: OTHER });
        assert.equal(refreshed.json().error, 'invalid_target');
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: 'native-app', audiences: { set: [] } });
      }
    });

    test('verification_uri_complete pre-fills the code for the user to confirm', async () => {
      const d = await start();
      const page = await ts.app.inject({ method: 'GET', url: new URL(d.verification_uri_complete).pathname + new URL(d.verification_uri_complete).search });
      assert.match(page.body, /Confirm the code on your device/);
      assert.ok(page.body.includes(`value="${d.user_code}"`));
      const user = await approve(d.user_code, { complete: true });
      assert.equal(user.pages.at(-1), 'device-done');
      assert.equal((await poll(d.device_code)).statusCode, 200);
    });

    test('Deny gives access_denied to the device', async () => {
      const d = await start();
      await ts.store.db.kysely.deleteFrom('consents').execute();
      const user = await approve(d.user_code, { consent: 'deny' });
      assert.match(user.last, /was not connected/);
      assert.equal((await poll(d.device_code)).json().error, 'access_denied');
    });

    test('an expired device code is expired_token, and its user code no longer works', async () => {
      const d = await start();
      ts.clock.advance(601);
      assert.equal((await poll(d.device_code)).json().error, 'expired_token');
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', realmPath('/device'));
      const form = parseForm(page.body);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: d.user_code });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /not valid, or it has expired/);
    });

    test("another client's device code is invalid_grant", async () => {
      const d = await start();
      const res = await tokenRequest(ts, { grant_type: GRANT, device_code: d.device_code }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.json().error, 'invalid_grant');
    });

    test('wrong user codes are rate-limited; the form needs its CSRF token', async () => {
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', realmPath('/device'));
      const form = parseForm(page.body);
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: 'forged', user_code: 'BCDF-GHJK' })).statusCode, 403);
      let last = 0;
      for (let i = 0; i < 11; i++) last = (await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: 'BCDF-GHJK' })).statusCode;
      assert.equal(last, 429);
      // Even the right code waits until the window has passed.
      const d = await start();
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: d.user_code })).statusCode, 429);
      ts.clock.advance(601);
    });
  });

  describe(`device verification page and the cap on unfinished sign-ins (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { maxInteractionsPerAddress: 3 } });
    });
    after(() => ts.close());

    test('entering a device code starts a sign-in that counts against its address like /auth does', async () => {
      const res = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/auth/device'),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'native-app', scope: 'openid core_data' }).toString(),
      });
      assert.equal(res.statusCode, 200, res.body);
      const { user_code: userCode } = res.json();
      const jar = new CookieJar();
      const form = parseForm((await inject(ts.app, jar, 'GET', realmPath('/device'))).body);
      // The same code entered again and again (each a new unfinished sign-in) stops at the cap.
      for (let i = 0; i < 3; i++) assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: userCode })).statusCode, 303);
      const refused = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: userCode });
      assert.equal(refused.statusCode, 429);
      assert.match(refused.body, /Too many sign-ins were started from your network/);
      assert.ok(refused.headers['retry-after']);
      // The authorization endpoint counts the same rows: this address is at its cap there too.
      const auth = await ts.app.inject({
        method: 'GET',
        url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`,
      });
      assert.equal(auth.statusCode, 429);
    });
  });
}
