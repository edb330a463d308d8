import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer, linkIn } from '../helpers/smtp.js';

// The registration and email verification commands of the installed command (npm run build first):
// realm create/update --registration-allowed, --registration-email-as-username, --verify-email, realm
// show, user update --require-email-verification and user send-verify-email through a real SMTP server.
for (const dialect of dialects()) {
  describe(`realmgate registration commands (${dialect})`, { skip: SMTP_MISSING }, () => {
    const { ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let smtp: SmtpServer;
    const saved = { authUrl: process.env.AUTH_URL, keySecret: process.env.REALMGATE_KEY_SECRET };
    before(async () => {
      // The server and the command MAC the links under one data key, sealed under one secret.
      process.env.REALMGATE_KEY_SECRET = 'registration commands test secret';
      ts = await startTestServer({ dialect, listen: true });
      process.env.AUTH_URL = ts.baseUrl;
      smtp = await SmtpServer.start();
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
      for (const [name, value] of [['AUTH_URL', saved.authUrl], ['REALMGATE_KEY_SECRET', saved.keySecret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    test('--help lists the options; realm create and update set them (on|off), realm show says them; a wrong value is refused in one line', async () => {
      for (const cmd of ['create', 'update']) {
        const help = ok(['realm', cmd, '--help']);
        for (const o of ['--registration-allowed', '--registration-email-as-username', '--verify-email']) assert.ok(help.includes(o), `${cmd} ${o}`);
      }
      assert.match(ok(['user', 'update', '--help']), /--require-email-verification/);
      assert.match(ok(['user', 'send-verify-email', '--help']), /--redirect-uri/);
      assert.match(ok(['user', 'send-actions-email', '--help']), /VERIFY_EMAIL/);
      ok(['realm', 'create', 'selfserve', '--registration-allowed', 'on', '--verify-email', 'on']);
      let r = (await ts.store.realms.get('selfserve'))!;
      assert.deepEqual([r.registrationAllowed, r.registrationEmailAsUsername, r.verifyEmail], [true, false, true]);
      ok(['realm', 'update', 'selfserve', '--registration-email-as-username', 'on', '--verify-email', 'off']);
      r = (await ts.store.realms.get('selfserve'))!;
      assert.deepEqual([r.registrationAllowed, r.registrationEmailAsUsername, r.verifyEmail], [true, true, false]);
      const show = ok(['realm', 'show', 'selfserve']);
      assert.match(show, /registration: +allowed, the email is the username/);
      assert.match(show, /verify email: +no/);
      assert.match(ok(['realm', 'show', REALM]), /registration: +not allowed/);
      fails(['realm', 'update', 'selfserve', '--verify-email', 'maybe'], /on or off/);
      // Keycloak's editUsernameAllowed.
      assert.match(ok(['realm', 'update', '--help']), /--edit-username/);
      assert.match(show, /edit username: +no/);
      ok(['realm', 'update', 'selfserve', '--edit-username', 'on']);
      assert.equal((await ts.store.realms.get('selfserve'))!.editUsernameAllowed, true);
      assert.match(ok(['realm', 'show', 'selfserve']), /edit username: +yes/);
      fails(['realm', 'update', 'selfserve', '--edit-username', 'sometimes'], /on or off/);
      // Keycloak's first broker login Review Profile mode.
      assert.match(show, /broker review: +when the provider's account lacks something \(missing\)/);
      ok(['realm', 'update', 'selfserve', '--broker-review-profile', 'off']);
      assert.equal((await ts.store.realms.get('selfserve'))!.brokerReviewProfile, 'off');
      assert.match(ok(['realm', 'show', 'selfserve']), /broker review: +never \(off\)/);
      fails(['realm', 'update', 'selfserve', '--broker-review-profile', 'sometimes'], /Allowed choices are missing, on, off/);
    });

    test('user update --require-email-verification, and user send-verify-email: a link from AUTH_URL that verifies the email', async () => {
      ok(['user', 'update', REALM, 'alice', '--require-email-verification', 'on']);
      assert.deepEqual((await ts.store.users.findByUsername(REALM, 'alice'))!.requiredActions, ['VERIFY_EMAIL']);
      fails(['user', 'send-verify-email', REALM, 'alice'], /no SMTP server/);
      ok(['realm', 'update', REALM, '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-from', 'noreply@example.com']);
      fails(['user', 'send-verify-email', REALM, 'alice', '--client-id', ts.client.id, '--redirect-uri', 'https://evil.example.com/'], /Invalid redirect uri/);
      const out = ok(['user', 'send-verify-email', REALM, 'alice']);
      assert.match(out, /mailed alice@example\.com a link to verify it/);
      const [mail] = await smtp.waitFor(1);
      const link = new URL(linkIn(mail!));
      assert.equal(link.origin, ts.baseUrl);
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', `${link.pathname}${link.search}`);
      assert.match(page.body, /Confirm that/);
      const f = parseForm(page.body);
      const done = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, key: /name="key" value="([^"]*)"/.exec(page.body)![1]! });
      assert.match(done.body, /Your email address has been verified/);
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      assert.equal(alice.emailVerified, true);
      assert.deepEqual(alice.requiredActions, []);
      ok(['user', 'update', REALM, 'alice', '--require-email-verification', 'off']);
    });
  });
}
