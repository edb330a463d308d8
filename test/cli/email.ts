import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer, linkIn } from '../helpers/smtp.js';
import { openSmtpPassword } from '../../src/crypto/smtp-secret.js';

// The email commands of the installed command (npm run build first): realm update --smtp-* and
// --reset-password-allowed over the database of a running server, and user send-actions-email through a
// real SMTP server (aiosmtpd).
for (const dialect of dialects()) {
  describe(`realmgate email commands (${dialect})`, { skip: SMTP_MISSING }, () => {
    const { ok, fails, run } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let smtp: SmtpServer;
    const saved = { authUrl: process.env.AUTH_URL, keySecret: process.env.REALMGATE_KEY_SECRET };
    before(async () => {
      // The server and the commands seal the SMTP password under one key-encryption secret.
      process.env.REALMGATE_KEY_SECRET = 'email commands test secret';
      ts = await startTestServer({ dialect, listen: true });
      // Links are made from AUTH_URL, as the server has it.
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
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
    });

    test('realm update --help lists the SMTP options and --reset-password-allowed', () => {
      const help = ok(['realm', 'update', '--help']);
      for (const o of ['--smtp-host', '--smtp-port', '--smtp-from', '--smtp-user', '--smtp-password-stdin', '--smtp-starttls', '--smtp-ssl', '--no-smtp', '--reset-password-allowed', '--action-token-lifespan']) assert.ok(help.includes(o), o);
      assert.match(ok(['user', 'send-actions-email', '--help']), /--action <action>/);
    });

    test('realm update sets the SMTP server (the password from stdin, sealed, never printed) and the reset switch; --no-smtp removes them', async () => {
      const out = ok(
        ['realm', 'update', REALM, '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-from', 'noreply@example.com', '--smtp-user', 'mailer', '--smtp-password-stdin', '--smtp-starttls', 'off', '--reset-password-allowed', 'on', '--action-token-lifespan', '600'],
        'cli-smtp-secret\n',
      );
      assert.ok(!out.includes('cli-smtp-secret'));
      const realm = (await ts.store.realms.get(REALM))!;
      assert.deepEqual(realm.smtpServer, { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com', user: 'mailer', auth: 'true', starttls: 'false' });
      assert.equal(await openSmtpPassword(ts.store, REALM, realm.smtpPassword!), 'cli-smtp-secret');
      assert.equal(realm.resetPasswordAllowed, true);
      assert.equal(realm.actionTokenUserLifespan, 600);
      const exported = ok(['realm', 'export', REALM]);
      assert.ok(!exported.includes('cli-smtp-secret'));
      assert.match(exported, /"password": ?"\*{10}"/);
      fails(['realm', 'update', REALM, '--smtp-from', 'not an address'], /smtpServer\.from must be an email address/);
      fails(['realm', 'update', REALM, '--smtp-ssl', 'maybe'], /on or off/);
      ok(['realm', 'update', REALM, '--no-smtp']);
      const cleared = (await ts.store.realms.get(REALM))!;
      assert.deepEqual(cleared.smtpServer, {});
      assert.equal(cleared.smtpPassword, null);
    });

    test('user send-actions-email mails a link from AUTH_URL; refusals in one line', async () => {
      fails(['user', 'send-actions-email', REALM, 'alice', '--action', 'UPDATE_PASSWORD'], /no SMTP server/);
      ok(['realm', 'update', REALM, '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-from', 'noreply@example.com']);
      fails(['user', 'send-actions-email', REALM, 'alice', '--action', 'webauthn-register'], /webauthn-register cannot be mailed/);
      fails(['user', 'send-actions-email', REALM, 'alice', '--action', 'CONFIGURE_RECOVERY_AUTHN_CODES'], /not supported/);
      fails(['user', 'send-actions-email', REALM, 'alice', '--action', 'delete_credential'], /delete_credential cannot be mailed/);
      fails(['user', 'send-actions-email', REALM, 'alice', '--action', 'UPDATE_PASSWORD', '--client-id', ts.client.id, '--redirect-uri', 'https://evil.example.com/'], /Invalid redirect uri/);
      const out = ok(['user', 'send-actions-email', REALM, 'alice', '--action', 'UPDATE_PASSWORD', '--action', 'UPDATE_PROFILE', '--client-id', ts.client.id, '--redirect-uri', ts.client.redirectUri]);
      assert.match(out, /mailed alice@example\.com a link to UPDATE_PASSWORD, UPDATE_PROFILE/);
      const [mail] = await smtp.waitFor(1);
      const link = new URL(linkIn(mail!));
      assert.equal(link.origin, ts.baseUrl);
      const page = await inject(ts.app, new CookieJar(), 'GET', `${link.pathname}${link.search}`);
      assert.equal(pageKind(page.body), 'update-password');
      // A dead SMTP server: one line, exit 1, quickly.
      ok(['realm', 'update', REALM, '--smtp-port', '1']);
      const t0 = Date.now();
      const r = run(['user', 'send-actions-email', REALM, 'alice', '--action', 'UPDATE_PASSWORD']);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /the mail was not sent: sending mail through 127\.0\.0\.1:1 failed/);
      assert.ok(Date.now() - t0 < 15_000);
    });
  });
}
