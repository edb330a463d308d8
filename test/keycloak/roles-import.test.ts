import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { signIn, realmOf, expectLine } from './helpers.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { createClient, createUser, deleteUser } from '../../src/admin/operations.js';
import type { ImportReport, RealmReport } from '../../src/admin/keycloak/import-report.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };


type Claims = { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
const sorted = (v: string[] | undefined): string[] | undefined => (v ? [...v].sort() : v);

/**
 * A realm with composites (nested, a cycle, one containing itself, one containing realm-management
 * roles and roles that are not there), a role name the admin API refuses, a role listed twice, mappings
 * to roles that are not there, realm-management mappings and a service account's roles.
 */
function compositeRealm(): Record<string, unknown> {
  const user = (id: string, username: string, extra: Record<string, unknown>) => ({ id, username, enabled: true, credentials: [{ type: 'password', value: `${username} password 1` }], ...extra });
  return {
    realm: 'roles',
    enabled: true,
    organizationsEnabled: false,
    roles: {
      realm: [
        { name: 'reader', description: 'Reads', composite: false },
        { name: 'writer', composite: true, composites: { realm: ['reader'], client: { api: ['call'] } } },
        { name: 'super', composite: true, composites: { realm: ['writer', 'loop-a'] } },
        { name: 'loop-a', composite: true, composites: { realm: ['loop-b'] } },
        { name: 'loop-b', composite: true, composites: { realm: ['loop-a'] } },
        { name: 'a/b' },
        { name: 'reader', description: 'again' },
        { name: 'offline_access', description: '${role_offline-access}' },
        // Keycloak's flag is not what counts: composites are (RepresentationToModel.addComposites).
        { name: 'helpdesk', composite: false, composites: { realm: ['ghost'], client: { 'realm-management': ['view-users', 'custom-admin'], gone: ['x'] } } },
        { name: 'selfish', composite: true, composites: { realm: ['selfish', 'reader'] } },
      ],
      client: {
        api: [{ name: 'call' }, { name: 'admin-call', composite: true, composites: { client: { api: ['call'] } } }],
        'realm-management': [{ name: 'realm-admin', composite: true, composites: { client: { 'realm-management': ['view-users', 'manage-users'] } } }, { name: 'view-users' }, { name: 'custom-admin' }],
        gone: [{ name: 'x' }],
      },
    },
    clients: [
      { clientId: 'api', publicClient: true, redirectUris: [RP] },
      { clientId: 'ops', publicClient: true, directAccessGrantsEnabled: true, redirectUris: [RP] },
      { clientId: 'robot', publicClient: false, secret: 'robot-secret-0123456789', serviceAccountsEnabled: true, standardFlowEnabled: false },
    ],
    users: [
      user('r-1', 'sue', { realmRoles: ['super'] }),
      user('r-2', 'lou', { realmRoles: ['loop-b', 'a/b', 'nope'], clientRoles: { api: ['admin-call'], gone: ['x'] } }),
      user('r-3', 'ada', { clientRoles: { 'realm-management': ['view-users', 'custom-admin'] }, groups: ['/g'] }),
      user('r-4', 'bad', { realmRoles: 'super' }),
      user('r-6', 'hal', { realmRoles: ['helpdesk'] }),
      { id: 'r-5', username: 'service-account-robot', enabled: true, serviceAccountClientId: 'robot', realmRoles: ['reader'], clientRoles: { 'realm-management': ['view-clients'] } },
    ],
    groups: [{ name: 'g', path: '/g', realmRoles: ['reader'] }],
  };
}

for (const dialect of dialects()) {
  describe(`Keycloak import and export of roles (${dialect})`, () => {
    let ts: AdminTestServer;
    let fixtureReport: ImportReport;
    let rolesReport: RealmReport;
    before(async () => {
      ts = await startAdminServer({ dialect });
      fixtureReport = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      rolesReport = realmOf(await importKeycloakRealms(ts.store, [compositeRealm()], { ifExists: 'fail' }, actor), 'roles');
    });
    after(() => ts.close());

    /** Tokens of the password grant through the public client ops of realm roles. */
    async function passwordClaims(realm: string, clientId: string, username: string, password: string): Promise<Claims> {
      const res = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', client_id: clientId, username, password }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      return decodeJwt(body.access_token!) as Claims;
    }

    /** The roles a role contains directly, as client/name ('' for a realm role). */
    async function compositesOf(realm: string, client: string, name: string): Promise<string[]> {
      const role = await ts.store.roles.find(realm, client, name);
      assert.ok(role, `no role ${client}/${name}`);
      return (await ts.store.roles.composites(role.id)).map((r) => `${r.clientId}/${r.name}`);
    }

    /**
     * Every role of the realm with what it contains, and every user's (service accounts too) roles: those
     * mapped to the user (`mapped`), and those the user holds through them and groups (`holds`).
     */
    async function snapshot(realm: string): Promise<Record<string, unknown>> {
      const containers: Record<string, Array<[string, string | null, string[]]>> = {};
      const rolesOf = async (client: string): Promise<Array<[string, string | null, string[]]>> =>
        Promise.all((await ts.store.roles.list(realm, client)).map(async (r): Promise<[string, string | null, string[]]> => [r.name, r.description, (await ts.store.roles.composites(r.id)).map((c) => `${c.clientId}/${c.name}`)]));
      containers[''] = await rolesOf('');
      for (const c of await ts.store.clients.list(realm)) containers[c.clientId] = await rolesOf(c.clientId);
      const users: Record<string, unknown> = {};
      for (const u of await ts.store.users.list(realm)) users[u.username] = { mapped: (await ts.store.roles.mappedRoles(u.id)).map((r) => `${r.clientId}/${r.name}`), holds: await ts.store.roles.userRoles(u.id) };
      return { containers, users };
    }

    test("the fixture: its roles and the users' mappings; the token carries them as Keycloak's", async () => {
      const m = realmOf(fixtureReport, 'Migration');
      assert.equal(m.status, 'imported', m.reason);
      expectLine(m, 'realm role migration-test-realm-role', 'imported', /^$/);
      expectLine(m, 'client role migration-test-client-role of migration-test-client', 'imported', /^$/);
      expectLine(m, 'realm role offline_access', 'mapped', /^Keycloak's built-in role, kept as a plain role so that tokens carry it as Keycloak's do; Realmgate does not require it for the offline_access scope; granted to 3 user\(s\)$/);
      expectLine(m, 'realm role uma_authorization', 'mapped', /Realmgate has no UMA; granted to 3 user\(s\)$/);
      expectLine(m, 'realm role default-roles-migration', 'mapped', /^the realm's default role, a composite, kept with the users the file maps to it: every new user gets it, as in Keycloak; composite: contains realm role migration-test-realm-role, realm role offline_access, realm role uma_authorization$/);
      // What it contains of account's (a built-in client, not imported) is reported.
      expectLine(m, 'composites of realm role default-roles-migration', 'skipped', /^client role view-profile of account, client role manage-account of account: the client was not imported \(Keycloak's built-in client\)$/);
      assert.deepEqual(await compositesOf('Migration', '', 'default-roles-migration'), ['/migration-test-realm-role', '/offline_access', '/uma_authorization']);
      // Keycloak's own composites of realm-management are not kept: Realmgate's admin roles imply what its rules say.
      expectLine(m, 'roles of client realm-management', 'mapped', /^Realmgate's own admin roles \(19 in the file\): the file's mappings to them are granted; what they contain in the file is not kept: Realmgate's own rules say /);
      assert.deepEqual(await compositesOf('Migration', 'realm-management', 'realm-admin'), []);
      assert.deepEqual(await compositesOf('Migration', 'realm-management', 'view-users'), []);
      expectLine(m, 'roles of client account', 'skipped', /^the client was not imported \(Keycloak's built-in client\): delete-account, view-profile, /);
      expectLine(m, 'role mappings to client account', 'skipped', /^3 user\(s\), view-profile, manage-account: the client was not imported/);
      // Keycloak's empty group moves, with its id.
      expectLine(m, 'group /migration-test-group', 'imported', /^$/);
      assert.equal((await ts.store.groups.findChild('Migration', '', 'migration-test-group'))?.id, '69a9acb5-68eb-405c-9717-3d2fab0d6e6e');
      assert.deepEqual((await ts.store.roles.list('Migration', '')).map((r) => [r.name, r.description]), [
        ['default-roles-migration', 'Default roles'],
        ['migration-test-realm-role', null],
        ['offline_access', 'Offline access'],
        ['uma_authorization', 'Obtain permissions'],
      ]);
      assert.deepEqual((await ts.store.roles.list('Migration', 'migration-test-client')).map((r) => r.name), ['migration-test-client-role']);

      await createClient(ts.store, { realmId: 'Migration', clientId: 'rp', redirectUris: [RP], public: true });
      const r = await signIn(ts, { realm: 'Migration', clientId: 'rp', redirectUri: RP, username: 'offline-test-user', password: 'password2' });
      const claims = r.claims as Claims | undefined;
      assert.ok(claims, JSON.stringify(r));
      assert.deepEqual(sorted(claims.realm_access?.roles), ['offline_access', 'uma_authorization']);
      // account's roles stay behind with the account client (not imported).
      assert.equal(claims.resource_access, undefined);
    });

    test("the file's default role is the realm's: a user created after the import holds it; export writes it as Keycloak does", async () => {
      const role = await ts.store.roles.find('Migration', '', 'default-roles-migration');
      assert.ok(role);
      assert.equal((await ts.store.realms.get('Migration'))?.defaultRoleId, role.id);
      const { id } = await createUser(ts.store, { realmId: 'Migration', username: 'after-import', password: undefined });
      assert.deepEqual((await ts.store.roles.mappedRoles(id)).map((r) => r.name), ['default-roles-migration']);
      assert.deepEqual((await ts.store.roles.userRoles(id)).realm.sort(), ['default-roles-migration', 'migration-test-realm-role', 'offline_access', 'uma_authorization']);
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'Migration', { withSecrets: false }))) as Record<string, unknown>;
      assert.deepEqual(rep.defaultRole, { id: role.id, name: 'default-roles-migration', description: 'Default roles', composite: true, clientRole: false, containerId: 'Migration' });
      // A realm whose file has no default role has none, and its export writes none.
      assert.equal((await ts.store.realms.get('roles'))?.defaultRoleId, null);
      assert.equal((await exportRealm(ts.store, 'roles', { withSecrets: false })).defaultRole, undefined);
      await deleteUser(ts.store, { realmId: 'Migration', user: 'after-import' });
    });

    test("with Keycloak's built-in clients, the account roles move too, with their composites (manage-account contains manage-account-links)", async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite', includeBuiltinClients: true }, actor);
      const m = realmOf(report, 'Migration');
      assert.equal(m.status, 'overwritten', m.reason);
      expectLine(m, 'client role manage-account of account', 'imported', /^composite: contains client role manage-account-links of account; granted to 3 user\(s\)$/);
      expectLine(m, 'client role manage-account-links of account', 'imported', /^$/);
      assert.equal(m.lines.some((l) => l.element === 'role mappings to client account'), false);
      // The default role now contains account's roles too; nothing of it is left out.
      assert.deepEqual(await compositesOf('Migration', '', 'default-roles-migration'), ['/migration-test-realm-role', '/offline_access', '/uma_authorization', 'account/manage-account', 'account/view-profile']);
      assert.equal(m.lines.some((l) => l.element.startsWith('composites of')), false);
      await createClient(ts.store, { realmId: 'Migration', clientId: 'rp', redirectUris: [RP], public: true });
      const user = (await ts.store.users.findByUsername('Migration', 'offline-test-user'))!;
      const s = await signIn(ts, { realm: 'Migration', clientId: 'rp', redirectUri: RP, username: 'offline-test-user', password: 'password2' });
      const claims = s.claims as Claims | undefined;
      assert.ok(claims, JSON.stringify(s));
      assert.equal((s.claims as { sub: string }).sub, user.id);
      assert.deepEqual(sorted(claims.realm_access?.roles), ['offline_access', 'uma_authorization']);
      // manage-account-links through manage-account, as in Keycloak's token; the user is mapped to what the file maps.
      assert.deepEqual(sorted(claims.resource_access?.account?.roles), ['manage-account', 'manage-account-links', 'view-profile']);
      assert.deepEqual((await ts.store.roles.mappedRoles(user.id)).map((r) => `${r.clientId}/${r.name}`), ['/offline_access', '/uma_authorization', 'account/manage-account', 'account/view-profile']);
    });

    test('composites are kept (nested, a cycle, realm-management roles); mappings stay to the composite; bad names, duplicates and missing roles are reported, not errors', async () => {
      const r = rolesReport;
      assert.equal(r.status, 'imported', r.reason);
      expectLine(r, 'realm role super', 'imported', /^composite: contains realm role writer, realm role loop-a; granted to 1 user\(s\)$/);
      expectLine(r, 'realm role writer', 'imported', /^composite: contains realm role reader, client role call of api$/);
      // A cycle: kept as Keycloak keeps it; the import neither hangs nor fails.
      expectLine(r, 'realm role loop-a', 'imported', /^composite: contains realm role loop-b; in a cycle of composites with realm role loop-b: kept, as in Keycloak \(each holds the others\)$/);
      expectLine(r, 'realm role loop-b', 'imported', /^composite: contains realm role loop-a; in a cycle of composites with realm role loop-a: kept, as in Keycloak \(each holds the others\); granted to 1 user\(s\)$/);
      expectLine(r, 'realm role selfish', 'imported', /^composite: contains realm role reader$/);
      expectLine(r, 'composites of realm role selfish', 'skipped', /^realm role selfish: the role itself \(a role does not contain itself\)$/);
      // A role of the user's own containing realm-management roles: kept with Realmgate's admin roles of those names.
      expectLine(r, 'realm role helpdesk', 'imported', /^composite: contains client role view-users of realm-management; granted to 1 user\(s\)$/);
      expectLine(r, 'composites of realm role helpdesk', 'skipped', /^realm role ghost: the file does not define the role; client role custom-admin of realm-management: not one of Realmgate's admin roles \(realm-management holds only those\); client role x of gone: the file has no client gone$/);
      expectLine(r, 'admin roles of user hal', 'mapped', /^granted realm-management roles view-users through composite roles: administers this realm$/);
      expectLine(r, 'realm role a/b', 'skipped', /^the role name must not contain '\/'$/);
      assert.deepEqual(r.lines.filter((l) => l.element === 'realm role reader').map((l) => [l.outcome, l.reason]), [['imported', 'granted to 1 user(s) and 1 group(s)'], ['skipped', 'listed twice: the first entry was imported']]);
      expectLine(r, 'client role call of api', 'imported', /^$/);
      expectLine(r, 'client role admin-call of api', 'imported', /^composite: contains client role call of api; granted to 1 user\(s\)$/);
      expectLine(r, 'client role custom-admin of realm-management', 'skipped', /not one of Realmgate's admin roles/);
      expectLine(r, 'roles of client realm-management', 'mapped', /^Realmgate's own admin roles \(2 in the file\): the file's mappings to them are granted; what they contain in the file is not kept/);
      expectLine(r, 'roles of client gone', 'skipped', /^the file has no client gone: x$/);
      expectLine(r, 'role mappings to realm role a/b', 'skipped', /^1 user\(s\), a\/b: the role was skipped \(the role name must not contain '\/'\)$/);
      expectLine(r, 'role mappings to realm role nope', 'skipped', /^1 user\(s\), nope: the file does not define the role$/);
      expectLine(r, 'role mappings to client gone', 'skipped', /^1 user\(s\), x: the file has no client gone$/);
      expectLine(r, 'role mappings to client role custom-admin of realm-management', 'skipped', /not one of Realmgate's admin roles/);
      expectLine(r, 'user bad', 'skipped', /^realmRoles must be a list, not a string/);
      expectLine(r, 'group /g', 'imported', /^1 member\(s\)$/);
      expectLine(r, 'admin roles of user ada', 'mapped', /^granted realm-management roles view-users: administers this realm$/);
      expectLine(r, 'admin roles of the service account of robot', 'mapped', /^granted realm-management roles view-clients: administers this realm$/);
      assert.equal(r.lines.some((l) => /flatten/.test(l.reason ?? '')), false);
      assert.equal((await ts.store.roles.find('roles', '', 'reader'))?.description, 'Reads');

      assert.deepEqual(await compositesOf('roles', '', 'super'), ['/loop-a', '/writer']);
      assert.deepEqual(await compositesOf('roles', '', 'writer'), ['/reader', 'api/call']);
      assert.deepEqual(await compositesOf('roles', '', 'loop-a'), ['/loop-b']);
      assert.deepEqual(await compositesOf('roles', '', 'loop-b'), ['/loop-a']);
      assert.deepEqual(await compositesOf('roles', '', 'selfish'), ['/reader']);
      assert.deepEqual(await compositesOf('roles', '', 'helpdesk'), ['realm-management/view-users']);
      assert.deepEqual(await compositesOf('roles', 'api', 'admin-call'), ['api/call']);
      // Realmgate's own view-users contains nothing, whatever the file's realm-admin says.
      assert.deepEqual(await compositesOf('roles', 'realm-management', 'realm-admin'), []);

      const snap = await snapshot('roles');
      assert.deepEqual(snap.users, {
        // Mapped to the composite only; holding what it contains, recursively.
        sue: { mapped: ['/super'], holds: { realm: ['loop-a', 'loop-b', 'reader', 'super', 'writer'], clients: { api: ['call'] } } },
        lou: { mapped: ['/loop-b', 'api/admin-call'], holds: { realm: ['loop-a', 'loop-b'], clients: { api: ['admin-call', 'call'] } } },
        // reader through the group /g.
        ada: { mapped: ['realm-management/view-users'], holds: { realm: ['reader'], clients: { 'realm-management': ['view-users'] } } },
        hal: { mapped: ['/helpdesk'], holds: { realm: ['helpdesk'], clients: { 'realm-management': ['view-users'] } } },
        'service-account-robot': { mapped: ['/reader', 'realm-management/view-clients'], holds: { realm: ['reader'], clients: { 'realm-management': ['view-clients'] } } },
      });
      // The tokens carry what Keycloak's would: the composite and everything it contains.
      const sue = await passwordClaims('roles', 'ops', 'sue', 'sue password 1');
      assert.deepEqual(sorted(sue.realm_access?.roles), ['loop-a', 'loop-b', 'reader', 'super', 'writer']);
      assert.deepEqual(sue.resource_access?.api?.roles, ['call']);
      const lou = await passwordClaims('roles', 'ops', 'lou', 'lou password 1');
      assert.deepEqual(sorted(lou.realm_access?.roles), ['loop-a', 'loop-b']);
      assert.deepEqual(sorted(lou.resource_access?.api?.roles), ['admin-call', 'call']);
    });

    test('a change to a composite after the import reaches the users mapped to it (not flattened)', async () => {
      const writer = (await ts.store.roles.find('roles', '', 'writer'))!;
      const reader = (await ts.store.roles.find('roles', '', 'reader'))!;
      const auditor = { id: 'auditor-role-id', realmId: 'roles', clientId: '', name: 'auditor', description: null };
      await ts.store.roles.create(auditor, Math.floor(Date.now() / 1000));
      await ts.store.roles.addComposites('roles', writer.id, [auditor.id]);
      await ts.store.roles.removeComposites(writer.id, [reader.id]);
      try {
        // sue is mapped to super, which contains writer: she now holds auditor, and no longer reader.
        const sue = await passwordClaims('roles', 'ops', 'sue', 'sue password 1');
        assert.deepEqual(sorted(sue.realm_access?.roles), ['auditor', 'loop-a', 'loop-b', 'super', 'writer']);
      } finally {
        await ts.store.roles.addComposites('roles', writer.id, [reader.id]);
        await ts.store.roles.delete(auditor.id);
      }
      const sue = await passwordClaims('roles', 'ops', 'sue', 'sue password 1');
      assert.deepEqual(sorted(sue.realm_access?.roles), ['loop-a', 'loop-b', 'reader', 'super', 'writer']);
    });

    test("a realm-management mapping makes the user an administrator of that realm, and of no other", async () => {
      const ada = ts.newClient('roles');
      await ada.auth({ username: 'ada', password: 'ada password 1', grantType: 'password', clientId: 'ops' });
      assert.deepEqual((await ada.users.find({ realm: 'roles', username: 'sue', exact: true })).map((u) => u.username), ['sue']);
      assert.equal(await statusOf(ada.users.find({ realm: 'test' })), 403);
      // view-users reads, and does not change.
      assert.equal(await statusOf(ada.users.create({ realm: 'roles', username: 'eve', enabled: true })), 403);
      const sue = ts.newClient('roles');
      await sue.auth({ username: 'sue', password: 'sue password 1', grantType: 'password', clientId: 'ops' });
      assert.equal(await statusOf(sue.users.find({ realm: 'roles' })), 403);
      // hal's own role helpdesk contains realm-management's view-users: hal administers as a Keycloak admin would expect.
      const hal = ts.newClient('roles');
      await hal.auth({ username: 'hal', password: 'hal password 1', grantType: 'password', clientId: 'ops' });
      assert.deepEqual((await hal.users.find({ realm: 'roles', username: 'sue', exact: true })).map((u) => u.username), ['sue']);
      assert.equal(await statusOf(hal.users.create({ realm: 'roles', username: 'eve', enabled: true })), 403);
      assert.equal(await statusOf(hal.users.find({ realm: 'test' })), 403);
    });

    test('export writes the roles with their composites, and the mappings; it imports back into the same roles, composites and mappings', async () => {
      const before = await snapshot('roles');
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'roles', { withSecrets: true }))) as Record<string, unknown>;
      const roles = rep.roles as { realm: Array<Record<string, unknown>>; client: Record<string, Array<Record<string, unknown>>> };
      assert.deepEqual(roles.realm.map((r) => r.name).sort(), ['helpdesk', 'loop-a', 'loop-b', 'offline_access', 'reader', 'selfish', 'super', 'writer']);
      const reader = roles.realm.find((r) => r.name === 'reader')!;
      assert.deepEqual({ ...reader, id: undefined }, { id: undefined, name: 'reader', description: 'Reads', composite: false, clientRole: false, containerId: 'roles' });
      assert.equal(typeof reader.id, 'string');
      // Keycloak's shape (ExportUtils): composite true and composites, realm roles by name, client roles by clientId.
      const byName = (name: string): Record<string, unknown> => ({ ...roles.realm.find((r) => r.name === name)!, id: undefined });
      assert.deepEqual(byName('writer'), { id: undefined, name: 'writer', composite: true, composites: { realm: ['reader'], client: { api: ['call'] } }, clientRole: false, containerId: 'roles' });
      assert.deepEqual(byName('super').composites, { realm: ['loop-a', 'writer'] });
      assert.deepEqual(byName('loop-b').composites, { realm: ['loop-a'] });
      assert.deepEqual(byName('helpdesk').composites, { client: { 'realm-management': ['view-users'] } });
      // Realmgate's admin roles are Keycloak's too: made by both in every realm, not exported.
      assert.deepEqual(Object.keys(roles.client), ['api']);
      assert.deepEqual(roles.client.api!.map((r) => [r.name, r.clientRole, r.containerId, r.composite, r.composites]), [
        ['admin-call', true, 'api', true, { client: { api: ['call'] } }],
        ['call', true, 'api', false, undefined],
      ]);
      const users = rep.users as Array<Record<string, unknown>>;
      const sue = users.find((u) => u.username === 'sue')!;
      // The mapping as stored: to the composite.
      assert.deepEqual(sue.realmRoles, ['super']);
      assert.equal(sue.clientRoles, undefined);
      assert.deepEqual(users.find((u) => u.username === 'ada')!.clientRoles, { 'realm-management': ['view-users'] });
      assert.equal(users.find((u) => u.username === 'ada')!.realmRoles, undefined);
      const sa = users.find((u) => u.serviceAccountClientId === 'robot')!;
      assert.deepEqual([sa.username, sa.realmRoles, sa.clientRoles], ['service-account-robot', ['reader'], { 'realm-management': ['view-clients'] }]);

      const back = realmOf(await importKeycloakRealms(ts.store, [rep], { ifExists: 'overwrite' }, actor), 'roles');
      assert.equal(back.status, 'overwritten', back.reason);
      assert.equal(back.lines.some((l) => l.outcome === 'skipped' && /role|composite/.test(l.element)), false, JSON.stringify(back.lines.filter((l) => l.outcome === 'skipped')));
      expectLine(back, 'realm role super', 'imported', /^composite: contains realm role loop-a, realm role writer; granted to 1 user\(s\)$/);
      expectLine(back, 'admin roles of user ada', 'mapped', /^granted realm-management roles view-users: administers this realm$/);
      expectLine(back, 'admin roles of user hal', 'mapped', /^granted realm-management roles view-users through composite roles: administers this realm$/);
      assert.deepEqual(await snapshot('roles'), before);
      const claims = await passwordClaims('roles', 'ops', 'sue', 'sue password 1');
      assert.deepEqual(sorted(claims.realm_access?.roles), ['loop-a', 'loop-b', 'reader', 'super', 'writer']);
    });

    test('--if-exists skip changes no role; a failed overwrite leaves roles and mappings as they were; a roles list of the wrong type fails the realm', async () => {
      const before = await snapshot('roles');
      const skip = realmOf(await importKeycloakRealms(ts.store, [{ ...compositeRealm(), roles: { realm: [{ name: 'other' }] }, users: [] }], { ifExists: 'skip' }, actor), 'roles');
      assert.equal(skip.status, 'unchanged');
      assert.deepEqual(await snapshot('roles'), before);
      const bad = realmOf(await importKeycloakRealms(ts.store, [{ ...compositeRealm(), accessTokenLifespan: 'soon' }], { ifExists: 'overwrite' }, actor), 'roles');
      assert.equal(bad.status, 'failed');
      assert.deepEqual(await snapshot('roles'), before);
      const wrong = realmOf(await importKeycloakRealms(ts.store, [{ realm: 'roles-typed', enabled: true, roles: { realm: 'reader' } }], { ifExists: 'fail' }, actor), 'roles-typed');
      assert.equal(wrong.status, 'failed');
      assert.match(wrong.reason!, /^nothing of this realm was stored: roles\.realm must be a list, not a string/);
      assert.equal(await ts.store.realms.get('roles-typed'), undefined);
      const malformed = [
        { name: 'c', composites: { realm: 'ok' } },
        { name: 'd', composites: 'ok' },
        { name: 'e', composites: { client: ['ok'] } },
        { name: 'f', composites: { client: { api: 'ok' } } },
        { name: 'g', composites: { client: { '': ['ok'] } } },
        { name: 'h', composites: { realm: ['ok', 7] } },
      ];
      const entry = realmOf(await importKeycloakRealms(ts.store, [{ realm: 'roles-entry', enabled: true, roles: { realm: [{ name: 'ok' }, { name: 5 }, ...malformed] } }], { ifExists: 'fail' }, actor), 'roles-entry');
      assert.equal(entry.status, 'imported', entry.reason);
      expectLine(entry, 'realm role #2 of roles.realm', 'skipped', /^name must be a string, not a number \(5\)$/);
      expectLine(entry, 'realm role c', 'skipped', /^composites\.realm must be a list, not a string/);
      expectLine(entry, 'realm role d', 'skipped', /^composites must be an object, not a string/);
      expectLine(entry, 'realm role e', 'skipped', /^composites\.client must be an object, not a list/);
      expectLine(entry, 'realm role f', 'skipped', /^composites\.client\.api must be a list, not a string/);
      expectLine(entry, 'realm role g', 'skipped', /^composites\.client has a key naming no client \(""\)$/);
      expectLine(entry, 'realm role h', 'skipped', /^composites\.realm\[1\] must be a string, not a number/);
      assert.deepEqual((await ts.store.roles.list('roles-entry', '')).map((r) => r.name), ['ok']);
    });

    // Last: it replaces this server's master realm.
    test("master (--include-master): the holders of Keycloak's admin role administer every realm", async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite', includeMaster: true, includeBuiltinClients: true }, actor);
      const m = realmOf(report, 'master');
      assert.equal(m.status, 'overwritten', m.reason);
      expectLine(m, 'group /master-test-group', 'imported', /^$/);
      expectLine(m, 'realm master', 'mapped', /^replaced whole: Realmgate's administrators and admin-cli are gone; the file's holders of master's admin role administer now: admin$/);
      expectLine(m, 'admin roles of user admin', 'mapped', /^granted master roles admin: administers every realm$/);
      // Realmgate's admin is its own: what Keycloak's contains (create-realm, the <realm>-realm roles) is not kept.
      expectLine(m, 'realm role admin', 'mapped', /^one of Realmgate's own admin roles: the file's mappings to it are granted; what it contains in the file is not kept \(Realmgate's admin administers every realm and creates realms\); granted to 1 user\(s\)$/);
      assert.deepEqual(await compositesOf('master', '', 'admin'), []);
      expectLine(m, 'realm role default-roles-master', 'mapped', /^the realm's default role, a composite, kept with the users the file maps to it: every new user gets it, as in Keycloak; composite: contains realm role offline_access, realm role uma_authorization, client role manage-account of account, client role view-profile of account; granted to 1 user\(s\)$/);
      const admin = (await ts.store.users.findByUsername('master', 'admin'))!;
      assert.deepEqual((await ts.store.roles.mappedRoles(admin.id)).map((r) => `${r.clientId}/${r.name}`), ['/admin', '/default-roles-master']);
      assert.deepEqual(await ts.store.roles.userRoles(admin.id), { realm: ['admin', 'default-roles-master', 'offline_access', 'uma_authorization'], clients: { account: ['manage-account', 'manage-account-links', 'view-profile'] } });
      // Keycloak's administrator, with Keycloak's password, through Keycloak's admin-cli, administers another realm.
      const kc = ts.newClient('master');
      await kc.auth({ username: 'admin', password: 'admin', grantType: 'password', clientId: 'admin-cli' });
      assert.deepEqual((await kc.users.find({ realm: 'roles', username: 'sue', exact: true })).map((u) => u.username), ['sue']);
      // Not imported with master: a realm-management mapping of another realm's file grants nothing here.
      const other = realmOf(report, 'Migration');
      assert.equal(other.lines.some((l) => l.element.startsWith('admin roles of')), false);
    });
  });
}
