import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, basic, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { nowSeconds } from '../../src/clock.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { OTP_POLICY } from '../../src/admin/operations/otp.js';
import { hotp, timeStep } from '../../src/crypto/totp.js';

for (const dialect of dialects()) {
  describe(`Keycloak's login options at sign-in (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
    });
    after(() => ts.close());

    /** A login form of a new browser, and a function posting one attempt to it (the whole response). */
    async function loginForm(ip = '127.0.0.1') {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      const attempt = async (username: string, password: string, extra: Record<string, string> = {}) => {
        const res = await ts.app.inject({
          method: 'POST',
          url: form.action,
          remoteAddress: ip,
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username, password, ...extra }).toString(),
        });
        jar.update(res);
        return res;
      };
      return { page: page.body, attempt, jar };
    }

    /** A page with what differs from one request to the next (the form's address and token, the name echoed) taken out. */
    const normalized = (body: string): string => body.replace(/value="[^"]*"/g, '').replace(/login-actions\/[^/"]+/g, '');

    async function passwordGrant(username: string, password: string) {
      return tokenRequest(ts, { grant_type: 'password', username, password, scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret) });
    }

    test('an email signs in through to a token (ignoring case), as the user; the page says "Username or email"', async () => {
      const { page } = await loginForm();
      assert.match(page, /<label for="username">Username or email<\/label>/);
      assert.doesNotMatch(page, /Remember me/, 'the realm does not offer it (rememberMe off by default)');
      const flow = await runAuthorization(ts, { username: ' Alice@EXAMPLE.com ', password: PASSWORD });
      assert.ok(flow.code);
      assert.ok(flow.pages.includes('login'));
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: flow.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(decodeJwt(res.json().access_token).sub, ts.user.id);
      const logins = (await ts.store.events.list(REALM, { username: 'alice' })).filter((e) => e.type === 'LOGIN');
      assert.ok(logins.some((e) => e.userId === ts.user.id), 'the event names the user, not the email typed');
    });

    test('the password grant takes an email too (direct access grants)', async () => {
      const res = await passwordGrant('ALICE@example.com', PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(decodeJwt(res.json().access_token).sub, ts.user.id);
      const wrong = await passwordGrant('alice@example.com', 'not the password');
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().error_description, 'Invalid user credentials');
      const failure = (await ts.store.events.list(REALM, { username: 'alice' })).find((e) => e.type === 'LOGIN_ERROR');
      assert.equal(failure?.userId, ts.user.id, 'a failure by email is recorded against the user');
    });

    test('loginWithEmailAllowed off: only the username signs in, the page says "Username"', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { loginWithEmailAllowed: false } });
      try {
        const { page, attempt } = await loginForm('10.9.0.1');
        assert.match(page, /<label for="username">Username<\/label>/);
        const res = await attempt('alice@example.com', PASSWORD);
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /Invalid username or password/);
        assert.equal((await passwordGrant('alice@example.com', PASSWORD)).statusCode, 400);
        assert.equal((await passwordGrant('alice', PASSWORD)).statusCode, 200);
      } finally {
        await updateRealm(ts.store, { realmId: REALM, settings: { loginWithEmailAllowed: true } });
      }
    });

    test('an email two users share names nobody: the same page as an unknown name and a wrong password', async () => {
      // Duplicates allowed for a while (which turns login by email off, as in Keycloak), then refused again.
      await updateRealm(ts.store, { realmId: REALM, settings: { duplicateEmailsAllowed: true } });
      assert.equal((await ts.store.realms.get(REALM))!.loginWithEmailAllowed, false);
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: PASSWORD, email: 'shared@example.com', orgAliases: ['acme'] });
      await createUser(ts.store, { realmId: REALM, username: 'carol', password: PASSWORD, email: 'SHARED@example.com', orgAliases: ['acme'] });
      await updateRealm(ts.store, { realmId: REALM, settings: { loginWithEmailAllowed: true } });
      const realm = (await ts.store.realms.get(REALM))!;
      assert.equal(realm.duplicateEmailsAllowed, false, 'login by email on turns duplicates off');
      const { attempt } = await loginForm('10.9.0.2');
      const ambiguous = await attempt('shared@example.com', PASSWORD);
      const unknown = await attempt('nobody@example.com', PASSWORD);
      const wrong = await attempt('alice@example.com', 'wrong password 1');
      for (const res of [ambiguous, unknown, wrong]) {
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /Invalid username or password/);
      }
      assert.equal(normalized(ambiguous.body), normalized(unknown.body));
      assert.equal(normalized(wrong.body), normalized(unknown.body));
      assert.equal((await passwordGrant('shared@example.com', PASSWORD)).json().error_description, 'Invalid user credentials');
      // Each of them still signs in with their username.
      assert.equal((await passwordGrant('bob', PASSWORD)).statusCode, 200);
    });

    test('brute force counts guesses by username and by email together, against the user', async () => {
      await createUser(ts.store, { realmId: REALM, username: 'dave', password: PASSWORD, email: 'dave@example.com', orgAliases: ['acme'] });
      const { attempt } = await loginForm('10.9.0.3');
      // Five failures in all (the realm's maxLoginFailures), alternating the two names.
      for (const name of ['dave', 'dave@example.com', 'dave', 'DAVE@example.com', 'dave']) {
        const res = await attempt(name, 'wrong password 1');
        assert.match(res.body, /Invalid username or password/, `${name}: ${res.statusCode}`);
        ts.clock.advance(10);
      }
      for (const name of ['dave', 'dave@example.com']) {
        const res = await attempt(name, PASSWORD);
        assert.equal(res.statusCode, 429, `${name} is locked`);
        assert.match(res.body, /locked for/);
      }
      assert.equal((await passwordGrant('dave@example.com', PASSWORD)).statusCode, 400, 'the password grant counts against the same user');
      const lockouts = (await ts.store.events.list(REALM, { username: 'dave' })).filter((e) => e.type === 'LOCKOUT');
      assert.equal(lockouts.length, 1);
      ts.clock.advance(120);
      assert.equal((await attempt('dave@example.com', PASSWORD)).statusCode, 303, 'the lock passes');
    });

    test("the device cookie of a browser that signed in by username lets the user in by email while an attacker keeps the account locked", async () => {
      await createUser(ts.store, { realmId: REALM, username: 'erin', password: PASSWORD, email: 'erin@example.com', orgAliases: ['acme'] });
      const own = await loginForm('10.9.1.1');
      assert.equal((await own.attempt('erin', PASSWORD)).statusCode, 303, 'signed in before: the browser gets its device cookie');
      assert.ok(own.jar.cookies.has('RG_DEVICE'));
      const attacker = await loginForm('10.9.1.2');
      for (let i = 0; i < 5; i++) {
        await attacker.attempt(i % 2 ? 'erin' : 'erin@example.com', 'wrong password 1');
        ts.clock.advance(10);
      }
      assert.equal((await attacker.attempt('erin@example.com', PASSWORD)).statusCode, 429, 'locked for everyone else');
      // The user's own browser, a new sign-in typing the email: its device cookie counts, not the lock.
      const again = await loginForm('10.9.1.1');
      for (const [k, v] of own.jar.cookies) if (k === 'RG_DEVICE') again.jar.cookies.set(k, v);
      assert.equal((await again.attempt('ERIN@example.com', PASSWORD)).statusCode, 303);
    });

    test('the login page escapes the email typed back', async () => {
      const { attempt } = await loginForm('10.9.0.4');
      const res = await attempt('<script>x</script>@example.com', 'wrong password 1');
      assert.equal(res.statusCode, 200);
      assert.ok(!res.body.includes('<script>x</script>'));
      assert.match(res.body, /&lt;script&gt;x&lt;\/script&gt;@example.com/);
      // A name too long for any user: refused like any unknown one, no error.
      const long = await attempt(`${'a'.repeat(400)}@example.com`, 'wrong password 1');
      assert.equal(long.statusCode, 200);
      assert.match(long.body, /Invalid username or password/);
      // Characters no database column holds (PostgreSQL refuses NUL in text), and odd ones: refused, no 500.
      for (const odd of ['nul\u0000@example.com', '%@example.com', '_@example.com', 'a\u202e@example.com', '@']) {
        const res = await attempt(odd, 'wrong password 1');
        // NUL is refused before the form is read (400, as for any field); the others are unknown names.
        if (odd.includes('\u0000')) assert.equal(res.statusCode, 400);
        else {
          assert.equal(res.statusCode, 200, JSON.stringify(odd));
          assert.match(res.body, /Invalid username or password/);
        }
        assert.doesNotMatch(res.body, /at \w+ \(|node_modules|stack/i);
        assert.equal((await passwordGrant(odd, 'wrong password 1')).statusCode, 400);
      }
    });
  });

  describe(`Remember me (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** Signs in on a new browser's login form (`fields`: more of the form); the response of the login's POST, and the browser. */
    async function signIn(fields: Record<string, string>) {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: PASSWORD, ...fields });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      return { page: page.body, res, jar };
    }

    const sessionCookie = (res: Awaited<ReturnType<typeof signIn>>['res']) =>
      (res.cookies as Array<{ name: string; maxAge?: number }>).find((c) => c.name === 'RG_SESSION');

    /** Whether the browser is still signed in: a new authorization request needs no login page. */
    async function signedIn(jar: CookieJar): Promise<boolean> {
      const flow = await runAuthorization(ts, { jar, password: 'not typed: the flow must not ask' }).catch((err: Error) => {
        if (err.message === 'login failed') return undefined;
        throw err;
      });
      return flow !== undefined && !flow.pages.includes('login');
    }

    test('realm setting off: no box, a ticked one is ignored, the cookie ends with the browser (Keycloak)', async () => {
      const { page, res } = await signIn({ rememberMe: 'on' });
      assert.doesNotMatch(page, /name="rememberMe"/);
      const cookie = sessionCookie(res);
      assert.ok(cookie);
      assert.equal(cookie.maxAge, undefined, 'no Max-Age: a browser-session cookie');
      const sessions = await ts.store.sessionAdmin.listForUser(REALM, ts.user.id, nowSeconds(ts.clock));
      assert.ok(sessions.every((s) => !s.rememberMe));
    });

    test('ticked: a persistent cookie and the remember-me lifetime, to the second', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { rememberMe: true, ssoMaxRememberMe: 7200, ssoIdleRememberMe: 0 } });
      const { page, res, jar } = await signIn({ rememberMe: 'on' });
      assert.match(page, /<input type="checkbox" id="rememberMe" name="rememberMe" value="on"> Remember me<\/label>/);
      assert.equal(sessionCookie(res)?.maxAge, 7200);
      const state = (res.cookies as Array<{ name: string; maxAge?: number }>).find((c) => c.name === 'RG_SESSION_STATE');
      assert.equal(state?.maxAge, 7200);
      // The session of the test before (not remembered) and this one (remembered).
      const sessions = await ts.store.sessionAdmin.listForUser(REALM, ts.user.id, nowSeconds(ts.clock));
      assert.deepEqual(sessions.map((s) => s.rememberMe).sort(), [false, true]);
      ts.clock.advance(7199);
      assert.equal(await signedIn(jar), true, 'one second before its end');
      ts.clock.advance(1);
      assert.equal(await signedIn(jar), false, 'at its end');
    });

    test('unticked in a realm that offers it: a browser-session cookie and the usual lifetime', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { rememberMe: true, ssoMaxRememberMe: 7200, ssoIdleRememberMe: 600, ssoSessionLifetime: 36_000 } });
      const { res, jar } = await signIn({});
      assert.equal(sessionCookie(res)?.maxAge, undefined);
      ts.clock.advance(7200);
      assert.equal(await signedIn(jar), true, 'neither the remember-me lifetime nor its idle timeout applies');
    });

    test('ticked with an idle timeout: each use keeps it alive; unused that long, it ends', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { rememberMe: true, ssoMaxRememberMe: 7200, ssoIdleRememberMe: 600 } });
      const { res, jar } = await signIn({ rememberMe: 'on' });
      assert.equal(sessionCookie(res)?.maxAge, 7200);
      ts.clock.advance(599);
      assert.equal(await signedIn(jar), true, 'used 599 s after it began');
      ts.clock.advance(599);
      assert.equal(await signedIn(jar), true, 'used again 599 s later');
      ts.clock.advance(600);
      assert.equal(await signedIn(jar), false, 'unused for 600 s');
    });

    test('"Remember me" survives the authenticator step: the session started after the code is remembered', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { rememberMe: true, ssoMaxRememberMe: 5000, ssoIdleRememberMe: 0 } });
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'otto', password: PASSWORD, email: 'otto@example.com', orgAliases: ['acme'] });
      const key = await enrollTestOtp(ts.store, (await ts.store.users.get(id))!, undefined, nowSeconds(ts.clock));
      ts.clock.advance(OTP_POLICY.period);
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const afterPassword = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'otto@example.com', password: PASSWORD, rememberMe: 'on' });
      assert.equal(afterPassword.statusCode, 303);
      assert.equal(jar.cookies.has('RG_SESSION'), false, 'no session before the code');
      const otpPage = await inject(ts.app, jar, 'GET', afterPassword.headers.location as string);
      const form = parseForm(otpPage.body);
      const code = hotp(key, timeStep(nowSeconds(ts.clock), OTP_POLICY.period), OTP_POLICY.digits, OTP_POLICY.algorithm);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, otp: code });
      assert.equal(res.statusCode, 303);
      assert.equal((res.cookies as Array<{ name: string; maxAge?: number }>).find((c) => c.name === 'RG_SESSION')?.maxAge, 5000);
      const sessions = await ts.store.sessionAdmin.listForUser(REALM, id, nowSeconds(ts.clock));
      assert.deepEqual(sessions.map((s) => s.rememberMe), [true]);
    });

    test('0 means the usual lifetime (ssoSessionMaxLifespan) for a remembered session too', async () => {
      await updateRealm(ts.store, { realmId: REALM, settings: { rememberMe: true, ssoMaxRememberMe: 0, ssoIdleRememberMe: 0, ssoSessionLifetime: 3000 } });
      const { res, jar } = await signIn({ rememberMe: 'on' });
      assert.equal(sessionCookie(res)?.maxAge, 3000);
      ts.clock.advance(2999);
      assert.equal(await signedIn(jar), true);
      ts.clock.advance(1);
      assert.equal(await signedIn(jar), false);
    });
  });
}
