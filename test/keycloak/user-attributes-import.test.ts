import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { ImportReport } from '../../src/admin/keycloak/import-report.js';

const actor = { ...cliActor(), via: 'import' as const };
const RP = 'https://rp.example.com/callback';

const user = (n: number, username: string, attributes: unknown): Record<string, unknown> => ({
  id: `a77a0000-0000-4000-8000-00000000000${n}`,
  username,
  enabled: true,
  credentials: [{ type: 'password', value: `${username} password 1` }],
  ...(attributes !== undefined ? { attributes } : {}),
});

// Users' attributes move with a Keycloak realm file (and the admin API's partialImport), checked with
// the rule of every door: an invalid set leaves the user without it, and the report says why. The
// export writes them; exported and imported back, they are the same.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: user attributes (${dialect})`, () => {
    let ts: AdminTestServer;
    let report: ImportReport;
    before(async () => {
      ts = await startAdminServer({ dialect });
      const rep = {
        realm: 'attrs',
        enabled: true,
        organizationsEnabled: false,
        clients: [{ clientId: 'app', publicClient: true, redirectUris: [RP] }],
        users: [
          user(1, 'ann', { department: ['sales'], skills: ['java', 'go'], phoneNumber: ['+1 555'], email: ['ignored@example.com'], empty: [] }),
          user(2, 'bo', { department: 'sales' }),
          user(3, 'cy', { ok: ['x'.repeat(2049)] }),
          user(4, 'di', undefined),
        ],
      };
      report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor);
    });
    after(() => ts.close());

    const attributesOf = async (realm: string, username: string): Promise<Record<string, string[]> | undefined> => (await ts.store.users.findByUsername(realm, username))?.attributes;
    const lineOf = (element: string) => report.realms[0]!.lines.find((l) => l.element === element);

    test('valid attributes are stored (root properties and empty lists dropped, as in Keycloak)', async () => {
      assert.equal(report.realms[0]!.status, 'imported', report.realms[0]!.reason);
      assert.deepEqual(await attributesOf('attrs', 'ann'), { department: ['sales'], skills: ['java', 'go'], phoneNumber: ['+1 555'] });
      assert.doesNotMatch(lineOf('user ann')?.reason ?? '', /attributes/);
      assert.deepEqual(await attributesOf('attrs', 'di'), {});
    });

    test('an invalid set: the user is imported without it, the report says why', async () => {
      for (const [name, reason] of [['bo', /attributes left out: the attribute "department" must be a list of strings/], ['cy', /attributes left out: a value of the attribute "ok" must have at most 2048 characters/]] as const) {
        const u = await ts.store.users.findByUsername('attrs', name);
        assert.ok(u, `${name} imported`);
        assert.deepEqual(u.attributes, {});
        const l = lineOf(`user ${name}`);
        assert.equal(l?.outcome, 'mapped');
        assert.match(l!.reason!, reason);
      }
    });

    test('the export writes them; exported and imported back under another name, they are the same', async () => {
      const exported = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'attrs', { withSecrets: true }))) as { realm: string; users: Array<{ username: string; attributes?: unknown }> };
      assert.deepEqual(exported.users.find((u) => u.username === 'ann')!.attributes, { department: ['sales'], skills: ['java', 'go'], phoneNumber: ['+1 555'] });
      assert.equal('attributes' in exported.users.find((u) => u.username === 'di')!, false);
      // Ids are unique across realms: the copy gets its own.
      const copy = JSON.parse(JSON.stringify(exported).replaceAll('a77a0000-', 'b77b0000-')) as Record<string, unknown>;
      const back = await importKeycloakRealms(ts.store, [{ ...copy, realm: 'attrs2' }], { ifExists: 'fail' }, actor);
      assert.equal(back.realms[0]!.status, 'imported', back.realms[0]!.reason);
      for (const name of ['ann', 'bo', 'cy', 'di']) assert.deepEqual(await attributesOf('attrs2', name), await attributesOf('attrs', name), name);
    });

    test('the admin API partialImport moves them with the same rule', async () => {
      const r = await ts.kc.realms.partialImport({ realm: 'attrs', rep: { ifResourceExists: 'SKIP', users: [user(5, 'ed', { team: ['blue'] }), user(6, 'fay', { team: [null] })] } as never });
      assert.equal(r.added, 2);
      assert.deepEqual(await attributesOf('attrs', 'ed'), { team: ['blue'] });
      assert.deepEqual(await attributesOf('attrs', 'fay'), {});
    });
  });
}
