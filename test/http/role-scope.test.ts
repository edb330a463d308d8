import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, startTestServer, type TestServer } from '../helpers/server.js';
import { tokenRequest, tokenRolesOf, type TokenRoles } from '../helpers/flow.js';
import { createClient, createClientScope, createRole, grantRolesByName, updateClient } from '../../src/admin/operations.js';
import { linkClientScope } from '../../src/admin/operations/client-scope-links.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { ScopeOwner } from '../../src/storage/repos/role-scopes.js';

const REALM = 'test';


// Keycloak's role scope (fullScopeAllowed, scope mappings of clients and client scopes): what the access
// tokens of the token endpoint carry, for every grant that issues one with roles in it.
for (const dialect of dialects()) {
  describe(`role scope of access tokens (${dialect})`, () => {
    let ts: TestServer;
    const actor = cliActor();
    /** Maps roles (realm ones by name, client ones as client/name) to an owner's scope. */
    async function mapToScope(owner: ScopeOwner, refs: string[]): Promise<void> {
      const ids: string[] = [];
      for (const ref of refs) {
        const [clientId, name] = ref.includes('/') ? ref.split('/') : ['', ref];
        const role = await ts.store.roles.find(REALM, clientId!, name!);
        assert.ok(role, ref);
        ids.push(role.id);
      }
      await ts.store.roleScopes.add(REALM, owner, ids);
    }
    async function password(scope?: string): Promise<string> {
      const res = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password, ...(scope ? { scope } : {}) }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access_token as string;
    }

    before(async () => {
      ts = await startTestServer({ dialect });
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, directAccessGrantsEnabled: true, serviceAccountsEnabled: true });
      // Roles: three of the realm, one of web-app itself, two of another client (an API).
      for (const name of ['viewer', 'editor', 'auditor']) await createRole(ts.store, { realmId: REALM, clientId: '', name }, actor);
      await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'own' }, actor);
      await createClient(ts.store, { realmId: REALM, clientId: 'orders-api', redirectUris: [], standardFlowEnabled: false });
      for (const name of ['read', 'write']) await createRole(ts.store, { realmId: REALM, clientId: 'orders-api', name }, actor);
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: ['viewer', 'editor', 'auditor'] }, actor);
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: ts.client.id, names: ['own'] }, actor);
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'orders-api', names: ['read', 'write'] }, actor);
      // Client scopes: "reports" a default scope of web-app, "ordering" an optional one.
      await createClientScope(ts.store, { realmId: REALM, name: 'reports' }, actor);
      await createClientScope(ts.store, { realmId: REALM, name: 'ordering' }, actor);
      await linkClientScope(ts.store, { realmId: REALM, clientId: ts.client.id, scope: 'reports', kind: 'default' }, actor);
      await linkClientScope(ts.store, { realmId: REALM, clientId: ts.client.id, scope: 'ordering', kind: 'optional' }, actor);
      // The scopes' and the client's mappings, which matter only once the client loses its full scope.
      await mapToScope({ kind: 'client', id: ts.client.id }, ['viewer']);
      await mapToScope({ kind: 'scope', id: 'reports' }, ['auditor']);
      await mapToScope({ kind: 'scope', id: 'ordering' }, ['orders-api/read']);
    });
    after(() => ts.close());

    const everything: TokenRoles = { realm: ['auditor', 'editor', 'viewer'], clients: { 'orders-api': ['read', 'write'], 'web-app': ['own'] } };

    test('a client with full scope (the default) gets every role of its user, whatever its scope mappings', async () => {
      assert.deepEqual(tokenRolesOf(await password()), everything);
    });

    test('without full scope: its own roles, its scope mappings and those of its default scopes; an optional scope adds its mappings only when asked for', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: false });
      try {
        assert.deepEqual(tokenRolesOf(await password()), { realm: ['auditor', 'viewer'], clients: { 'web-app': ['own'] } });
        assert.deepEqual(tokenRolesOf(await password('ordering')), { realm: ['auditor', 'viewer'], clients: { 'orders-api': ['read'], 'web-app': ['own'] } });
        // client_credentials: the service account's roles are limited the same way.
        const sa = (await ts.store.users.findByUsername(REALM, 'service-account-web-app'))!;
        await grantRolesByName(ts.store, { realmId: REALM, userId: sa.id, clientId: '', names: ['viewer', 'editor'] }, actor);
        const cc = await tokenRequest(ts, { grant_type: 'client_credentials' }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(cc.statusCode, 200, cc.body);
        assert.deepEqual(tokenRolesOf(cc.json().access_token), { realm: ['viewer'] });
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: true });
      }
    });

    test('a refresh reads the scope as it is now: a mapping added or removed shows in the next access token', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: false });
      try {
        const first = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(first.statusCode, 200, first.body);
        assert.deepEqual(tokenRolesOf(first.json().access_token).realm, ['auditor', 'viewer']);
        const editor = (await ts.store.roles.find(REALM, '', 'editor'))!;
        await ts.store.roleScopes.add(REALM, { kind: 'client', id: ts.client.id }, [editor.id]);
        const second = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: first.json().refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(second.statusCode, 200, second.body);
        assert.deepEqual(tokenRolesOf(second.json().access_token).realm, ['auditor', 'editor', 'viewer']);
        await ts.store.roleScopes.remove(REALM, { kind: 'client', id: ts.client.id }, [editor.id]);
        const viewer = (await ts.store.roles.find(REALM, '', 'viewer'))!;
        await ts.store.roleScopes.remove(REALM, { kind: 'client', id: ts.client.id }, [viewer.id]);
        const third = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: second.json().refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(third.statusCode, 200, third.body);
        assert.deepEqual(tokenRolesOf(third.json().access_token).realm, ['auditor']);
        await ts.store.roleScopes.add(REALM, { kind: 'client', id: ts.client.id }, [viewer.id]);
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: true });
      }
    });

    test('a user none of whose roles is in the scope gets no role claims; deleting a role or a scope removes its mappings', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: false });
      try {
        await ts.store.roleScopes.remove(REALM, { kind: 'client', id: ts.client.id });
        await ts.store.roleScopes.remove(REALM, { kind: 'scope', id: 'reports' });
        const own = (await ts.store.roles.find(REALM, ts.client.id, 'own'))!;
        await ts.store.roles.revoke(ts.user.id, [own.id]);
        const claims = decodeJwt(await password()) as Record<string, unknown>;
        assert.equal(claims.realm_access, undefined);
        assert.equal(claims.resource_access, undefined);
        await ts.store.roles.grant(ts.user.id, [own.id]);
        // Deleting a role removes it from every scope; deleting a client scope removes its mappings.
        await mapToScope({ kind: 'client', id: ts.client.id }, ['viewer']);
        const temp = await createRole(ts.store, { realmId: REALM, clientId: '', name: 'temp' }, actor);
        await ts.store.roleScopes.add(REALM, { kind: 'scope', id: 'ordering' }, [temp.id]);
        await ts.store.roles.delete(temp.id);
        assert.deepEqual((await ts.store.roleScopes.list(REALM, { kind: 'scope', id: 'ordering' })).map((r) => r.name), ['read']);
        await ts.store.realms.deleteScope(REALM, 'ordering');
        assert.deepEqual(await ts.store.roleScopes.list(REALM, { kind: 'scope', id: 'ordering' }), []);
        assert.deepEqual(tokenRolesOf(await password()), { realm: ['viewer'], clients: { 'web-app': ['own'] } });
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: true });
      }
    });

    test('UserInfo and introspection agree with the token', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: false });
      try {
        const token = await password();
        const intro = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token/introspect'), headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ token }).toString() });
        assert.equal(intro.statusCode, 200, intro.body);
        const body = intro.json() as { active: boolean; realm_access?: { roles: string[] } };
        assert.equal(body.active, true);
        assert.deepEqual(body.realm_access?.roles.sort(), tokenRolesOf(token).realm);
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, fullScopeAllowed: true });
      }
    });
  });
}
