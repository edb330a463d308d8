import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { basic } from '../helpers/server.js';
import { adminRoleRef, aliceSession, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer, type RoleClaims } from './helpers.js';

/**
 * Groups (Keycloak's GroupsResource, GroupResource, a user's groups and a group's role mappings, through
 * keycloak-admin-client unchanged): a tree of groups, members, and roles mapped to groups that members
 * carry in their access tokens with the roles of every group above theirs, as Keycloak's do.
 */
for (const dialect of dialects()) {
  describe(`admin API: groups (${dialect})`, () => {
    let ts: AdminTestServer;
    let aliceId: string;
    let alice: Awaited<ReturnType<typeof aliceSession>>;
    const realm = 'test';
    before(async () => {
      ts = await startAdminServer({ dialect });
      aliceId = (await ts.kc.users.find({ realm, username: 'alice', exact: true }))[0]!.id!;
      alice = await aliceSession(ts);
    });
    after(() => ts.close());

    const aliceClaims = (): Promise<RoleClaims> => alice.roles();

    test('a tree of groups: created, listed with subgroup counts, read, renamed, searched in its hierarchy, found by path, counted, deleted with its subtree', async () => {
      const { id: engId } = await ts.kc.groups.create({ realm, name: 'engineering', attributes: { costCenter: ['42'] } });
      assert.equal(await statusOf(ts.kc.groups.create({ realm, name: 'engineering' })), 409);
      const { id: backendId } = await ts.kc.groups.createChildGroup({ realm, id: engId }, { name: 'backend', description: 'APIs and storage' });
      await ts.kc.groups.createChildGroup({ realm, id: backendId }, { name: 'storage team' });
      assert.equal(await statusOf(ts.kc.groups.createChildGroup({ realm, id: engId }, { name: 'backend' })), 409);
      // The same name under another parent is another group.
      const { id: salesId } = await ts.kc.groups.create({ realm, name: 'sales' });
      await ts.kc.groups.createChildGroup({ realm, id: salesId }, { name: 'backend' });

      const top = await ts.kc.groups.find({ realm });
      assert.deepEqual(top.map((g) => [g.name, g.path, g.subGroupCount, g.subGroups]), [
        ['engineering', '/engineering', 1, []],
        ['sales', '/sales', 1, []],
      ]);
      assert.equal(top[0]!.attributes, undefined, 'the listing is brief by default');
      assert.deepEqual((await ts.kc.groups.find({ realm, briefRepresentation: false }))[0]!.attributes, { costCenter: ['42'] });
      assert.deepEqual((await ts.kc.groups.find({ realm, first: 1, max: 1 })).map((g) => g.name), ['sales']);

      const backend = await ts.kc.groups.findOne({ realm, id: backendId });
      assert.equal(backend?.path, '/engineering/backend');
      assert.equal(backend?.parentId, engId);
      assert.equal(backend?.description, 'APIs and storage');
      assert.equal(backend?.subGroupCount, 1);
      const kids = await ts.kc.groups.listSubGroups({ parentId: engId, realm } as never);
      assert.deepEqual((kids as Array<{ name: string; path: string }>).map((g) => [g.name, g.path]), [['backend', '/engineering/backend']]);

      // A search returns the matches inside their hierarchy: each top-level group above one, down to it.
      const found = await ts.kc.groups.find({ realm, search: 'storage' });
      assert.deepEqual(found.map((g) => g.name), ['engineering']);
      assert.deepEqual(found[0]!.subGroups!.map((g) => g.name), ['backend']);
      assert.deepEqual(found[0]!.subGroups![0]!.subGroups!.map((g) => [g.name, g.path]), [['storage team', '/engineering/backend/storage team']]);
      assert.deepEqual((await ts.kc.groups.find({ realm, search: 'backend' })).map((g) => [g.name, g.subGroups!.map((s) => s.path)]), [
        ['engineering', ['/engineering/backend']],
        ['sales', ['/sales/backend']],
      ]);
      assert.deepEqual((await ts.kc.groups.find({ realm, search: 'backend', populateHierarchy: false } as never)).map((g) => g.path).sort(), ['/engineering/backend', '/sales/backend']);
      assert.deepEqual((await ts.kc.groups.find({ realm, q: 'costCenter:42' } as never)).map((g) => g.name), ['engineering']);
      assert.deepEqual(await ts.kc.groups.find({ realm, q: 'costCenter:7' } as never), []);

      assert.deepEqual(await ts.kc.groups.count({ realm }), { count: 5 });
      assert.deepEqual(await ts.kc.groups.count({ realm, top: true } as never), { count: 2 });
      const byPath = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/group-by-path/engineering/backend/storage%20team`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      assert.equal(byPath.status, 200);
      assert.equal(((await byPath.json()) as { path: string }).path, '/engineering/backend/storage team');
      assert.equal((await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/group-by-path/engineering/nope`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } })).status, 404);

      await ts.kc.groups.update({ realm, id: backendId }, { name: 'platform', attributes: { oncall: ['yes'] } });
      const renamed = await ts.kc.groups.findOne({ realm, id: backendId });
      assert.deepEqual([renamed?.path, renamed?.attributes, renamed?.description], ['/engineering/platform', { oncall: ['yes'] }, 'APIs and storage']);
      assert.equal(await statusOf(ts.kc.groups.update({ realm, id: backendId }, { name: 'a/b' })), 400);
      assert.equal(await statusOf(ts.kc.groups.create({ realm, name: '  ' })), 400);
      assert.equal(await statusOf(ts.kc.groups.create({ realm, name: 'x', attributes: { k: [1] } as never })), 400);
      // Moving a group under itself or its own subgroup is refused.
      const storage = (await ts.kc.groups.find({ realm, search: 'storage team', populateHierarchy: false } as never))[0]!;
      assert.equal(await statusOf(ts.kc.groups.updateChildGroup({ realm, id: storage.id! }, { id: engId })), 400);

      await ts.kc.groups.del({ realm, id: engId });
      assert.deepEqual(await ts.kc.groups.count({ realm }), { count: 2 });
      assert.equal(await ts.kc.groups.findOne({ realm, id: backendId }), null);
      await ts.kc.groups.del({ realm, id: salesId });
      assert.deepEqual(await ts.kc.groups.count({ realm }), { count: 0 });
      const events = await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['GROUP'], max: 20 } as never);
      assert.ok(events.some((e) => e.operationType === 'DELETE' && e.resourcePath === `groups/${engId}`));
    });

    test("members carry the roles of their groups and of every group above them, in the next token; leaving or moving takes them away", async () => {
      await ts.kc.roles.create({ realm, name: 'staff' });
      await ts.kc.roles.create({ realm, name: 'deployer' });
      await ts.kc.clients.createRole({ realm, id: 'web-app', name: 'billing:read' });
      const staff = (await ts.kc.roles.findOneByName({ realm, name: 'staff' }))!;
      const deployer = (await ts.kc.roles.findOneByName({ realm, name: 'deployer' }))!;
      const billing = (await ts.kc.clients.findRole({ realm, id: 'web-app', roleName: 'billing:read' }))!;
      const { id: orgId } = await ts.kc.groups.create({ realm, name: 'company' });
      const { id: opsId } = await ts.kc.groups.createChildGroup({ realm, id: orgId }, { name: 'ops' });
      await ts.kc.groups.addRealmRoleMappings({ realm, id: orgId, roles: [{ id: staff.id!, name: staff.name! }] });
      await ts.kc.groups.addRealmRoleMappings({ realm, id: opsId, roles: [{ id: deployer.id!, name: deployer.name! }] });
      await ts.kc.groups.addClientRoleMappings({ realm, id: opsId, clientUniqueId: 'web-app', roles: [{ id: billing.id!, name: billing.name! }] });
      assert.deepEqual((await ts.kc.groups.listRealmRoleMappings({ realm, id: opsId })).map((r) => r.name), ['deployer']);
      assert.deepEqual((await ts.kc.groups.listCompositeRealmRoleMappings({ realm, id: opsId })).map((r) => r.name).sort(), ['deployer', 'staff']);
      assert.deepEqual((await ts.kc.groups.findOne({ realm, id: opsId }))?.clientRoles, { 'web-app': ['billing:read'] });
      assert.deepEqual((await ts.kc.roles.findOneByName({ realm, name: 'staff' })) && (await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/roles/staff/groups`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } }).then((r) => r.json() as Promise<Array<{ path: string }>>)).map((g) => g.path), ['/company']);
      assert.deepEqual(await aliceClaims(), { realm: undefined, client: undefined });

      await ts.kc.users.addToGroup({ realm, id: aliceId, groupId: opsId });
      assert.deepEqual(await aliceClaims(), { realm: ['deployer', 'staff'], client: ['billing:read'] });
      assert.deepEqual((await ts.kc.users.listGroups({ realm, id: aliceId })).map((g) => g.path), ['/company/ops']);
      assert.deepEqual(await ts.kc.users.countGroups({ realm, id: aliceId }), { count: 1 });
      assert.deepEqual((await ts.kc.groups.listMembers({ realm, id: opsId })).map((u) => u.username), ['alice']);
      assert.deepEqual(await ts.kc.groups.listMembers({ realm, id: orgId }), [], 'members are direct members');
      // Her direct mappings are none; her effective ones come through the groups.
      assert.deepEqual(await ts.kc.users.listRealmRoleMappings({ realm, id: aliceId }), []);
      assert.deepEqual((await ts.kc.users.listCompositeRealmRoleMappings({ realm, id: aliceId })).map((r) => r.name).sort(), ['deployer', 'staff']);

      // A role taken from the parent group is gone from the member's next token.
      await ts.kc.groups.delRealmRoleMappings({ realm, id: orgId, roles: [{ id: staff.id!, name: staff.name! }] });
      assert.deepEqual(await aliceClaims(), { realm: ['deployer'], client: ['billing:read'] });
      await ts.kc.groups.addRealmRoleMappings({ realm, id: orgId, roles: [{ id: staff.id!, name: staff.name! }] });
      // Moved to the top, ops no longer inherits company's roles.
      await ts.kc.groups.updateRoot({ realm, id: opsId } as never);
      assert.equal((await ts.kc.groups.findOne({ realm, id: opsId }))?.path, '/ops');
      assert.deepEqual(await aliceClaims(), { realm: ['deployer'], client: ['billing:read'] });
      await ts.kc.groups.updateChildGroup({ realm, id: orgId }, { id: opsId });
      assert.deepEqual(await aliceClaims(), { realm: ['deployer', 'staff'], client: ['billing:read'] });

      // A deleted role leaves the group's mappings; leaving the group takes the rest.
      await ts.kc.clients.delRole({ realm, id: 'web-app', roleName: 'billing:read' });
      assert.deepEqual(await aliceClaims(), { realm: ['deployer', 'staff'], client: undefined });
      await ts.kc.users.delFromGroup({ realm, id: aliceId, groupId: opsId });
      await ts.kc.users.delFromGroup({ realm, id: aliceId, groupId: opsId }); // Keycloak answers 204 again
      assert.deepEqual(await aliceClaims(), { realm: undefined, client: undefined });
      assert.equal(await statusOf(ts.kc.users.addToGroup({ realm, id: aliceId, groupId: 'no-such-group' })), 404);
      assert.equal(await statusOf(ts.kc.groups.addRealmRoleMappings({ realm, id: opsId, roles: [{ id: 'no-such-role', name: 'x' }] })), 404);

      // A user created in groups (Keycloak's UserRepresentation.groups) is a member from the start; an
      // unknown path creates nobody.
      assert.equal(await statusOf(ts.kc.users.create({ realm, username: 'carol', enabled: true, groups: ['/company/nope'] })), 404);
      assert.deepEqual(await ts.kc.users.find({ realm, username: 'carol', exact: true }), []);
      const { id: bobId } = await ts.kc.users.create({ realm, username: 'bob', enabled: true, groups: ['/company/ops'] });
      assert.deepEqual((await ts.kc.users.listGroups({ realm, id: bobId })).map((g) => g.path), ['/company/ops']);
      // Deleting the user ends the membership; deleting the group takes its mappings with it.
      await ts.kc.users.del({ realm, id: bobId });
      assert.deepEqual(await ts.kc.groups.listMembers({ realm, id: opsId }), []);
      await ts.kc.groups.del({ realm, id: orgId });
      await ts.kc.roles.delByName({ realm, name: 'staff' });
      await ts.kc.roles.delByName({ realm, name: 'deployer' });
    });

    test('an admin role reaches a member through a group; manage-users alone can neither map it to a group nor join a group holding it', async () => {
      const { kc: helpdesk, userId: helpdeskId } = await serviceAccountAdmin(ts, realm, 'group-helpdesk', ['manage-users']);
      const { id: adminsId } = await ts.kc.groups.create({ realm, name: 'realm admins' });
      const { id: teamId } = await ts.kc.groups.createChildGroup({ realm, id: adminsId }, { name: 'team' });
      const { id: plainId } = await helpdesk.groups.create({ realm, name: 'plain' });
      // manage-users may not map realm-admin to a group (it does not hold it), the master admin may.
      assert.equal(await statusOf(helpdesk.groups.addClientRoleMappings({ realm, id: adminsId, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, realm, 'realm-admin')] })), 403);
      assert.deepEqual(await ts.kc.groups.listClientRoleMappings({ realm, id: adminsId, clientUniqueId: 'realm-management' }), []);
      await ts.kc.groups.addClientRoleMappings({ realm, id: adminsId, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, realm, 'realm-admin')] });

      // Joining the subgroup would give realm-admin (inherited): refused, for itself and for alice.
      for (const id of [helpdeskId, aliceId]) assert.equal(await statusOf(helpdesk.users.addToGroup({ realm, id, groupId: teamId })), 403, id);
      assert.deepEqual(await ts.kc.groups.listMembers({ realm, id: teamId }), []);
      // Nor may it create a user in that group, move its own group under it once it has members, or
      // take an administrator out of it.
      assert.equal(await statusOf(helpdesk.users.create({ realm, username: 'mallory', enabled: true, groups: ['/realm admins/team'] })), 403);
      assert.deepEqual(await ts.kc.users.find({ realm, username: 'mallory', exact: true }), []);
      await helpdesk.users.addToGroup({ realm, id: helpdeskId, groupId: plainId });
      assert.equal(await statusOf(helpdesk.groups.updateChildGroup({ realm, id: teamId }, { id: plainId })), 403);
      assert.equal((await ts.kc.groups.findOne({ realm, id: plainId }))?.path, '/plain');

      // The master admin puts alice in the team: she administers the realm through the group.
      await ts.kc.users.addToGroup({ realm, id: aliceId, groupId: teamId });
      assert.equal(await statusOf(helpdesk.users.delFromGroup({ realm, id: aliceId, groupId: teamId })), 403);
      assert.equal(await statusOf(helpdesk.groups.del({ realm, id: adminsId })), 403);
      // Through the admin API's own check (roles read per request): alice's access token from the
      // web-app flow now names realm-admin, and the admin API accepts it.
      const token = await alice.refresh();
      const claims = decodeJwt(token) as { resource_access?: Record<string, { roles: string[] }> };
      assert.deepEqual(claims.resource_access?.['realm-management']?.roles, ['realm-admin']);
      const asAlice = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/users?max=5`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(asAlice.status, 200);

      await ts.kc.users.delFromGroup({ realm, id: aliceId, groupId: teamId });
      // Her earlier token no longer administers: the admin API reads her roles at each request.
      assert.equal((await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/users?max=5`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
      await ts.kc.groups.del({ realm, id: adminsId });
      await ts.kc.groups.del({ realm, id: plainId });
    });

    test('the groups scope releases the paths of the user\'s groups in the groups claim: access token, ID token, userinfo', async () => {
      const { id: topId } = await ts.kc.groups.create({ realm, name: 'grafana' });
      const { id: editorsId } = await ts.kc.groups.createChildGroup({ realm, id: topId }, { name: 'editors' });
      const { id: otherId } = await ts.kc.groups.create({ realm, name: 'on-call' });
      await ts.kc.users.addToGroup({ realm, id: aliceId, groupId: editorsId });
      await ts.kc.users.addToGroup({ realm, id: aliceId, groupId: otherId });
      await ts.kc.clientScopes.create({ realm, name: 'groups', protocol: 'openid-connect', attributes: { 'consent.screen.text': 'See the groups you belong to' } });
      const before = (await ts.kc.clients.findOne({ realm, id: 'web-app' }))!.defaultClientScopes!;
      await ts.kc.clients.update({ realm, id: 'web-app' }, { defaultClientScopes: [...before, 'groups'] });
      try {
        const r = await runAuthorization(ts, { query: { scope: 'openid groups' } });
        const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(t.statusCode, 200, t.body);
        const paths = ['/grafana/editors', '/on-call'];
        assert.deepEqual((decodeJwt(t.json().access_token as string) as { groups?: string[] }).groups, paths);
        assert.deepEqual((decodeJwt(t.json().id_token as string) as { groups?: string[] }).groups, paths);
        const info = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${t.json().access_token as string}` } });
        assert.deepEqual(((await info.json()) as { groups?: string[] }).groups, paths);
        // Introspection (RFC 7662) answers with the token's claims, as Keycloak does: a gateway that
        // introspects authorizes by the same groups as one that reads the JWT.
        const introspected = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token/introspect`, {
          method: 'POST',
          headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: t.json().access_token as string }).toString(),
        });
        const intro = (await introspected.json()) as { active: boolean; groups?: string[]; client_id?: string; username?: string };
        assert.deepEqual([intro.active, intro.groups, intro.client_id, intro.username], [true, paths, ts.client.id, 'alice']);
        // Renamed, the group's new path is in the next token; without the scope there is no claim.
        await ts.kc.groups.update({ realm, id: topId }, { name: 'dashboards' });
        const next = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.json().refresh_token as string }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.deepEqual((decodeJwt(next.json().access_token as string) as { groups?: string[] }).groups, ['/dashboards/editors', '/on-call']);
        // alice's first grant did not ask for the scope: its tokens carry no groups claim.
        assert.equal((decodeJwt(await alice.refresh()) as { groups?: unknown }).groups, undefined);
      } finally {
        await ts.kc.clients.update({ realm, id: 'web-app' }, { defaultClientScopes: before });
        await ts.kc.groups.del({ realm, id: topId });
        await ts.kc.groups.del({ realm, id: otherId });
      }
    });

    test('default groups: every user created joins them, unless the creator may not give the roles they bring', async () => {
      const { id: everyoneId } = await ts.kc.groups.create({ realm, name: 'everyone' });
      await ts.kc.roles.create({ realm, name: 'member' });
      const member = (await ts.kc.roles.findOneByName({ realm, name: 'member' }))!;
      await ts.kc.groups.addRealmRoleMappings({ realm, id: everyoneId, roles: [{ id: member.id!, name: member.name! }] });
      await ts.kc.realms.addDefaultGroup({ realm, id: everyoneId });
      assert.deepEqual((await ts.kc.realms.getDefaultGroups({ realm })).map((g) => g.path), ['/everyone']);
      const { id: erinId } = await ts.kc.users.create({ realm, username: 'erin', enabled: true });
      assert.deepEqual((await ts.kc.users.listGroups({ realm, id: erinId })).map((g) => g.path), ['/everyone']);
      assert.deepEqual((await ts.kc.users.listCompositeRealmRoleMappings({ realm, id: erinId })).map((r) => r.name), ['member']);

      // A default group holding an admin role: a manage-users admin may no longer create users (it would
      // make them realm administrators); the master admin may.
      const { kc: hr } = await serviceAccountAdmin(ts, realm, 'default-hr', ['manage-users']);
      await hr.users.create({ realm, username: 'frank', enabled: true });
      await ts.kc.groups.addClientRoleMappings({ realm, id: everyoneId, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, realm, 'manage-realm')] });
      assert.equal(await statusOf(hr.users.create({ realm, username: 'gina', enabled: true })), 403);
      assert.deepEqual(await ts.kc.users.find({ realm, username: 'gina', exact: true }), []);
      const { id: hankId } = await ts.kc.users.create({ realm, username: 'hank', enabled: true });
      assert.deepEqual((await ts.kc.users.listGroups({ realm, id: hankId })).map((g) => g.path), ['/everyone']);

      // view-realm reads them, manage-realm changes them.
      const { kc: viewer } = await serviceAccountAdmin(ts, realm, 'default-viewer', ['view-realm']);
      assert.deepEqual((await viewer.realms.getDefaultGroups({ realm })).map((g) => g.name), ['everyone']);
      assert.equal(await statusOf(viewer.realms.removeDefaultGroup({ realm, id: everyoneId })), 403);
      await ts.kc.realms.removeDefaultGroup({ realm, id: everyoneId });
      assert.deepEqual(await ts.kc.realms.getDefaultGroups({ realm }), []);
      const { id: ivyId } = await ts.kc.users.create({ realm, username: 'ivy', enabled: true });
      assert.deepEqual(await ts.kc.users.listGroups({ realm, id: ivyId }), []);
      assert.equal(await statusOf(ts.kc.realms.addDefaultGroup({ realm, id: 'no-such-group' })), 404);
      for (const username of ['erin', 'frank', 'hank', 'ivy']) {
        const [u] = await ts.kc.users.find({ realm, username, exact: true });
        await ts.kc.users.del({ realm, id: u!.id! });
      }
      await ts.kc.groups.del({ realm, id: everyoneId });
      await ts.kc.roles.delByName({ realm, name: 'member' });
    });

    test("deleting a realm deletes its groups, their members' memberships and their role mappings", async () => {
      await ts.kc.realms.create({ realm: 'doomed', enabled: true });
      const { id: userId } = await ts.kc.users.create({ realm: 'doomed', username: 'dan', enabled: true });
      await ts.kc.roles.create({ realm: 'doomed', name: 'r' });
      const role = (await ts.kc.roles.findOneByName({ realm: 'doomed', name: 'r' }))!;
      const { id: gid } = await ts.kc.groups.create({ realm: 'doomed', name: 'g' });
      await ts.kc.groups.createChildGroup({ realm: 'doomed', id: gid }, { name: 'h' });
      await ts.kc.groups.addRealmRoleMappings({ realm: 'doomed', id: gid, roles: [{ id: role.id!, name: role.name! }] });
      await ts.kc.users.addToGroup({ realm: 'doomed', id: userId, groupId: gid });
      const db = ts.store.db.kysely;
      const rows = async (): Promise<number[]> => [
        (await db.selectFrom('groups').select('id').where('realm_id', '=', 'doomed').execute()).length,
        (await db.selectFrom('group_members').select('group_id').where('user_id', '=', userId).execute()).length,
        (await db.selectFrom('group_roles').select('group_id').where('role_id', '=', role.id!).execute()).length,
      ];
      assert.deepEqual(await rows(), [2, 1, 1]);
      await ts.kc.realms.del({ realm: 'doomed' });
      assert.deepEqual(await rows(), [0, 0, 0]);
    });

    test('hostile input to the groups API: a 4xx in Keycloak\'s error shape, never a 5xx, nothing stored', async () => {
      const { id } = await ts.kc.groups.create({ realm, name: 'target' });
      const before = await ts.kc.groups.count({ realm });
      const probes: Array<[string, string, unknown?]> = [
        ['GET', `/realms/${realm}/groups/%00`],
        ['GET', `/realms/${realm}/groups?search=%00`],
        ['GET', `/realms/${realm}/groups?q=%00:%00`],
        ['GET', `/realms/${realm}/groups?q=nocolon`],
        ['GET', `/realms/${realm}/groups?search=${'x'.repeat(300)}`],
        ['GET', `/realms/${realm}/group-by-path/%00`],
        ['GET', `/realms/${realm}/group-by-path/${'a/'.repeat(2000)}`],
        ['PUT', `/realms/${realm}/users/${aliceId}/groups/%00`],
        ['PUT', `/realms/${realm}/users/%00/groups/${id}`],
        ['POST', `/realms/${realm}/groups`, { name: 'x', attributes: { 'a\u0000': ['b'] } }],
        ['POST', `/realms/${realm}/groups`, { name: 'x', attributes: { a: ['b\u0000'] } }],
        ['POST', `/realms/${realm}/groups`, { name: 'x', description: 'b\u0000' }],
        ['POST', `/realms/${realm}/groups`, { name: 'x\ny' }],
        ['POST', `/realms/${realm}/groups`, { name: 'x'.repeat(256) }],
        ['POST', `/realms/${realm}/groups`, { id: 5 }],
        ['POST', `/realms/${realm}/groups`, { name: 'x', attributes: [] }],
        ['POST', `/realms/${realm}/groups`, []],
        ['POST', `/realms/${realm}/groups/${id}/children`, { id }],
        ['POST', `/realms/${realm}/groups/${id}/role-mappings/realm`, [{ id: '\u0000' }]],
        ['POST', `/realms/${realm}/groups/${id}/role-mappings/realm`, { name: 'x' }],
        ['POST', `/realms/${realm}/groups/${id}/role-mappings/clients/%00`, [{ name: 'x' }]],
        ['GET', `/realms/${realm}/groups/${id}/members?first=1e400`],
        ['GET', `/realms/${realm}/groups/${id}/children?max=100000`],
        ['PUT', `/realms/${realm}/default-groups/%00`],
        ['POST', `/realms/${realm}/users`, { username: 'zed', enabled: true, groups: ['\u0000'] }],
        ['POST', `/realms/${realm}/users`, { username: 'zed', enabled: true, groups: 'x' }],
      ];
      for (const [method, path, body] of probes) {
        const res = await fetch(`${ts.baseUrl}/auth/admin${path}`, {
          method,
          headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        const json = (await res.json()) as { error?: string; errorMessage?: string };
        assert.ok([400, 404].includes(res.status), `${method} ${path.slice(0, 80)}: ${res.status} ${JSON.stringify(json)}`);
        assert.equal(typeof json.errorMessage, 'string', path);
      }
      assert.deepEqual(await ts.kc.groups.count({ realm }), before);
      assert.deepEqual(await ts.kc.users.find({ realm, username: 'zed', exact: true }), []);
      await ts.kc.groups.del({ realm, id });
    });

    test('reading groups needs view-users (listing: query-groups); changing them manage-users', async () => {
      const { kc: viewer } = await serviceAccountAdmin(ts, realm, 'group-viewer', ['view-users']);
      const { kc: querier } = await serviceAccountAdmin(ts, realm, 'group-querier', ['query-groups']);
      const { id } = await ts.kc.groups.create({ realm, name: 'readers' });
      assert.deepEqual((await viewer.groups.find({ realm })).map((g) => g.name), ['readers']);
      assert.equal((await viewer.groups.findOne({ realm, id }))?.access?.manage, false);
      assert.equal(await statusOf(viewer.groups.create({ realm, name: 'nope' })), 403);
      assert.equal(await statusOf(viewer.groups.update({ realm, id }, { name: 'nope' })), 403);
      assert.equal(await statusOf(viewer.users.addToGroup({ realm, id: aliceId, groupId: id })), 403);
      assert.deepEqual((await querier.groups.find({ realm })).map((g) => g.name), ['readers']);
      assert.equal(await statusOf(querier.groups.findOne({ realm, id })), 403);
      await ts.kc.groups.del({ realm, id });
    });
  });
}
