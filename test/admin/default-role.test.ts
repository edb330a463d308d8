import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { tokenRequest } from '../helpers/flow.js';
import { createUser, updateClient } from '../../src/admin/operations.js';
import { errorOf, startAdminServer, type AdminTestServer } from './helpers.js';

/**
 * Keycloak's realm default role through keycloak-admin-client's own calls: a realm has none until a PUT
 * names one (by id or name); findOne answers it as Keycloak's brief role; every user created from then on
 * is mapped to it and a token carries it and what it contains; deleting the role clears it; an unknown
 * role is refused.
 */
const realm = 'test';
const PASSWORD = 'a new user password 42';

for (const dialect of dialects()) {
  describe(`admin API: the realm default role (${dialect})`, () => {
    let ts: AdminTestServer;
    let defaultsId: string;
    let extraId: string;

    async function realmRolesOf(username: string): Promise<string[]> {
      const id = (await ts.kc.users.find({ realm, username, exact: true }))[0]!.id!;
      return (await ts.kc.users.listRealmRoleMappings({ realm, id })).map((r) => r.name!).sort();
    }
    async function newUser(username: string): Promise<void> {
      await ts.kc.users.create({ realm, username, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
    }

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateClient(ts.store, { realmId: realm, clientId: 'web-app', directAccessGrantsEnabled: true });
      // Users of no organization sign in too (realm test requires one by default).
      await ts.kc.realms.update({ realm }, { attributes: { 'realmgate.organizationRequired': 'false' } });
      await ts.kc.roles.create({ realm, name: 'default-roles-test', description: 'Default roles' });
      await ts.kc.roles.create({ realm, name: 'extra' });
      defaultsId = (await ts.kc.roles.findOneByName({ realm, name: 'default-roles-test' }))!.id!;
      extraId = (await ts.kc.roles.findOneByName({ realm, name: 'extra' }))!.id!;
      await ts.kc.roles.createComposite({ realm, roleId: defaultsId }, [{ id: extraId, name: 'extra' }]);
    });
    after(() => ts.close());

    test("Realmgate's realm has none: no defaultRole, a new user gets no role", async () => {
      const rep = await ts.kc.realms.findOne({ realm });
      assert.equal(rep?.defaultRole, undefined);
      await newUser('before');
      assert.deepEqual(await realmRolesOf('before'), []);
    });

    test('an unknown role is refused, by id or name; null changes nothing', async () => {
      for (const defaultRole of [{ id: '00000000-0000-0000-0000-000000000000' }, { name: 'nope' }]) {
        const e = await errorOf(ts.kc.realms.update({ realm }, { defaultRole }));
        assert.equal(e.status, 404, JSON.stringify(e.body));
        assert.equal(typeof e.body.errorMessage, 'string');
      }
      // A client role is not a realm's default role.
      const clientRole = await ts.kc.clients.findRole({ realm, id: 'realm-management', roleName: 'view-users' });
      assert.equal((await errorOf(ts.kc.realms.update({ realm }, { defaultRole: { id: clientRole!.id! } }))).status, 404);
      const bad = await errorOf(ts.kc.realms.update({ realm }, { defaultRole: 'x' as never }));
      assert.equal(bad.status, 400);
      await ts.kc.realms.update({ realm }, { defaultRole: null as never });
      assert.equal((await ts.kc.realms.findOne({ realm }))?.defaultRole, undefined);
    });

    test('set by id: findOne answers it; kc.users.create maps the user to it; the token carries it and what it contains', async () => {
      await ts.kc.realms.update({ realm }, { defaultRole: { id: defaultsId } });
      const rep = await ts.kc.realms.findOne({ realm });
      assert.deepEqual(rep?.defaultRole, { id: defaultsId, name: 'default-roles-test', description: 'Default roles', composite: true, clientRole: false, containerId: realm });
      assert.deepEqual((await ts.kc.realms.find()).find((r) => r.realm === realm)?.defaultRole?.id, defaultsId);
      // A PUT of the whole representation back (as the admin console does) keeps it.
      await ts.kc.realms.update({ realm }, rep!);
      assert.equal((await ts.kc.realms.findOne({ realm }))?.defaultRole?.id, defaultsId);
      await newUser('carol');
      assert.deepEqual(await realmRolesOf('carol'), ['default-roles-test']);
      // Users made before keep what they had (Keycloak maps only new users).
      assert.deepEqual(await realmRolesOf('before'), []);
      const res = await tokenRequest(ts, { grant_type: 'password', username: 'carol', password: PASSWORD }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      const claims = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] } };
      assert.deepEqual([...(claims.realm_access?.roles ?? [])].sort(), ['default-roles-test', 'extra']);
    });

    test("self-registration and a client's service-account user get it too", async () => {
      const { id } = await createUser(ts.store, { realmId: realm, username: 'registered', password: PASSWORD, selfRegistration: true });
      assert.deepEqual((await ts.store.roles.mappedRoles(id)).map((r) => r.name), ['default-roles-test']);
      await ts.kc.clients.create({ realm, clientId: 'robot', publicClient: false, serviceAccountsEnabled: true, standardFlowEnabled: false });
      const internal = (await ts.kc.clients.find({ realm, clientId: 'robot' }))[0]!.id!;
      const sa = await ts.kc.clients.getServiceAccountUser({ realm, id: internal });
      assert.deepEqual((await ts.kc.users.listRealmRoleMappings({ realm, id: sa.id! })).map((r) => r.name), ['default-roles-test']);
    });

    test('set by name; deleting the role clears the setting: new users get no role again', async () => {
      await ts.kc.roles.create({ realm, name: 'other-defaults' });
      await ts.kc.realms.update({ realm }, { defaultRole: { name: 'other-defaults' } });
      assert.equal((await ts.kc.realms.findOne({ realm }))?.defaultRole?.name, 'other-defaults');
      await newUser('dave');
      assert.deepEqual(await realmRolesOf('dave'), ['other-defaults']);
      await ts.kc.roles.delByName({ realm, name: 'other-defaults' });
      assert.equal((await ts.kc.realms.findOne({ realm }))?.defaultRole, undefined);
      assert.equal((await ts.store.realms.get(realm))?.defaultRoleId, null);
      await newUser('erin');
      assert.deepEqual(await realmRolesOf('erin'), []);
    });
  });
}
