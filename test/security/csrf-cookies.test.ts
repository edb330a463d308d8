import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization } from '../helpers/flow.js';

// Issue 12 item 1: a CSRF token must not be computable from the binding cookie alone (a sibling
// subdomain can set that cookie), and behind https the cookies carry the __Host- prefix.
const sha = (v: string): string => crypto.createHash('sha256').update(v).digest('base64url');

/** What an attacker who chose the binding cookie could compute without the server's secret. */
function guessedTokens(purpose: string, cookie: string): string[] {
  return [sha(`${purpose}-form:${sha(cookie)}`), sha(`${purpose}:${sha(cookie)}`), sha(`${purpose}-form:${cookie}`)];
}

for (const dialect of dialects()) {
  describe(`CSRF tokens and cookies (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const forms: Array<{ purpose: string; path: string; fields: Record<string, string> }> = [
      { purpose: 'account', path: realmPath('/account/login'), fields: { username: 'alice', password: 'correct horse battery' } },
      { purpose: 'device', path: realmPath('/device'), fields: { user_code: 'ABCD-EFGH' } },
      { purpose: 'logout', path: realmPath('/protocol/openid-connect/logout/confirm'), fields: {} },
    ];

    test('a tossed binding cookie with a token computed from it is refused on every form', async () => {
      const tossed = 'attacker-chosen-binding-value-0123456789';
      for (const f of forms) {
        for (const csrf of guessedTokens(f.purpose, tossed)) {
          const jar = new CookieJar();
          jar.cookies.set('RG_BROWSER', tossed);
          const res = await inject(ts.app, jar, 'POST', f.path, { ...f.fields, csrf });
          assert.equal(res.statusCode, 403, `${f.path}: ${res.statusCode}`);
          assert.equal(res.headers['set-cookie'] === undefined || !String(res.headers['set-cookie']).includes('RG_SESSION='), true);
        }
      }
    });

    test("the server's own tokens still work, and a token of one purpose or one browser does not fit another", async () => {
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
      const form = parseForm(page.body);
      const other = new CookieJar();
      const otherForm = parseForm((await inject(ts.app, other, 'GET', realmPath('/device'))).body);
      // Another browser's token, or the device form's token, is refused here.
      assert.equal((await inject(ts.app, other, 'POST', realmPath('/account/login'), { csrf: form.csrf, username: 'alice', password: 'correct horse battery' })).statusCode, 403);
      assert.equal((await inject(ts.app, other, 'POST', realmPath('/account/login'), { csrf: otherForm.csrf, username: 'alice', password: 'correct horse battery' })).statusCode, 403);
      const ok = await inject(ts.app, jar, 'POST', realmPath('/account/login'), { csrf: form.csrf, username: 'alice', password: 'correct horse battery' });
      assert.equal(ok.statusCode, 303);
    });
  });

  describe(`cookies behind https (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { authUrl: 'https://login.example.com', appUrl: 'https://login.example.com' } });
    });
    after(() => ts.close());

    test('are __Host- prefixed: Secure, Path=/, no Domain, one name per realm', async () => {
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
      const cookies = page.cookies as Array<{ name: string; path?: string; secure?: boolean; domain?: string; httpOnly?: boolean; sameSite?: string }>;
      assert.equal(cookies.length, 1);
      const c = cookies[0]!;
      assert.equal(c.name, `__Host-RG_BROWSER.${REALM}`);
      assert.equal(c.path, '/');
      assert.equal(c.secure, true);
      assert.equal(c.httpOnly, true);
      assert.equal(c.domain, undefined);
      assert.equal(c.sameSite, 'Lax');
      // Signing in works with them, and sets the session cookie the same way.
      const form = parseForm(page.body);
      const res = await inject(ts.app, jar, 'POST', realmPath('/account/login'), { csrf: form.csrf, username: 'alice', password: 'correct horse battery' });
      assert.equal(res.statusCode, 303);
      const session = (res.cookies as Array<{ name: string; path?: string }>).find((x) => x.name === `__Host-RG_SESSION.${REALM}`);
      assert.ok(session);
      assert.equal(session.path, '/');
      const account = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.match(account.body, /alice/);
    });

    test('the authorization flow works with them (login, consent, organization, single sign-on)', async () => {
      const first = await runAuthorization(ts);
      assert.ok(first.code);
      // Every credential cookie is prefixed. RG_SESSION_STATE (keycloak-js's status iframe) is no credential:
      // it holds the session id the client already has, and a tossed one can only make the iframe say "changed".
      const names = [...first.jar.cookies.keys()].filter((k) => k !== 'RG_SESSION_STATE');
      assert.ok(names.length >= 2 && names.every((k) => k.startsWith('__Host-')), names.join(' '));
      const again = await runAuthorization(ts, { jar: first.jar });
      assert.ok(again.code);
      assert.ok(!again.pages.includes('login'));
    });

    test('an unprefixed binding cookie (what a sibling subdomain can set) is ignored', async () => {
      const jar = new CookieJar();
      const form = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const tossed = new CookieJar();
      tossed.cookies.set('RG_BROWSER', jar.cookies.get(`__Host-RG_BROWSER.${REALM}`)!);
      const res = await inject(ts.app, tossed, 'POST', realmPath('/account/login'), { csrf: form.csrf, username: 'alice', password: 'correct horse battery' });
      assert.equal(res.statusCode, 403);
    });
  });
}
