import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { REALM, basic, realmPath } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, responseOf } from '../helpers/flow.js';
import { dialects } from '../helpers/db.js';
import { SMTP_MISSING, SmtpServer, freePort, linkIn } from '../helpers/smtp.js';
import { type AdminTestServer, errorOf, startAdminServer } from '../admin/helpers.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { updateUser } from '../../src/admin/operations/users.js';

const PW = 'verify me password 3';

const pathOf = (link: string): string => {
  const u = new URL(link);
  return `${u.pathname}${u.search}`;
};

// Keycloak's verifyEmail and VERIFY_EMAIL: the required action after the password, the mail through a
// real SMTP server (aiosmtpd), its link (bound to the user and the address, expiring, once), resend and
// its limit, another browser, and the admin API's send-verify-email and execute-actions-email.
for (const dialect of dialects()) {
  describe(`verify email (${dialect})`, { skip: SMTP_MISSING }, () => {
    let ts: AdminTestServer;
    let smtp: SmtpServer;
    let since = 0;
    let n = 0;

    const smtpAt = async (port: number): Promise<void> => {
      await updateRealm(ts.store, { realmId: REALM, settings: { smtpServer: { host: '127.0.0.1', port: String(port), from: 'noreply@example.com' } } });
      ts.services.cache.clear();
    };

    before(async () => {
      ts = await startAdminServer({ dialect });
      smtp = await SmtpServer.start();
      await updateRealm(ts.store, { realmId: REALM, settings: { verifyEmail: true, registrationAllowed: true, organizationRequired: false } });
      await smtpAt(smtp.port);
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
      // Past the per-user mail limit's window (15 minutes) of the test before.
      ts.clock.advance(16 * 60);
      since = Math.floor(ts.clock.nowMs() / 1000);
    });

    /** A new user of the realm, email not verified. */
    async function newUser(o: { email?: string | null } = {}): Promise<{ id: string; username: string; email: string | null }> {
      const username = `v${++n}`;
      const email = o.email === undefined ? `${username}@example.com` : o.email;
      const { id } = await createUser(ts.store, { realmId: REALM, username, password: PW, ...(email !== null ? { email } : {}) });
      return { id, username, email };
    }

    /** A new sign-in with the password: the page it shows next (with its status). */
    async function signIn(username: string, jar = new CookieJar()): Promise<{ jar: CookieJar; url: string; status: number; body: string }> {
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const url = start.headers.location as string;
      const login = await inject(ts.app, jar, 'GET', url);
      const f = parseForm(login.body);
      const res = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, username, password: PW });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, url);
      const page = await inject(ts.app, jar, 'GET', url);
      return { jar, url, status: page.statusCode, body: page.body };
    }

    /** From a page of the sign-in on: consent (allow), to the code. */
    async function toCode(jar: CookieJar, url: string): Promise<string | undefined> {
      let page = await inject(ts.app, jar, 'GET', url);
      for (let i = 0; i < 3; i++) {
        if (page.statusCode === 303) {
          const done = responseOf(page, [], jar);
          if (done) return done.code;
          page = await inject(ts.app, jar, 'GET', page.headers.location as string);
          continue;
        }
        assert.match(page.body, /name="decision"/, page.body.slice(0, 400));
        const f = parseForm(page.body);
        page = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, decision: 'allow' });
      }
      return responseOf(page, [], jar)?.code;
    }

    const events = (type: string) => ts.store.events.list(REALM, { types: [type], since, order: 'asc' });
    /** The events of a type once there are `count` of them (a refused link's event is written after its page). */
    async function eventsWhen(type: string, count: number): Promise<Awaited<ReturnType<typeof events>>> {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const list = await events(type);
        if (list.length >= count || Date.now() > deadline) return list;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    test('registered under verifyEmail: the page names the address; the link from AUTH_URL, in the same browser, verifies it and goes on to the code; a reload mails nothing more; the link works once', async () => {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const url = start.headers.location as string;
      const reg = await inject(ts.app, jar, 'GET', `${url}/registration`);
      const f = parseForm(reg.body);
      const res = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, username: 'fresh', email: 'fresh&new@example.com', firstName: 'Fresh', lastName: 'New', 'password-new': PW, 'password-confirm': PW });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      const page = await inject(ts.app, jar, 'GET', url);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Verify your email/);
      assert.ok(page.body.includes('<strong>fresh&amp;new@example.com</strong>'), 'the address, escaped');
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'fresh&new@example.com');
      const link = linkIn(mail!);
      assert.ok(link.startsWith(`${ts.config.authUrl}/auth/realms/${REALM}/login-actions/action-token?key=`), link);
      assert.equal((await events('SEND_VERIFY_EMAIL')).length, 1);
      const user = (await ts.store.users.findByUsername(REALM, 'fresh'))!;
      assert.deepEqual(user.requiredActions, ['VERIFY_EMAIL']);
      // No session (no code) before the email is verified.
      assert.equal(responseOf(page, [], jar), undefined);
      await inject(ts.app, jar, 'GET', url);
      await smtp.settle();
      assert.equal(smtp.messages().length, 1, 'a reload mails nothing more');

      const followed = await inject(ts.app, jar, 'GET', pathOf(link));
      assert.equal(followed.statusCode, 303, followed.body.slice(0, 300));
      assert.equal(followed.headers.location, url, 'back into the sign-in');
      const code = await toCode(jar, url);
      assert.ok(code, 'a code after consent');
      const after = (await ts.store.users.get(user.id))!;
      assert.equal(after.emailVerified, true);
      assert.deepEqual(after.requiredActions, []);
      assert.equal((await events('VERIFY_EMAIL')).length, 1);
      const again = await inject(ts.app, new CookieJar(), 'GET', pathOf(link));
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /This link no longer works/);
      assert.equal((await eventsWhen('VERIFY_EMAIL_ERROR', 1)).length, 1);
    });

    test('another browser: the link asks to confirm (a mail scanner verifies nothing), then "Your email address has been verified"; the first browser goes on when reloaded', async () => {
      const u = await newUser();
      const first = await signIn(u.username);
      assert.match(first.body, /Verify your email/);
      const [mail] = await smtp.waitFor(1);
      const phone = new CookieJar();
      const confirm = await inject(ts.app, phone, 'GET', pathOf(linkIn(mail!)));
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, new RegExp(`Confirm that <strong>${u.email}</strong> is your email address`));
      assert.equal((await ts.store.users.get(u.id))!.emailVerified, false, 'opening the link alone verifies nothing');
      const f = parseForm(confirm.body);
      const key = /name="key" value="([^"]*)"/.exec(confirm.body)![1]!;
      const forged = await inject(ts.app, phone, 'POST', f.action, { csrf: 'forged', key });
      assert.equal(forged.statusCode, 403);
      const done = await inject(ts.app, phone, 'POST', f.action, { csrf: f.csrf, key });
      assert.equal(done.statusCode, 200);
      assert.match(done.body, /Your email address has been verified/);
      assert.equal((await ts.store.users.get(u.id))!.emailVerified, true);
      const resumed = await inject(ts.app, first.jar, 'GET', first.url);
      assert.equal(resumed.statusCode, 303, resumed.body.slice(0, 300));
      assert.ok(await toCode(first.jar, first.url));
    });

    test("the link expires after the realm's actionTokenGeneratedByUserLifespan (300 s): usable at 299 s, refused at 300 s", async () => {
      const u = await newUser();
      await signIn(u.username);
      const [mail] = await smtp.waitFor(1);
      ts.clock.advance(299);
      const ok = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)));
      assert.equal(ok.statusCode, 200);
      assert.match(ok.body, /Confirm that/);
      ts.clock.advance(1);
      const expired = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)));
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /This link has expired/);
      assert.match(expired.body, /Sign in again to have a new link sent/);
      assert.equal((await ts.store.users.get(u.id))!.emailVerified, false);
    });

    test('a changed email kills the link; the next sign-in mails the new address', async () => {
      const u = await newUser();
      await signIn(u.username);
      const [mail] = await smtp.waitFor(1);
      await updateUser(ts.store, { realmId: REALM, user: u.id, email: `new-${u.email}` });
      const dead = await inject(ts.app, new CookieJar(), 'GET', pathOf(linkIn(mail!)));
      assert.equal(dead.statusCode, 400);
      assert.match(dead.body, /This link no longer works/);
      assert.equal((await ts.store.users.get(u.id))!.emailVerified, false);
      smtp.clear();
      const again = await signIn(u.username);
      assert.ok(again.body.includes(`<strong>new-${u.email}</strong>`));
      const [second] = await smtp.waitFor(1);
      assert.equal(second!.to, `new-${u.email}`);
    });

    test('resend: a new mail each time, at most 3 a user in 15 minutes, then 429 and no mail', async () => {
      const u = await newUser();
      const s = await signIn(u.username);
      await smtp.waitFor(1);
      const f = parseForm(s.body);
      for (let i = 2; i <= 3; i++) {
        const r = await inject(ts.app, s.jar, 'POST', f.action, { csrf: f.csrf });
        assert.equal(r.statusCode, 200);
        assert.match(r.body, /A new email with a link has been sent to/);
        await smtp.waitFor(i);
      }
      const blocked = await inject(ts.app, s.jar, 'POST', f.action, { csrf: f.csrf });
      assert.equal(blocked.statusCode, 429);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      await smtp.settle();
      assert.equal(smtp.messages().length, 3);
      assert.match((await events('SEND_VERIFY_EMAIL_ERROR')).at(-1)?.reason ?? '', /too many/);
      const forged = await inject(ts.app, s.jar, 'POST', f.action, { csrf: 'forged' });
      assert.equal(forged.statusCode, 403);
      ts.clock.advance(15 * 60 + 1);
      const later = await inject(ts.app, s.jar, 'POST', f.action, { csrf: f.csrf });
      assert.equal(later.statusCode, 200);
    });

    test('a user without an email: a page telling them to contact the administrator; the mail server down: a page saying so (502), an event, never a 500', async () => {
      const none = await newUser({ email: null });
      const page = await signIn(none.username);
      assert.equal(page.status, 403);
      assert.match(page.body, /no email address to verify/);
      assert.match(page.body, /Contact your administrator/);
      await smtpAt(await freePort());
      try {
        const u = await newUser();
        const down = await signIn(u.username);
        assert.equal(down.status, 502);
        assert.match(down.body, /The email could not be sent/);
        assert.doesNotMatch(down.body, /127\.0\.0\.1|ECONNREFUSED/);
        assert.match((await events('SEND_VERIFY_EMAIL_ERROR')).at(-1)?.reason ?? '', /failed/);
      } finally {
        await smtpAt(smtp.port);
      }
    });

    test('the password grant refuses a user whose email is not verified ("Account is not fully set up"), as Keycloak\'s direct grant; once verified, it answers', async () => {
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      ts.services.cache.clear();
      try {
        const u = await newUser();
        const grant = () => fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
          method: 'POST',
          headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'password', username: u.username, password: PW }).toString(),
        });
        const refused = await grant();
        assert.equal(refused.status, 400);
        assert.deepEqual(await refused.json(), { error: 'invalid_grant', error_description: 'Account is not fully set up' });
        assert.deepEqual((await ts.store.users.get(u.id))!.requiredActions, ['VERIFY_EMAIL']);
        await updateUser(ts.store, { realmId: REALM, user: u.id, emailVerified: true });
        assert.equal((await grant()).status, 200, 'an email verified meanwhile (by an administrator) ends VERIFY_EMAIL');
        assert.deepEqual((await ts.store.users.get(u.id))!.requiredActions, []);
      } finally {
        await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: false });
        ts.services.cache.clear();
      }
    });

    test('the account page\'s own sign-in: under verifyEmail no session until the mailed link is followed; then the account page', async () => {
      const u = await newUser();
      const signInAccount = async (): Promise<{ jar: CookieJar; status: number; body: string }> => {
        const jar = new CookieJar();
        const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
        const f = parseForm(page.body);
        const res = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, username: u.username, password: PW });
        return { jar, status: res.statusCode, body: res.body };
      };
      const first = await signInAccount();
      assert.equal(first.status, 200);
      assert.match(first.body, /Verify your email/);
      assert.match(first.body, /then sign in again/);
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, u.email);
      const still = await inject(ts.app, first.jar, 'GET', realmPath('/account'));
      assert.doesNotMatch(still.body, /<h1>Your account<\/h1>/, 'no session');
      const jar = new CookieJar();
      const confirm = await inject(ts.app, jar, 'GET', pathOf(linkIn(mail!)));
      const f = parseForm(confirm.body);
      const done = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: /name="key" value="([^"]*)"/.exec(confirm.body)![1]! });
      assert.match(done.body, /Your email address has been verified/);
      const again = await signInAccount();
      assert.equal(again.status, 303, again.body.slice(0, 300));
      assert.match((await inject(ts.app, again.jar, 'GET', realmPath('/account'))).body, /<h1>Your account<\/h1>/);
    });

    test("admin send-verify-email (keycloak-admin-client): the link verifies and goes to the client's redirect URI; Keycloak's refusals", async () => {
      const u = await newUser();
      await ts.kc.users.sendVerifyEmail({ realm: REALM, id: u.id, clientId: ts.client.id, redirectUri: ts.client.redirectUri });
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, u.email);
      assert.match(mail!.subject, /Verify your .* email address/);
      assert.match(mail!.text, /within 12 hours/, "the realm's actionTokenGeneratedByAdminLifespan, as Keycloak");
      const jar = new CookieJar();
      const confirm = await inject(ts.app, jar, 'GET', pathOf(linkIn(mail!)));
      const f = parseForm(confirm.body);
      const done = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: /name="key" value="([^"]*)"/.exec(confirm.body)![1]! });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, ts.client.redirectUri);
      assert.equal((await ts.store.users.get(u.id))!.emailVerified, true);
      assert.equal((await events('SEND_VERIFY_EMAIL')).length, 1);
      assert.ok((await ts.store.adminEvents.list(REALM, {})).some((e) => e.resourcePath === `users/${u.id}/send-verify-email`));

      const cases: Array<[Parameters<typeof ts.kc.users.sendVerifyEmail>[0], RegExp]> = [
        [{ realm: REALM, id: u.id, clientId: ts.client.id, redirectUri: 'https://evil.example.com/' }, /^Invalid redirect uri\.$/],
        [{ realm: REALM, id: u.id, redirectUri: ts.client.redirectUri }, /^Client id missing$/],
        [{ realm: REALM, id: u.id, clientId: 'no-such-client' }, /^Client doesn't exist$/],
      ];
      for (const [args, message] of cases) {
        const r = await errorOf(ts.kc.users.sendVerifyEmail(args));
        assert.equal(r.status, 400, JSON.stringify(args));
        assert.match(String(r.body.errorMessage), message);
      }
      const none = await newUser({ email: null });
      const r = await errorOf(ts.kc.users.sendVerifyEmail({ realm: REALM, id: none.id }));
      assert.equal(r.status, 400);
      assert.equal(r.body.errorMessage, 'User email missing');
      await smtp.settle();
      assert.equal(smtp.messages().length, 1, 'no mail for a refused call');
    });

    test('VERIFY_EMAIL through the admin API: in requiredActions, and in execute-actions-email (a new password, then the email verified by the same link)', async () => {
      const u = await newUser();
      await ts.kc.users.update({ realm: REALM, id: u.id }, { requiredActions: ['VERIFY_EMAIL'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id: u.id }))!.requiredActions, ['VERIFY_EMAIL']);
      await ts.kc.users.executeActionsEmail({ realm: REALM, id: u.id, actions: ['VERIFY_EMAIL', 'UPDATE_PASSWORD'] });
      const [mail] = await smtp.waitFor(1);
      assert.match(mail!.text, /Verify your email address/);
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', pathOf(linkIn(mail!)));
      assert.match(page.body, /Choose a new password/);
      const f = parseForm(page.body);
      const done = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: /name="key" value="([^"]*)"/.exec(page.body)![1]!, 'password-new': 'another password 44', 'password-confirm': 'another password 44' });
      assert.equal(done.statusCode, 200, done.body.slice(0, 300));
      assert.match(done.body, /Your account has been updated/);
      const after = (await ts.store.users.get(u.id))!;
      assert.equal(after.emailVerified, true);
      assert.deepEqual(after.requiredActions, []);
      // VERIFY_EMAIL alone: the link verifies (after its confirmation), nothing else.
      const w = await newUser();
      await ts.kc.users.executeActionsEmail({ realm: REALM, id: w.id, actions: ['VERIFY_EMAIL'] });
      const [second] = (await smtp.waitFor(2)).slice(1);
      const confirm = await inject(ts.app, jar, 'GET', pathOf(linkIn(second!)));
      const cf = parseForm(confirm.body);
      const ok = await inject(ts.app, jar, 'POST', cf.action, { csrf: cf.csrf, key: /name="key" value="([^"]*)"/.exec(confirm.body)![1]! });
      assert.match(ok.body, /Your email address has been verified/);
      assert.equal((await ts.store.users.get(w.id))!.emailVerified, true);
    });
  });
}
