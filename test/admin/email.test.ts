import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { CookieJar, inject, pageKind, parseForm, runAuthorization } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer, freePort, linkIn } from '../helpers/smtp.js';
import { OTP_TOOLS_MISSING, oathtoolCode } from '../helpers/otp.js';
import { openSmtpPassword } from '../../src/crypto/smtp-secret.js';
import { type AdminTestServer, errorOf, startAdminServer, statusOf } from './helpers.js';

const MASK = '**********';

// The realm's SMTP settings through the Keycloak admin API (keycloak-admin-client, unchanged), and
// execute-actions-email: the mail through a real SMTP server (aiosmtpd), its link, the actions, the way back.
for (const dialect of dialects()) {
  describe(`email through the admin API (${dialect})`, { skip: SMTP_MISSING ?? OTP_TOOLS_MISSING }, () => {
    let ts: AdminTestServer;
    let smtp: SmtpServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
      smtp = await SmtpServer.start();
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
    });

    const smtpServer = (port: number, extra: Record<string, string> = {}): Record<string, string> => ({ host: '127.0.0.1', port: String(port), from: 'noreply@example.com', fromDisplayName: 'Test', ...extra });

    test('smtpServer round trip: the password is sealed, shown masked, kept when the mask comes back, never in admin events', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port, { auth: 'true', user: 'mailer', password: 's3cret-smtp', starttls: 'false', replyTo: 'help@example.com' }), resetPasswordAllowed: true });
      const rep = await ts.kc.realms.findOne({ realm: REALM });
      assert.deepEqual(rep!.smtpServer, { ...smtpServer(smtp.port), auth: 'true', user: 'mailer', password: MASK, starttls: 'false', replyTo: 'help@example.com' });
      assert.equal(rep!.resetPasswordAllowed, true);
      assert.equal(rep!.actionTokenGeneratedByUserLifespan, 300);
      assert.equal(rep!.actionTokenGeneratedByAdminLifespan, 43_200);
      const stored = (await ts.store.realms.get(REALM))!;
      assert.ok(stored.smtpPassword?.startsWith('smtp:v1:') && !stored.smtpPassword.includes('s3cret'), 'sealed');
      assert.equal(await openSmtpPassword(ts.store, REALM, stored.smtpPassword!), 's3cret-smtp');
      // The representation read and written back (the mask in it): the password stays.
      await ts.kc.realms.update({ realm: REALM }, { ...rep!, actionTokenGeneratedByUserLifespan: 600 });
      const after = (await ts.store.realms.get(REALM))!;
      assert.equal(await openSmtpPassword(ts.store, REALM, after.smtpPassword!), 's3cret-smtp');
      assert.equal(after.actionTokenUserLifespan, 600);
      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, max: 100 });
      assert.ok(events.length > 0);
      assert.ok(!JSON.stringify(events).includes('s3cret'), 'no password in admin events');
      // Refused: no sender, a port that is not one, a switch that is not "true"/"false".
      for (const bad of [{ host: 'mail.example.com' }, smtpServer(70_000), smtpServer(25, { ssl: 'yes' })]) {
        const r = await errorOf(ts.kc.realms.update({ realm: REALM }, { smtpServer: bad }));
        assert.equal(r.status, 400);
        assert.match(String(r.body.errorMessage), /smtpServer/);
      }
      // Without auth (aiosmtpd here takes no AUTH) for the rest; the password goes with the map that has none.
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port), actionTokenGeneratedByUserLifespan: 300 });
      assert.equal((await ts.store.realms.get(REALM))!.smtpPassword, null);
    });

    test('testSMTPConnection sends a test mail with the settings given to the calling admin; without an admin email, 400; a dead server, 502', async () => {
      const missing = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, smtpServer(smtp.port)));
      assert.equal(missing.status, 400);
      assert.equal(missing.body.errorMessage, 'Logged in user does not have an e-mail.');
      const admin = (await ts.kc.users.find({ realm: 'master', username: 'admin', exact: true }))[0]!;
      await ts.kc.users.update({ realm: 'master', id: admin.id! }, { email: 'admin@example.com' });
      await ts.kc.realms.testSMTPConnection({ realm: REALM }, smtpServer(smtp.port));
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'admin@example.com');
      assert.equal(mail!.subject, '[Test Realm] Test message');
      const bad = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, { host: 'x' }));
      assert.equal(bad.status, 400);
      const dead = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, smtpServer(await freePort())));
      assert.equal(dead.status, 502);
      assert.match(String(dead.body.errorMessage), /^Failed to send email: sending mail through 127\.0\.0\.1:\d+ failed/);
    });

    test('execute-actions-email: a new password, then the authenticator, then to the registered redirect_uri; the link once only', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port) });
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'newbie', email: 'newbie@example.com', enabled: true });
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId: id });
      await ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['UPDATE_PASSWORD', 'CONFIGURE_TOTP'], lifespan: 600, clientId: ts.client.id, redirectUri: ts.client.redirectUri });
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'newbie@example.com');
      assert.match(mail!.text, /Update your password/);
      assert.match(mail!.text, /Set up an authenticator app/);
      const link = new URL(linkIn(mail!));
      assert.equal(link.origin, new URL(ts.config.authUrl).origin);
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', `${link.pathname}${link.search}`);
      assert.equal(pageKind(page.body), 'update-password');
      const form = parseForm(page.body);
      const key = /name="key" value="([^"]*)"/.exec(page.body)![1]!;
      const otpPage = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, key, 'password-new': 'newbie password 1', 'password-confirm': 'newbie password 1' });
      assert.equal(pageKind(otpPage.body), 'configure-otp', otpPage.body.slice(0, 300));
      const secret = /<code id="otp-key">([^<]*)<\/code>/.exec(otpPage.body)![1]!.replace(/\s/g, '');
      const proof = /name="proof" value="([^"]*)"/.exec(otpPage.body)![1]!;
      const f2 = parseForm(otpPage.body);
      const code = oathtoolCode(secret, Math.floor(ts.clock.nowMs() / 1000));
      const done = await inject(ts.app, jar, 'POST', f2.action, { csrf: f2.csrf, proof, otp: code });
      assert.equal(done.statusCode, 303, done.body.slice(0, 400));
      assert.equal(done.headers.location, ts.client.redirectUri);
      assert.equal((await ts.store.otp.list(id)).length, 1);
      // The new password signs in (the authenticator's code is asked: the flow stops at it).
      await assert.rejects(runAuthorization(ts, { username: 'newbie', password: 'newbie password 1' }), /Authenticator code/);
      // The link again: refused.
      const again = await inject(ts.app, new CookieJar(), 'GET', `${link.pathname}${link.search}`);
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /no longer works/);
    });

    test('execute-actions-email with the terms and the profile: declined, then accepted; a new email is saved unverified and the link does not verify it; each link once; a switched-off action refused', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port) });
      await ts.kc.users.create({ realm: REALM, username: 'taken', email: 'taken@example.com', enabled: true });
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'profiler', email: 'profiler@example.com', firstName: 'Pro', lastName: 'Filer', enabled: true });
      await ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE', 'VERIFY_EMAIL'], lifespan: 600 });
      const [mail] = await smtp.waitFor(1);
      assert.match(mail!.text, /Accept the terms and conditions/);
      assert.match(mail!.text, /Update your profile/);
      const link = new URL(linkIn(mail!));
      const path = `${link.pathname}${link.search}`;
      const keyOf = (html: string): string => /name="key" value="([^"]*)"/.exec(html)![1]!;
      const jar = new CookieJar();
      const terms = await inject(ts.app, jar, 'GET', path);
      assert.equal(pageKind(terms.body), 'terms');
      const f = parseForm(terms.body);
      // Another browser's form (no CSRF binding of its own): refused, nothing recorded.
      const forged = await inject(ts.app, new CookieJar(), 'POST', f.action, { csrf: f.csrf, key: keyOf(terms.body), accept: '1' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await ts.store.users.get(id))!.attributes.terms_and_conditions, undefined);
      // Declined: the rest is not done.
      const declined = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: keyOf(terms.body), cancel: '1' });
      assert.equal(declined.statusCode, 200);
      assert.match(declined.body, /Terms declined/);
      assert.equal((await ts.store.users.get(id))!.attributes.terms_and_conditions, undefined);
      // The same link (nothing it is bound to changed): accepted this time, then the profile.
      const again = await inject(ts.app, jar, 'GET', path);
      const f2 = parseForm(again.body);
      const profile = await inject(ts.app, jar, 'POST', f2.action, { csrf: f2.csrf, key: keyOf(again.body), accept: '1' });
      assert.equal(pageKind(profile.body), 'update-profile', profile.body.slice(0, 400));
      assert.match(profile.body, /value="profiler@example\.com"/);
      assert.match((await ts.store.users.get(id))!.attributes.terms_and_conditions?.[0] ?? '', /^\d+$/);
      const usedTerms = await inject(ts.app, new CookieJar(), 'GET', path);
      assert.equal(usedTerms.statusCode, 400);
      assert.match(usedTerms.body, /no longer works/);
      // A taken email: the form again with the error and what was typed.
      const fp = parseForm(profile.body);
      const profileKey = keyOf(profile.body);
      const taken = await inject(ts.app, jar, 'POST', fp.action, { csrf: fp.csrf, key: profileKey, email: 'taken@example.com', firstName: 'Prof', lastName: 'Iler' });
      assert.equal(taken.statusCode, 400);
      assert.match(taken.body, /Email already exists/);
      assert.match(taken.body, /value="Prof"/);
      assert.equal((await ts.store.users.get(id))!.email, 'profiler@example.com');
      // A new email: saved, not verified, and VERIFY_EMAIL is not done by a link sent to the old address.
      const done = await inject(ts.app, jar, 'POST', fp.action, { csrf: fp.csrf, key: profileKey, email: 'New.Profiler@example.com', firstName: 'Prof', lastName: 'Iler' });
      assert.equal(done.statusCode, 200, done.body.slice(0, 400));
      assert.match(done.body, /Your account has been updated/);
      const user = (await ts.store.users.get(id))!;
      assert.deepEqual([user.email, user.emailVerified, user.firstName, user.lastName], ['new.profiler@example.com', false, 'Prof', 'Iler']);
      const usedProfile = await inject(ts.app, jar, 'POST', fp.action, { csrf: fp.csrf, key: profileKey, email: 'third@example.com', firstName: 'X', lastName: 'Y' });
      assert.equal(usedProfile.statusCode, 400);
      assert.match(usedProfile.body, /no longer works/);
      assert.equal((await ts.store.users.get(id))!.email, 'new.profiler@example.com');
      // A profile-only link, a new name only: once saved, the link no longer works.
      smtp.clear();
      await ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['UPDATE_PROFILE'] });
      const [second] = await smtp.waitFor(1);
      const path2 = `${new URL(linkIn(second!)).pathname}${new URL(linkIn(second!)).search}`;
      const p2 = await inject(ts.app, jar, 'GET', path2);
      const fp2 = parseForm(p2.body);
      const renamed = await inject(ts.app, jar, 'POST', fp2.action, { csrf: fp2.csrf, key: keyOf(p2.body), email: 'new.profiler@example.com', firstName: 'Prue', lastName: 'Iler' });
      assert.equal(renamed.statusCode, 200);
      assert.equal((await ts.store.users.get(id))!.firstName, 'Prue');
      const renamedAgain = await inject(ts.app, jar, 'POST', fp2.action, { csrf: fp2.csrf, key: keyOf(p2.body), email: 'new.profiler@example.com', firstName: 'Eve', lastName: 'Iler' });
      assert.equal(renamedAgain.statusCode, 400);
      assert.equal((await ts.store.users.get(id))!.firstName, 'Prue');
      // The realm's switched-off action cannot be mailed (Keycloak's words).
      const current = await ts.kc.authenticationManagement.getRequiredActionForAlias({ realm: REALM, alias: 'TERMS_AND_CONDITIONS' });
      await ts.kc.authenticationManagement.updateRequiredAction({ realm: REALM, alias: 'TERMS_AND_CONDITIONS' }, { ...current, enabled: false });
      try {
        const off = await errorOf(ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['TERMS_AND_CONDITIONS'] }));
        assert.equal(off.status, 400);
        assert.equal(off.body.errorMessage, 'Provided invalid required actions');
      } finally {
        await ts.kc.authenticationManagement.updateRequiredAction({ realm: REALM, alias: 'TERMS_AND_CONDITIONS' }, { ...current, enabled: true });
      }
    });

    test('a redirect_uri the client no longer has when the link is used: no redirect, the "updated" page', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port) });
      await ts.kc.users.executeActionsEmail({ realm: REALM, id: ts.user.id, actions: ['UPDATE_PASSWORD'], clientId: ts.client.id, redirectUri: 'http://127.0.0.1:9999/cb' });
      const [mail] = await smtp.waitFor(1);
      await ts.store.clients.update(REALM, ts.client.id, { redirectUris: [ts.client.redirectUri] });
      ts.services.cache.clear();
      try {
        const link = new URL(linkIn(mail!));
        const jar = new CookieJar();
        const page = await inject(ts.app, jar, 'GET', `${link.pathname}${link.search}`);
        const form = parseForm(page.body);
        const key = /name="key" value="([^"]*)"/.exec(page.body)![1]!;
        const done = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, key, 'password-new': 'alice new password 9', 'password-confirm': 'alice new password 9' });
        assert.equal(done.statusCode, 200);
        assert.equal(done.headers.location, undefined);
        assert.match(done.body, /Your password has been updated/);
      } finally {
        await ts.store.clients.update(REALM, ts.client.id, { redirectUris: [ts.client.redirectUri, 'http://127.0.0.1:9999/cb'] });
        ts.services.cache.clear();
      }
    });

    test('execute-actions-email refusals in Keycloak\'s shape: unregistered redirect_uri, unknown action, no email, no SMTP; a dead SMTP server is a 502 with a reason', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(smtp.port) });
      const alice = ts.user.id;
      const cases: Array<[Parameters<typeof ts.kc.users.executeActionsEmail>[0], RegExp]> = [
        [{ realm: REALM, id: alice, actions: ['UPDATE_PASSWORD'], clientId: ts.client.id, redirectUri: 'https://evil.example.com/' }, /Invalid redirect uri/],
        [{ realm: REALM, id: alice, actions: ['UPDATE_PASSWORD'], redirectUri: ts.client.redirectUri }, /Client id missing/],
        [{ realm: REALM, id: alice, actions: ['UPDATE_PASSWORD'], clientId: 'no-such-client' }, /Client doesn't exist/],
        [{ realm: REALM, id: alice, actions: ['webauthn-register'] }, /webauthn-register cannot be mailed/],
        [{ realm: REALM, id: alice, actions: ['CONFIGURE_RECOVERY_AUTHN_CODES'] }, /CONFIGURE_RECOVERY_AUTHN_CODES.*not supported/],
        [{ realm: REALM, id: alice, actions: ['delete_credential'] }, /delete_credential cannot be mailed/],
        [{ realm: REALM, id: alice, actions: [] }, /no action/],
      ];
      for (const [args, message] of cases) {
        const r = await errorOf(ts.kc.users.executeActionsEmail(args));
        assert.equal(r.status, 400, JSON.stringify(args));
        assert.match(String(r.body.errorMessage), message);
      }
      const { id: noMail } = await ts.kc.users.create({ realm: REALM, username: 'nomail', enabled: true });
      const r = await errorOf(ts.kc.users.executeActionsEmail({ realm: REALM, id: noMail, actions: ['UPDATE_PASSWORD'] }));
      assert.equal(r.status, 400);
      assert.equal(r.body.errorMessage, 'User email missing');
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: {} });
      const none = await errorOf(ts.kc.users.executeActionsEmail({ realm: REALM, id: alice, actions: ['UPDATE_PASSWORD'] }));
      assert.equal(none.status, 400);
      assert.match(String(none.body.errorMessage), /no SMTP server/);
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: smtpServer(await freePort()) });
      const t0 = Date.now();
      const dead = await errorOf(ts.kc.users.executeActionsEmail({ realm: REALM, id: alice, actions: ['UPDATE_PASSWORD'] }));
      assert.ok(Date.now() - t0 < 8000);
      assert.equal(dead.status, 502);
      assert.match(String(dead.body.errorMessage), /^Failed to send execute actions email: sending mail through 127\.0\.0\.1:\d+ failed/);
      assert.equal(smtp.messages().length, 0);
      assert.equal(await statusOf(ts.kc.users.executeActionsEmail({ realm: REALM, id: '00000000-0000-0000-0000-000000000000', actions: ['UPDATE_PASSWORD'] })), 404);
    });
  });
}
