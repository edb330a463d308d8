import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm } from '../helpers/flow.js';
import { AUTH, Harness, assertNoRedirect, pkce } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 10 security considerations (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    /** Starts an authorization in `jar` and returns the first interaction page, or the redirect when there is none. */
    async function start(jar: CookieJar, query: Record<string, string | undefined> = {}) {
      const res = await inject(ts.app, jar, 'GET', `${AUTH}?${authorizeQuery(ts, query)}`);
      assert.equal(res.statusCode, 303, res.body);
      const location = String(res.headers.location);
      return location.startsWith('/') ? { page: await inject(ts.app, jar, 'GET', location), redirect: undefined } : { page: undefined, redirect: res };
    }

    async function login(jar: CookieJar, query: Record<string, string | undefined> = {}) {
      const { page } = await start(jar, query);
      assert.equal(pageKind(page!.body), 'login');
      const form = parseForm(page!.body);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: ts.user.username, password: ts.user.password });
      assert.equal(res.statusCode, 303);
      return inject(ts.app, jar, 'GET', String(res.headers.location));
    }

    test('RFC 6749 10.2 (RFC 6819 5.2.4.1, RFC 8252 8.6): a repeated request of a public client is not approved without the user', async () => {
      const { challenge } = pkce();
      const query = { client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri, code_challenge: challenge, code_challenge_method: 'S256' };
      const first = await h.flow(query);
      assert.ok(first.code);
      // Anyone can listen on a loopback port and replay the request: the user must confirm again.
      const again = await h.flow(query);
      assert.notDeepEqual(again.pages, [], 'a code was issued without any page');
    });

    test('RFC 6749 10.3 / 4.1.2: the redirect carrying the code is never cached', async () => {
      await h.code();
      const res = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts)}`, headers: { cookie: h.jar.header() } });
      assert.equal(res.statusCode, 303);
      assert.match(String(res.headers.location), /[?&]code=/);
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    test('RFC 6749 10.10: codes and refresh tokens are unguessable (at least 128 bits, all distinct)', async () => {
      const codes = new Set<string>();
      const refreshTokens = new Set<string>();
      for (let i = 0; i < 10; i++) {
        const code = await h.code();
        codes.add(code);
        refreshTokens.add((await h.exchange(code)).json().refresh_token);
      }
      // A refresh token is a JWT (contract item 1): its unguessable part is the jti (and the HMAC).
      const jtis = [...refreshTokens].map((t) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString('utf8')).jti as string);
      for (const value of [...codes, ...jtis]) {
        // base64url: 6 bits a character; 22 characters carry 132 bits.
        assert.match(value, /^[A-Za-z0-9_-]{22,}$/);
        assert.ok(value.length * 6 >= 128, value);
      }
      assert.equal(new Set(jtis).size, 10);
      assert.equal(codes.size, 10);
      assert.equal(refreshTokens.size, 10);
    });

    test('RFC 6749 10.12: the consent form is protected against CSRF: a forged approval issues no code', async () => {
      const jar = new CookieJar();
      const consent = await login(jar, { scope: 'openid exports' });
      assert.equal(pageKind(consent.body), 'consent');
      const form = parseForm(consent.body);
      const post = (cookie: string, body: Record<string, string>) =>
        ts.app.inject({ method: 'POST', url: form.action, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(body).toString() });
      for (const [cookie, body] of [
        [jar.header(), { decision: 'allow' }],
        [jar.header(), { decision: 'allow', csrf: 'forged' }],
        ['', { decision: 'allow', csrf: form.csrf }],
        ['RG_BROWSER=another-browser', { decision: 'allow', csrf: form.csrf }],
      ] as const) {
        const res = await post(cookie, body);
        assert.ok(res.statusCode === 400 || res.statusCode === 403, `${res.statusCode}`);
        assert.doesNotMatch(String(res.headers.location ?? ''), /code=/);
      }
      // The real browser, with its token, proceeds.
      assert.equal((await post(jar.header(), { decision: 'allow', csrf: form.csrf })).statusCode, 303);
    });

    test('RFC 6749 10.13 (RFC 6819 4.4.1.9): login and consent pages cannot be framed', async () => {
      const jar = new CookieJar();
      const { page: loginPage } = await start(jar, { scope: 'openid profile' });
      const consentPage = await login(jar, { scope: 'openid profile' });
      for (const page of [loginPage!, consentPage]) {
        assert.equal(page.headers['x-frame-options'], 'DENY');
        assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      }
    });

    test('RFC 6749 10.14: request values are never reflected as markup', async () => {
      const markup = '"><script>alert(1)</script>';
      for (const extra of [{ client_id: markup }, { redirect_uri: `https://app.example.com/${markup}` }]) {
        const res = await h.authorize(extra);
        assertNoRedirect(res);
        assert.ok(!res.body.includes('<script>alert'), JSON.stringify(extra));
      }
      const { page } = await start(new CookieJar(), { login_hint: markup });
      assert.ok(!page!.body.includes('<script>alert'));
      // In a redirect the state is percent-encoded.
      const res = await h.authorize({ response_type: 'token', state: markup });
      assert.doesNotMatch(String(res.headers.location), /[<>"]/);
    });
  });
}
