import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestServer, realmPath, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, responseOf, runAuthorization } from '../helpers/flow.js';
import { dialects } from '../helpers/db.js';
import { SMTP_MISSING, SmtpServer, freePort, linkIn } from '../helpers/smtp.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { resetPassword, updateUser } from '../../src/admin/operations/users.js';

// "Forgot password?" (Keycloak's reset-credentials) end to end: the link on the login page, the mail
// through a real SMTP server (aiosmtpd), its link, the new password, and back into the sign-in.
for (const dialect of dialects()) {
  describe(`forgot password (${dialect})`, { skip: SMTP_MISSING }, () => {
    let ts: TestServer;
    let smtp: SmtpServer;
    const NEW = 'a brand new password 1';

    const smtpAt = async (port: number): Promise<void> => {
      await updateRealm(ts.store, { realmId: 'test', settings: { smtpServer: { host: '127.0.0.1', port: String(port), from: 'noreply@example.com', fromDisplayName: 'Test Realm' } } });
      ts.services.cache.clear();
    };

    before(async () => {
      ts = await startTestServer({ dialect });
      smtp = await SmtpServer.start();
      await updateRealm(ts.store, { realmId: 'test', displayName: 'Test & <Realm>', settings: { resetPasswordAllowed: true } });
      await smtpAt(smtp.port);
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });
    let since = 0;
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
      // Past the reset limiters' window (15 minutes) of the test before; events from here on are this test's.
      ts.clock.advance(16 * 60);
      since = Math.floor(ts.clock.nowMs() / 1000);
    });

    /** A new sign-in of a new browser, up to its login page. */
    async function loginPage(jar = new CookieJar()): Promise<{ jar: CookieJar; body: string; url: string }> {
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      assert.equal(start.statusCode, 303);
      const url = start.headers.location as string;
      const page = await inject(ts.app, jar, 'GET', url);
      assert.equal(pageKind(page.body), 'login');
      return { jar, body: page.body, url };
    }

    /** "Forgot password?" from a login page, with `typed` in the form: the answer page. */
    async function askReset(typed: string, jar?: CookieJar, headers: Record<string, string> = {}): Promise<{ jar: CookieJar; status: number; body: string; url: string }> {
      const lp = await loginPage(jar);
      const href = /<a href="([^"]*)" class="forgot">Forgot password\?<\/a>/.exec(lp.body)?.[1];
      assert.ok(href, 'the login page links to Forgot password?');
      assert.equal(href, `${lp.url}/reset-credentials`, 'the link keeps the pending request');
      const page = await inject(ts.app, lp.jar, 'GET', href);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Forgot your password\?/);
      const form = parseForm(page.body);
      const res = await ts.app.inject({ method: 'POST', url: form.action, headers: { cookie: lp.jar.header(), 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams({ csrf: form.csrf, username: typed }).toString() });
      lp.jar.update(res);
      return { jar: lp.jar, status: res.statusCode, body: res.body, url: lp.url };
    }

    const pathOf = (link: string): string => {
      const u = new URL(link);
      return `${u.pathname}${u.search}`;
    };

    async function eventsOf(type: string): Promise<Array<{ reason?: string | null; userId?: string | null }>> {
      return ts.store.events.list('test', { types: [type], since, order: 'asc' });
    }
    async function waitForEvent(type: string, count: number): Promise<Array<{ reason?: string | null; userId?: string | null }>> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const list = await eventsOf(type);
        if (list.length >= count) return list;
        if (Date.now() > deadline) throw new Error(`no ${type} event`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    /** Sets the new password through the link; the response after the form. */
    async function choose(jar: CookieJar, link: string, password = NEW): Promise<{ status: number; location?: string; body: string }> {
      const page = await inject(ts.app, jar, 'GET', pathOf(link));
      assert.equal(page.statusCode, 200, page.body.slice(0, 400));
      assert.match(page.body, /Choose a new password/);
      const form = parseForm(page.body);
      const key = /name="key" value="([^"]*)"/.exec(page.body)?.[1];
      assert.ok(key);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, key, 'password-new': password, 'password-confirm': password });
      return { status: res.statusCode, body: res.body, ...(res.headers.location ? { location: res.headers.location as string } : {}) };
    }

    test('the mail arrives with a link from AUTH_URL (not the Host header), escaped; the new password works, the old one not, the link once only; back into the sign-in', async () => {
      const sent = await askReset('alice', undefined, { host: 'evil.example' });
      assert.equal(sent.status, 200);
      assert.match(sent.body, /If an account exists, you will receive an email with instructions/);
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'alice@example.com');
      assert.match(mail!.from, /noreply@example\.com/);
      const link = linkIn(mail!);
      assert.ok(link.startsWith(`${ts.config.authUrl}/auth/realms/test/login-actions/action-token?key=`), link);
      assert.ok(!mail!.text.includes('evil.example') && !mail!.html.includes('evil.example'));
      // HTML part: the realm's name escaped; the text part says the same in plain words.
      assert.ok(mail!.html.includes('Test &amp; &lt;Realm&gt;'), mail!.html);
      assert.ok(!mail!.html.includes('<Realm>'));
      assert.match(mail!.text, /Test & <Realm> account alice/);
      assert.ok(mail!.html.includes(link.replace(/&/g, '&amp;')), 'the HTML part has the same link');
      // The event is written once the SMTP server has answered the message's end: the mail can be here first.
      assert.equal((await waitForEvent('SEND_RESET_PASSWORD', 1)).length, 1);

      // The link, in the browser that asked: the new password, then on with the sign-in (consent, organization) to the code.
      const done = await choose(sent.jar, link);
      assert.equal(done.status, 303, done.body.slice(0, 400));
      assert.equal(done.location, sent.url, 'back to the pending request');
      let res = await inject(ts.app, sent.jar, 'GET', done.location!);
      const pages: string[] = [];
      for (let i = 0; i < 5 && !responseOf(res, [], sent.jar); i++) {
        if (res.statusCode === 303) {
          res = await inject(ts.app, sent.jar, 'GET', res.headers.location as string);
          continue;
        }
        const kind = pageKind(res.body);
        pages.push(kind);
        const form = parseForm(res.body);
        res = await inject(ts.app, sent.jar, 'POST', form.action, kind === 'consent' ? { csrf: form.csrf, decision: 'allow' } : { csrf: form.csrf, organization: 'acme' });
      }
      const flow = responseOf(res, [], sent.jar);
      assert.ok(flow?.code, `a code after ${pages.join(', ')}`);
      assert.equal((await eventsOf('RESET_PASSWORD')).length, 1);

      // The old password is refused, the new one signs in.
      await assert.rejects(runAuthorization(ts), /login failed/);
      assert.ok((await runAuthorization(ts, { password: NEW })).code);
      // The same link again: refused with a page that says why.
      const again = await inject(ts.app, new CookieJar(), 'GET', pathOf(link));
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /This link no longer works/);
      await resetPassword(ts.store, { realmId: 'test', user: 'alice', password: PASSWORD });
    });

    test('a link used in another browser ends on "Your password has been updated"; one made before a password change is dead after it', async () => {
      await askReset('alice@example.com');
      const [first] = await smtp.waitFor(1);
      const done = await choose(new CookieJar(), linkIn(first!));
      assert.equal(done.status, 200);
      assert.match(done.body, /Your password has been updated/);
      ts.clock.advance(16 * 60);
      smtp.clear();
      await askReset('alice');
      const [second] = await smtp.waitFor(1);
      // An administrator sets the password meanwhile: the link is bound to the password it was made for.
      await resetPassword(ts.store, { realmId: 'test', user: 'alice', password: PASSWORD });
      const dead = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(second!)));
      assert.equal(dead.statusCode, 400);
      assert.match(dead.body, /This link no longer works/);
    });

    test('the new password page says the realm\'s password policy and refuses a password against it; the link stays usable', async () => {
      await updateRealm(ts.store, { realmId: 'test', settings: { passwordPolicy: 'length(12) and digits(2)' } });
      ts.services.cache.clear();
      try {
        await askReset('alice');
        const [mail] = await smtp.waitFor(1);
        const jar = new CookieJar();
        const page = await inject(ts.app, jar, 'GET', pathOf(linkIn(mail!)));
        assert.match(page.body, /minlength="12"/);
        assert.match(page.body, /At least 12 characters/);
        assert.match(page.body, /2 digits/);
        const refused = await choose(jar, linkIn(mail!), 'only one digit 1 here');
        assert.equal(refused.status, 400);
        assert.match(refused.body, /digit/);
        const done = await choose(jar, linkIn(mail!), 'two digits 12 here');
        assert.equal(done.status, 200, done.body.slice(0, 300));
        assert.match(done.body, /Your password has been updated/);
      } finally {
        await updateRealm(ts.store, { realmId: 'test', settings: { passwordPolicy: '' } });
        await resetPassword(ts.store, { realmId: 'test', user: 'alice', password: PASSWORD });
        ts.services.cache.clear();
      }
    });

    test('a link past the realm\'s actionTokenGeneratedByUserLifespan (300 s) is refused as expired', async () => {
      await askReset('alice');
      const [mail] = await smtp.waitFor(1);
      ts.clock.advance(299);
      assert.equal((await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)))).statusCode, 200);
      ts.clock.advance(2);
      const expired = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)));
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /This link has expired/);
      // Altered: refused as not valid.
      const altered = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
      assert.equal(altered.statusCode, 400);
      assert.match(altered.body, /This link (is not valid|no longer works)/);
      assert.equal((await inject(ts.app, new CookieJar(), 'GET', realmPath('/login-actions/action-token?key=junk'))).statusCode, 400);
    });

    test('an unknown user, a disabled one and one without email get the same page and no mail', async () => {
      const known = await askReset('alice');
      await smtp.waitFor(1);
      const { id: bob } = await createUser(ts.store, { realmId: 'test', username: 'bob', password: 'bob password 1', email: 'bob@example.com', orgAliases: ['acme'] });
      await updateUser(ts.store, { realmId: 'test', user: bob, enabled: false });
      await createUser(ts.store, { realmId: 'test', username: 'carol', password: 'carol password 1', orgAliases: ['acme'] });
      for (const typed of ['nobody', 'nobody@example.com', 'bob', 'carol']) {
        const r = await askReset(typed);
        assert.equal(r.status, 200);
        const same = (b: string): string => b.replace(/login-actions\/[\w-]+/g, 'login-actions/ID');
        assert.equal(same(r.body), same(known.body), `the same page for ${typed}`);
      }
      const errors = await waitForEvent('SEND_RESET_PASSWORD_ERROR', 4);
      assert.deepEqual(errors.map((e) => e.reason).sort(), ['user disabled', 'user has no email', 'user not found', 'user not found']);
      assert.equal(smtp.messages().length, 1, 'only alice got a mail');
    });

    test('limits: three mails per user in 15 minutes, then none (same page); ten requests per address, then 429', async () => {
      for (let i = 0; i < 4; i++) assert.equal((await askReset('alice')).status, 200);
      await waitForEvent('SEND_RESET_PASSWORD_ERROR', 1);
      const limited = (await eventsOf('SEND_RESET_PASSWORD_ERROR')).filter((e) => /too many/.test(e.reason ?? ''));
      assert.equal(limited.length, 1);
      await smtp.waitFor(3);
      assert.equal(smtp.messages().length, 3);
      for (let i = 4; i < 10; i++) assert.equal((await askReset('nobody')).status, 200);
      const blocked = await askReset('alice');
      assert.equal(blocked.status, 429);
      assert.match(blocked.body, /Too many requests from your network/);
    });

    test('CSRF: the request form and the new-password form refuse a missing or wrong token', async () => {
      const lp = await loginPage();
      const res = await inject(ts.app, lp.jar, 'POST', `${lp.url}/reset-credentials`, { csrf: 'wrong', username: 'alice' });
      assert.equal(res.statusCode, 403);
      await askReset('alice');
      const [mail] = await smtp.waitFor(1);
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', pathOf(linkIn(mail!)));
      const key = /name="key" value="([^"]*)"/.exec(page.body)![1]!;
      const forged = await inject(ts.app, new CookieJar(), 'POST', realmPath('/login-actions/action-token'), { key, csrf: parseForm(page.body).csrf, 'password-new': NEW, 'password-confirm': NEW });
      assert.equal(forged.statusCode, 403, 'the token of another browser');
      assert.ok((await runAuthorization(ts)).code, 'the password is unchanged');
    });

    test('a user with an authenticator is still asked for its code after the new password', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'tina', password: 'tina password 1', email: 'tina@example.com', orgAliases: ['acme'] });
      await enrollTestOtp(ts.store, (await ts.store.users.get(id))!, undefined, Math.floor(ts.clock.nowMs() / 1000));
      const sent = await askReset('tina');
      const [mail] = await smtp.waitFor(1);
      const done = await choose(sent.jar, linkIn(mail!));
      assert.equal(done.status, 303);
      const next = await inject(ts.app, sent.jar, 'GET', done.location!);
      assert.equal(pageKind(next.body), 'otp', 'the code comes next');
      assert.equal(sent.jar.cookies.size > 0, true);
      assert.ok(![...sent.jar.cookies.keys()].some((k) => k.includes('RG_SESSION') && !k.includes('STATE')), 'no session before the code');
    });

    test('an SMTP server that refuses connections or never answers: the page answers at once, the failure is an event', async () => {
      await smtpAt(await freePort());
      const t0 = Date.now();
      assert.equal((await askReset('alice')).status, 200);
      assert.ok(Date.now() - t0 < 3000);
      const [refused] = await waitForEvent('SEND_RESET_PASSWORD_ERROR', 1);
      assert.match(refused!.reason ?? '', /sending mail through 127\.0\.0\.1:\d+ failed \(ECONNECTION|ECONNREFUSED|ESOCKET/);
      // A server that accepts and says nothing: the greeting timeout (5 s) ends the attempt.
      const silent = net.createServer(() => undefined);
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      try {
        await smtpAt((silent.address() as net.AddressInfo).port);
        ts.clock.advance(16 * 60);
        const t1 = Date.now();
        assert.equal((await askReset('alice')).status, 200);
        assert.ok(Date.now() - t1 < 3000, 'the page does not wait for the mail');
        const events = await waitForEvent('SEND_RESET_PASSWORD_ERROR', 2);
        assert.match(events[0]!.reason ?? '', /failed/);
        assert.ok(Date.now() - t1 < 12_000, 'given up within the timeouts');
      } finally {
        silent.close();
        await smtpAt(smtp.port);
      }
    });

    test('without resetPasswordAllowed (or without SMTP) the login page has no link and the form is not found', async () => {
      await updateRealm(ts.store, { realmId: 'test', settings: { resetPasswordAllowed: false } });
      ts.services.cache.clear();
      try {
        const lp = await loginPage();
        assert.ok(!lp.body.includes('Forgot password?'));
        assert.equal((await inject(ts.app, lp.jar, 'GET', `${lp.url}/reset-credentials`)).statusCode, 404);
      } finally {
        await updateRealm(ts.store, { realmId: 'test', settings: { resetPasswordAllowed: true } });
        ts.services.cache.clear();
      }
    });
  });
}
