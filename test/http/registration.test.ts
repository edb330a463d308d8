import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, realmPath, basic, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, responseOf, tokenRequest } from '../helpers/flow.js';
import { dialects } from '../helpers/db.js';
import { updateRealm } from '../../src/admin/operations.js';
import { REGISTRATIONS_PER_ADDRESS } from '../../src/http/interaction/registration-routes.js';

const PW = 'a fine new password 7';

// Keycloak's self-registration: "Register" on the login page, the form, Keycloak's errors, the realm's
// password policy, CSRF, the per-address limit, email as username; then on with the sign-in to the code.
for (const dialect of dialects()) {
  describe(`registration (${dialect})`, () => {
    let ts: TestServer;
    let since = 0;
    before(async () => {
      ts = await startTestServer({ dialect });
      await updateRealm(ts.store, { realmId: 'test', settings: { registrationAllowed: true, organizationRequired: false } });
      ts.services.cache.clear();
    });
    after(async () => ts.close());
    beforeEach(() => {
      // Past the per-address window of the test before.
      ts.clock.advance(REGISTRATIONS_PER_ADDRESS.windowMs / 1000 + 60);
      since = Math.floor(ts.clock.nowMs() / 1000);
    });

    const setRealm = async (settings: Parameters<typeof updateRealm>[1]['settings']): Promise<void> => {
      await updateRealm(ts.store, { realmId: 'test', settings });
      ts.services.cache.clear();
    };

    /** A new sign-in up to its login page, then the page "Register" links to. */
    async function registerPage(jar = new CookieJar()): Promise<{ jar: CookieJar; url: string; login: string; status: number; body: string }> {
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { scope: 'openid email profile' })}`);
      assert.equal(start.statusCode, 303);
      const url = start.headers.location as string;
      const login = await inject(ts.app, jar, 'GET', url);
      const href = /New user\? <a href="([^"]*)">Register<\/a>/.exec(login.body)?.[1];
      assert.equal(href, `${url}/registration`, 'the login page links to the registration page of the same pending request');
      const page = await inject(ts.app, jar, 'GET', href!);
      return { jar, url, login: login.body, status: page.statusCode, body: page.body };
    }

    const fields = (o: Record<string, string> = {}): Record<string, string> => ({ username: 'newbie', email: 'newbie@example.com', firstName: 'New', lastName: 'Bie', 'password-new': PW, 'password-confirm': PW, ...o });

    async function submit(o: Record<string, string> = {}, jar?: CookieJar): Promise<{ jar: CookieJar; url: string; status: number; body: string; location?: string }> {
      const p = await registerPage(jar);
      assert.equal(p.status, 200, p.body.slice(0, 300));
      const form = parseForm(p.body);
      const res = await inject(ts.app, p.jar, 'POST', form.action, { csrf: form.csrf, ...fields(o) });
      return { jar: p.jar, url: p.url, status: res.statusCode, body: res.body, ...(res.headers.location ? { location: res.headers.location as string } : {}) };
    }

    const events = (type: string) => ts.store.events.list('test', { types: [type], since, order: 'asc' });

    test('registered: the user exists (enabled, no organization, email not verified), is signed in, consents and gets a code the client exchanges', async () => {
      const p = await registerPage();
      assert.equal(p.status, 200);
      assert.match(p.body, /Create your account/);
      for (const name of ['username', 'email', 'firstName', 'lastName', 'password-new', 'password-confirm']) assert.match(p.body, new RegExp(`name="${name}"`));
      assert.match(p.body, /At least 8 characters/, 'the password rule is said before typing');
      const form = parseForm(p.body);
      let res = await inject(ts.app, p.jar, 'POST', form.action, { csrf: form.csrf, ...fields({ username: 'NewBie', email: 'NewBie@Example.com' }) });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      assert.equal(res.headers.location, p.url);
      const user = (await ts.store.users.findByUsername('test', 'newbie'))!;
      assert.ok(user);
      assert.equal(user.enabled, true);
      assert.equal(user.email, 'newbie@example.com');
      assert.equal(user.emailVerified, false);
      assert.equal(user.firstName, 'New');
      assert.equal(user.lastName, 'Bie');
      assert.deepEqual(user.requiredActions, []);
      assert.deepEqual(await ts.store.users.organizations(user.id), []);
      // As after a login: consent, then the code.
      const consent = await inject(ts.app, p.jar, 'GET', p.url);
      assert.match(consent.body, /name="decision"/);
      const cf = parseForm(consent.body);
      res = await inject(ts.app, p.jar, 'POST', cf.action, { csrf: cf.csrf, decision: 'allow' });
      const flow = responseOf(res, [], p.jar);
      assert.ok(flow?.code, res.body.slice(0, 300));
      const token = await tokenRequest(ts, { grant_type: 'authorization_code', code: flow.code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(token.statusCode, 200, token.body);
      const claims = decodeJwt((token.json() as { access_token: string }).access_token);
      assert.equal(claims.sub, user.id);
      const [reg] = await events('REGISTER');
      assert.equal(reg?.userId, user.id);
      assert.equal(reg?.username, 'newbie');
      assert.equal((await events('LOGIN')).length, 1);
      // A self-registration is no administrator's change.
      assert.equal((await ts.store.adminEvents.list('test', {})).filter((e) => e.resourcePath === `users/${user.id}`).length, 0);
      // The password chosen signs in.
      const again = await registerPage();
      const lf = parseForm(again.login);
      const login = await inject(ts.app, again.jar, 'POST', lf.action, { csrf: lf.csrf, username: 'newbie', password: PW });
      assert.equal(login.statusCode, 303);
    });

    test("Keycloak's errors: taken username and email, invalid email, passwords that differ, missing fields; typed values kept and escaped, never the password", async () => {
      const cases: Array<[Record<string, string>, RegExp, string]> = [
        [{ username: 'alice' }, /Username already exists\./, 'username_in_use'],
        [{ email: 'ALICE@example.com' }, /Email already exists\./, 'email_in_use'],
        [{ email: 'not-an-address' }, /Invalid email address\./, 'invalid_registration'],
        [{ 'password-confirm': 'something else 123' }, /Passwords don&#39;t match\.|Passwords don't match\./, 'invalid_registration'],
        [{ username: '', firstName: '' }, /Please specify username\.[\s\S]*Please specify first name\./, 'invalid_registration'],
        [{ lastName: '', email: '' }, /Please specify email\.[\s\S]*Please specify last name\./, 'invalid_registration'],
      ];
      for (const [o, words, code] of cases) {
        const r = await submit({ username: 'erruser', email: 'erruser@example.com', ...o, firstName: o.firstName ?? '<b>Eve</b> "q"' });
        assert.equal(r.status, 400, JSON.stringify(o));
        assert.match(r.body, words, JSON.stringify(o));
        if (o.firstName === undefined) assert.ok(r.body.includes('value="&lt;b&gt;Eve&lt;/b&gt; &quot;q&quot;"'), 'the typed first name is kept, escaped');
        assert.ok(!r.body.includes('<b>Eve</b>'));
        assert.ok(!r.body.includes(PW) && !r.body.includes('something else 123'), 'the password is never sent back');
        const last = (await events('REGISTER_ERROR')).at(-1);
        assert.equal(last?.reason, code, JSON.stringify(o));
        ts.clock.advance(REGISTRATIONS_PER_ADDRESS.windowMs / 1000);
      }
      assert.equal(await ts.store.users.findByUsername('test', 'erruser'), undefined);
      assert.equal((await ts.store.users.findByUsername('test', 'alice'))!.firstName, null, 'the existing user is untouched');
    });

    test("the realm's password policy: said on the form, a password against it refused with its words", async () => {
      await setRealm({ passwordPolicy: 'length(12) and digits(2) and notUsername' });
      try {
        const p = await registerPage();
        assert.match(p.body, /minlength="12"/);
        assert.match(p.body, /At least 12 characters/);
        const r = await submit({ username: 'policyuser', email: 'policy@example.com', 'password-new': 'only 1 digit here', 'password-confirm': 'only 1 digit here' });
        assert.equal(r.status, 400);
        assert.match(r.body, /The password must .*2 digits/);
        const named = await submit({ username: 'policyuser12345', email: 'policy@example.com', 'password-new': 'policyuser12345', 'password-confirm': 'policyuser12345' });
        assert.equal(named.status, 400);
        assert.match(named.body, /username/);
        assert.equal(await ts.store.users.findByUsername('test', 'policyuser'), undefined);
        const ok = await submit({ username: 'policyuser', email: 'policy@example.com', 'password-new': 'two digits 12 here', 'password-confirm': 'two digits 12 here' });
        assert.equal(ok.status, 303, ok.body.slice(0, 300));
      } finally {
        await setRealm({ passwordPolicy: '' });
      }
    });

    test('CSRF: a form without the pending request\'s token, or another browser, creates no one', async () => {
      const p = await registerPage();
      const form = parseForm(p.body);
      const bad = await inject(ts.app, p.jar, 'POST', form.action, { csrf: 'forged', ...fields({ username: 'csrfuser', email: 'csrf@example.com' }) });
      assert.equal(bad.statusCode, 403);
      const none = await inject(ts.app, p.jar, 'POST', form.action, fields({ username: 'csrfuser', email: 'csrf@example.com' }));
      assert.equal(none.statusCode, 403);
      const other = await inject(ts.app, new CookieJar(), 'POST', form.action, { csrf: form.csrf, ...fields({ username: 'csrfuser', email: 'csrf@example.com' }) });
      assert.equal(other.statusCode, 400);
      assert.match(other.body, /another browser/);
      assert.equal(await ts.store.users.findByUsername('test', 'csrfuser'), undefined);
    });

    test('registration off: no link on the login page; the page and the form answer "Registration not allowed" (403)', async () => {
      await setRealm({ registrationAllowed: false });
      try {
        const jar = new CookieJar();
        const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
        const url = start.headers.location as string;
        const login = await inject(ts.app, jar, 'GET', url);
        assert.doesNotMatch(login.body, /Register/);
        const csrf = parseForm(login.body).csrf;
        const page = await inject(ts.app, jar, 'GET', `${url}/registration`);
        assert.equal(page.statusCode, 403);
        assert.match(page.body, /Registration not allowed/);
        const post = await inject(ts.app, jar, 'POST', `${url}/registration`, { csrf, ...fields({ username: 'offuser', email: 'off@example.com' }) });
        assert.equal(post.statusCode, 403);
        assert.equal(await ts.store.users.findByUsername('test', 'offuser'), undefined);
        assert.equal((await events('REGISTER_ERROR')).at(-1)?.reason, 'registration_disabled');
      } finally {
        await setRealm({ registrationAllowed: true });
      }
    });

    test('registrationEmailAsUsername: no username field; the email is the username; a taken one is "Email already exists."', async () => {
      await setRealm({ registrationEmailAsUsername: true });
      try {
        const p = await registerPage();
        assert.doesNotMatch(p.body, /name="username"/);
        const r = await submit({ username: 'ignored', email: 'Mail.User@Example.com' });
        assert.equal(r.status, 303, r.body.slice(0, 300));
        const user = await ts.store.users.findByUsername('test', 'mail.user@example.com');
        assert.equal(user?.email, 'mail.user@example.com');
        assert.equal(await ts.store.users.findByUsername('test', 'ignored'), undefined);
        const dup = await submit({ email: 'mail.user@example.com' });
        assert.equal(dup.status, 400);
        assert.match(dup.body, /Email already exists\./);
        const quote = await submit({ email: "o'brien@example.com" });
        assert.equal(quote.status, 400);
        assert.match(quote.body, /Invalid email address\./);
      } finally {
        await setRealm({ registrationEmailAsUsername: false });
      }
    });

    test(`at most ${REGISTRATIONS_PER_ADDRESS.max} registration forms per address in ${REGISTRATIONS_PER_ADDRESS.windowMs / 60_000} minutes: then 429 with Retry-After, and nobody is created`, async () => {
      const jar = new CookieJar();
      for (let i = 0; i < REGISTRATIONS_PER_ADDRESS.max; i++) {
        const r = await submit({ username: 'alice' }, jar);
        assert.equal(r.status, 400);
      }
      const p = await registerPage(jar);
      const form = parseForm(p.body);
      const blocked = await ts.app.inject({ method: 'POST', url: form.action, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf: form.csrf, ...fields({ username: 'limited', email: 'limited@example.com' }) }).toString() });
      assert.equal(blocked.statusCode, 429);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      assert.match(blocked.body, /Too many registrations from your network/);
      assert.ok(blocked.body.includes('value="limited@example.com"'), 'what was typed is kept');
      assert.equal(await ts.store.users.findByUsername('test', 'limited'), undefined);
      // Another address is not concerned; this one may again after the window.
      const other = await ts.app.inject({ method: 'POST', url: form.action, remoteAddress: '10.9.8.7', headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf: form.csrf, ...fields({ username: 'alice' }) }).toString() });
      assert.equal(other.statusCode, 400);
      ts.clock.advance(REGISTRATIONS_PER_ADDRESS.windowMs / 1000 + 1);
      const after = await submit({ username: 'limited', email: 'limited@example.com' }, jar);
      assert.equal(after.status, 303);
    });

    test("keycloak-js register(): protocol/openid-connect/registrations is the authorization endpoint opening on the registration page", async () => {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/registrations')}?${authorizeQuery(ts)}`);
      assert.equal(start.statusCode, 303);
      assert.match(start.headers.location as string, /^\/auth\/realms\/test\/login-actions\/[^/]+\/registration$/);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Create your account/);
      // Checked as the authorization endpoint checks: an unregistered redirect_uri is an error page, no redirect.
      const bad = await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/protocol/openid-connect/registrations')}?${authorizeQuery(ts, { redirect_uri: 'https://evil.example.com/' })}`);
      assert.equal(bad.statusCode, 400);
      await setRealm({ registrationAllowed: false });
      try {
        const off = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/registrations')}?${authorizeQuery(ts)}`);
        const offPage = await inject(ts.app, jar, 'GET', off.headers.location as string);
        assert.equal(offPage.statusCode, 403);
        assert.match(offPage.body, /Registration not allowed/);
      } finally {
        await setRealm({ registrationAllowed: true });
      }
    });

    test('prompt=create (Initiating User Registration via OpenID Connect 1.0): the registration page, even for a browser signed in; listed in discovery while the realm allows registration', async () => {
      const auth = (o: Record<string, string> = {}): string => `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, o)}`;
      const prompts = async (): Promise<string[]> => (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json().prompt_values_supported;
      // A browser signed in: the user just registered.
      const r = await submit({ username: 'creator', email: 'creator@example.com' });
      assert.equal(r.status, 303);
      const sso = await inject(ts.app, r.jar, 'GET', auth());
      assert.equal(sso.statusCode, 303);
      assert.doesNotMatch(sso.headers.location as string, /\/registration$/, 'without prompt=create the session is used');
      const create = await inject(ts.app, r.jar, 'GET', auth({ prompt: 'create' }));
      assert.equal(create.statusCode, 303);
      assert.match(create.headers.location as string, /^\/auth\/realms\/test\/login-actions\/[^/]+\/registration$/);
      const page = await inject(ts.app, r.jar, 'GET', create.headers.location as string);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Create your account/);
      // OIDC Core 3.1.2.1: none with another value is an error, sent back to the client.
      const both = await inject(ts.app, new CookieJar(), 'GET', auth({ prompt: 'none create' }));
      assert.equal(new URL(both.headers.location as string).searchParams.get('error'), 'invalid_request');
      assert.deepEqual(await prompts(), ['none', 'login', 'consent', 'select_account', 'create']);
      await setRealm({ registrationAllowed: false });
      try {
        assert.deepEqual(await prompts(), ['none', 'login', 'consent', 'select_account']);
        // As Keycloak: an error page, not the login page.
        const jarOff = new CookieJar();
        const offStart = await inject(ts.app, jarOff, 'GET', auth({ prompt: 'create' }));
        assert.equal(offStart.statusCode, 303);
        const offPage = await inject(ts.app, jarOff, 'GET', offStart.headers.location as string);
        assert.equal(offPage.statusCode, 403);
        assert.match(offPage.body, /Registration not allowed/);
      } finally {
        await setRealm({ registrationAllowed: true });
      }
    });

    test('organization required: a new user (of no organization) ends on the no-organization page, as after a login', async () => {
      await setRealm({ organizationRequired: true });
      try {
        const r = await submit({ username: 'orgless', email: 'orgless@example.com' });
        assert.equal(r.status, 303);
        const page = await inject(ts.app, r.jar, 'GET', r.location!);
        assert.equal(page.statusCode, 403);
        assert.match(page.body, /has no organization|no organization/);
      } finally {
        await setRealm({ organizationRequired: false });
      }
    });
  });
}
