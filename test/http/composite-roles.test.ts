import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic, startTestServer, type TestServer } from '../helpers/server.js';
import { tokenRequest, tokenRolesOf } from '../helpers/flow.js';
import { createClient, createGroup, createRole, createUser, grantRolesByName, updateClient } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { Role } from '../../src/storage/repos/roles.js';

const REALM = 'test';


// Keycloak's composite roles: whoever holds a composite holds what it contains, recursively, in tokens
// (realm_access, resource_access), through groups, and in the scope of a client without full scope.
for (const dialect of dialects()) {
  describe(`composite roles in tokens (${dialect})`, () => {
    let ts: TestServer;
    const actor = cliActor();
    const role: Record<string, Role> = {};
    async function password(username: string, password: string): Promise<string> {
      const res = await tokenRequest(ts, { grant_type: 'password', username, password }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access_token as string;
    }
    const alice = (): Promise<string> => password(ts.user.username, ts.user.password);

    before(async () => {
      ts = await startTestServer({ dialect });
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, directAccessGrantsEnabled: true });
      for (const name of ['team', 'viewer', 'basic', 'cycle-a', 'cycle-b', 'other']) role[name] = await createRole(ts.store, { realmId: REALM, clientId: '', name }, actor);
      await createClient(ts.store, { realmId: REALM, clientId: 'orders-api', redirectUris: [], standardFlowEnabled: false });
      role.read = await createRole(ts.store, { realmId: REALM, clientId: 'orders-api', name: 'read' }, actor);
      // team contains viewer and orders-api's read; viewer contains basic (two levels).
      await ts.store.roles.addComposites(REALM, role.team!.id, [role.viewer!.id, role.read!.id]);
      await ts.store.roles.addComposites(REALM, role.viewer!.id, [role.basic!.id]);
      // A cycle: each of cycle-a and cycle-b contains the other.
      await ts.store.roles.addComposites(REALM, role['cycle-a']!.id, [role['cycle-b']!.id]);
      await ts.store.roles.addComposites(REALM, role['cycle-b']!.id, [role['cycle-a']!.id]);
    });
    after(() => ts.close());

    test('a user holding a composite holds what it contains, recursively; the storage answers its direct and effective composites', async () => {
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: ['team'] }, actor);
      assert.deepEqual(tokenRolesOf(await alice()), { realm: ['basic', 'team', 'viewer'], clients: { 'orders-api': ['read'] } });
      assert.deepEqual((await ts.store.roles.composites(role.team!.id)).map((r) => r.name), ['viewer', 'read']);
      assert.deepEqual((await ts.store.roles.effectiveComposites(role.team!.id)).map((r) => r.name), ['basic', 'viewer', 'read']);
      assert.deepEqual((await ts.store.roles.compositeIds(REALM)).has(role.team!.id), true);
      assert.deepEqual((await ts.store.roles.compositeIds(REALM)).has(role.basic!.id), false);
    });

    test('a cycle of composites ends: each role once', async () => {
      const bob = await createUser(ts.store, { realmId: REALM, username: 'bob', password: ts.user.password, orgAliases: ['acme'] });
      await grantRolesByName(ts.store, { realmId: REALM, userId: bob.id, clientId: '', names: ['cycle-a'] }, actor);
      assert.deepEqual(tokenRolesOf(await password('bob', ts.user.password)).realm, ['cycle-a', 'cycle-b']);
      assert.deepEqual((await ts.store.roles.effectiveComposites(role['cycle-a']!.id)).map((r) => r.name), ['cycle-b']);
    });

    test('through a group: a composite mapped to a group reaches its members with what it contains', async () => {
      const { group } = await createGroup(ts.store, { realmId: REALM, name: 'ops' }, actor);
      const carol = await createUser(ts.store, { realmId: REALM, username: 'carol', password: ts.user.password, orgAliases: ['acme'] });
      await ts.store.groups.addMember(group.id, carol.id);
      await ts.store.groups.grantRoles(group.id, [role.viewer!.id]);
      assert.deepEqual(tokenRolesOf(await password('carol', ts.user.password)).realm, ['basic', 'viewer']);
    });

    test('a change to a composite shows in the next refresh; deleting a contained role removes it from the composite', async () => {
      const first = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(first.statusCode, 200, first.body);
      await ts.store.roles.addComposites(REALM, role.team!.id, [role.other!.id]);
      const second = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: first.json().refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(tokenRolesOf(second.json().access_token).realm, ['basic', 'other', 'team', 'viewer']);
      await ts.store.roles.removeComposites(role.team!.id, [role.other!.id]);
      const temp = await createRole(ts.store, { realmId: REALM, clientId: '', name: 'temp' }, actor);
      await ts.store.roles.addComposites(REALM, role.team!.id, [temp.id]);
      await ts.store.roles.delete(temp.id);
      assert.deepEqual((await ts.store.roles.composites(role.team!.id)).map((r) => r.name), ['viewer', 'read']);
      const third = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: second.json().refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.deepEqual(tokenRolesOf(third.json().access_token).realm, ['basic', 'team', 'viewer']);
    });

    test('a client without full scope: a composite in its scope brings what it contains, as Keycloak expands the scope', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: false });
      try {
        assert.equal(tokenRolesOf(await alice()).realm, undefined);
        await ts.store.roleScopes.add(REALM, { kind: 'client', id: ts.client.id }, [role.viewer!.id]);
        assert.deepEqual(tokenRolesOf(await alice()), { realm: ['basic', 'viewer'] });
        await ts.store.roleScopes.add(REALM, { kind: 'client', id: ts.client.id }, [role.team!.id]);
        assert.deepEqual(tokenRolesOf(await alice()), { realm: ['basic', 'team', 'viewer'], clients: { 'orders-api': ['read'] } });
        // The client's own composite role brings what it contains into its scope.
        await ts.store.roleScopes.remove(REALM, { kind: 'client', id: ts.client.id });
        const own = await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'own' }, actor);
        await ts.store.roles.addComposites(REALM, own.id, [role.basic!.id]);
        await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: ts.client.id, names: ['own'] }, actor);
        assert.deepEqual(tokenRolesOf(await alice()), { realm: ['basic'], clients: { 'web-app': ['own'] } });
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: true });
      }
    });
  });
}
