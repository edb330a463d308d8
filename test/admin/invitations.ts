// Organization invitations' tests; run once per database by invitations-sqlite.test.ts and invitations-postgres.test.ts (test/helpers/db.ts, onlyDialect).
import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer, type ReceivedMail } from '../helpers/smtp.js';
import { ADMIN_PASSWORD, ADMIN_USERNAME, type AdminTestServer, errorOf, startAdminServer } from './helpers.js';
import { Collector } from '../../src/collector.js';

/** The invitation link in a mail's text part. */
function linkIn(mail: ReceivedMail): string {
  const m = /https?:\/\/\S+\/login-actions\/org-invitation\?key=\S+/.exec(mail.text);
  if (!m) throw new Error(`no link in mail:\n${mail.text}`);
  return m[0];
}

// Keycloak 26's organization invitations through keycloak-admin-client (real HTTP), the mail through a
// real SMTP server (aiosmtpd), and the link's pages: accepting as an existing user, registering as a new one.
for (const dialect of dialects()) {
  describe(`organization invitations (${dialect})`, { skip: SMTP_MISSING }, () => {
    let ts: AdminTestServer;
    let smtp: SmtpServer;
    let orgId: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      smtp = await SmtpServer.start();
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com' }, actionTokenGeneratedByAdminLifespan: 3600 });
      orgId = (await ts.kc.organizations.create({ realm: REALM, name: 'Globex', alias: 'globex' })).id;
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
    });

    const form = (fields: Record<string, string>): FormData => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      return f;
    };
    const invite = (fields: Record<string, string>): Promise<unknown> => ts.kc.organizations.invite({ realm: REALM, orgId }, form(fields));
    const open = (link: string, jar: CookieJar) => {
      const u = new URL(link);
      return inject(ts.app, jar, 'GET', `${u.pathname}${u.search}`);
    };
    const keyOf = (link: string): string => new URL(link).searchParams.get('key')!;
    const isMember = async (userId: string): Promise<boolean> => (await ts.kc.organizations.listMembers({ realm: REALM, orgId })).some((m) => m.id === userId);
    /** Signs in on the account page (the user's own session in `jar`). */
    const signIn = async (jar: CookieJar, username: string, password: string) => {
      const page = await inject(ts.app, jar, 'GET', `/auth/realms/${REALM}/account`);
      const f = parseForm(page.body);
      return inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, username, password });
    };

    test('a new email: the mail, PENDING, registration through the link (self-registration off) makes a member who gets a code for the organization', async () => {
      assert.equal((await ts.store.realms.get(REALM))!.registrationAllowed, false);
      await invite({ email: ' New.Person@Example.com ', firstName: 'New', lastName: 'Person' });
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'new.person@example.com');
      assert.match(mail!.subject, /Globex/);
      assert.match(mail!.text, /60 minutes/);
      const list = await ts.kc.organizations.listInvitations({ realm: REALM, orgId });
      assert.equal(list.length, 1);
      assert.equal(list[0]!.email, 'new.person@example.com');
      assert.equal(list[0]!.status, 'PENDING');
      assert.equal(list[0]!.firstName, 'New');
      assert.equal((list[0] as Record<string, unknown>).inviteLink, undefined, 'the link is secret');
      assert.deepEqual(await ts.kc.organizations.findInvitation({ realm: REALM, orgId, invitationId: list[0]!.id! }), list[0]);
      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, resourceTypes: 'ORGANIZATION_MEMBERSHIP', operationTypes: 'ACTION' });
      assert.ok(events.some((e) => e.resourcePath === `organizations/${orgId}/members/invite-user`));
      const link = linkIn(mail!);
      const jar = new CookieJar();
      const page = await open(link, jar);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /You were invited to join <strong>Globex<\/strong>/);
      assert.match(page.body, /value="new.person@example.com"[^>]*readonly/);
      const f = parseForm(page.body);
      // CSRF: the form without its token is refused.
      const forged = await inject(ts.app, jar, 'POST', f.action, { key: keyOf(link), username: 'newbie', firstName: 'New', lastName: 'Person', 'password-new': 'new person pw 1', 'password-confirm': 'new person pw 1' });
      assert.equal(forged.statusCode, 403);
      const done = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: keyOf(link), email: 'other@example.com', username: 'newbie', firstName: 'New', lastName: 'Person', 'password-new': 'new person pw 1', 'password-confirm': 'new person pw 1' });
      assert.equal(done.statusCode, 303, done.body.slice(0, 500));
      assert.equal(done.headers.location, `/auth/realms/${REALM}/account`);
      const user = (await ts.store.users.findByUsername(REALM, 'newbie'))!;
      assert.equal(user.email, 'new.person@example.com', 'the invitation\'s email, not the one posted');
      assert.equal(user.emailVerified, true);
      assert.ok(await isMember(user.id));
      assert.equal((await ts.kc.organizations.listInvitations({ realm: REALM, orgId })).length, 0, 'used: gone');
      const flow = await runAuthorization(ts, { username: 'newbie', password: 'new person pw 1', organization: 'globex' });
      assert.ok(flow.code);
      // Single use: the link again.
      const again = await open(link, new CookieJar());
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /This invitation is not valid/);
    });

    test('an existing user by email and by id: sign in, accept, member; another signed-in user cannot accept; CSRF', async () => {
      const alice = ts.user;
      await invite({ email: 'ALICE@example.com' });
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'alice@example.com');
      const link = linkIn(mail!);
      // Someone else signed in: refused.
      const other = new CookieJar();
      assert.equal((await signIn(other, 'newbie', 'new person pw 1')).statusCode, 303);
      const refused = await open(link, other);
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /for another account/);
      assert.doesNotMatch(refused.body, /name="key"/);
      // Not signed in: sign in first, then back to the invitation.
      const jar = new CookieJar();
      const first = await open(link, jar);
      assert.match(first.body, /Sign in to the account this invitation was sent to/);
      const back = await signIn(jar, alice.username, alice.password);
      assert.equal(back.statusCode, 303);
      assert.equal(back.headers.location, `/auth/realms/${REALM}/login-actions/org-invitation?key=${keyOf(link)}`);
      const page = await inject(ts.app, jar, 'GET', back.headers.location as string);
      assert.match(page.body, /Join Globex/);
      const f = parseForm(page.body);
      assert.equal((await inject(ts.app, jar, 'POST', f.action, { key: keyOf(link) })).statusCode, 403, 'no CSRF token');
      // The other user posting the accept form with a valid CSRF token of their own browser (from a registration link): not accepted.
      smtp.clear();
      await invite({ email: 'csrf-source@example.com' });
      const [source] = await smtp.waitFor(1);
      const otherCsrf = parseForm((await open(linkIn(source!), other)).body).csrf;
      const stolen = await inject(ts.app, other, 'POST', f.action, { csrf: otherCsrf, key: keyOf(link) });
      assert.equal(stolen.statusCode, 403);
      assert.equal(await isMember(alice.id), false);
      const ok = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: keyOf(link) });
      assert.equal(ok.statusCode, 303);
      assert.ok(await isMember(alice.id));
      // Now a member: 409s; by id too.
      assert.deepEqual((await errorOf(invite({ email: 'alice@example.com' }))).body.errorMessage, 'User already a member of the organization');
      assert.equal((await errorOf(ts.kc.organizations.inviteExistingUser({ realm: REALM, orgId }, form({ id: alice.id })))).status, 409);
      // The organization's redirectUrl (Keycloak 26): where a member goes once joined; a bad one is a 400.
      const globex = (await ts.kc.organizations.findOne({ realm: REALM, id: orgId }))!;
      for (const bad of ['not a url', 'javascript:alert(1)', 'https://user:pw@globex.example.com/', `https://globex.example.com/${'x'.repeat(2050)}`]) {
        const e = await errorOf(ts.kc.organizations.updateById({ realm: REALM, id: orgId }, { ...globex, redirectUrl: bad }));
        assert.equal(e.status, 400, bad.slice(0, 40));
        assert.match(String(e.body.errorMessage), /redirectUrl must be an absolute http or https URL/);
      }
      await ts.kc.organizations.updateById({ realm: REALM, id: orgId }, { ...globex, redirectUrl: 'https://globex.example.com/welcome' });
      assert.equal((await ts.kc.organizations.findOne({ realm: REALM, id: orgId }))!.redirectUrl, 'https://globex.example.com/welcome');
      // By id: a user who is not a member.
      await ts.kc.organizations.delMember({ realm: REALM, orgId, userId: alice.id });
      smtp.clear();
      await ts.kc.organizations.inviteExistingUser({ realm: REALM, orgId }, form({ id: alice.id }));
      const [byId] = await smtp.waitFor(1);
      assert.equal(byId!.to, 'alice@example.com');
      const p2 = await open(linkIn(byId!), jar);
      const f2 = parseForm(p2.body);
      const joined = await inject(ts.app, jar, 'POST', f2.action, { csrf: f2.csrf, key: keyOf(linkIn(byId!)) });
      assert.equal(joined.statusCode, 303);
      assert.equal(joined.headers.location, 'https://globex.example.com/welcome');
      assert.ok(await isMember(alice.id));
      // Removed with '': the account page again, and the representation has none.
      await ts.kc.organizations.updateById({ realm: REALM, id: orgId }, { ...globex, redirectUrl: '' });
      assert.equal((await ts.kc.organizations.findOne({ realm: REALM, id: orgId }))!.redirectUrl, undefined);
    });

    test('400s and 409s in Keycloak\'s words; hostile input gets clear errors', async () => {
      const err = async (p: Promise<unknown>) => {
        const e = await errorOf(p);
        return `${e.status} ${String(e.body.errorMessage)}`;
      };
      assert.equal(await err(invite({})), '400 Email is required to invite a member');
      assert.equal(await err(invite({ email: 'not an email' })), '400 Invalid email format');
      assert.equal(await err(invite({ email: 'a\u0007b@example.com' })), '400 Invalid email format');
      assert.equal(await err(invite({ email: 'x@example.com', firstName: 'a\u0007b' })), '400 the first name must not contain control characters (newlines, tabs, escapes)');
      assert.equal(await err(ts.kc.organizations.inviteExistingUser({ realm: REALM, orgId }, form({}))), '400 To invite a member you need to provide the user id');
      assert.equal(await err(ts.kc.organizations.inviteExistingUser({ realm: REALM, orgId }, form({ id: 'nobody' }))), '400 User does not exist');
      await invite({ email: 'twice@example.com' });
      assert.equal(await err(invite({ email: 'twice@example.com' })), '409 User already has a pending invitation');
      assert.equal((await errorOf(ts.kc.organizations.findInvitation({ realm: REALM, orgId, invitationId: 'nope' }))).status, 404);
      // A huge form: refused, not a 500.
      const huge = await fetch(`${ts.config.authUrl}/auth/admin/realms/${REALM}/organizations/${orgId}/members/invite-user`, { method: 'POST', headers: { authorization: `Bearer ${ts.kc.accessToken}` }, body: form({ email: 'x'.repeat(200_000) }) });
      assert.equal(huge.status, 413);
      // Forged links, a link of another realm: a page, 400.
      for (const key of ['', 'x', 'A'.repeat(43), '<script>']) {
        const r = await inject(ts.app, new CookieJar(), 'GET', `/auth/realms/${REALM}/login-actions/org-invitation?key=${encodeURIComponent(key)}`);
        assert.equal(r.statusCode, 400);
        assert.match(r.body, /not valid/);
      }
      smtp.clear();
      await invite({ email: 'realm@example.com' });
      const [mail] = await smtp.waitFor(1);
      const r = await inject(ts.app, new CookieJar(), 'GET', `/auth/realms/master/login-actions/org-invitation?key=${keyOf(linkIn(mail!))}`);
      assert.equal(r.statusCode, 400);
    });

    test('resend: a new link, the old one dead; delete: the link dead; expiry: EXPIRED, the link dead, a new invite replaces it; the collector', async () => {
      await invite({ email: 'resend@example.com' });
      const [m1] = await smtp.waitFor(1);
      const inv = (await ts.kc.organizations.listInvitations({ realm: REALM, orgId, email: 'resend@example.com' }))[0]!;
      smtp.clear();
      await ts.kc.organizations.resendInvitation({ realm: REALM, orgId, invitationId: inv.id! });
      const [m2] = await smtp.waitFor(1);
      assert.notEqual(linkIn(m1!), linkIn(m2!));
      assert.equal((await open(linkIn(m1!), new CookieJar())).statusCode, 400, 'the old link is dead');
      assert.equal((await open(linkIn(m2!), new CookieJar())).statusCode, 200);
      const renewed = (await ts.kc.organizations.listInvitations({ realm: REALM, orgId, email: 'resend@example.com' }))[0]!;
      await ts.kc.organizations.deleteInvitation({ realm: REALM, orgId, invitationId: renewed.id! });
      const deleted = await open(linkIn(m2!), new CookieJar());
      assert.equal(deleted.statusCode, 400);
      assert.match(deleted.body, /not valid/);
      // Expiry (the realm's admin action token lifespan, an hour here).
      smtp.clear();
      await invite({ email: 'late@example.com' });
      const [m3] = await smtp.waitFor(1);
      ts.clock.advance(3601);
      const relogin = () => ts.kc.auth({ username: ADMIN_USERNAME, password: ADMIN_PASSWORD, grantType: 'password', clientId: 'admin-cli' });
      await relogin();
      assert.equal((await ts.kc.organizations.listInvitations({ realm: REALM, orgId, email: 'late@example.com' }))[0]!.status, 'EXPIRED');
      assert.equal((await ts.kc.organizations.listInvitations({ realm: REALM, orgId, status: 'PENDING', email: 'late@example.com' })).length, 0);
      const expired = await open(linkIn(m3!), new CookieJar());
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /expired/);
      await invite({ email: 'late@example.com' });
      assert.equal((await ts.kc.organizations.listInvitations({ realm: REALM, orgId, email: 'late@example.com' }))[0]!.status, 'PENDING', 'the expired one replaced');
      // The collector deletes invitations 30 days past their expiry.
      ts.clock.advance(3601 + 30 * 86_400);
      await relogin();
      const run = await new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 0, eventsRetentionDays: 3650, adminEventsRetentionDays: 3650 }).runOnce();
      assert.ok((run.deleted.organization_invitations ?? 0) >= 1);
      assert.equal((await ts.kc.organizations.listInvitations({ realm: REALM, orgId, email: 'late@example.com' })).length, 0);
    });
  });
}
