import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { basic } from '../helpers/server.js';
import { signIn } from './helpers.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { pathsOf } from '../../src/admin/operations/groups.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const RP = 'https://rp.example.com/callback';
const ROBOT_SECRET = 'robot-secret-0123456789';
const actor = { ...cliActor(), via: 'import' as const };
const id = (n: number): string => `6f1c0000-0000-4000-8000-${String(n).padStart(12, '0')}`;

type Json = Record<string, unknown>;
type Claims = { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
const sorted = (v: string[] | undefined): string[] | undefined => (v ? [...v].sort() : v);

function linesOf(r: RealmReport, element: string): Array<[string, string]> {
  return r.lines.filter((l) => l.element === element).map((l) => [l.outcome, l.reason ?? '']);
}
/** The one line of the report for an element, with its outcome and a reason matching the pattern. */
function expectLine(r: RealmReport, element: string, outcome: string, pattern: RegExp): void {
  const lines = linesOf(r, element);
  assert.equal(lines.length, 1, `${element}: ${JSON.stringify(lines.length > 0 ? lines : r.lines.map((l) => l.element))}`);
  assert.equal(lines[0]![0], outcome, `${element}: ${lines[0]![1]}`);
  assert.match(lines[0]![1], pattern, element);
}

/** d1 > d2 > ... > dN: a chain of groups N deep. */
function chain(n: number): Json {
  let g: Json = { name: `d${n}` };
  for (let i = n - 1; i >= 1; i--) g = { name: `d${i}`, subGroups: [g] };
  return g;
}
const chainPath = (n: number): string => Array.from({ length: n }, (_, i) => `/d${i + 1}`).join('');

/**
 * Three levels of groups with attributes, realm and client roles on the top one, a composite role on the
 * middle one, a group granting realm-management's manage-users; bad names, a sibling listed twice, an
 * entry of the wrong type, a chain deeper than Realmgate keeps; members by path, some of no group.
 */
function groupedRealm(realm = 'grouped'): Json {
  const user = (uid: string, username: string, extra: Json) => ({ id: uid, username, enabled: true, credentials: [{ type: 'password', value: `${username} password 1` }], ...extra });
  return {
    realm,
    enabled: true,
    organizationsEnabled: false,
    // Keycloak's default groups: every user created from then on joins them.
    defaultGroups: ['/company', 'nowhere'],
    roles: {
      realm: [{ name: 'staff' }, { name: 'viewer' }, { name: 'editor', composite: true, composites: { realm: ['viewer'], client: { api: ['read'] } } }],
      client: { api: [{ name: 'read' }, { name: 'write' }] },
    },
    clients: [
      { clientId: 'api', publicClient: true, redirectUris: [RP] },
      { clientId: 'ops', publicClient: true, directAccessGrantsEnabled: true, redirectUris: [RP] },
      { clientId: 'robot', publicClient: false, secret: ROBOT_SECRET, serviceAccountsEnabled: true, standardFlowEnabled: false },
    ],
    groups: [
      {
        id: id(1),
        name: 'company',
        path: '/company',
        description: 'Everyone who works here',
        attributes: { site: ['paris', 'lyon'], level: '1' },
        realmRoles: ['staff'],
        clientRoles: { api: ['read'] },
        subGroups: [
          {
            id: id(2),
            name: 'engineering',
            path: '/company/engineering',
            attributes: {},
            realmRoles: ['editor'],
            subGroups: [
              { id: id(3), name: 'backend', path: '/company/engineering/backend', attributes: { lang: ['ts', 'sql'] }, clientRoles: { api: ['write'] }, subGroups: [] },
              { id: id(4), name: 'front/end', path: '/company/engineering/front~/end', subGroups: [{ name: 'web' }] },
            ],
          },
          { name: ' padded ' },
          { name: 'misc', subGroups: 'none' },
        ],
      },
      { id: 'x'.repeat(40), name: 'admins', path: '/admins', clientRoles: { 'realm-management': ['manage-users'] } },
      { id: id(1), name: 'auditors', realmRoles: ['nope'], attributes: { note: [5] } },
      { name: 'company', description: 'listed twice' },
      { name: 5 },
      chain(33),
    ],
    users: [
      user(id(101), 'alice', { groups: ['/company/engineering/backend'] }),
      user(id(102), 'bob', { groups: ['/admins', '/company/engineering/front~/end/web', '/nowhere'] }),
      user(id(103), 'carol', {}),
      user(id(104), 'dave', { groups: [chainPath(32), chainPath(33), 'auditors'] }),
      { id: id(105), username: 'service-account-robot', enabled: true, serviceAccountClientId: 'robot', groups: ['/company'] },
    ],
  };
}

for (const dialect of dialects()) {
  describe(`Keycloak import and export of groups (${dialect})`, () => {
    let ts: AdminTestServer;
    let report: RealmReport;
    before(async () => {
      ts = await startAdminServer({ dialect });
      const r = await importKeycloakRealms(ts.store, [groupedRealm()], { ifExists: 'fail' }, actor);
      report = r.realms[0]!;
    });
    after(() => ts.close());

    /** Every group of a realm by path: id, description, attributes, roles mapped, direct members. */
    async function snapshot(realm: string): Promise<Record<string, unknown>> {
      const all = await ts.store.groups.all(realm);
      const paths = await pathsOf(ts.store, all.map((g) => g.id));
      const out: Record<string, unknown> = {};
      for (const g of all) {
        const roles = (await ts.store.groups.mappedRoles(g.id)).map((r) => (r.clientId === '' ? r.name : `${r.clientId}:${r.name}`));
        const members = (await ts.store.groups.members(g.id, 0, 100)).users.map((u) => u.username);
        out[paths.get(g.id)!] = { id: g.id, description: g.description, attributes: g.attributes, roles, members };
      }
      return out;
    }

    async function passwordToken(realm: string, username: string): Promise<string> {
      const res = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', client_id: 'ops', username, password: `${username} password 1` }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      return body.access_token!;
    }

    test('the tree moves with its ids, descriptions and attributes; bad groups are skipped with their subgroups, reported, and the realm imports', async () => {
      assert.equal(report.status, 'imported', report.reason);
      expectLine(report, 'group /company/engineering', 'imported', /^$/);
      expectLine(report, 'default group /company', 'imported', /every user created from now on joins it/);
      expectLine(report, 'default group /nowhere', 'skipped', /the file has no group of this path/);
      // Imported users keep their own groups; a user created afterwards joins the default group.
      assert.deepEqual((await ts.kc.users.listGroups({ realm: 'grouped', id: id(103) })).map((g) => g.path), []);
      const { id: newId } = await ts.kc.users.create({ realm: 'grouped', username: 'newcomer', enabled: true });
      assert.deepEqual((await ts.kc.users.listGroups({ realm: 'grouped', id: newId })).map((g) => g.path), ['/company']);
      await ts.kc.users.del({ realm: 'grouped', id: newId });
      expectLine(report, 'group /company/engineering/backend', 'imported', /^1 member\(s\)$/);
      expectLine(report, 'group /company/engineering/front~/end', 'skipped', /^the group name must not contain '\/' .*; its 1 subgroup\(s\) with it$/);
      expectLine(report, 'group /company/ padded ', 'skipped', /^the group name must not begin or end with spaces$/);
      expectLine(report, 'group /company/misc', 'skipped', /^subGroups must be a list, not a string/);
      expectLine(report, 'group /admins', 'mapped', /^1 member\(s\); its id is not one Realmgate keeps .*: a new id$/);
      expectLine(report, 'group /auditors', 'mapped', /^1 member\(s\); its id is another group's in the file: a new id; attributes left out \(the attribute "note" must be a list of strings\)$/);
      assert.deepEqual(linesOf(report, 'group /company'), [['imported', '1 member(s)'], ['skipped', 'listed twice among its siblings: the first entry was imported']]);
      expectLine(report, 'group #5 of groups', 'skipped', /^name must be a string, not a number \(5\)$/);
      expectLine(report, `group ${chainPath(33)}`, 'skipped', /^nested deeper than 32 groups/);
      expectLine(report, `group ${chainPath(32)}`, 'imported', /^1 member\(s\)$/);
      expectLine(report, 'memberships of group /company/engineering/front~/end/web', 'skipped', /^1 user\(s\) \(bob\): the group was skipped \(the group name must not contain '\/'/);
      expectLine(report, 'memberships of group /nowhere', 'skipped', /^1 user\(s\) \(bob\): the file has no group of this path$/);
      expectLine(report, `memberships of group ${chainPath(33)}`, 'skipped', /^1 user\(s\) \(dave\): the group was skipped \(nested deeper/);
      // The roles a group is mapped to: granted to the group, a composite as itself (as for users).
      expectLine(report, 'realm role staff', 'imported', /^granted to 1 group\(s\)$/);
      expectLine(report, 'realm role editor', 'imported', /^composite: contains realm role viewer, client role read of api; granted to 1 group\(s\)$/);
      expectLine(report, 'client role read of api', 'imported', /^granted to 1 group\(s\)$/);
      expectLine(report, 'role mappings to realm role nope', 'skipped', /^1 group\(s\), nope: the file does not define the role$/);
      expectLine(report, 'admin roles of group /admins', 'mapped', /^granted realm-management roles manage-users: its members and those of its subgroups \(1 user\(s\) now\) administer this realm$/);

      const snap = await snapshot('grouped');
      assert.deepEqual(Object.keys(snap).sort(), ['/admins', '/auditors', '/company', '/company/engineering', '/company/engineering/backend', ...Array.from({ length: 32 }, (_, i) => chainPath(i + 1))].sort());
      assert.deepEqual(snap['/company'], { id: id(1), description: 'Everyone who works here', attributes: { site: ['paris', 'lyon'], level: ['1'] }, roles: ['staff', 'api:read'], members: ['service-account-robot'] });
      assert.deepEqual(snap['/company/engineering'], { id: id(2), description: null, attributes: {}, roles: ['editor'], members: [] });
      assert.deepEqual(snap['/company/engineering/backend'], { id: id(3), description: null, attributes: { lang: ['ts', 'sql'] }, roles: ['api:write'], members: ['alice'] });
      const admins = snap['/admins'] as { id: string; roles: string[]; members: string[] };
      assert.notEqual(admins.id, 'x'.repeat(40));
      assert.deepEqual([admins.roles, admins.members], [['realm-management:manage-users'], ['bob']]);
      assert.notEqual((snap['/auditors'] as { id: string }).id, id(1));
      // "auditors" without its leading '/' is the same path (Keycloak finds it so).
      assert.deepEqual((snap['/auditors'] as { members: string[] }).members, ['dave']);
    });

    test("a member's token carries the roles of its group and of the groups above it, and what their composites contain", async () => {
      const r = await signIn(ts, { realm: 'grouped', clientId: 'api', redirectUri: RP, username: 'alice', password: 'alice password 1' });
      const claims = r.claims as Claims | undefined;
      assert.ok(claims, JSON.stringify(r));
      assert.deepEqual(sorted(claims.realm_access?.roles), ['editor', 'staff', 'viewer']);
      assert.deepEqual(sorted(claims.resource_access?.api?.roles), ['read', 'write']);
      // carol belongs to no group: no role.
      const c = await signIn(ts, { realm: 'grouped', clientId: 'api', redirectUri: RP, username: 'carol', password: 'carol password 1' });
      assert.equal((c.claims as Claims | undefined)?.realm_access, undefined, JSON.stringify(c));
      // The service account of robot joined /company.
      const res = await ts.app.inject({
        method: 'POST',
        url: '/auth/realms/grouped/protocol/openid-connect/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('robot', ROBOT_SECRET) },
        payload: 'grant_type=client_credentials',
      });
      assert.equal(res.statusCode, 200, res.body);
      const sa = decodeJwt((res.json() as { access_token: string }).access_token) as Claims;
      assert.deepEqual([sa.realm_access?.roles, sa.resource_access?.api?.roles], [['staff'], ['read']]);
    });

    test("a group's realm-management role makes its members administrators (keycloak-admin-client), of that realm only", async () => {
      const bob = ts.newClient('grouped');
      await bob.auth({ username: 'bob', password: 'bob password 1', grantType: 'password', clientId: 'ops' });
      assert.deepEqual((await bob.users.find({ realm: 'grouped', username: 'alice', exact: true })).map((u) => u.username), ['alice']);
      const made = await bob.users.create({ realm: 'grouped', username: 'erin', enabled: true });
      assert.equal((await ts.store.users.get(made.id))?.username, 'erin');
      assert.equal(await statusOf(bob.users.find({ realm: 'test' })), 403);
      const decoded = decodeJwt(await passwordToken('grouped', 'bob')) as Claims;
      assert.deepEqual(decoded.resource_access?.['realm-management']?.roles, ['manage-users']);
      // alice's groups grant no admin role.
      const alice = ts.newClient('grouped');
      await alice.auth({ username: 'alice', password: 'alice password 1', grantType: 'password', clientId: 'ops' });
      assert.equal(await statusOf(alice.users.find({ realm: 'grouped' })), 403);
    });

    test('export writes the tree and the members; it imports back into the same groups, members and role mappings', async () => {
      const before = await snapshot('grouped');
      const rolesBefore: Record<string, unknown> = {};
      for (const u of await ts.store.users.list('grouped')) rolesBefore[u.username] = await ts.store.roles.userRoles(u.id);
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'grouped', { withSecrets: true }))) as Json;
      const groups = rep.groups as Json[];
      assert.deepEqual(groups.map((g) => g.name), ['admins', 'auditors', 'company', 'd1']);
      const company = groups.find((g) => g.name === 'company')!;
      const engineering = (company.subGroups as Json[])[0]!;
      assert.deepEqual({ ...company, subGroups: undefined }, {
        id: id(1),
        name: 'company',
        path: '/company',
        description: 'Everyone who works here',
        attributes: { site: ['paris', 'lyon'], level: ['1'] },
        realmRoles: ['staff'],
        clientRoles: { api: ['read'] },
        subGroups: undefined,
      });
      assert.deepEqual(engineering, {
        id: id(2),
        name: 'engineering',
        path: '/company/engineering',
        attributes: {},
        realmRoles: ['editor'],
        clientRoles: {},
        subGroups: [{ id: id(3), name: 'backend', path: '/company/engineering/backend', attributes: { lang: ['ts', 'sql'] }, realmRoles: [], clientRoles: { api: ['write'] }, subGroups: [] }],
      });
      assert.deepEqual(groups.find((g) => g.name === 'admins')!.clientRoles, { 'realm-management': ['manage-users'] });
      assert.deepEqual(rep.defaultGroups, ['/company']);
      const users = rep.users as Json[];
      const groupsOf = (name: string): unknown => users.find((u) => u.username === name)?.groups;
      assert.deepEqual(groupsOf('alice'), ['/company/engineering/backend']);
      assert.deepEqual(groupsOf('bob'), ['/admins']);
      assert.deepEqual(groupsOf('dave'), ['/auditors', chainPath(32)]);
      assert.equal(groupsOf('carol'), undefined);
      assert.deepEqual(users.find((u) => u.serviceAccountClientId === 'robot')?.groups, ['/company']);

      const back = (await importKeycloakRealms(ts.store, [rep], { ifExists: 'overwrite' }, actor)).realms[0]!;
      assert.equal(back.status, 'overwritten', back.reason);
      const skipped = back.lines.filter((l) => l.outcome === 'skipped' && /group|role/.test(l.element));
      assert.deepEqual(skipped, []);
      assert.deepEqual(back.lines.filter((l) => /^group /.test(l.element) && l.outcome !== 'imported'), []);
      expectLine(back, 'admin roles of group /admins', 'mapped', /administer this realm$/);
      expectLine(back, 'default group /company', 'imported', /every user created from now on joins it/);
      assert.deepEqual((await ts.store.groups.defaults('grouped')).map((g) => g.id), [id(1)]);
      assert.deepEqual(await snapshot('grouped'), before);
      for (const u of await ts.store.users.list('grouped')) assert.deepEqual(await ts.store.roles.userRoles(u.id), rolesBefore[u.username], u.username);
      // The same file again: the same groups and members.
      const again = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'grouped', { withSecrets: true }))) as Json;
      assert.deepEqual(again.groups, rep.groups);
      assert.deepEqual((again.users as Json[]).map((u) => [u.username, u.groups]), users.map((u) => [u.username, u.groups]));
      const r = await signIn(ts, { realm: 'grouped', clientId: 'api', redirectUri: RP, username: 'alice', password: 'alice password 1' });
      assert.deepEqual(sorted((r.claims as Claims | undefined)?.realm_access?.roles), ['editor', 'staff', 'viewer'], JSON.stringify(r));
    });

    test("another realm's file with the same group ids: new ids, reported; a kc.sh export --dir folder's users join their groups", async () => {
      const copy = (await importKeycloakRealms(ts.store, [groupedRealm('grouped-copy')], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(copy.status, 'imported', copy.reason);
      assert.deepEqual(linesOf(copy, 'group /company')[0], ['mapped', "1 member(s); its id is a group's of another realm: a new id"]);
      const mine = await ts.store.groups.findChild('grouped-copy', '', 'company');
      assert.ok(mine && mine.id !== id(1));
      assert.equal((await ts.store.groups.get(id(1)))?.realmId, 'grouped');

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-groups-dir-'));
      try {
        const { users, ...realm } = groupedRealm('grouped-dir');
        fs.writeFileSync(path.join(dir, 'grouped-dir-realm.json'), JSON.stringify({ ...realm, groups: [{ name: 'team', subGroups: [{ name: 'core', realmRoles: ['staff'] }] }] }));
        fs.writeFileSync(path.join(dir, 'grouped-dir-users-0.json'), JSON.stringify({ realm: 'grouped-dir', users: [{ ...(users as Json[])[0], id: 'dir-alice', groups: ['/team/core'] }] }));
        const r = (await importKeycloakRealms(ts.store, await readExport(dir), { ifExists: 'fail' }, actor)).realms[0]!;
        assert.equal(r.status, 'imported', r.reason);
        expectLine(r, 'group /team/core', 'imported', /^1 member\(s\)$/);
        const alice = (await ts.store.users.findByUsername('grouped-dir', 'alice'))!;
        assert.deepEqual((await ts.store.roles.userRoles(alice.id)).realm, ['staff']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    test("a client scope named groups with Keycloak's group membership mapper: the report says it is Realmgate's groups claim, and the claim comes", async () => {
      const rep: Json = {
        realm: 'mapped',
        enabled: true,
        organizationsEnabled: false,
        clientScopes: [
          {
            name: 'groups',
            protocol: 'openid-connect',
            attributes: { 'consent.screen.text': 'Your groups' },
            protocolMappers: [
              { name: 'groups', protocol: 'openid-connect', protocolMapper: 'oidc-group-membership-mapper', config: { 'claim.name': 'groups', 'full.path': 'true' } },
              { name: 'aud', protocol: 'openid-connect', protocolMapper: 'oidc-audience-mapper', config: {} },
            ],
          },
          { name: 'teams', protocol: 'openid-connect', protocolMappers: [{ name: 'teams', protocolMapper: 'oidc-group-membership-mapper', config: { 'claim.name': 'teams', 'full.path': 'false' } }] },
        ],
        clients: [{ clientId: 'app', publicClient: true, redirectUris: [RP], defaultClientScopes: ['profile', 'email', 'groups'] }],
        groups: [{ name: 'eng', subGroups: [{ name: 'web' }] }],
        users: [{ id: id(201), username: 'erin', enabled: true, credentials: [{ type: 'password', value: 'erin password 1' }], groups: ['/eng/web'] }],
      };
      const r = (await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', r.reason);
      expectLine(r, 'client scope groups', 'imported', /^its group membership mapper is Realmgate's groups claim \(the full paths of the user's groups\)$/);
      // An audience mapper naming no audience breaks the admin API's rule: reported, the scope imported.
      expectLine(r, 'client scope groups protocol mapper aud', 'skipped', /needs config\.included\.client\.audience/);
      // Another group membership mapper moves as it is (names only, claim teams).
      expectLine(r, 'client scope teams protocol mappers', 'imported', /^teams$/);
      const signedIn = await signIn(ts, { realm: 'mapped', clientId: 'app', redirectUri: RP, username: 'erin', password: 'erin password 1', scope: 'openid groups' });
      assert.deepEqual((signedIn.claims as { groups?: string[] } | undefined)?.groups, ['/eng/web'], JSON.stringify(signedIn));
      assert.deepEqual((signedIn.idClaims as { groups?: string[] } | undefined)?.groups, ['/eng/web']);
    });

    test('a groups list of the wrong type fails the realm; a user whose groups are not a list is skipped', async () => {
      const wrong = (await importKeycloakRealms(ts.store, [{ realm: 'groups-typed', enabled: true, groups: { name: 'g' } }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(wrong.status, 'failed');
      assert.match(wrong.reason!, /groups must be a list, not an object/);
      assert.equal(await ts.store.realms.get('groups-typed'), undefined);
      const user = (await importKeycloakRealms(ts.store, [{ realm: 'groups-user', enabled: true, organizationsEnabled: false, groups: [{ name: 'g' }], users: [{ id: 'gu-1', username: 'gus', groups: '/g' }] }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(user.status, 'imported', user.reason);
      expectLine(user, 'user gus', 'skipped', /^groups must be a list, not a string/);
      expectLine(user, 'group /g', 'imported', /^$/);
    });
  });
}
