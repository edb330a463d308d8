import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { signIn } from './helpers.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { createClient } from '../../src/admin/operations.js';
import type { ImportReport, RealmReport } from '../../src/admin/keycloak/import-report.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };

const realmOf = (rep: ImportReport, name: string): RealmReport => {
  const r = rep.realms.find((x) => x.realm === name);
  assert.ok(r, `no report for ${name}`);
  return r;
};
/** The one line of the report for an element, with its outcome and a reason matching the pattern. */
function expectLine(r: RealmReport, element: string, outcome: string, pattern: RegExp): void {
  const lines = r.lines.filter((l) => l.element === element);
  assert.equal(lines.length, 1, `${element}: ${JSON.stringify(lines.length > 0 ? lines : r.lines.map((l) => l.element))}`);
  assert.equal(lines[0]!.outcome, outcome, `${element}: ${lines[0]!.reason}`);
  assert.match(lines[0]!.reason ?? '', pattern, element);
}

type Claims = { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
const sorted = (v: string[] | undefined): string[] | undefined => (v ? [...v].sort() : v);

/**
 * A realm with composites (nested, a cycle), a role name the admin API refuses, a role listed twice,
 * mappings to roles that are not there, realm-management mappings and a service account's roles.
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

    /** Every role of the realm and every user's (service accounts too) roles, by name. */
    async function snapshot(realm: string): Promise<Record<string, unknown>> {
      const containers: Record<string, Array<[string, string | null]>> = { '': (await ts.store.roles.list(realm, '')).map((r) => [r.name, r.description]) };
      for (const c of await ts.store.clients.list(realm)) containers[c.clientId] = (await ts.store.roles.list(realm, c.clientId)).map((r) => [r.name, r.description]);
      const users: Record<string, unknown> = {};
      for (const u of await ts.store.users.list(realm)) users[u.username] = await ts.store.roles.userRoles(u.id);
      return { containers, users };
    }

    test("the fixture: its roles and the users' mappings; the token carries them as Keycloak's", async () => {
      const m = realmOf(fixtureReport, 'Migration');
      assert.equal(m.status, 'imported', m.reason);
      expectLine(m, 'realm role migration-test-realm-role', 'imported', /^$/);
      expectLine(m, 'client role migration-test-client-role of migration-test-client', 'imported', /^$/);
      expectLine(m, 'realm role offline_access', 'mapped', /^Keycloak's built-in role, kept as a plain role so that tokens carry it as Keycloak's do; Realmgate does not require it for the offline_access scope; granted to 3 user\(s\)$/);
      expectLine(m, 'realm role uma_authorization', 'mapped', /Realmgate has no UMA; granted to 3 user\(s\)$/);
      expectLine(m, 'realm role default-roles-migration', 'mapped', /^Keycloak's default role, .*Realmgate gives new users no role; flattened: its members granted directly to its 0 user\(s\); later changes to one do not reach the other$/);
      expectLine(m, 'roles of client realm-management', 'mapped', /^Realmgate's own admin roles \(19 in the file\): the file's mappings to them are granted$/);
      expectLine(m, 'roles of client account', 'skipped', /^the client was not imported \(Keycloak's built-in client\): delete-account, view-profile, /);
      expectLine(m, 'role mappings to client account', 'skipped', /^3 user\(s\), view-profile, manage-account, manage-account-links: the client was not imported/);
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

    test("with Keycloak's built-in clients, the account roles move too, composites flattened (manage-account brings manage-account-links)", async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite', includeBuiltinClients: true }, actor);
      const m = realmOf(report, 'Migration');
      assert.equal(m.status, 'overwritten', m.reason);
      expectLine(m, 'client role manage-account of account', 'mapped', /^flattened: its members granted directly to its 3 user\(s\); later changes to one do not reach the other$/);
      expectLine(m, 'client role manage-account-links of account', 'imported', /^granted to 3 user\(s\)$/);
      assert.equal(m.lines.some((l) => l.element === 'role mappings to client account'), false);
      await createClient(ts.store, { realmId: 'Migration', clientId: 'rp', redirectUris: [RP], public: true });
      const user = (await ts.store.users.findByUsername('Migration', 'offline-test-user'))!;
      const s = await signIn(ts, { realm: 'Migration', clientId: 'rp', redirectUri: RP, username: 'offline-test-user', password: 'password2' });
      const claims = s.claims as Claims | undefined;
      assert.ok(claims, JSON.stringify(s));
      assert.equal((s.claims as { sub: string }).sub, user.id);
      assert.deepEqual(sorted(claims.realm_access?.roles), ['offline_access', 'uma_authorization']);
      assert.deepEqual(sorted(claims.resource_access?.account?.roles), ['manage-account', 'manage-account-links', 'view-profile']);
    });

    test('composites are flattened (nested, cycles); bad names, duplicates and missing roles are reported, not errors', async () => {
      const r = rolesReport;
      assert.equal(r.status, 'imported', r.reason);
      expectLine(r, 'realm role super', 'mapped', /^flattened: its members granted directly to its 1 user\(s\); later changes to one do not reach the other$/);
      expectLine(r, 'realm role writer', 'mapped', /its 1 user\(s\)/);
      expectLine(r, 'realm role loop-a', 'mapped', /its 2 user\(s\)/);
      expectLine(r, 'realm role a/b', 'skipped', /^the role name must not contain '\/'$/);
      assert.deepEqual(r.lines.filter((l) => l.element === 'realm role reader').map((l) => [l.outcome, l.reason]), [['imported', 'granted to 2 user(s) and 1 group(s)'], ['skipped', 'listed twice: the first entry was imported']]);
      expectLine(r, 'client role call of api', 'imported', /^granted to 2 user\(s\)$/);
      expectLine(r, 'client role custom-admin of realm-management', 'skipped', /not one of Realmgate's admin roles/);
      expectLine(r, 'roles of client gone', 'skipped', /^the file has no client gone: x$/);
      expectLine(r, 'role mappings to realm role a/b', 'skipped', /^1 user\(s\), a\/b: the role was skipped \(the role name must not contain '\/'\)$/);
      expectLine(r, 'role mappings to realm role nope', 'skipped', /^1 user\(s\), nope: the file does not define the role$/);
      expectLine(r, 'role mappings to client gone', 'skipped', /^1 user\(s\), x: the file has no client gone$/);
      expectLine(r, 'role mappings to client role custom-admin of realm-management', 'skipped', /not one of Realmgate's admin roles/);
      expectLine(r, 'user bad', 'skipped', /^realmRoles must be a list, not a string/);
      expectLine(r, 'group /g', 'imported', /^1 member\(s\)$/);
      expectLine(r, 'admin roles of user ada', 'mapped', /^granted realm-management roles view-users: administers this realm$/);
      expectLine(r, 'admin roles of the service account of robot', 'mapped', /^granted realm-management roles view-clients: administers this realm$/);
      assert.equal((await ts.store.roles.find('roles', '', 'reader'))?.description, 'Reads');

      const snap = await snapshot('roles');
      assert.deepEqual(snap.users, {
        sue: { realm: ['loop-a', 'loop-b', 'reader', 'super', 'writer'], clients: { api: ['call'] } },
        lou: { realm: ['loop-a', 'loop-b'], clients: { api: ['admin-call', 'call'] } },
        // reader through the group /g.
        ada: { realm: ['reader'], clients: { 'realm-management': ['view-users'] } },
        'service-account-robot': { realm: ['reader'], clients: { 'realm-management': ['view-clients'] } },
      });
      // The tokens carry what Keycloak's would: the composite and everything it contains.
      const sue = await passwordClaims('roles', 'ops', 'sue', 'sue password 1');
      assert.deepEqual(sorted(sue.realm_access?.roles), ['loop-a', 'loop-b', 'reader', 'super', 'writer']);
      assert.deepEqual(sue.resource_access?.api?.roles, ['call']);
      const lou = await passwordClaims('roles', 'ops', 'lou', 'lou password 1');
      assert.deepEqual(sorted(lou.realm_access?.roles), ['loop-a', 'loop-b']);
      assert.deepEqual(sorted(lou.resource_access?.api?.roles), ['admin-call', 'call']);
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
    });

    test('export writes the roles and mappings; it imports back into the same roles and mappings', async () => {
      const before = await snapshot('roles');
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'roles', { withSecrets: true }))) as Record<string, unknown>;
      const roles = rep.roles as { realm: Array<Record<string, unknown>>; client: Record<string, Array<Record<string, unknown>>> };
      assert.deepEqual(roles.realm.map((r) => r.name).sort(), ['loop-a', 'loop-b', 'offline_access', 'reader', 'super', 'writer']);
      const reader = roles.realm.find((r) => r.name === 'reader')!;
      assert.deepEqual({ ...reader, id: undefined }, { id: undefined, name: 'reader', description: 'Reads', composite: false, clientRole: false, containerId: 'roles' });
      assert.equal(typeof reader.id, 'string');
      // Realmgate's admin roles are Keycloak's too: made by both in every realm, not exported.
      assert.deepEqual(Object.keys(roles.client), ['api']);
      assert.deepEqual(roles.client.api!.map((r) => [r.name, r.clientRole, r.containerId, r.composite]), [
        ['admin-call', true, 'api', false],
        ['call', true, 'api', false],
      ]);
      const users = rep.users as Array<Record<string, unknown>>;
      const sue = users.find((u) => u.username === 'sue')!;
      assert.deepEqual(sue.realmRoles, ['loop-a', 'loop-b', 'reader', 'super', 'writer']);
      assert.deepEqual(sue.clientRoles, { api: ['call'] });
      assert.deepEqual(users.find((u) => u.username === 'ada')!.clientRoles, { 'realm-management': ['view-users'] });
      assert.equal(users.find((u) => u.username === 'ada')!.realmRoles, undefined);
      const sa = users.find((u) => u.serviceAccountClientId === 'robot')!;
      assert.deepEqual([sa.username, sa.realmRoles, sa.clientRoles], ['service-account-robot', ['reader'], { 'realm-management': ['view-clients'] }]);

      const back = realmOf(await importKeycloakRealms(ts.store, [rep], { ifExists: 'overwrite' }, actor), 'roles');
      assert.equal(back.status, 'overwritten', back.reason);
      assert.equal(back.lines.some((l) => /flattened/.test(l.reason ?? '')), false);
      assert.equal(back.lines.some((l) => l.outcome === 'skipped' && /role/.test(l.element)), false, JSON.stringify(back.lines.filter((l) => l.outcome === 'skipped')));
      expectLine(back, 'admin roles of user ada', 'mapped', /^granted realm-management roles view-users: administers this realm$/);
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
      const entry = realmOf(await importKeycloakRealms(ts.store, [{ realm: 'roles-entry', enabled: true, roles: { realm: [{ name: 'ok' }, { name: 5 }, { name: 'c', composites: { realm: 'ok' } }] } }], { ifExists: 'fail' }, actor), 'roles-entry');
      assert.equal(entry.status, 'imported', entry.reason);
      expectLine(entry, 'realm role #2 of roles.realm', 'skipped', /^name must be a string, not a number \(5\)$/);
      expectLine(entry, 'realm role c', 'skipped', /^composites\.realm must be a list, not a string/);
      assert.deepEqual((await ts.store.roles.list('roles-entry', '')).map((r) => r.name), ['ok']);
    });

    // Last: it replaces this server's master realm.
    test("master (--include-master): the holders of Keycloak's admin role administer every realm", async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite', includeMaster: true, includeBuiltinClients: true }, actor);
      const m = realmOf(report, 'master');
      assert.equal(m.status, 'overwritten', m.reason);
      expectLine(m, 'group /master-test-group', 'imported', /^$/);
      expectLine(m, 'realm master', 'mapped', /^replaced whole: Realmgate's administrators and admin-cli are gone; the file's holders of master's admin role administer now: admin$/);
      expectLine(m, 'admin roles of user admin', 'mapped', /granted realm-management roles .*: administers this realm; granted master roles admin and the 1 they contain: administers every realm$/);
      expectLine(m, 'realm role admin', 'mapped', /^one of Realmgate's own admin roles: the file's mappings to it are granted; flattened: its members granted directly to its 1 user\(s\)/);
      const admin = (await ts.store.users.findByUsername('master', 'admin'))!;
      assert.deepEqual((await ts.store.roles.userRoles(admin.id)).realm, ['admin', 'create-realm', 'default-roles-master', 'offline_access', 'uma_authorization']);
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
