import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { findLoginUser } from '../../src/oauth/authorize/interaction.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

const lineOf = (r: RealmReport, element: string): { outcome: string; reason?: string } => {
  const l = r.lines.find((x) => x.element === element);
  assert.ok(l, `no line for ${element}: ${JSON.stringify(r.lines.map((x) => x.element))}`);
  return l;
};

const user = (username: string, email: string): Json => ({ id: randomUUID(), username, email, enabled: true, credentials: [{ type: 'password', value: `${username} password 1` }] });

// Keycloak's loginWithEmailAllowed, duplicateEmailsAllowed, rememberMe and the remember-me lifespans move with a realm, and back out.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: login options (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test("the fixture (Keycloak 26.6: loginWithEmailAllowed true, duplicateEmailsAllowed false, rememberMe false, lifespans 0) keeps its values; the report says what they do", async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      for (const r of report.realms.filter((x) => x.realm !== 'master')) {
        assert.equal(r.status, 'imported', JSON.stringify(r));
        const realm = (await ts.store.realms.get(r.realm))!;
        assert.deepEqual([realm.loginWithEmailAllowed, realm.duplicateEmailsAllowed, realm.rememberMe, realm.ssoIdleRememberMe, realm.ssoMaxRememberMe], [true, false, false, 0, 0]);
        assert.match(lineOf(r, 'realm setting loginWithEmailAllowed').reason ?? '', /^true: users sign in with their username or their email/);
        assert.match(lineOf(r, 'realm setting duplicateEmailsAllowed').reason ?? '', /^false: a user's email must be unique in the realm/);
        assert.match(lineOf(r, 'realm setting rememberMe').reason ?? '', /^false: no "Remember me"/);
      }
    });

    test('a realm with remember me and duplicates allowed keeps them (login by email off, as Keycloak couples them); exported as read', async () => {
      const report = await importKeycloakRealms(
        ts.store,
        [{ realm: 'dups', enabled: true, loginWithEmailAllowed: false, duplicateEmailsAllowed: true, rememberMe: true, ssoSessionIdleTimeoutRememberMe: 600, ssoSessionMaxLifespanRememberMe: 9_999_999_999, users: [user('ann', 'team@example.com'), user('bea', 'TEAM@example.com')] }],
        { ifExists: 'fail' },
        actor,
      );
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      assert.match(lineOf(r, 'realm setting rememberMe').reason ?? '', /^true: the login page offers "Remember me" \(session idle timeout 600 s, lifetime 31622400 s\)/);
      assert.equal(lineOf(r, 'realm setting ssoSessionMaxLifespanRememberMe').outcome, 'mapped', 'a lifetime beyond a year is clamped, reported');
      const ann = await ts.store.users.findByUsername('dups', 'ann');
      const bea = await ts.store.users.findByUsername('dups', 'bea');
      assert.equal(ann?.email, 'team@example.com');
      assert.equal(bea?.email, 'TEAM@example.com', 'duplicates allowed: both keep the email');
      const exported = await exportRealm(ts.store, 'dups', { withSecrets: false });
      assert.deepEqual(
        [exported.loginWithEmailAllowed, exported.duplicateEmailsAllowed, exported.rememberMe, exported.ssoSessionIdleTimeoutRememberMe, exported.ssoSessionMaxLifespanRememberMe],
        [false, true, true, 600, 366 * 86_400],
      );
    });

    test('duplicateEmailsAllowed false: a later user with an email an earlier one has is imported without it (reported); login by email names the first', async () => {
      const report = await importKeycloakRealms(ts.store, [{ realm: 'uniq', enabled: true, users: [user('cy', 'same@example.com'), user('di', 'Same@Example.com'), user('ed', 'ed@example.com')] }], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const realm = (await ts.store.realms.get('uniq'))!;
      assert.deepEqual([realm.loginWithEmailAllowed, realm.duplicateEmailsAllowed], [true, false], "Keycloak's defaults when the file says nothing");
      assert.equal((await ts.store.users.findByUsername('uniq', 'cy'))?.email, 'same@example.com');
      assert.equal((await ts.store.users.findByUsername('uniq', 'di'))?.email, null);
      assert.match(lineOf(r, 'user di').reason ?? '', /email "Same@Example.com" left out: another user of the realm has it \(duplicateEmailsAllowed is false\)/);
      assert.equal((await findLoginUser({ store: ts.store } as never, realm, 'SAME@example.com'))?.username, 'cy');
    });
  });
}
