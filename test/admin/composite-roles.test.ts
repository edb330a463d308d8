import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { tokenRequest } from '../helpers/flow.js';
import { updateClient } from '../../src/admin/operations.js';
import { adminRoleRef, errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * Composite roles through the admin API, with keycloak-admin-client's own calls unchanged: by id
 * (roles.createComposite, getCompositeRoles, getCompositeRolesForRealm, getCompositeRolesForClient,
 * delCompositeRoles) and by name (the realm's roles and a client's, Keycloak's RoleContainerResource);
 * the `composite` flag; creating a role with composites; the effective role mappings of users and groups;
 * a real token; 404, 400 and 403; and the guard on admin roles in composites.
 */
const realm = 'test';
type Ref = { id: string; name: string };
const names = (roles: Array<{ name?: string }>): string[] => roles.map((r) => r.name!).sort();

for (const dialect of dialects()) {
  describe(`admin API: composite roles (${dialect})`, () => {
    let ts: AdminTestServer;
    let token: string;
    let aliceId: string;
    const role: Record<string, Ref> = {};
    const ref = (r: { id?: string; name?: string } | null | undefined): Ref => ({ id: r!.id!, name: r!.name! });
    async function http(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    }
    async function aliceRoles(): Promise<{ realm: string[]; clients: Record<string, string[]> }> {
      const res = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      const c = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
      return {
        realm: [...(c.realm_access?.roles ?? [])].sort(),
        clients: Object.fromEntries(Object.entries(c.resource_access ?? {}).map(([k, v]) => [k, [...v.roles].sort()])),
      };
    }

    before(async () => {
      ts = await startAdminServer({ dialect });
      token = await ts.kc.getAccessToken() as string;
      await updateClient(ts.store, { realmId: realm, clientId: 'web-app', directAccessGrantsEnabled: true });
      aliceId = (await ts.kc.users.find({ realm, username: 'alice', exact: true }))[0]!.id!;
      for (const name of ['team', 'viewer', 'basic', 'other']) {
        await ts.kc.roles.create({ realm, name });
        role[name] = ref(await ts.kc.roles.findOneByName({ realm, name }));
      }
      await ts.kc.clients.create({ realm, clientId: 'orders-api', standardFlowEnabled: false });
      for (const name of ['read', 'write']) {
        await ts.kc.clients.createRole({ realm, id: 'orders-api', name });
        role[name] = ref(await ts.kc.clients.findRole({ realm, id: 'orders-api', roleName: name }));
      }
    });
    after(() => ts.close());

    test('by id: add realm and client roles, list them (direct only), by realm and by client; the composite flag', async () => {
      await ts.kc.roles.createComposite({ realm, roleId: role.team!.id }, [role.viewer!, role.read!]);
      await ts.kc.roles.createComposite({ realm, roleId: role.viewer!.id }, [role.basic!]);
      // Adding again changes nothing.
      await ts.kc.roles.createComposite({ realm, roleId: role.team!.id }, [role.viewer!]);
      assert.deepEqual(names(await ts.kc.roles.getCompositeRoles({ realm, id: role.team!.id })), ['read', 'viewer']);
      const realmOnes = await ts.kc.roles.getCompositeRolesForRealm({ realm, id: role.team!.id });
      assert.deepEqual(realmOnes, [{ id: role.viewer!.id, name: 'viewer', description: '', composite: true, clientRole: false, containerId: realm }]);
      const clientOnes = await ts.kc.roles.getCompositeRolesForClient({ realm, id: role.team!.id, clientId: 'orders-api' });
      assert.deepEqual(clientOnes, [{ id: role.read!.id, name: 'read', description: '', composite: false, clientRole: true, containerId: 'orders-api' }]);
      assert.deepEqual(await ts.kc.roles.getCompositeRolesForClient({ realm, id: role.team!.id, clientId: 'web-app' }), []);
      // The composite flag in every listing and by id and name.
      const listed = Object.fromEntries((await ts.kc.roles.find({ realm })).map((r) => [r.name, r.composite]));
      assert.deepEqual([listed.team, listed.viewer, listed.basic, listed.other], [true, true, false, false]);
      assert.equal((await ts.kc.roles.findOneById({ realm, id: role.team!.id }))?.composite, true);
      assert.equal((await ts.kc.roles.findOneByName({ realm, name: 'basic' }))?.composite, false);
      // A full representation carries no `composites` (Keycloak's toRepresentation sets only the flag).
      assert.equal((await ts.kc.roles.findOneByName({ realm, name: 'team' }) as Record<string, unknown>).composites, undefined);
      // Keycloak 26's search and paging of GET roles-by-id/{id}/composites.
      const paged = await http('GET', `/roles-by-id/${role.team!.id}/composites?search=VIEW&first=0&max=5`);
      assert.deepEqual(names(paged.json as Ref[]), ['viewer']);
      // Realm roles first, then by client and name.
      assert.deepEqual(names((await http('GET', `/roles-by-id/${role.team!.id}/composites?first=1&max=1`)).json as Ref[]), ['read']);
    });

    test('admin events as Keycloak records them: CREATE/DELETE, REALM_ROLE or CLIENT_ROLE, the request path', async () => {
      await ts.kc.roles.createComposite({ realm, roleId: role.write!.id }, [role.other!]);
      await ts.kc.roles.delCompositeRoles({ realm, id: role.write!.id }, [role.other!]);
      const events = (await ts.store.adminEvents.list(realm, { max: 10000 })).filter((e) => String(e.resourcePath).endsWith('/composites'));
      const mine = events.filter((e) => String(e.resourcePath) === `roles-by-id/${role.write!.id}/composites`);
      assert.deepEqual(mine.map((e) => [e.operation, e.resourceType]).sort(), [['CREATE', 'CLIENT_ROLE'], ['DELETE', 'CLIENT_ROLE']]);
      const teamAdd = events.find((e) => e.resourcePath === `roles-by-id/${role.team!.id}/composites`);
      assert.equal(teamAdd?.resourceType, 'REALM_ROLE');
      assert.equal(teamAdd?.operation, 'CREATE');
    });

    test('users and groups: effective (composite) role mappings include what composites contain; a token carries them', async () => {
      await ts.kc.users.addRealmRoleMappings({ realm, id: aliceId, roles: [role.team!] });
      assert.deepEqual(names(await ts.kc.users.listCompositeRealmRoleMappings({ realm, id: aliceId })).filter((n) => n !== 'default-roles-test'), ['basic', 'team', 'viewer']);
      assert.deepEqual(names(await ts.kc.users.listCompositeClientRoleMappings({ realm, id: aliceId, clientUniqueId: 'orders-api' })), ['read']);
      // Direct mappings stay direct; available is Keycloak's (not directly mapped: hasDirectRole).
      assert.deepEqual(names(await ts.kc.users.listRealmRoleMappings({ realm, id: aliceId })).filter((n) => n !== 'default-roles-test'), ['team']);
      assert.ok(names(await ts.kc.users.listAvailableRealmRoleMappings({ realm, id: aliceId })).includes('viewer'));
      const tokenRoles = await aliceRoles();
      for (const n of ['basic', 'team', 'viewer']) assert.ok(tokenRoles.realm.includes(n), n);
      assert.deepEqual(tokenRoles.clients['orders-api'], ['read']);
      await ts.kc.users.delRealmRoleMappings({ realm, id: aliceId, roles: [role.team!] });
      assert.ok(!(await aliceRoles()).realm.includes('basic'));

      // A group's composite mappings: its own and its parent's, expanded.
      const { id: parentId } = await ts.kc.groups.create({ realm, name: 'staff' });
      const { id: childId } = await ts.kc.groups.createChildGroup({ realm, id: parentId }, { name: 'ops' });
      await ts.kc.groups.addRealmRoleMappings({ realm, id: parentId, roles: [role.viewer!] });
      await ts.kc.groups.addClientRoleMappings({ realm, id: childId, clientUniqueId: 'orders-api', roles: [role.write!] });
      assert.deepEqual(names(await ts.kc.groups.listCompositeRealmRoleMappings({ realm, id: childId })), ['basic', 'viewer']);
      assert.deepEqual(names(await ts.kc.groups.listCompositeClientRoleMappings({ realm, id: childId, clientUniqueId: 'orders-api' })), ['write']);
      assert.deepEqual(names(await ts.kc.groups.listRealmRoleMappings({ realm, id: childId })), []);
      const mappings = await ts.kc.groups.listRoleMappings({ realm, id: parentId });
      assert.deepEqual(mappings.realmMappings?.map((r) => [r.name, r.composite]), [['viewer', true]]);
      await ts.kc.users.addToGroup({ realm, id: aliceId, groupId: childId });
      const viaGroup = await aliceRoles();
      assert.ok(viaGroup.realm.includes('basic') && viaGroup.realm.includes('viewer'));
      await ts.kc.users.delFromGroup({ realm, id: aliceId, groupId: childId });
    });

    test('by name, realm roles and client roles: add, list (all, realm, client), delete', async () => {
      const base = `/roles/other/composites`;
      assert.equal((await http('POST', base, [{ id: role.basic!.id }, { id: role.write!.id }])).status, 204);
      assert.deepEqual(names((await http('GET', base)).json as Ref[]), ['basic', 'write']);
      assert.deepEqual(names((await http('GET', `${base}/realm`)).json as Ref[]), ['basic']);
      assert.deepEqual(names((await http('GET', `${base}/clients/orders-api`)).json as Ref[]), ['write']);
      assert.equal((await http('DELETE', base, [{ id: role.write!.id }])).status, 204);
      assert.deepEqual(names((await http('GET', base)).json as Ref[]), ['basic']);
      const event = (await ts.store.adminEvents.list(realm, { max: 10000 })).find((e) => e.resourcePath === 'roles/other/composites' && e.operation === 'DELETE');
      assert.equal(event?.resourceType, 'REALM_ROLE');

      // A client role's composites, under the client.
      const cbase = `/clients/orders-api/roles/write/composites`;
      assert.equal((await http('POST', cbase, [{ id: role.read!.id }, { id: role.basic!.id }])).status, 204);
      assert.deepEqual(names((await http('GET', cbase)).json as Ref[]), ['basic', 'read']);
      assert.deepEqual(names((await http('GET', `${cbase}/realm`)).json as Ref[]), ['basic']);
      assert.deepEqual(names((await http('GET', `${cbase}/clients/orders-api`)).json as Ref[]), ['read']);
      assert.equal((await ts.kc.clients.findRole({ realm, id: 'orders-api', roleName: 'write' }))?.composite, true);
      assert.equal((await http('DELETE', cbase, [{ id: role.read!.id }, { id: role.basic!.id }])).status, 204);
      assert.deepEqual((await http('GET', cbase)).json, []);
      assert.equal((await ts.kc.clients.findRole({ realm, id: 'orders-api', roleName: 'write' }))?.composite, false);

      // Unknown role (by name), client, member.
      const noRole = await http('GET', '/roles/no-such-role/composites');
      assert.deepEqual([noRole.status, (noRole.json as Record<string, unknown>).errorMessage], [404, 'Could not find role']);
      assert.equal((await http('POST', '/roles/no-such-role/composites', [{ id: role.basic!.id }])).status, 404);
      assert.equal((await http('GET', '/clients/no-such-client/roles/write/composites')).status, 404);
      assert.equal((await http('GET', `${base}/clients/no-such-client`)).status, 404);
      const noMember = await http('POST', base, [{ id: 'no-such-id' }]);
      assert.deepEqual([noMember.status, (noMember.json as Record<string, unknown>).errorMessage], [404, 'Could not find composite role']);
      assert.equal((await http('POST', base, { id: role.basic!.id })).status, 400);
    });

    test('creating a role with composites (Keycloak 26: composites by name)', async () => {
      await ts.kc.roles.create({ realm, name: 'bundle', composite: true, composites: { realm: ['basic'], client: { 'orders-api': ['read', 'write'] } } });
      const bundle = await ts.kc.roles.findOneByName({ realm, name: 'bundle' });
      assert.equal(bundle?.composite, true);
      assert.deepEqual(names(await ts.kc.roles.getCompositeRoles({ realm, id: bundle!.id! })), ['basic', 'read', 'write']);
      await ts.kc.clients.createRole({ realm, id: 'orders-api', name: 'admin-bundle', composite: true, composites: { realm: ['viewer'] } });
      const clientBundle = await ts.kc.clients.findRole({ realm, id: 'orders-api', roleName: 'admin-bundle' });
      assert.deepEqual(names(await ts.kc.roles.getCompositeRoles({ realm, id: clientBundle!.id! })), ['viewer']);
      // Unknown names: 404, and the role is not created.
      const missing = await errorOf(ts.kc.roles.create({ realm, name: 'broken', composite: true, composites: { realm: ['no-such-role'] } }));
      assert.equal(missing.status, 404);
      assert.match(String(missing.body.errorMessage), /no-such-role/);
      assert.equal(await statusOf(ts.kc.roles.create({ realm, name: 'broken', composite: true, composites: { client: { 'no-such-client': ['x'] } } })), 404);
      assert.equal(await ts.kc.roles.findOneByName({ realm, name: 'broken' }), null);
      const bad = await http('POST', '/roles', { name: 'broken', composites: { realm: 'basic' } });
      assert.equal(bad.status, 400);
    });

    test('a role may not contain itself, directly or through another (400, nothing changes)', async () => {
      const self = await errorOf(ts.kc.roles.createComposite({ realm, roleId: role.basic!.id }, [role.basic!]));
      assert.equal(self.status, 400);
      assert.match(String(self.body.errorMessage), /cannot contain itself/);
      // viewer contains basic: basic may not contain viewer.
      assert.equal(await statusOf(ts.kc.roles.createComposite({ realm, roleId: role.basic!.id }, [role.other!, role.viewer!])), 400);
      assert.deepEqual(await ts.kc.roles.getCompositeRoles({ realm, id: role.basic!.id }), []);
      // Removing is no trouble.
      await ts.kc.roles.delCompositeRoles({ realm, id: role.basic!.id }, [role.basic!]);
    });

    test('unknown member: 404 and nothing changes (not even the members before it)', async () => {
      const before = names(await ts.kc.roles.getCompositeRoles({ realm, id: role.other!.id }));
      const res = await errorOf(ts.kc.roles.createComposite({ realm, roleId: role.other!.id }, [role.viewer!, { id: 'no-such-id', name: 'x' }]));
      assert.deepEqual([res.status, res.body.errorMessage], [404, 'Could not find composite role']);
      assert.deepEqual(names(await ts.kc.roles.getCompositeRoles({ realm, id: role.other!.id })), before);
      // A role of another realm is not one of this realm's.
      const masterAdmin = await ts.kc.roles.findOneByName({ realm: 'master', name: 'admin' });
      assert.equal(await statusOf(ts.kc.roles.createComposite({ realm, roleId: role.other!.id }, [{ id: masterAdmin!.id! }])), 404);
    });

    test('permissions: view/manage-realm for realm roles, view/manage-clients for client roles', async () => {
      const { kc: reader } = await serviceAccountAdmin(ts, realm, 'composite-reader', ['view-realm']);
      assert.deepEqual(names(await reader.roles.getCompositeRoles({ realm, id: role.team!.id })), ['read', 'viewer']);
      assert.equal(await statusOf(reader.roles.createComposite({ realm, roleId: role.other!.id }, [role.basic!])), 403);
      assert.equal(await statusOf(reader.roles.getCompositeRoles({ realm, id: role.write!.id })), 403);
      const { kc: clients } = await serviceAccountAdmin(ts, realm, 'composite-clients', ['manage-clients']);
      await clients.roles.createComposite({ realm, roleId: role.write!.id }, [role.read!]);
      await clients.roles.delCompositeRoles({ realm, id: role.write!.id }, [role.read!]);
      assert.equal(await statusOf(clients.roles.createComposite({ realm, roleId: role.other!.id }, [role.read!])), 403);
    });

    test("role scope: a composite in a client's or a client scope's scope brings what it contains (composite); available stays direct", async () => {
      await ts.kc.clients.create({ realm, clientId: 'limited', fullScopeAllowed: false, standardFlowEnabled: false });
      await ts.kc.clients.addRealmScopeMappings({ realm, id: 'limited' }, [role.team!]);
      assert.deepEqual(names(await ts.kc.clients.listCompositeRealmScopeMappings({ realm, id: 'limited' })), ['basic', 'team', 'viewer']);
      assert.deepEqual(names(await ts.kc.clients.listCompositeClientScopeMappings({ realm, id: 'limited', client: 'orders-api' })), ['read']);
      assert.deepEqual(names(await ts.kc.clients.listRealmScopeMappings({ realm, id: 'limited' })), ['team']);
      const mapped = await ts.kc.clients.listRealmScopeMappings({ realm, id: 'limited' });
      assert.equal(mapped[0]?.composite, true);
      // Keycloak's available is hasDirectScope: the contained roles may still be mapped directly.
      assert.ok(names(await ts.kc.clients.listAvailableRealmScopeMappings({ realm, id: 'limited' })).includes('viewer'));
      // A client scope too.
      await ts.kc.clientScopes.create({ realm, name: 'team-scope', protocol: 'openid-connect' });
      const scope = (await ts.kc.clientScopes.find({ realm })).find((s) => s.name === 'team-scope')!;
      await ts.kc.clientScopes.addRealmScopeMappings({ realm, id: scope.id! }, [role.viewer!]);
      assert.deepEqual(names(await ts.kc.clientScopes.listCompositeRealmScopeMappings({ realm, id: scope.id! })), ['basic', 'viewer']);
    });

    test('the guard: a manage-realm caller cannot put realm-management roles (or a composite holding them) in a role', async () => {
      const { kc: realmAdmin, userId } = await serviceAccountAdmin(ts, realm, 'composite-escalation', ['manage-realm']);
      await ts.kc.roles.create({ realm, name: 'mine' });
      const mine = ref(await ts.kc.roles.findOneByName({ realm, name: 'mine' }));
      await ts.kc.users.addRealmRoleMappings({ realm, id: userId, roles: [mine] });
      const manageUsers = await adminRoleRef(ts, realm, 'manage-users');
      const refused = await errorOf(realmAdmin.roles.createComposite({ realm, roleId: mine.id }, [manageUsers]));
      assert.equal(refused.status, 403);
      assert.match(String(refused.body.errorMessage), /manage-users/);
      // By name, and creating a role with it, are refused too.
      assert.equal(await statusOf(realmAdmin.roles.create({ realm, name: 'sneaky', composite: true, composites: { client: { 'realm-management': ['realm-admin'] } } })), 403);
      assert.equal(await ts.kc.roles.findOneByName({ realm, name: 'sneaky' }), null);
      // A composite holding an admin role (made by the realm's full admin) is just as refused.
      await ts.kc.roles.create({ realm, name: 'user-admins' });
      const userAdmins = ref(await ts.kc.roles.findOneByName({ realm, name: 'user-admins' }));
      await ts.kc.roles.createComposite({ realm, roleId: userAdmins.id }, [manageUsers]);
      assert.equal(await statusOf(realmAdmin.roles.createComposite({ realm, roleId: mine.id }, [userAdmins])), 403);
      assert.deepEqual(await ts.kc.roles.getCompositeRoles({ realm, id: mine.id }), []);
      // The caller still lacks manage-users.
      assert.equal(await statusOf(realmAdmin.users.find({ realm, max: 1 })), 403);
      // A role it holds itself (manage-realm) it may put in.
      await realmAdmin.roles.createComposite({ realm, roleId: mine.id }, [await adminRoleRef(ts, realm, 'manage-realm')]);
      // And a manage-users caller cannot map the composite holding realm-admin to anyone.
      await ts.kc.roles.create({ realm, name: 'full-admins' });
      const fullAdmins = ref(await ts.kc.roles.findOneByName({ realm, name: 'full-admins' }));
      await ts.kc.roles.createComposite({ realm, roleId: fullAdmins.id }, [await adminRoleRef(ts, realm, 'realm-admin')]);
      const { kc: userAdmin, userId: uaId } = await serviceAccountAdmin(ts, realm, 'composite-user-admin', ['manage-users']);
      assert.equal(await statusOf(userAdmin.users.addRealmRoleMappings({ realm, id: uaId, roles: [fullAdmins] })), 403);
      const { id: gid } = await ts.kc.groups.create({ realm, name: 'sneaky-group' });
      assert.equal(await statusOf(userAdmin.groups.addRealmRoleMappings({ realm, id: gid, roles: [fullAdmins] })), 403);
      // A composite holding the admin role gives it, as in Keycloak: the full admin's grant works.
      await ts.kc.users.addRealmRoleMappings({ realm, id: uaId, roles: [userAdmins] });
      assert.deepEqual(await realmAdmin.roles.getCompositeRoles({ realm, id: userAdmins.id }).then(names), ['manage-users']);
    });
  });
}
