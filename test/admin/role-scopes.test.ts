import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, REALM } from '../helpers/server.js';
import { tokenRequest } from '../helpers/flow.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

type RoleRef = { id: string; name: string };

// Keycloak's role scope mappings of clients and client scopes (ScopeMappedResource,
// ScopeMappedClientResource) through @keycloak/keycloak-admin-client 26, unchanged, against a real
// server: the mappings, what is available and effective, fullScopeAllowed in the client representation,
// and what a limited client's real tokens carry.
for (const dialect of dialects()) {
  describe(`admin API: role scope mappings (${dialect})`, () => {
    let ts: AdminTestServer;
    const realm = REALM;
    const limited = 'limited-app';
    let secret: string;
    const roles: Record<string, RoleRef> = {};
    const names = (list: Array<{ name?: string }>): string[] => list.map((r) => r.name!).sort();

    before(async () => {
      // A cache window of an hour: each change must clear what tokens read (services.cache.clear()).
      ts = await startAdminServer({ dialect, config: { cacheTtlMs: 3_600_000 } });
      for (const name of ['viewer', 'editor']) {
        await ts.kc.roles.create({ realm, name });
        const r = (await ts.kc.roles.findOneByName({ realm, name }))!;
        roles[name] = { id: r.id!, name };
      }
      await ts.kc.clients.create({ realm, clientId: 'reports-api', standardFlowEnabled: false });
      for (const name of ['read', 'write']) {
        await ts.kc.clients.createRole({ realm, id: 'reports-api', name });
        const r = (await ts.kc.clients.findRole({ realm, id: 'reports-api', roleName: name }))!;
        roles[name] = { id: r.id!, name };
      }
      // A confidential client with the password grant and without full scope, created as Keycloak's tools create one.
      await ts.kc.clients.create({ realm, clientId: limited, standardFlowEnabled: false, directAccessGrantsEnabled: true, fullScopeAllowed: false });
      secret = (await ts.kc.clients.generateNewClientSecret({ realm, id: limited })).value!;
      await ts.kc.clientScopes.create({ realm, name: 'reporting' });
      const alice = (await ts.kc.users.find({ realm, username: 'alice', exact: true }))[0]!;
      await ts.kc.users.addRealmRoleMappings({ realm, id: alice.id!, roles: [roles.viewer!, roles.editor!] });
      await ts.kc.users.addClientRoleMappings({ realm, id: alice.id!, clientUniqueId: 'reports-api', roles: [roles.read!, roles.write!] });
    });
    after(() => ts.close());

    /** The roles of alice's access token from a password grant of the limited client, each list sorted. */
    async function tokenRoles(scope?: string): Promise<{ realm?: string[]; clients?: Record<string, string[]> }> {
      const res = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password, ...(scope ? { scope } : {}) }, { authorization: basic(limited, secret) });
      assert.equal(res.statusCode, 200, res.body);
      const c = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
      return {
        ...(c.realm_access ? { realm: [...c.realm_access.roles].sort() } : {}),
        ...(c.resource_access ? { clients: Object.fromEntries(Object.entries(c.resource_access).map(([k, v]) => [k, [...v.roles].sort()])) } : {}),
      };
    }

    test('fullScopeAllowed: true by default, read and changed in the client representation; anything but a boolean is a 400', async () => {
      assert.equal((await ts.kc.clients.findOne({ realm, id: 'web-app' }))!.fullScopeAllowed, true);
      assert.equal((await ts.kc.clients.findOne({ realm, id: limited }))!.fullScopeAllowed, false);
      await ts.kc.clients.update({ realm, id: 'reports-api' }, { fullScopeAllowed: false });
      assert.equal((await ts.kc.clients.findOne({ realm, id: 'reports-api' }))!.fullScopeAllowed, false);
      // A PUT without it keeps it.
      await ts.kc.clients.update({ realm, id: 'reports-api' }, { description: 'x' } as never);
      assert.equal((await ts.kc.clients.findOne({ realm, id: 'reports-api' }))!.fullScopeAllowed, false);
      await ts.kc.clients.update({ realm, id: 'reports-api' }, { fullScopeAllowed: true });
      assert.equal((await ts.kc.clients.findOne({ realm, id: 'reports-api' }))!.fullScopeAllowed, true);
      for (const bad of ['false', 0, 'no', {}]) {
        assert.equal(await statusOf(ts.kc.clients.update({ realm, id: 'reports-api' }, { fullScopeAllowed: bad } as never)), 400, JSON.stringify(bad));
        assert.equal(await statusOf(ts.kc.clients.create({ realm, clientId: 'bad-scope', fullScopeAllowed: bad } as never)), 400, JSON.stringify(bad));
      }
      assert.equal(await ts.kc.clients.findOne({ realm, id: 'bad-scope' }), null);
      assert.equal((await ts.kc.clients.findOne({ realm, id: 'reports-api' }))!.fullScopeAllowed, true);
    });

    test("a client's realm scope mappings: mapped, available, effective; a limited client's token carries only the mapped role, then none", async () => {
      assert.deepEqual(await ts.kc.clients.listScopeMappings({ realm, id: limited }), {});
      assert.deepEqual(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited }), []);
      assert.deepEqual(names(await ts.kc.clients.listAvailableRealmScopeMappings({ realm, id: limited })), ['editor', 'viewer']);
      assert.deepEqual(await ts.kc.clients.listCompositeRealmScopeMappings({ realm, id: limited }), []);
      // Full scope: every realm role is in the client's scope, though none is mapped.
      assert.deepEqual(names(await ts.kc.clients.listCompositeRealmScopeMappings({ realm, id: 'web-app' })), ['editor', 'viewer']);
      assert.deepEqual(await tokenRoles(), {});

      await ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.viewer!]);
      const mapped = await ts.kc.clients.listRealmScopeMappings({ realm, id: limited });
      assert.deepEqual(mapped, [{ id: roles.viewer!.id, name: 'viewer', description: '', composite: false, clientRole: false, containerId: realm }]);
      assert.deepEqual(names(await ts.kc.clients.listAvailableRealmScopeMappings({ realm, id: limited })), ['editor']);
      assert.deepEqual(names(await ts.kc.clients.listCompositeRealmScopeMappings({ realm, id: limited })), ['viewer']);
      const all = await ts.kc.clients.listScopeMappings({ realm, id: limited });
      assert.deepEqual(names(all.realmMappings!), ['viewer']);
      assert.equal(all.clientMappings, undefined);
      // Mapping it again changes nothing.
      await ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.viewer!]);
      assert.deepEqual(names(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited })), ['viewer']);

      assert.deepEqual(await tokenRoles(), { realm: ['viewer'] });
      await ts.kc.clients.delRealmScopeMappings({ realm, id: limited }, [roles.viewer!]);
      assert.deepEqual(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited }), []);
      assert.deepEqual(await tokenRoles(), {});

      const events = await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['REALM_SCOPE_MAPPING'], max: 10 } as never);
      assert.deepEqual(
        events.map((e) => [e.operationType, e.resourcePath]),
        [
          ['DELETE', `clients/${limited}/scope-mappings/realm`],
          ['CREATE', `clients/${limited}/scope-mappings/realm`],
          ['CREATE', `clients/${limited}/scope-mappings/realm`],
        ],
      );
    });

    test("a client's client scope mappings: another client's roles by name, its own roles always in its scope; a DELETE without a body removes them all", async () => {
      const q = { realm, id: limited, client: 'reports-api' };
      assert.deepEqual(names(await ts.kc.clients.listAvailableClientScopeMappings(q)), ['read', 'write']);
      assert.deepEqual(await ts.kc.clients.listCompositeClientScopeMappings(q), []);
      // Keycloak finds a client role by its name.
      await ts.kc.clients.addClientScopeMappings(q, [{ name: 'read' }]);
      assert.deepEqual(names(await ts.kc.clients.listClientScopeMappings(q)), ['read']);
      assert.deepEqual(names(await ts.kc.clients.listAvailableClientScopeMappings(q)), ['write']);
      assert.deepEqual(names(await ts.kc.clients.listCompositeClientScopeMappings(q)), ['read']);
      const all = await ts.kc.clients.listScopeMappings({ realm, id: limited });
      assert.equal(all.realmMappings, undefined);
      assert.deepEqual(Object.keys(all.clientMappings!), ['reports-api']);
      const m = all.clientMappings!['reports-api'] as { id: string; client: string; mappings: Array<{ name?: string; clientRole?: boolean; containerId?: string }> };
      assert.equal(m.id, 'reports-api');
      assert.equal(m.client, 'reports-api');
      assert.deepEqual(m.mappings.map((r) => [r.name, r.clientRole, r.containerId]), [['read', true, 'reports-api']]);
      assert.deepEqual(await tokenRoles(), { clients: { 'reports-api': ['read'] } });

      // The client's own roles: in its scope without a mapping, so never available to it.
      await ts.kc.clients.createRole({ realm, id: limited, name: 'own' });
      const self = { realm, id: limited, client: limited };
      assert.deepEqual(await ts.kc.clients.listAvailableClientScopeMappings(self), []);
      assert.deepEqual(names(await ts.kc.clients.listCompositeClientScopeMappings(self)), ['own']);
      assert.deepEqual(await ts.kc.clients.listClientScopeMappings(self), []);

      // A full-representation composite (briefRepresentation=false) has attributes.
      const full = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients/${limited}/scope-mappings/clients/reports-api/composite?briefRepresentation=false`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      assert.equal(full.status, 200);
      assert.deepEqual(((await full.json()) as Array<Record<string, unknown>>).map((r) => [r.name, r.attributes]), [['read', {}]]);

      await ts.kc.clients.addClientScopeMappings(q, [roles.write!]);
      assert.deepEqual(names(await ts.kc.clients.listClientScopeMappings(q)), ['read', 'write']);
      await ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.editor!]);
      // Keycloak's DELETE without a body: every role of that container, and only those.
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients/${limited}/scope-mappings/clients/reports-api`, { method: 'DELETE', headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      assert.equal(res.status, 204);
      assert.deepEqual(await ts.kc.clients.listClientScopeMappings(q), []);
      assert.deepEqual(names(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited })), ['editor']);
      const resRealm = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients/${limited}/scope-mappings/realm`, { method: 'DELETE', headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      assert.equal(resRealm.status, 204);
      assert.deepEqual(await ts.kc.clients.listScopeMappings({ realm, id: limited }), {});
      assert.deepEqual(await tokenRoles(), {});

      const events = await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['CLIENT_SCOPE_MAPPING'], max: 10 } as never);
      assert.deepEqual(events.map((e) => e.operationType), ['DELETE', 'CREATE', 'CREATE']);
      assert.equal(events[0]!.resourcePath, `clients/${limited}/scope-mappings/clients/reports-api`);
      assert.deepEqual(names(JSON.parse(events[0]!.representation!) as RoleRef[]), ['read', 'write']);
    });

    test("a client scope's scope mappings: the same calls; its mappings count for a client with that scope", async () => {
      const id = 'reporting';
      assert.deepEqual(await ts.kc.clientScopes.listScopeMappings({ realm, id }), {});
      assert.deepEqual(names(await ts.kc.clientScopes.listAvailableRealmScopeMappings({ realm, id })), ['editor', 'viewer']);
      await ts.kc.clientScopes.addRealmScopeMappings({ realm, id }, [roles.editor!]);
      assert.deepEqual(names(await ts.kc.clientScopes.listRealmScopeMappings({ realm, id })), ['editor']);
      assert.deepEqual(names(await ts.kc.clientScopes.listAvailableRealmScopeMappings({ realm, id })), ['viewer']);
      assert.deepEqual(names(await ts.kc.clientScopes.listCompositeRealmScopeMappings({ realm, id })), ['editor']);
      const q = { realm, id, client: 'reports-api' };
      await ts.kc.clientScopes.addClientScopeMappings(q, [roles.write!]);
      assert.deepEqual(names(await ts.kc.clientScopes.listClientScopeMappings(q)), ['write']);
      assert.deepEqual(names(await ts.kc.clientScopes.listAvailableClientScopeMappings(q)), ['read']);
      assert.deepEqual(names(await ts.kc.clientScopes.listCompositeClientScopeMappings(q)), ['write']);
      const all = await ts.kc.clientScopes.listScopeMappings({ realm, id });
      assert.deepEqual(names(all.realmMappings!), ['editor']);
      assert.deepEqual(names((all.clientMappings!['reports-api'] as { mappings: RoleRef[] }).mappings), ['write']);

      // Not a scope of the client: its mappings do not count. Asked for as an optional scope, they do.
      assert.deepEqual(await tokenRoles(), {});
      await ts.kc.clients.addOptionalClientScope({ realm, id: limited, clientScopeId: id });
      assert.deepEqual(await tokenRoles(), {});
      assert.deepEqual(await tokenRoles('reporting'), { realm: ['editor'], clients: { 'reports-api': ['write'] } });

      await ts.kc.clientScopes.delClientScopeMappings(q, [roles.write!]);
      await ts.kc.clientScopes.delRealmScopeMappings({ realm, id }, [roles.editor!]);
      assert.deepEqual(await ts.kc.clientScopes.listScopeMappings({ realm, id }), {});
      assert.deepEqual(await tokenRoles('reporting'), {});
      const events = await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['CLIENT_SCOPE_MAPPING', 'REALM_SCOPE_MAPPING'], max: 2 } as never);
      assert.deepEqual(events.map((e) => e.resourcePath), [`client-scopes/${id}/scope-mappings/realm`, `client-scopes/${id}/scope-mappings/clients/reports-api`]);
      await ts.kc.clients.delOptionalClientScope({ realm, id: limited, clientScopeId: id });
    });

    test('refusals: unknown client, client scope, role container and role 404; a body that is not a list of roles 400; nothing changes', async () => {
      const nf = async (p: Promise<unknown>, message: string): Promise<void> => {
        const e = await errorOf(p);
        assert.equal(e.status, 404);
        assert.equal(e.body.errorMessage, message);
      };
      await nf(ts.kc.clients.listRealmScopeMappings({ realm, id: 'no-such-client' }), 'Could not find client');
      await nf(ts.kc.clients.listScopeMappings({ realm, id: 'no-such-client' }), 'Could not find client');
      await nf(ts.kc.clients.addRealmScopeMappings({ realm, id: 'no-such-client' }, [roles.viewer!]), 'Could not find client');
      await nf(ts.kc.clients.listAvailableClientScopeMappings({ realm, id: limited, client: 'no-such-client' }), 'Could not find client');
      await nf(ts.kc.clientScopes.listRealmScopeMappings({ realm, id: 'no-such-scope' }), 'Could not find client scope');
      await nf(ts.kc.clientScopes.addClientScopeMappings({ realm, id: 'no-such-scope', client: 'reports-api' }, [roles.read!]), 'Could not find client scope');
      await nf(ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [{ id: 'no-such-role', name: 'no-such-role' }]), 'Role not found');
      await nf(ts.kc.clients.addClientScopeMappings({ realm, id: limited, client: 'reports-api' }, [{ name: 'no-such-role' }]), 'Role not found');
      // A role of another container is not found where it does not belong.
      await nf(ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.read!]), 'Role not found');
      await nf(ts.kc.clientScopes.addClientScopeMappings({ realm, id: 'reporting', client: 'reports-api' }, [roles.viewer!]), 'Role not found');
      // One unknown role among known ones: nothing is mapped.
      await nf(ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.viewer!, { id: 'no-such-role', name: 'x' }]), 'Role not found');
      assert.deepEqual(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited }), []);

      for (const body of [{}, 'viewer', 42, [null], ['viewer'], [{}], [{ id: 7 }]]) {
        const e = await errorOf(ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, body as never));
        assert.equal(e.status, 400, JSON.stringify(body));
        assert.equal(typeof e.body.errorMessage, 'string');
      }
      assert.equal(await statusOf(ts.kc.clientScopes.delClientScopeMappings({ realm, id: 'reporting', client: 'reports-api' }, { roles: [] } as never)), 400);
      const unparsable = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients/${limited}/scope-mappings/realm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' },
        body: '[{"id":',
      });
      assert.equal(unparsable.status, 400);
      assert.deepEqual(await ts.kc.clients.listScopeMappings({ realm, id: limited }), {});
    });

    test('permissions: view-clients reads, manage-clients changes; without them 403', async () => {
      const viewer = await serviceAccountAdmin(ts, realm, 'scope-viewer-bot', ['view-clients']);
      assert.deepEqual(await viewer.kc.clients.listRealmScopeMappings({ realm, id: limited }), []);
      assert.deepEqual(names(await viewer.kc.clientScopes.listAvailableRealmScopeMappings({ realm, id: 'reporting' })), ['editor', 'viewer']);
      for (const call of [
        () => viewer.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.viewer!]),
        () => viewer.kc.clients.delRealmScopeMappings({ realm, id: limited }, [roles.viewer!]),
        () => viewer.kc.clientScopes.addClientScopeMappings({ realm, id: 'reporting', client: 'reports-api' }, [roles.read!]),
      ]) {
        assert.equal((await errorOf(call())).status, 403);
      }
      const outsider = await serviceAccountAdmin(ts, realm, 'scope-outsider-bot', ['view-users']);
      assert.equal(await statusOf(outsider.kc.clients.listScopeMappings({ realm, id: limited })), 403);
      assert.equal(await statusOf(outsider.kc.clientScopes.listCompositeRealmScopeMappings({ realm, id: 'reporting' })), 403);

      await viewer.grant('manage-clients');
      await viewer.kc.clients.addRealmScopeMappings({ realm, id: limited }, [roles.viewer!]);
      assert.deepEqual(names(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited })), ['viewer']);
      assert.deepEqual(await tokenRoles(), { realm: ['viewer'] });
      await viewer.kc.clients.delRealmScopeMappings({ realm, id: limited }, [roles.viewer!]);
      assert.deepEqual(await tokenRoles(), {});
    });

    test('deleting a mapped role, or the client scope, removes its mappings', async () => {
      await ts.kc.roles.create({ realm, name: 'temporary' });
      const temp = (await ts.kc.roles.findOneByName({ realm, name: 'temporary' }))!;
      await ts.kc.clients.addRealmScopeMappings({ realm, id: limited }, [{ id: temp.id!, name: 'temporary' }]);
      await ts.kc.clientScopes.create({ realm, name: 'short-lived' });
      await ts.kc.clientScopes.addRealmScopeMappings({ realm, id: 'short-lived' }, [roles.viewer!]);
      await ts.kc.roles.delByName({ realm, name: 'temporary' });
      assert.deepEqual(await ts.kc.clients.listRealmScopeMappings({ realm, id: limited }), []);
      await ts.kc.clientScopes.del({ realm, id: 'short-lived' });
      await ts.kc.clientScopes.create({ realm, name: 'short-lived' });
      assert.deepEqual(await ts.kc.clientScopes.listScopeMappings({ realm, id: 'short-lived' }), {});
    });
  });
}
