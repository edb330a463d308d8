import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { SMTP_MISSING, SmtpServer } from '../helpers/smtp.js';
import { startRecorder } from '../helpers/recorder.js';
import { type AdminTestServer, errorOf, startAdminServer } from './helpers.js';

const MASK = '**********';
const USER = 'mailer@example.com';
const PASSWORD = 'smtp pass: 7Yq!';

// SMTP AUTH against a real server that requires it (aiosmtpd with an authenticator): the realm's password,
// sealed at rest, is opened and used for every mail (the admin's test mail with the masked representation,
// execute-actions-email), and a wrong one is a 502 that names the server's answer, never the password.
for (const dialect of dialects()) {
  describe(`SMTP authentication (${dialect})`, { skip: SMTP_MISSING }, () => {
    let ts: AdminTestServer;
    let smtp: SmtpServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
      smtp = await SmtpServer.start({ auth: { user: USER, password: PASSWORD } });
      const admin = (await ts.kc.users.find({ realm: 'master', username: 'admin', exact: true }))[0]!;
      await ts.kc.users.update({ realm: 'master', id: admin.id! }, { email: 'admin@example.com' });
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });
    beforeEach(async () => {
      await smtp.settle();
      smtp.clear();
    });

    const settings = (extra: Record<string, string>): Record<string, string> => ({ host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com', starttls: 'false', ...extra });

    test('the stored password authenticates: the test mail with the masked representation read back, and execute-actions-email', async () => {
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: settings({ auth: 'true', user: USER, password: PASSWORD }) });
      const rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
      assert.equal(rep.smtpServer!.password, MASK);
      // The console sends the map as it read it: the mask stands for the stored password.
      await ts.kc.realms.testSMTPConnection({ realm: REALM }, rep.smtpServer!);
      const [test1] = await smtp.waitFor(1);
      assert.equal(test1!.to, 'admin@example.com');
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'smtp-user', email: 'smtp-user@example.com', enabled: true });
      await ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['UPDATE_PASSWORD'] });
      const mails = await smtp.waitFor(2);
      assert.equal(mails[1]!.to, 'smtp-user@example.com');
      assert.match(mails[1]!.text, /Update your password/);
    });

    test('the stored password goes only to the server it was given for: a test mail or a realm update naming another host or port needs it given again', async () => {
      // Another host, as an administrator would point the settings at a server of theirs: it greets and
      // offers AUTH, so that a client that went on would send the password.
      const elsewhere = await startRecorder({ greeting: '220 elsewhere ESMTP\r\n' });
      try {
        await ts.kc.realms.update({ realm: REALM }, { smtpServer: settings({ auth: 'true', user: USER, password: PASSWORD }) });
        const rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
        const moved = { ...rep.smtpServer!, port: String(elsewhere.port) };
        // The masked password (as the console sends it back), or none: refused before any connection.
        for (const body of [moved, { ...moved, password: undefined }]) {
          const e = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, body as Record<string, string>));
          assert.equal(e.status, 400);
          assert.match(String(e.body.errorMessage), /password must be given to test another host or port/);
        }
        const update = await errorOf(ts.kc.realms.update({ realm: REALM }, { smtpServer: moved }));
        assert.equal(update.status, 400);
        assert.match(String(update.body.errorMessage), /smtpServer\.password must be given again .* to change smtpServer\.host or smtpServer\.port/);
        assert.equal(elsewhere.connections(), 0, 'nothing reached the other server');
        // The stored settings are as they were: the real server still takes the test mail.
        assert.equal((await ts.kc.realms.findOne({ realm: REALM }))!.smtpServer!.port, String(smtp.port));
        await ts.kc.realms.testSMTPConnection({ realm: REALM }, rep.smtpServer!);
        await smtp.waitFor(1);
        // Its other settings change with the mask (a new sender), and a new password goes with a new port.
        await ts.kc.realms.update({ realm: REALM }, { smtpServer: { ...rep.smtpServer!, from: 'sender@example.com' } });
        assert.equal((await ts.kc.realms.findOne({ realm: REALM }))!.smtpServer!.password, MASK);
        await ts.kc.realms.update({ realm: REALM }, { smtpServer: { ...moved, password: 'for elsewhere' } });
        assert.equal((await ts.kc.realms.findOne({ realm: REALM }))!.smtpServer!.port, String(elsewhere.port));
      } finally {
        await elsewhere.close();
      }
    });

    test('a wrong password, or none, is refused by the server: 502 naming its answer, never the password; nothing was delivered', async () => {
      const wrong = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, settings({ auth: 'true', user: USER, password: 'not the password' })));
      assert.equal(wrong.status, 502);
      assert.match(String(wrong.body.errorMessage), /^Failed to send email: sending mail through 127\.0\.0\.1:\d+ failed \(.*SMTP 535/);
      assert.ok(!JSON.stringify(wrong.body).includes('not the password'));
      // Without AUTH the server answers 530 (authentication required) to the envelope.
      const none = await errorOf(ts.kc.realms.testSMTPConnection({ realm: REALM }, settings({})));
      assert.equal(none.status, 502);
      assert.match(String(none.body.errorMessage), /SMTP 530/);
      // The stored settings with a wrong password: the admin API's mail fails the same way.
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: settings({ auth: 'true', user: USER, password: 'stale password' }) });
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'smtp-user-2', email: 'smtp-user-2@example.com', enabled: true });
      const failed = await errorOf(ts.kc.users.executeActionsEmail({ realm: REALM, id, actions: ['UPDATE_PASSWORD'] }));
      assert.equal(failed.status, 502);
      assert.ok(!JSON.stringify(failed.body).includes('stale password'));
      await smtp.settle();
      assert.equal(smtp.messages().length, 0);
    });
  });
}
