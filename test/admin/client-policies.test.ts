import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * keycloak-admin-client's clientPolicies.*, unchanged: Realmgate has no client policies or profiles, and
 * says so in Keycloak's shapes; a write that would add one is refused, one that adds none changes nothing.
 */
for (const dialect of dialects()) {
  describe(`admin API: client policies and profiles (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('the reads: none of the realm, none global, as a Keycloak realm export lists them', async () => {
      assert.deepEqual(await ts.kc.clientPolicies.listProfiles({ realm: REALM }), { profiles: [] });
      assert.deepEqual(await ts.kc.clientPolicies.listProfiles({ realm: REALM, includeGlobalProfiles: true }), { profiles: [], globalProfiles: [] });
      assert.deepEqual(await ts.kc.clientPolicies.listPolicies({ realm: REALM }), { policies: [] });
      assert.deepEqual(await ts.kc.clientPolicies.listPolicies({ realm: REALM, includeGlobalPolicies: true }), { policies: [], globalPolicies: [] });
    });

    test('the writes: empty lists are accepted (nothing to do), a profile or a policy is refused in words', async () => {
      await ts.kc.clientPolicies.createProfiles({ realm: REALM, profiles: [] });
      await ts.kc.clientPolicies.updatePolicy({ realm: REALM, policies: [] });
      const profile = { name: 'strict', description: 'PKCE everywhere', executors: [{ executor: 'pkce-enforcer', configuration: { 'auto-configure': 'true' } }] };
      const e = await errorOf(ts.kc.clientPolicies.createProfiles({ realm: REALM, profiles: [profile] }));
      assert.equal(e.status, 400);
      assert.match(String(e.body.errorMessage), /Realmgate has no client profiles/);
      const p = await errorOf(ts.kc.clientPolicies.updatePolicy({ realm: REALM, policies: [{ name: 'all', enabled: true, conditions: [{ condition: 'any-client', configuration: {} }], profiles: ['strict'] }] }));
      assert.equal(p.status, 400);
      assert.match(String(p.body.errorMessage), /Realmgate has no client policies/);
      assert.equal((await errorOf(ts.kc.clientPolicies.updatePolicy({ realm: REALM, policies: 'all' } as never))).status, 400);
      assert.deepEqual(await ts.kc.clientPolicies.listProfiles({ realm: REALM }), { profiles: [] }, 'nothing kept');
    });

    test('roles: reading needs view-realm, writing manage-realm; another realm 403, an unknown one 404', async () => {
      const { kc: reader } = await serviceAccountAdmin(ts, REALM, 'cp-reader', ['view-realm']);
      assert.deepEqual(await reader.clientPolicies.listPolicies({ realm: REALM }), { policies: [] });
      assert.equal(await statusOf(reader.clientPolicies.updatePolicy({ realm: REALM, policies: [] })), 403);
      const { kc: users } = await serviceAccountAdmin(ts, REALM, 'cp-users', ['manage-users']);
      assert.equal(await statusOf(users.clientPolicies.listProfiles({ realm: REALM })), 403);
      assert.equal(await statusOf(reader.clientPolicies.listProfiles({ realm: 'master' })), 403);
      assert.equal(await statusOf(ts.kc.clientPolicies.listProfiles({ realm: 'no-such-realm' })), 404);
      const anonymous = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/client-policies/policies`);
      assert.equal(anonymous.status, 401);
    });
  });
}
