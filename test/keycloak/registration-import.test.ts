import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

const lineOf = (r: RealmReport, element: string): { outcome: string; reason?: string } | undefined => r.lines.find((x) => x.element === element);

// Keycloak's registrationAllowed, registrationEmailAsUsername and verifyEmail move with a realm (the
// report says what they do here), a user's VERIFY_EMAIL required action is kept, and they export back.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: registration and email verification (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('the fixture (a real Keycloak 26.6 export: all three false) imports them false, with no line about them', async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      for (const r of report.realms.filter((x) => x.realm !== 'master')) {
        assert.equal(r.status, 'imported', JSON.stringify(r));
        const realm = (await ts.store.realms.get(r.realm))!;
        assert.equal(realm.registrationAllowed, false);
        assert.equal(realm.registrationEmailAsUsername, false);
        assert.equal(realm.verifyEmail, false);
        assert.equal(lineOf(r, 'realm setting registrationAllowed'), undefined);
        assert.equal(lineOf(r, 'realm setting verifyEmail'), undefined);
      }
    });

    test('true in the file: kept and reported; a user\'s VERIFY_EMAIL kept and reported; the export carries them', async () => {
      const rep: Json = {
        realm: 'signup',
        enabled: true,
        registrationAllowed: true,
        registrationEmailAsUsername: true,
        verifyEmail: true,
        smtpServer: { host: 'smtp.example.com', from: 'sso@example.com' },
        users: [{ id: '0b7c1d2e-0000-4000-8000-0000000000a1', username: 'pending', email: 'pending@example.com', emailVerified: false, enabled: true, requiredActions: ['VERIFY_EMAIL'], credentials: [{ type: 'password', value: 'pending password 1' }] }],
      };
      const r = (await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const realm = (await ts.store.realms.get('signup'))!;
      assert.equal(realm.registrationAllowed, true);
      assert.equal(realm.registrationEmailAsUsername, true);
      assert.equal(realm.verifyEmail, true);
      assert.match(lineOf(r, 'realm setting registrationAllowed')?.reason ?? '', /"Register" on the login page.*the email is the username/);
      assert.match(lineOf(r, 'realm setting verifyEmail')?.reason ?? '', /mailed link before signing in/);
      assert.match(lineOf(r, 'user pending')?.reason ?? '', /VERIFY_EMAIL kept/);
      assert.deepEqual((await ts.store.users.findByUsername('signup', 'pending'))!.requiredActions, ['VERIFY_EMAIL']);
      const out = await exportRealm(ts.store, 'signup', { withSecrets: false });
      assert.equal(out.registrationAllowed, true);
      assert.equal(out.registrationEmailAsUsername, true);
      assert.equal(out.verifyEmail, true);
      assert.deepEqual((out.users as Array<{ requiredActions: string[] }>)[0]!.requiredActions, ['VERIFY_EMAIL']);
    });

    test("editUsernameAllowed: false in the fixture (no line), true kept and reported, exported back", async () => {
      const fixture = (await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'skip' }, actor)).realms.filter((x) => x.realm !== 'master');
      for (const r of fixture) assert.equal((await ts.store.realms.get(r.realm))!.editUsernameAllowed, false);
      const r = (await importKeycloakRealms(ts.store, [{ realm: 'renames', enabled: true, editUsernameAllowed: true }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      assert.equal((await ts.store.realms.get('renames'))!.editUsernameAllowed, true);
      assert.match(lineOf(r, 'realm setting editUsernameAllowed')?.reason ?? '', /users may change their username on the account page/);
      assert.equal((await exportRealm(ts.store, 'renames', { withSecrets: false })).editUsernameAllowed, true);
      const bad = (await importKeycloakRealms(ts.store, [{ realm: 'badrename', enabled: true, editUsernameAllowed: 'yes' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.notEqual(bad.status, 'imported');
    });

    test('verifyEmail without smtpServer: imported, and the report warns that unverified users cannot sign in until one is set; a wrong type is refused', async () => {
      const r = (await importKeycloakRealms(ts.store, [{ realm: 'nomail', enabled: true, verifyEmail: true }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported');
      assert.match(lineOf(r, 'realm setting verifyEmail')?.reason ?? '', /no smtpServer: a user whose email is not verified cannot sign in/);
      const bad = (await importKeycloakRealms(ts.store, [{ realm: 'badtype', enabled: true, registrationAllowed: 'yes' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.notEqual(bad.status, 'imported');
      assert.match(JSON.stringify(bad), /registrationAllowed must be true or false/);
    });
  });
}
