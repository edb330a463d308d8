import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, inject } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer } from '../helpers/smtp.js';

// The organization invitation commands of the installed command (npm run build first): org invite
// (--email, --user), org invitations, org invitation delete, through a real SMTP server.
for (const dialect of dialects()) {
  describe(`realmgate org invitation commands (${dialect})`, { skip: SMTP_MISSING }, () => {
    const { ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let smtp: SmtpServer;
    const saved = process.env.AUTH_URL;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      process.env.AUTH_URL = ts.baseUrl;
      smtp = await SmtpServer.start();
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
      if (saved === undefined) delete process.env.AUTH_URL;
      else process.env.AUTH_URL = saved;
    });

    test('--help; invite by email and by user; the list; delete kills the link; errors on stderr with a non-zero exit', async () => {
      const help = ok(['org', 'invite', '--help']);
      for (const o of ['--email', '--first-name', '--last-name', '--user']) assert.ok(help.includes(o), o);
      assert.match(ok(['org', '--help']), /invitations/);
      fails(['org', 'invite', REALM, 'acme', '--email', 'bob@example.com'], /no SMTP server/);
      ok(['realm', 'update', REALM, '--smtp-host', '127.0.0.1', '--smtp-port', String(smtp.port), '--smtp-from', 'noreply@example.com']);
      fails(['org', 'invite', REALM, 'acme'], /either --email or --user/);
      fails(['org', 'invite', REALM, 'acme', '--email', 'not an email'], /Invalid email format/);
      fails(['org', 'invite', REALM, 'acme', '--user', 'alice'], /already a member/);
      fails(['org', 'invite', REALM, 'acme', '--user', 'nobody'], /User does not exist/);
      assert.match(ok(['org', 'invite', REALM, 'acme', '--email', 'Bob@Example.com', '--first-name', 'Bob', '--last-name', 'B']), /invited bob@example.com to acme/);
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'bob@example.com');
      const link = /https?:\/\/\S+\/login-actions\/org-invitation\?key=\S+/.exec(mail!.text)![0];
      assert.ok(link.startsWith(ts.baseUrl), 'from AUTH_URL');
      fails(['org', 'invite', REALM, 'acme', '--email', 'bob@example.com'], /pending invitation/);
      const lines = ok(['org', 'invitations', REALM, 'acme']).trim().split('\n');
      assert.equal(lines.length, 1);
      const [id, email, status] = lines[0]!.split('\t');
      assert.deepEqual([email, status], ['bob@example.com', 'PENDING']);
      assert.equal(ok(['org', 'invitations', REALM, 'acme', '--status', 'EXPIRED']).trim(), '');
      fails(['org', 'invitations', REALM, 'acme', '--status', 'SOON'], /PENDING or EXPIRED/);
      const u = new URL(link);
      assert.equal((await inject(ts.app, new CookieJar(), 'GET', `${u.pathname}${u.search}`)).statusCode, 200);
      ok(['org', 'invitation', 'delete', REALM, 'acme', id!]);
      assert.equal((await inject(ts.app, new CookieJar(), 'GET', `${u.pathname}${u.search}`)).statusCode, 400);
      fails(['org', 'invitation', 'delete', REALM, 'acme', id!], /Invitation not found/);
      // An existing user who is not a member, by username.
      ok(['user', 'create', REALM, 'carol', '--email', 'carol@example.com', '--password', 'carol password 1']);
      smtp.clear();
      assert.match(ok(['org', 'invite', REALM, 'acme', '--user', 'carol']), /invited carol@example.com/);
      const [m2] = await smtp.waitFor(1);
      assert.match(m2!.text, /to join:/);
    });
  });
}
