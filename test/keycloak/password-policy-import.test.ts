import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { kcCredential, signIn } from './helpers.js';
import { importKeycloakRealms, partialImport } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { setUserPassword } from '../../src/admin/operations/users.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };
const DAY_MS = 86_400_000;
const line = (r: RealmReport, element: string) => r.lines.find((l) => l.element === element);

// A Keycloak realm with a password policy moves with the rules Realmgate enforces; the others are
// reported by name. Users' clear-text passwords meet it or are skipped, hashed ones keep their date
// (forceExpiredPasswordChange counts from Keycloak's createdDate) and their password-history.
for (const dialect of dialects()) {
  describe(`import of a Keycloak password policy (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function policyRealm(): Promise<Record<string, unknown>> {
      const now = ts.clock.nowMs();
      const history = async (password: string, daysAgo: number) => ({ ...(await kcCredential('pbkdf2-sha256', password)), type: 'password-history', createdDate: now - daysAgo * DAY_MS });
      return {
        realm: 'strict',
        enabled: true,
        organizationsEnabled: false,
        passwordPolicy: 'length(12) and digits(1) and hashIterations(27500) and passwordBlacklist(words.txt) and passwordHistory(3) and forceExpiredPasswordChange(90)',
        clients: [{ clientId: 'app', publicClient: true, redirectUris: [RP], protocol: 'openid-connect', standardFlowEnabled: true }],
        users: [
          { id: 'a0000000-0000-4000-8000-000000000001', username: 'clear-ok', enabled: true, credentials: [{ type: 'password', value: 'Clear password 1' }] },
          { id: 'a0000000-0000-4000-8000-000000000002', username: 'clear-weak', enabled: true, credentials: [{ type: 'password', value: 'weak pass 1' }] },
          { id: 'a0000000-0000-4000-8000-000000000003', username: 'old-hash', enabled: true, credentials: [{ ...(await kcCredential('pbkdf2-sha256', 'old password 1')), createdDate: now - 200 * DAY_MS }] },
          { id: 'a0000000-0000-4000-8000-000000000005', username: 'dated', enabled: true, credentials: [{ ...(await kcCredential('pbkdf2-sha256', 'dated password 1')), createdDate: now - 50 * DAY_MS }] },
          {
            id: 'a0000000-0000-4000-8000-000000000004',
            username: 'recent-hash',
            enabled: true,
            credentials: [{ ...(await kcCredential('argon2', 'recent password 1')), createdDate: now - 10 * DAY_MS }, await history('earlier password 2', 40), await history('earliest password 3', 80), await history('ancient password 4', 120)],
          },
        ],
      };
    }

    test('the supported rules kept, the others reported by name; clear passwords checked against it; createdDate dates the password; password-history kept', async () => {
      const r = (await importKeycloakRealms(ts.store, [await policyRealm()], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      assert.equal((await ts.store.realms.get('strict'))?.passwordPolicy, 'length(12) and digits(1) and passwordHistory(3) and forceExpiredPasswordChange(90)');
      assert.equal(line(r, 'password policy')?.outcome, 'imported');
      assert.match(line(r, 'password policy')?.reason ?? '', /^length\(12\) and digits\(1\) and passwordHistory\(3\) and forceExpiredPasswordChange\(90\)/);
      assert.equal(line(r, 'password policy hashIterations')?.outcome, 'skipped');
      assert.match(line(r, 'password policy hashIterations')?.reason ?? '', /argon2id/);
      assert.match(line(r, 'password policy passwordBlacklist')?.reason ?? '', /a file on Keycloak's server/);
      assert.deepEqual(line(r, 'user clear-weak'), { element: 'user clear-weak', outcome: 'skipped', reason: 'the password must have at least 12 characters' });
      assert.equal(await ts.store.users.findByUsername('strict', 'clear-weak'), undefined);
      assert.ok(await ts.store.users.findByUsername('strict', 'clear-ok'));

      const old = (await ts.store.users.findByUsername('strict', 'old-hash'))!;
      assert.equal(old.passwordChangedAt, Math.floor((ts.clock.nowMs() - 200 * DAY_MS) / 1000), "Keycloak's createdDate");
      // passwordHistory(3): the two most recent earlier passwords, not the third.
      const recent = (await ts.store.users.findByUsername('strict', 'recent-hash'))!;
      assert.equal((await ts.store.users.passwordHistory(recent.id, 10)).length, 2);
      await assert.rejects(setUserPassword(ts.store, { realmId: 'strict', userId: recent.id, password: 'earlier password 2' }), /not be one of the last 3 passwords/);
      await assert.rejects(setUserPassword(ts.store, { realmId: 'strict', userId: recent.id, password: 'earliest password 3' }), /not be one of the last 3 passwords/);
      await setUserPassword(ts.store, { realmId: 'strict', userId: recent.id, password: 'ancient password 4' });

      // Set 200 days ago, the policy says 90: the first sign-in asks for a new one; set 10 days ago: not.
      const expired = await signIn(ts, { realm: 'strict', clientId: 'app', redirectUri: RP, username: 'old-hash', password: 'old password 1', newPassword: 'new password 12' });
      assert.deepEqual(expired.pages.slice(0, 2), ['login', 'update-password'], expired.pages.join(' '));
      assert.ok(expired.claims, JSON.stringify(expired));
      const fresh = await signIn(ts, { realm: 'strict', clientId: 'app', redirectUri: RP, username: 'clear-ok', password: 'Clear password 1' });
      assert.ok(!fresh.pages.includes('update-password'), fresh.pages.join(' '));

      // The export writes the policy back, as Realmgate keeps it.
      const exported = await exportRealm(ts.store, 'strict', { withSecrets: false });
      assert.equal(exported.passwordPolicy, 'length(12) and digits(1) and passwordHistory(3) and forceExpiredPasswordChange(90)');
      // With secrets, each password's createdDate is when it was set: a new import (or Keycloak) keeps its age.
      const full = await exportRealm(ts.store, 'strict', { withSecrets: true });
      for (const u of full.users as Array<{ username: string; credentials: Array<{ type: string; createdDate: number }> }>) {
        const stored = (await ts.store.users.findByUsername('strict', u.username))!;
        assert.equal(u.credentials.find((c) => c.type === 'password')?.createdDate, stored.passwordChangedAt * 1000, u.username);
      }
      // Under another name (and other ids: a user's id is unique across realms).
      const reimported = { ...full, realm: 'strict-again', users: (full.users as Array<{ id: string }>).map((u) => ({ ...u, id: `c${u.id.slice(1)}` })) };
      assert.equal((await importKeycloakRealms(ts.store, [reimported], { ifExists: 'fail' }, actor)).realms[0]?.status, 'imported');
      const dated = Math.floor((ts.clock.nowMs() - 50 * DAY_MS) / 1000);
      assert.equal((await ts.store.users.findByUsername('strict', 'dated'))?.passwordChangedAt, dated);
      assert.equal((await ts.store.users.findByUsername('strict-again', 'dated'))?.passwordChangedAt, dated, 'the age survives an export and an import');
      // And the earlier passwords (password-history credentials): the re-imported user refuses them too.
      const again = (await ts.store.users.findByUsername('strict-again', 'recent-hash'))!;
      assert.equal((await ts.store.users.passwordHistory(again.id, 10)).length, 2);
      await assert.rejects(setUserPassword(ts.store, { realmId: 'strict-again', userId: again.id, password: 'recent password 1' }), /not be one of the last 3 passwords/);
    });

    test("partialImport checks clear passwords against the realm's own policy; the shared fixture (no policy) imports without one", async () => {
      const r = await partialImport(ts.store, 'strict', { ifResourceExists: 'SKIP', users: [{ id: 'b0000000-0000-4000-8000-000000000001', username: 'late', enabled: true, credentials: [{ type: 'password', value: 'no digits in here' }] }] }, actor);
      assert.equal(r.skipped, 1);
      assert.match((r.results as Array<{ reason?: string }>)[0]?.reason ?? '', /contain at least 1 digit/);
      const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>;
      assert.equal(fixture.passwordPolicy, undefined, 'the shared fixture carries no passwordPolicy (the realm built above stands for one)');
    });
  });
}
