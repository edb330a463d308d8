import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { openSmtpPassword } from '../../src/crypto/smtp-secret.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

const lineOf = (r: RealmReport, element: string): { outcome: string; reason?: string } => {
  const l = r.lines.find((x) => x.element === element);
  assert.ok(l, `no line for ${element}: ${JSON.stringify(r.lines.map((x) => x.element))}`);
  return l;
};

// Keycloak's smtpServer, resetPasswordAllowed and action token lifespans move with a realm, and back out.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: email settings (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const mailRealm = (name: string, smtpServer: Json): Json => ({
      realm: name,
      enabled: true,
      resetPasswordAllowed: true,
      actionTokenGeneratedByUserLifespan: 900,
      actionTokenGeneratedByAdminLifespan: 86_400,
      smtpServer,
    });

    test('the fixture (a real Keycloak 26.6 export: smtpServer {}, resetPasswordAllowed false, lifespans 300/43200) imports with its values', async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      for (const r of report.realms.filter((x) => x.realm !== 'master')) {
        assert.equal(r.status, 'imported', JSON.stringify(r));
        const realm = (await ts.store.realms.get(r.realm))!;
        assert.deepEqual(realm.smtpServer, {});
        assert.equal(realm.resetPasswordAllowed, false);
        assert.equal(realm.actionTokenUserLifespan, 300);
        assert.equal(realm.actionTokenAdminLifespan, 43_200);
        assert.ok(!r.lines.some((l) => l.element === 'realm setting smtpServer'), 'nothing to report of an empty map');
      }
    });

    test('smtpServer with its password (kc.sh export writes it in clear) is kept, the password sealed; the report says so; export masks it unless --with-secrets', async () => {
      const smtp = { host: 'smtp.example.com', port: '587', from: 'sso@example.com', fromDisplayName: 'Example SSO', replyTo: 'help@example.com', auth: 'true', user: 'sso', password: 'kc-smtp-pw', starttls: 'true', ssl: 'false', allowutf8: 'true' };
      const report = await importKeycloakRealms(ts.store, [mailRealm('mailer', smtp)], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported');
      assert.match(lineOf(r, 'realm setting smtpServer').reason ?? '', /host smtp\.example\.com:587, from sso@example\.com, user sso, password sealed/);
      assert.equal(lineOf(r, 'realm setting smtpServer key allowutf8').outcome, 'skipped');
      assert.match(lineOf(r, 'realm setting resetPasswordAllowed').reason ?? '', /Forgot password\?/);
      const realm = (await ts.store.realms.get('mailer'))!;
      const { password: _p, allowutf8: _a, ...kept } = smtp;
      assert.deepEqual(realm.smtpServer, kept);
      assert.equal(await openSmtpPassword(ts.store, 'mailer', realm.smtpPassword!), 'kc-smtp-pw');
      assert.equal(realm.resetPasswordAllowed, true);
      assert.equal(realm.actionTokenUserLifespan, 900);
      assert.equal(realm.actionTokenAdminLifespan, 86_400);

      const plain = await exportRealm(ts.store, 'mailer', { withSecrets: false });
      assert.deepEqual(plain.smtpServer, { ...kept, password: '**********' });
      assert.equal(plain.resetPasswordAllowed, true);
      assert.equal(plain.actionTokenGeneratedByUserLifespan, 900);
      assert.ok(!JSON.stringify(plain).includes('kc-smtp-pw'));
      const full = await exportRealm(ts.store, 'mailer', { withSecrets: true });
      assert.deepEqual(full.smtpServer, { ...kept, password: 'kc-smtp-pw' });

      // The masked export imported elsewhere: the settings come, the password is asked for.
      const again = (await importKeycloakRealms(ts.store, [{ ...plain, realm: 'mailer-copy', users: [] }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(again.status, 'imported', JSON.stringify(again));
      assert.match(lineOf(again, 'realm setting smtpServer').reason ?? '', /password was masked in the file/);
      assert.equal((await ts.store.realms.get('mailer-copy'))!.smtpPassword, null);
    });

    test('an smtpServer Realmgate refuses is left out with the reason; the realm is imported', async () => {
      const r = (await importKeycloakRealms(ts.store, [mailRealm('badmail', { host: 'smtp.example.com', from: 'not an address' })], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported');
      const line = lineOf(r, 'realm setting smtpServer');
      assert.equal(line.outcome, 'skipped');
      assert.match(line.reason ?? '', /from must be an email address/);
      assert.match(lineOf(r, 'realm setting resetPasswordAllowed').reason ?? '', /no smtpServer/);
      assert.deepEqual((await ts.store.realms.get('badmail'))!.smtpServer, {});
    });
  });
}
