import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { adminRoleRef, aliceSession, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer, type RoleClaims } from './helpers.js';

/**
 * Realm and client roles an operator defines (Keycloak's RoleContainerResource and RoleByIdResource,
 * through keycloak-admin-client unchanged), granted to users, and carried in their access tokens as
 * Keycloak carries them (realm_access.roles, resource_access.<client>.roles), which APIs and keycloak-js
 * (hasRealmRole, hasResourceRole) read.
 */
for (const dialect of dialects()) {
  describe(`admin API: realm and client roles (${dialect})`, () => {
    let ts: AdminTestServer;
    let aliceId: string;
    let alice: Awaited<ReturnType<typeof aliceSession>>;
    before(async () => {
      ts = await startAdminServer({ dialect });
      aliceId = (await ts.kc.users.find({ realm: 'test', username: 'alice', exact: true }))[0]!.id!;
      alice = await aliceSession(ts);
    });
    after(() => ts.close());

    const aliceClaims = (): Promise<RoleClaims> => alice.roles();

    test('a realm role: created, granted, carried in the next access token, renamed, deleted', async () => {
      const { roleName } = await ts.kc.roles.create({ realm: 'test', name: 'billing reader', description: 'Reads invoices' });
      // The last segment of the Location, as Keycloak writes it: the name percent-encoded.
      assert.equal(roleName, 'billing%20reader');
      const role = await ts.kc.roles.findOneByName({ realm: 'test', name: 'billing reader' });
      assert.equal(role?.description, 'Reads invoices');
      assert.ok((await ts.kc.roles.find({ realm: 'test' })).some((r) => r.name === 'billing reader'));
      assert.equal(await statusOf(ts.kc.roles.create({ realm: 'test', name: 'billing reader' })), 409);
      assert.deepEqual(await aliceClaims(), { realm: undefined, client: undefined });

      await ts.kc.users.addRealmRoleMappings({ realm: 'test', id: aliceId, roles: [{ id: role!.id!, name: role!.name! }] });
      assert.deepEqual((await aliceClaims()).realm, ['billing reader']);
      assert.deepEqual((await ts.kc.roles.findUsersWithRole({ realm: 'test', name: 'billing reader' })).map((u) => u.username), ['alice']);
      assert.equal((await ts.kc.roles.findOneById({ realm: 'test', id: role!.id! }))?.name, 'billing reader');

      await ts.kc.roles.updateByName({ realm: 'test', name: 'billing reader' }, { name: 'billing-viewer', description: 'Sees invoices' });
      assert.deepEqual((await aliceClaims()).realm, ['billing-viewer']);
      assert.equal((await ts.kc.roles.findOneByName({ realm: 'test', name: 'billing-viewer' }))?.description, 'Sees invoices');
      await ts.kc.roles.updateById({ realm: 'test', id: role!.id! }, { description: 'Invoices, read only' });
      assert.equal((await ts.kc.roles.findOneByName({ realm: 'test', name: 'billing-viewer' }))?.name, 'billing-viewer');

      await ts.kc.roles.delByName({ realm: 'test', name: 'billing-viewer' });
      assert.deepEqual(await aliceClaims(), { realm: undefined, client: undefined });
      // keycloak-admin-client answers null for Keycloak's 404.
      assert.equal(await ts.kc.roles.findOneByName({ realm: 'test', name: 'billing-viewer' }), null);
      assert.equal((await fetch(`${ts.baseUrl}/auth/admin/realms/test/roles/billing-viewer`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } })).status, 404);
      const events = await ts.kc.realms.findAdminEvents({ realm: 'test', resourceTypes: ['REALM_ROLE'], max: 10 } as never);
      assert.deepEqual(events.map((e) => e.operationType), ['DELETE', 'UPDATE', 'UPDATE', 'CREATE']);
    });

    test("a client role: created on the client, granted, carried in resource_access.<client>.roles, deleted by id", async () => {
      await ts.kc.clients.createRole({ realm: 'test', id: 'web-app', name: 'invoices:write' });
      const role = await ts.kc.clients.findRole({ realm: 'test', id: 'web-app', roleName: 'invoices:write' });
      assert.equal(role?.clientRole, true);
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'web-app', roles: [{ id: role!.id!, name: role!.name! }] });
      assert.deepEqual((await aliceClaims()).client, ['invoices:write']);
      await ts.kc.clients.updateRole({ realm: 'test', id: 'web-app', roleName: 'invoices:write' }, { name: 'invoices:edit' });
      assert.deepEqual((await aliceClaims()).client, ['invoices:edit']);
      await ts.kc.roles.delById({ realm: 'test', id: role!.id! });
      assert.deepEqual(await aliceClaims(), { realm: undefined, client: undefined });
      assert.equal(await statusOf(ts.kc.clients.createRole({ realm: 'test', id: 'no-such-client', name: 'x' })), 404);
    });

    test("Realmgate's admin roles cannot be added to, renamed or deleted; names that cannot be roles are refused", async () => {
      const before = await ts.kc.clients.listRoles({ realm: 'test', id: 'realm-management' });
      assert.equal(await statusOf(ts.kc.clients.delRole({ realm: 'test', id: 'realm-management', roleName: 'manage-users' })), 400);
      assert.equal(await statusOf(ts.kc.clients.updateRole({ realm: 'test', id: 'realm-management', roleName: 'view-users' }, { name: 'see-users' })), 400);
      assert.equal(await statusOf(ts.kc.clients.createRole({ realm: 'test', id: 'realm-management', name: 'super-admin' })), 400);
      assert.equal(await statusOf(ts.kc.roles.delByName({ realm: 'master', name: 'admin' })), 400);
      assert.equal(await statusOf(ts.kc.roles.create({ realm: 'master', name: 'admin' })), 409);
      assert.deepEqual(await ts.kc.clients.listRoles({ realm: 'test', id: 'realm-management' }), before);
      for (const name of ['', '   ', 'a/b', 'line\nbreak', ' padded', 'x'.repeat(256)]) {
        assert.equal(await statusOf(ts.kc.roles.create({ realm: 'test', name })), 400, JSON.stringify(name));
      }
      assert.equal((await ts.kc.roles.find({ realm: 'test' })).length, 0);
    });

    test('the holders of a role, by username, a page at a time', async () => {
      await ts.kc.roles.create({ realm: 'test', name: 'member' });
      const member = (await ts.kc.roles.findOneByName({ realm: 'test', name: 'member' }))!;
      for (const username of ['dave', 'bob', 'carol']) {
        const { id } = await ts.kc.users.create({ realm: 'test', username, enabled: true });
        await ts.kc.users.addRealmRoleMappings({ realm: 'test', id, roles: [{ id: member.id!, name: 'member' }] });
      }
      const page = (first: number, max: number) => ts.kc.roles.findUsersWithRole({ realm: 'test', name: 'member', first, max }).then((us) => us.map((u) => u.username));
      assert.deepEqual(await page(0, 10), ['bob', 'carol', 'dave']);
      assert.deepEqual(await page(1, 1), ['carol']);
      assert.deepEqual(await page(3, 5), []);
      await ts.kc.roles.delByName({ realm: 'test', name: 'member' });
    });

    test("manage-users grants the realm's own roles, and an admin role only when it holds it: no way to realm-admin", async () => {
      await ts.kc.roles.create({ realm: 'test', name: 'support' });
      const rm = (name: string) => adminRoleRef(ts, 'test', name);
      const { kc: helpdesk, userId: saId } = await serviceAccountAdmin(ts, 'test', 'helpdesk', ['manage-users']);
      const sa = { id: saId };
      // A role of the realm's own: granted and removed with manage-users alone.
      const own = (await ts.kc.roles.findOneByName({ realm: 'test', name: 'support' }))!;
      await helpdesk.users.addRealmRoleMappings({ realm: 'test', id: aliceId, roles: [{ id: own.id!, name: own.name! }] });
      await helpdesk.users.delRealmRoleMappings({ realm: 'test', id: aliceId, roles: [{ id: own.id!, name: own.name! }] });
      // An admin role it holds (view-users, implied by manage-users): granted.
      await helpdesk.users.addClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'realm-management', roles: [await rm('view-users')] });
      // realm-admin or manage-realm, to itself or to alice: refused, and nothing granted.
      for (const target of [sa.id!, aliceId]) {
        for (const name of ['realm-admin', 'manage-realm']) {
          assert.equal(await statusOf(helpdesk.users.addClientRoleMappings({ realm: 'test', id: target, clientUniqueId: 'realm-management', roles: [await rm(name)] })), 403, `${name} to ${target}`);
        }
      }
      // Nor may it take an admin role it does not hold from an administrator.
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'realm-management', roles: [await rm('manage-realm')] });
      assert.equal(await statusOf(helpdesk.users.delClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'realm-management', roles: [await rm('manage-realm')] })), 403);
      const held = await ts.kc.users.listClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'realm-management' });
      assert.deepEqual(held.map((r) => r.name).sort(), ['manage-realm', 'view-users']);
      assert.deepEqual((await ts.kc.users.listClientRoleMappings({ realm: 'test', id: sa.id!, clientUniqueId: 'realm-management' })).map((r) => r.name), ['manage-users']);
      // The master admin may.
      await ts.kc.users.delClientRoleMappings({ realm: 'test', id: aliceId, clientUniqueId: 'realm-management', roles: [await rm('manage-realm'), await rm('view-users')] });
      await ts.kc.roles.delByName({ realm: 'test', name: 'support' });
    });

    test('view-realm reads realm roles but may not change them (403); manage-realm may', async () => {
      await ts.kc.roles.create({ realm: 'test', name: 'auditor' });
      const { kc: reader, grant } = await serviceAccountAdmin(ts, 'test', 'reader', ['view-realm']);
      assert.deepEqual((await reader.roles.find({ realm: 'test' })).map((r) => r.name), ['auditor']);
      assert.equal(await statusOf(reader.roles.create({ realm: 'test', name: 'sneaky' })), 403);
      assert.equal(await statusOf(reader.roles.delByName({ realm: 'test', name: 'auditor' })), 403);
      await grant('manage-realm');
      await reader.roles.create({ realm: 'test', name: 'allowed' });
      assert.deepEqual((await ts.kc.roles.find({ realm: 'test' })).map((r) => r.name), ['allowed', 'auditor']);
    });
  });
}
