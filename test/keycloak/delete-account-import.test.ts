import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { realmOf } from './helpers.js';
import { mayDeleteOwnAccount } from '../../src/admin/operations/account-deletion.js';
import { createUser } from '../../src/admin/operations.js';

const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

// Keycloak's delete_account moves with a realm: the realm's setting, enabled only when Keycloak let every
// user delete their account (the account client's delete-account role in the realm's default roles), and
// a user's pending action.
for (const dialect of dialects()) {
  describe(`Keycloak import: delete_account (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** A realm whose delete_account is enabled in Keycloak; `defaultComposites`: its default role's composites. */
    const realm = (name: string, n: number, defaultComposites: Json): Json => ({
      realm: name,
      enabled: true,
      defaultRole: { name: `default-roles-${name}`, composite: true, clientRole: false },
      roles: {
        realm: [
          { name: `default-roles-${name}`, composite: true, composites: defaultComposites },
          { name: 'deleters', composite: true, composites: { client: { account: ['delete-account', 'manage-account'] } } },
        ],
      },
      requiredActions: [{ alias: 'delete_account', name: 'Delete Account', providerId: 'delete_account', enabled: true, defaultAction: false, priority: 60, config: {} }],
      users: [{ id: `5f0c1e2a-0000-4000-8000-00000000000${n}`, username: 'nora', enabled: true, email: 'nora@example.com', requiredActions: ['delete_account'] }],
    });
    const reasonOf = (report: Awaited<ReturnType<typeof importKeycloakRealms>>, name: string, element: string): string => realmOf(report, name).lines.find((l) => l.element === element)?.reason ?? '';

    test("enabled only when the realm's default roles give every user Keycloak's delete-account role (directly or through a composite)", async () => {
      const report = await importKeycloakRealms(
        ts.store,
        [
          realm('direct', 1, { client: { account: ['view-profile', 'manage-account', 'delete-account'] } }),
          realm('nested', 2, { realm: ['offline_access', 'deleters'] }),
          realm('roleless', 3, { client: { account: ['view-profile', 'manage-account'] } }),
        ],
        { ifExists: 'fail' },
        actor,
      );
      for (const name of ['direct', 'nested']) {
        assert.equal((await ts.store.realms.get(name))!.requiredActionSettings.delete_account?.enabled, true, name);
        assert.match(reasonOf(report, name, 'required action settings'), /delete_account enabled, priority 60 \(every user may delete their own account/);
      }
      const roleless = (await ts.store.realms.get('roleless'))!;
      assert.deepEqual(roleless.requiredActionSettings.delete_account, { enabled: false, defaultAction: false, priority: 60, config: {} });
      assert.match(reasonOf(report, 'roleless', 'required action settings'), /delete_account disabled, priority 60 \(enabled in Keycloak, but only users with the account client's delete-account role/);
      // The user's pending action is kept, with a word in the report, and goes back out in the export.
      const nora = (await ts.store.users.findByUsername('roleless', 'nora'))!;
      assert.deepEqual(nora.requiredActions, ['delete_account']);
      assert.match(reasonOf(report, 'roleless', 'user nora'), /delete_account kept: the user is asked to confirm the deletion of their account/);
      const exported = await exportRealm(ts.store, 'direct', { withSecrets: false });
      assert.deepEqual((exported.users as Json[]).find((u) => u.username === 'nora')!.requiredActions, ['delete_account']);
      assert.deepEqual(
        (exported.requiredActions as Json[]).find((a) => a.alias === 'delete_account'),
        { alias: 'delete_account', name: 'Delete Account', providerId: 'delete_account', enabled: true, defaultAction: false, priority: 60, config: {} },
      );
    });
    test('imported with the built-in clients: kept enabled as in Keycloak, the account client\'s role and its holders decide', async () => {
      const rep = realm('builtin', 4, { client: { account: ['view-profile', 'manage-account'] } });
      rep.clients = [{ clientId: 'account', publicClient: true, protocol: 'openid-connect', redirectUris: ['/realms/builtin/account/*'] }];
      (rep.roles as Json).client = { account: [{ name: 'delete-account', composite: false, clientRole: true }, { name: 'manage-account', composite: false, clientRole: true }, { name: 'view-profile', composite: false, clientRole: true }] };
      (rep.users as Json[])[0]!.clientRoles = { account: ['delete-account'] };
      const report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail', includeBuiltinClients: true }, actor);
      assert.equal((await ts.store.realms.get('builtin'))!.requiredActionSettings.delete_account?.enabled, true);
      assert.match(reasonOf(report, 'builtin', 'required action settings'), /delete_account enabled, priority 60 \(as in Keycloak: users with the account client's delete-account role/);
      const nora = (await ts.store.users.findByUsername('builtin', 'nora'))!;
      assert.ok(await mayDeleteOwnAccount(ts.store, (await ts.store.realms.get('builtin'))!, nora));
      const { id: other } = await createUser(ts.store, { realmId: 'builtin', username: 'otto', password: 'otto password 1' });
      assert.equal(await mayDeleteOwnAccount(ts.store, (await ts.store.realms.get('builtin'))!, { id: other }), false);
    });
  });
}
