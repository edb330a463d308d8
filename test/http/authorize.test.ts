import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, parseForm, runAuthorization } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations.js';

const AUTH = realmPath('/protocol/openid-connect/auth');

for (const dialect of dialects()) {
  describe(`authorization endpoint (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const forgetConsents = () => ts.store.db.kysely.deleteFrom('consents').execute();
    const get = (query: string, headers: Record<string, string> = {}) => ts.app.inject({ method: 'GET', url: `${AUTH}?${query}`, headers });

    /** An error the client receives by redirect (RFC 6749 4.1.2.1). */
    async function redirectedError(extra: Record<string, string | undefined>): Promise<URLSearchParams> {
      const res = await get(authorizeQuery(ts, extra));
      assert.equal(res.statusCode, 303, res.body);
      const loc = new URL(res.headers.location as string);
      assert.equal(`${loc.origin}${loc.pathname}`, ts.client.redirectUri);
      return loc.searchParams;
    }

    test('an unknown client gets an error page and no redirect', async () => {
      const res = await get(authorizeQuery(ts, { client_id: 'nobody' }));
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /not registered/);
      assert.match(res.headers['content-type'] as string, /text\/html/);
    });

    test('missing client_id or redirect_uri gets an error page', async () => {
      for (const extra of [{ client_id: undefined }, { redirect_uri: undefined }]) {
        const res = await get(authorizeQuery(ts, extra));
        assert.equal(res.statusCode, 400);
        assert.equal(res.headers.location, undefined);
      }
    });

    test('redirect URIs match exactly: near misses are refused without a redirect (RFC 9700 4.1.3)', async () => {
      const registered = ts.client.redirectUri;
      const tricks = [
        registered + '/',
        registered + '?x=1',
        registered + '#frag',
        registered.toUpperCase(),
        'https://APP.example.com/callback',
        'https://app.example.com/callback/../callback',
        'https://app.example.com.evil.com/callback',
        'https://evil.com/callback',
        'https://app.example.com@evil.com/callback',
        'http://app.example.com/callback',
        'https://app.example.com:443/callback',
        'https://app.example.com/callbac',
        'https://app.example.com/callback%2f..',
        'http://localhost:9999/cb',
        'http://127.0.0.2:9999/cb',
      ];
      for (const redirect_uri of tricks) {
        const res = await get(authorizeQuery(ts, { redirect_uri }));
        assert.equal(res.statusCode, 400, redirect_uri);
        assert.equal(res.headers.location, undefined, redirect_uri);
      }
    });

    test('loopback IP redirect URIs match on any port and nothing else (RFC 8252 7.3)', async () => {
      const pub = { client_id: ts.publicClient.id, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
      for (const redirect_uri of ['http://127.0.0.1/callback', 'http://127.0.0.1:51234/callback', 'http://127.0.0.1:1/callback']) {
        const res = await get(authorizeQuery(ts, { ...pub, redirect_uri }));
        assert.equal(res.statusCode, 303, redirect_uri);
        assert.match(res.headers.location as string, /login-actions/, redirect_uri);
      }
      for (const redirect_uri of [
        'http://127.0.0.1:51234/callback2',
        'http://127.0.0.1:51234/callback?x=1',
        'http://127.0.0.1:99999/callback',
        'http://[::1]:51234/callback',
        'http://localhost:51234/callback',
        'https://127.0.0.1:51234/callback',
        'http://127.0.0.1.evil.com:51234/callback',
        'http://127.0.0.1:51234@evil.com/callback',
      ]) {
        const res = await get(authorizeQuery(ts, { ...pub, redirect_uri }));
        assert.equal(res.statusCode, 400, redirect_uri);
        assert.equal(res.headers.location, undefined, redirect_uri);
      }
    });

    test('duplicated client_id or redirect_uri gets an error page, other duplicates redirect invalid_request', async () => {
      const q = authorizeQuery(ts);
      let res = await get(`${q}&client_id=${ts.client.id}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
      res = await get(`${q}&scope=openid`);
      assert.equal(res.statusCode, 303);
      assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_request');
    });

    test('unsupported response_type redirects with unsupported_response_type and state', async () => {
      const p = await redirectedError({ response_type: 'token', state: 'st-1' });
      assert.equal(p.get('error'), 'unsupported_response_type');
      assert.equal(p.get('state'), 'st-1');
      assert.ok(p.get('error_description'));
      assert.equal(p.get('iss'), `${ts.config.authUrl}/auth/realms/${REALM}`);
    });

    test('missing response_type is invalid_request', async () => {
      assert.equal((await redirectedError({ response_type: undefined })).get('error'), 'invalid_request');
    });

    test('unknown, missing or disallowed scope is invalid_scope', async () => {
      assert.equal((await redirectedError({ scope: 'openid admin' })).get('error'), 'invalid_scope');
      assert.equal((await redirectedError({ scope: undefined })).get('error'), 'invalid_scope');
      assert.equal((await redirectedError({ scope: 'openid "x' })).get('error'), 'invalid_scope');
    });

    test('PKCE: plain, a method without challenge, and malformed challenges are invalid_request (RFC 7636 4.3)', async () => {
      const good = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
      assert.equal((await redirectedError({ code_challenge: good, code_challenge_method: 'plain' })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ code_challenge: good })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ code_challenge_method: 'S256' })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ code_challenge: 'short', code_challenge_method: 'S256' })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ code_challenge: good + '!', code_challenge_method: 'S256' })).get('error'), 'invalid_request');
    });

    test('a public client without PKCE is refused', async () => {
      const res = await get(authorizeQuery(ts, { client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri }));
      assert.equal(res.statusCode, 303);
      const loc = new URL(res.headers.location as string);
      assert.equal(loc.searchParams.get('error'), 'invalid_request');
    });

    test('state is echoed byte for byte', async () => {
      const state = 'a b+c/d?e=f&g=ü%20😀';
      const p = await redirectedError({ state, response_type: 'none' });
      assert.equal(p.get('state'), state);
      const ok = await runAuthorization(ts, { query: { state } });
      assert.equal(ok.location.searchParams.get('state'), state);
    });

    test('the full flow: login, consent, organization, then a 303 with code, state and iss', async () => {
      await forgetConsents();
      const r = await runAuthorization(ts, { query: { state: 's1' } });
      assert.deepEqual(r.pages, ['login', 'consent', 'organization']);
      assert.equal(`${r.location.origin}${r.location.pathname}`, ts.client.redirectUri);
      assert.match(r.code ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(r.location.searchParams.get('state'), 's1');
      // The code is stored only as a hash.
      const rows = await ts.store.db.kysely.selectFrom('authorization_codes').select('hash').execute();
      assert.ok(rows.length > 0 && rows.every((x) => x.hash !== r.code));
    });

    test('POST at the authorization endpoint works like GET', async () => {
      const res = await ts.app.inject({
        method: 'POST',
        url: AUTH,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: authorizeQuery(ts),
      });
      assert.equal(res.statusCode, 303);
      assert.match(res.headers.location as string, /\/login-actions\//);
    });

    test('an SSO session and a remembered consent skip every page', async () => {
      await forgetConsents();
      const first = await runAuthorization(ts);
      assert.equal(first.pages.length, 3);
      const second = await runAuthorization(ts, { jar: first.jar });
      assert.deepEqual(second.pages, []);
      assert.ok(second.code);
      // A scope not consented yet asks for consent again, without a new login.
      const third = await runAuthorization(ts, { jar: first.jar, query: { scope: 'openid exports' } });
      assert.deepEqual(third.pages, ['consent', 'organization']);
    });

    test('the SSO session ends after the realm lifetime', async () => {
      const first = await runAuthorization(ts);
      ts.clock.advance(10 * 3600 + 1);
      const again = await runAuthorization(ts, { jar: first.jar });
      // Login again; the consent is remembered and the only organization is implied.
      assert.deepEqual(again.pages, ['login']);
    });

    test('OIDC prompt, max_age and login_hint (OIDC Core 3.1.2.1)', async () => {
      await forgetConsents();
      // prompt=none without a session: login_required, with the state.
      const p = await redirectedError({ prompt: 'none', state: 'pn' });
      assert.equal(p.get('error'), 'login_required');
      assert.equal(p.get('state'), 'pn');
      assert.equal((await redirectedError({ prompt: 'none login' })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ prompt: 'bogus' })).get('error'), 'invalid_request');
      assert.equal((await redirectedError({ max_age: '-1' })).get('error'), 'invalid_request');

      const first = await runAuthorization(ts, { query: { scope: 'openid profile' } });
      // Logged in but a new scope: consent_required.
      const needConsent = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts, { prompt: 'none', scope: 'openid exports' })}`, headers: { cookie: first.jar.header() } });
      assert.equal(new URL(needConsent.headers.location as string).searchParams.get('error'), 'consent_required');
      // Logged in and consented: prompt=none returns a code with no page.
      const silent = await runAuthorization(ts, { jar: first.jar, query: { prompt: 'none', scope: 'openid profile' } });
      assert.deepEqual(silent.pages, []);
      assert.ok(silent.code);
      // prompt=login asks for the password again; prompt=consent asks for consent again.
      assert.deepEqual((await runAuthorization(ts, { jar: first.jar, query: { prompt: 'login', scope: 'openid profile' } })).pages, ['login']);
      assert.deepEqual((await runAuthorization(ts, { jar: first.jar, query: { prompt: 'consent', scope: 'openid profile' } })).pages, ['consent', 'organization']);
      // max_age=0 is prompt=login (OIDC Core 3.1.2.1, errata set 2), even for a sign-in of this very second.
      assert.deepEqual((await runAuthorization(ts, { jar: first.jar, query: { max_age: '0', scope: 'openid profile' } })).pages, ['login']);
      // max_age: a session older than max_age must log in again.
      ts.clock.advance(120);
      assert.deepEqual((await runAuthorization(ts, { jar: first.jar, query: { max_age: '60', scope: 'openid profile' } })).pages, ['login']);
      assert.deepEqual((await runAuthorization(ts, { jar: first.jar, query: { max_age: '600', scope: 'openid profile' } })).pages, []);
      // login_hint fills in the username; ui_locales and display are accepted and ignored.
      const start = await get(authorizeQuery(ts, { login_hint: 'alice@example', ui_locales: 'sv en', display: 'popup' }));
      const jar = new CookieJar();
      jar.update(start);
      const page = await ts.app.inject({ method: 'GET', url: start.headers.location as string, headers: { cookie: jar.header() } });
      assert.match(page.body, /name="username" value="alice@example"/);
    });

    test('Deny redirects with access_denied and the state', async () => {
      await forgetConsents();
      const r = await runAuthorization(ts, { consent: 'deny', query: { state: 'deny-me', scope: 'openid profile' } });
      assert.equal(r.location.searchParams.get('error'), 'access_denied');
      assert.equal(r.location.searchParams.get('state'), 'deny-me');
      assert.equal(r.code, undefined);
    });

    test('a wrong password shows a clear message and no session', async () => {
      const jar = new CookieJar();
      const start = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts)}` });
      jar.update(start);
      const page = await ts.app.inject({ method: 'GET', url: start.headers.location as string, headers: { cookie: jar.header() } });
      const form = parseForm(page.body);
      for (const [username, password] of [['alice', 'wrong password'], ['nobody', 'whatever1'], ['alice', '']]) {
        const res = await ts.app.inject({
          method: 'POST',
          url: form.action,
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username: username!, password: password! }).toString(),
        });
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /Invalid username or password/);
        assert.equal(res.cookies.find((c) => c.name === 'RG_SESSION'), undefined);
      }
    });

    test('forms without the CSRF token, or from another browser, are refused', async () => {
      const jar = new CookieJar();
      const start = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts)}` });
      jar.update(start);
      const page = await ts.app.inject({ method: 'GET', url: start.headers.location as string, headers: { cookie: jar.header() } });
      const form = parseForm(page.body);
      const post = (cookie: string, csrf: string) =>
        ts.app.inject({
          method: 'POST',
          url: form.action,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf, username: 'alice', password: ts.user.password }).toString(),
        });
      assert.equal((await post(jar.header(), 'forged')).statusCode, 403);
      assert.equal((await post(jar.header(), '')).statusCode, 403);
      assert.equal((await post('RG_BROWSER=someone-else', form.csrf)).statusCode, 400);
      assert.equal((await post('', form.csrf)).statusCode, 400);
      // The real browser still succeeds.
      assert.equal((await post(jar.header(), form.csrf)).statusCode, 303);
    });

    test('cookies are HttpOnly, SameSite=Lax, scoped to the realm; pages carry security headers', async () => {
      const start = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts)}` });
      const cookie = start.cookies.find((c) => c.name === 'RG_BROWSER');
      assert.ok(cookie);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');
      assert.equal(cookie.path, `/auth/realms/${REALM}/`);
      const page = await ts.app.inject({ method: 'GET', url: start.headers.location as string, headers: { cookie: `RG_BROWSER=${cookie.value}` } });
      assert.equal(page.statusCode, 200);
      assert.match(page.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.equal(page.headers['access-control-allow-origin'], undefined);
    });

    test('an expired or unknown interaction shows an error page', async () => {
      const res = await ts.app.inject({ method: 'GET', url: realmPath('/login-actions/does-not-exist') });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /expired/);
    });

    test('a user without an organization gets a clear page; the client gets access_denied', async () => {
      await createUser(ts.store, { realmId: REALM, username: 'loner', password: 'loner-password' });
      const r = await runAuthorization(ts, { username: 'loner', password: 'loner-password', query: { state: 'lonely' } });
      assert.deepEqual(r.pages, ['login', 'no-organization']);
      assert.equal(r.location.searchParams.get('error'), 'access_denied');
      assert.equal(r.location.searchParams.get('state'), 'lonely');
    });

    test('a user with several organizations chooses one; an alias not theirs is refused', async () => {
      const { createOrganization } = await import('../../src/admin/operations.js');
      await createOrganization(ts.store, { realmId: REALM, alias: 'globex', name: 'Globex' });
      await createOrganization(ts.store, { realmId: REALM, alias: 'other', name: 'Other' });
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: 'bob-password', orgAliases: ['acme', 'globex'] });
      await assert.rejects(runAuthorization(ts, { username: 'bob', password: 'bob-password', organization: 'other' }), /too many steps|expected a 303/);
      const r = await runAuthorization(ts, { username: 'bob', password: 'bob-password', organization: 'globex' });
      assert.ok(r.code);
      const chosen = await ts.store.db.kysely.selectFrom('authorization_codes').innerJoin('organizations', 'organizations.id', 'authorization_codes.organization_id').select('organizations.alias').where('authorization_codes.user_id', '=', (await ts.store.users.findByUsername(REALM, 'bob'))!.id).execute();
      assert.deepEqual(chosen.map((c) => c.alias), ['globex']);
    });

    test('the registered redirect URI keeps its own query parameters', async () => {
      const { createClient } = await import('../../src/admin/operations.js');
      await createClient(ts.store, { realmId: REALM, clientId: 'q-app', redirectUris: ['https://q.example/cb?tenant=a%20b'], secret: 'q-secret-value' });
      const r = await runAuthorization(ts, { query: { client_id: 'q-app', redirect_uri: 'https://q.example/cb?tenant=a%20b' } });
      assert.equal(r.location.searchParams.get('tenant'), 'a b');
      assert.ok(r.code);
      assert.match(r.location.href, /^https:\/\/q\.example\/cb\?tenant=a%20b&code=/);
    });
  });
}
