import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * A role's composites by its id (Keycloak's RoleByIdResource: roles.createComposite, getCompositeRoles,
 * getCompositeRolesForRealm, getCompositeRolesForClient, delCompositeRoles), through
 * keycloak-admin-client unchanged: a role without composites lists none; unknown roles and clients are
 * 404 (test/admin/composite-roles.test.ts adds and removes composites); the
 * caller needs the role's own view and manage roles (view-realm / manage-realm for a realm role,
 * view-clients / manage-clients for a client role), as by its id otherwise.
 */
for (const dialect of dialects()) {
  describe(`admin API: role composites by id (${dialect})`, () => {
    let ts: AdminTestServer;
    let parent: { id: string; name: string };
    let child: { id: string; name: string };
    let clientRole: { id: string; name: string };
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.kc.roles.create({ realm: 'test', name: 'parent' });
      await ts.kc.roles.create({ realm: 'test', name: 'child' });
      await ts.kc.clients.createRole({ realm: 'test', id: 'web-app', name: 'invoices:read' });
      const ref = (r: { id?: string; name?: string } | null | undefined): { id: string; name: string } => ({ id: r!.id!, name: r!.name! });
      parent = ref(await ts.kc.roles.findOneByName({ realm: 'test', name: 'parent' }));
      child = ref(await ts.kc.roles.findOneByName({ realm: 'test', name: 'child' }));
      clientRole = ref(await ts.kc.clients.findRole({ realm: 'test', id: 'web-app', roleName: 'invoices:read' }));
    });
    after(() => ts.close());

    test('a role that contains no roles: every listing answers an empty list', async () => {
      for (const role of [parent, clientRole]) {
        assert.deepEqual(await ts.kc.roles.getCompositeRoles({ realm: 'test', id: role.id }), []);
        assert.deepEqual(await ts.kc.roles.getCompositeRolesForRealm({ realm: 'test', id: role.id }), []);
        assert.deepEqual(await ts.kc.roles.getCompositeRolesForClient({ realm: 'test', id: role.id, clientId: 'web-app' }), []);
      }
      // Keycloak's paging parameters are taken.
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/test/roles-by-id/${parent.id}/composites?first=0&max=10&search=x`, { headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), []);
      const bad = await fetch(`${ts.baseUrl}/auth/admin/realms/test/roles-by-id/${parent.id}/composites?max=1e400`, { headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      assert.equal(bad.status, 400);
    });

    test('an empty list asks for nothing: 204, no admin event, no change', async () => {
      const eventsBefore = (await ts.store.adminEvents.list('test', { max: 10000 })).length;
      await ts.kc.roles.createComposite({ realm: 'test', roleId: parent.id }, []);
      await ts.kc.roles.delCompositeRoles({ realm: 'test', id: parent.id }, []);
      assert.deepEqual(await ts.kc.roles.getCompositeRoles({ realm: 'test', id: parent.id }), []);
      assert.equal((await ts.kc.roles.findOneById({ realm: 'test', id: parent.id }))?.composite, false);
      assert.equal((await ts.store.adminEvents.list('test', { max: 10000 })).length, eventsBefore);
    });

    test('removing roles not contained: 204, nothing changes; an unknown member is 404', async () => {
      await ts.kc.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [child, clientRole]);
      await ts.kc.roles.delCompositeRoles({ realm: 'test', id: clientRole.id }, [child]);
      assert.deepEqual(await ts.kc.roles.getCompositeRoles({ realm: 'test', id: parent.id }), []);
      const missing = await errorOf(ts.kc.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [child, { id: 'no-such-role', name: 'x' }]));
      assert.equal(missing.status, 404);
      assert.equal(missing.body.errorMessage, 'Could not find composite role');
      // A member named without an id (Keycloak finds members by id only), or not a role at all.
      assert.equal(await statusOf(ts.kc.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [{ name: 'child' }])), 404);
      assert.equal(await statusOf(ts.kc.roles.createComposite({ realm: 'test', roleId: parent.id }, [{ id: 'no-such-role' }])), 404);
      for (const body of ['{"id":"x"}', '[1]', '[null]', '"text"', 'not json']) {
        const res = await fetch(`${ts.baseUrl}/auth/admin/realms/test/roles-by-id/${parent.id}/composites`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, 'content-type': 'application/json' },
          body,
        });
        assert.equal(res.status, 400, body);
      }
    });

    test('unknown roles and clients: 404; a role of another realm is not found by id', async () => {
      const other = 'no-such-role-id';
      const role404 = await errorOf(ts.kc.roles.getCompositeRoles({ realm: 'test', id: other }));
      assert.deepEqual([role404.status, role404.body.errorMessage], [404, 'Could not find role with id']);
      assert.equal(await statusOf(ts.kc.roles.getCompositeRolesForRealm({ realm: 'test', id: other })), 404);
      assert.equal(await statusOf(ts.kc.roles.getCompositeRolesForClient({ realm: 'test', id: other, clientId: 'web-app' })), 404);
      assert.equal(await statusOf(ts.kc.roles.createComposite({ realm: 'test', roleId: other }, [child])), 404);
      assert.equal(await statusOf(ts.kc.roles.delCompositeRoles({ realm: 'test', id: other }, [child])), 404);
      const client404 = await errorOf(ts.kc.roles.getCompositeRolesForClient({ realm: 'test', id: parent.id, clientId: 'no-such-client' }));
      assert.deepEqual([client404.status, client404.body.errorMessage], [404, 'Could not find client']);
      // master's admin role, asked for through realm test.
      const masterAdmin = await ts.kc.roles.findOneByName({ realm: 'master', name: 'admin' });
      assert.equal(await statusOf(ts.kc.roles.getCompositeRoles({ realm: 'test', id: masterAdmin!.id! })), 404);
      // A member from another realm is not one of this realm's roles.
      assert.equal(await statusOf(ts.kc.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [{ id: masterAdmin!.id! }])), 404);
    });

    test("the caller needs the role's own view and manage roles: realm roles the realm's, client roles the clients'", async () => {
      const { kc: realmReader } = await serviceAccountAdmin(ts, 'test', 'realm-reader', ['view-realm']);
      assert.deepEqual(await realmReader.roles.getCompositeRoles({ realm: 'test', id: parent.id }), []);
      assert.deepEqual(await realmReader.roles.getCompositeRolesForClient({ realm: 'test', id: parent.id, clientId: 'web-app' }), []);
      assert.equal(await statusOf(realmReader.roles.getCompositeRoles({ realm: 'test', id: clientRole.id })), 403);
      assert.equal(await statusOf(realmReader.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [child])), 403);
      assert.equal(await statusOf(realmReader.roles.createComposite({ realm: 'test', roleId: parent.id }, [child])), 403);

      const { kc: clientAdmin } = await serviceAccountAdmin(ts, 'test', 'client-admin', ['manage-clients']);
      assert.deepEqual(await clientAdmin.roles.getCompositeRolesForRealm({ realm: 'test', id: clientRole.id }), []);
      await clientAdmin.roles.delCompositeRoles({ realm: 'test', id: clientRole.id }, [child]);
      assert.equal(await statusOf(clientAdmin.roles.getCompositeRoles({ realm: 'test', id: parent.id })), 403);
      assert.equal(await statusOf(clientAdmin.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [child])), 403);
      // 403 before the body is looked at: the refusal is about the caller, not the composite.
      assert.equal(await statusOf(clientAdmin.roles.createComposite({ realm: 'test', roleId: parent.id }, [child])), 403);

      const { kc: realmAdmin } = await serviceAccountAdmin(ts, 'test', 'realm-admin-sa', ['manage-realm']);
      await realmAdmin.roles.createComposite({ realm: 'test', roleId: parent.id }, [child]);
      await realmAdmin.roles.delCompositeRoles({ realm: 'test', id: parent.id }, [child]);

      // A user of the realm with no admin role: 403 whether or not the role exists.
      const { kc: nobody } = await serviceAccountAdmin(ts, 'test', 'no-admin', []);
      assert.equal(await statusOf(nobody.roles.getCompositeRoles({ realm: 'test', id: parent.id })), 403);
      assert.equal(await statusOf(nobody.roles.getCompositeRoles({ realm: 'test', id: 'no-such-role-id' })), 403);
    });
  });
}
