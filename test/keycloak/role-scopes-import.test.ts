import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { basic } from '../helpers/server.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportPartialRealm, exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';
import type { ScopeOwner } from '../../src/storage/repos/role-scopes.js';
import { realmOf, expectLine } from './helpers.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };
const ROBOT_SECRET = 'robot-secret-0123456789';


type Claims = { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
const sorted = (v: string[] | undefined): string[] | undefined => (v ? [...v].sort() : v);

/**
 * A realm whose client web has no full scope: its scope holds writer (a composite), api's admin-call,
 * and through its client scope reports, secret-role; offline_access comes with the offline_access scope
 * (Keycloak's own mapping). Mappings whose owner or role did not move, and entries of the wrong type.
 */
function scopedRealm(): Record<string, unknown> {
  return {
    realm: 'scoped',
    enabled: true,
    organizationsEnabled: false,
    roles: {
      realm: [
        { name: 'reader' },
        { name: 'writer', composite: true, composites: { realm: ['reader'], client: { api: ['call'] } } },
        { name: 'secret-role' },
        { name: 'other' },
        { name: 'offline_access', description: '${role_offline-access}' },
      ],
      client: { api: [{ name: 'call' }, { name: 'admin-call' }, { name: 'unused' }], web: [{ name: 'own' }] },
    },
    clientScopes: [
      { name: 'reports', protocol: 'openid-connect', attributes: { 'consent.screen.text': 'Reports' } },
      { name: 'saml-things', protocol: 'saml' },
    ],
    clients: [
      { clientId: 'web', publicClient: true, directAccessGrantsEnabled: true, fullScopeAllowed: false, redirectUris: [RP], defaultClientScopes: ['profile', 'reports'], optionalClientScopes: ['offline_access'] },
      { clientId: 'api', publicClient: true, redirectUris: [RP] },
      { clientId: 'full', publicClient: true, directAccessGrantsEnabled: true, redirectUris: [RP] },
      { clientId: 'robot', publicClient: false, secret: ROBOT_SECRET, serviceAccountsEnabled: true, standardFlowEnabled: false, fullScopeAllowed: false },
    ],
    scopeMappings: [
      { client: 'web', roles: ['writer', ' nope '] },
      { clientScope: 'reports', roles: ['secret-role'] },
      { clientScope: 'offline_access', roles: ['offline_access'] },
      { client: 'robot', roles: ['reader'] },
      { client: 'full', roles: ['other'] },
      { client: 'account-console', roles: ['reader'] },
      { client: 'ghost', roles: ['reader'] },
      { clientScope: 'saml-things', roles: ['reader'] },
      { roles: ['reader'] },
      { client: 'web', roles: 'reader' },
      'web',
    ],
    clientScopeMappings: {
      api: [{ client: 'web', roles: ['admin-call'] }],
      gone: [{ clientScope: 'reports', roles: ['x'] }],
      '': [{ client: 'web', roles: ['reader'] }],
    },
    users: [
      {
        id: 's-1',
        username: 'sue',
        enabled: true,
        credentials: [{ type: 'password', value: 'sue password 1' }],
        realmRoles: ['reader', 'writer', 'secret-role', 'other', 'offline_access'],
        clientRoles: { api: ['call', 'admin-call', 'unused'], web: ['own'] },
      },
      { id: 's-2', username: 'service-account-robot', enabled: true, serviceAccountClientId: 'robot', realmRoles: ['reader', 'secret-role', 'other'] },
    ],
  };
}

for (const dialect of dialects()) {
  describe(`Keycloak import and export of role scope mappings (${dialect})`, () => {
    let ts: AdminTestServer;
    let report: RealmReport;
    before(async () => {
      ts = await startAdminServer({ dialect });
      report = realmOf(await importKeycloakRealms(ts.store, [scopedRealm()], { ifExists: 'fail' }, actor), 'scoped');
    });
    after(() => ts.close());

    async function token(realm: string, form: Record<string, string>, auth?: string): Promise<Claims> {
      const res = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
        body: new URLSearchParams(form).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      return decodeJwt(body.access_token!) as Claims;
    }
    const password = (clientId: string, scope?: string): Promise<Claims> => token('scoped', { grant_type: 'password', client_id: clientId, username: 'sue', password: 'sue password 1', ...(scope ? { scope } : {}) });

    /** Every owner's roles in scope (client:<id>, scope:<name>) and each client's fullScopeAllowed. */
    async function snapshot(realm: string): Promise<Record<string, unknown>> {
      const owners: ScopeOwner[] = [...(await ts.store.clients.list(realm)).map((c) => ({ kind: 'client' as const, id: c.clientId })), ...(await ts.store.realms.scopes(realm)).map((s) => ({ kind: 'scope' as const, id: s.name }))];
      const mappings: Record<string, string[]> = {};
      for (const o of owners) {
        const roles = await ts.store.roleScopes.list(realm, o);
        if (roles.length > 0) mappings[`${o.kind}:${o.id}`] = roles.map((r) => `${r.clientId}/${r.name}`);
      }
      const fullScope = Object.fromEntries((await ts.store.clients.list(realm)).map((c) => [c.clientId, c.fullScopeAllowed]));
      return { mappings, fullScope };
    }

    test('the mappings whose owner and role moved are stored (a composite as itself); the others are reported', async () => {
      const r = report;
      assert.equal(r.status, 'imported', r.reason);
      expectLine(r, 'client web', 'mapped', /fullScopeAllowed false: its tokens carry only the roles in its scope/);
      expectLine(r, 'scope mappings of client web', 'imported', /^realm role writer, client role admin-call of api; composite: realm role writer \(what it contains comes into the scope with it, as in Keycloak\)$/);
      expectLine(r, 'scope mapping of client web to realm role nope', 'skipped', /^the file does not define the role$/);
      expectLine(r, 'scope mappings of client scope reports', 'imported', /^realm role secret-role$/);
      expectLine(r, 'scope mapping of client scope reports to client role x of gone', 'skipped', /^the file has no client gone$/);
      expectLine(r, 'scope mappings of client scope offline_access', 'imported', /^realm role offline_access$/);
      expectLine(r, 'scope mappings of client robot', 'imported', /^realm role reader$/);
      expectLine(r, 'scope mappings of client full', 'mapped', /^realm role other; no effect while the client has fullScopeAllowed true$/);
      expectLine(r, 'scope mappings of client account-console', 'skipped', /^the file has no client account-console; its 1 role\(s\) left out: realm role reader$/);
      expectLine(r, 'scope mappings of client ghost', 'skipped', /^the file has no client ghost;/);
      expectLine(r, 'scope mappings of client scope saml-things', 'skipped', /^the client scope was not imported \(a saml scope\); its 1 role\(s\) left out: realm role reader$/);
      expectLine(r, 'scope mapping scopeMappings[8]', 'skipped', /^names neither a client nor a clientScope$/);
      expectLine(r, 'scope mapping scopeMappings[9]', 'skipped', /^roles must be a list, not a string$/);
      expectLine(r, 'scope mapping scopeMappings[10]', 'skipped', /^must be an object, not a string$/);
      expectLine(r, 'scope mapping clientScopeMappings[""][0]', 'skipped', /^the key names no client$/);

      const web = await ts.store.clients.get('scoped', 'web');
      assert.equal(web?.fullScopeAllowed, false);
      assert.equal((await ts.store.clients.get('scoped', 'full'))?.fullScopeAllowed, true);
      const snap = await snapshot('scoped');
      assert.deepEqual(snap.mappings, {
        // writer itself: reader and api's call come with it when a token is made.
        'client:web': ['/writer', 'api/admin-call'],
        'client:robot': ['/reader'],
        'client:full': ['/other'],
        'scope:offline_access': ['/offline_access'],
        'scope:reports': ['/secret-role'],
      });
    });

    test("a token of a client without full scope carries only the user's roles in its scope", async () => {
      // web: its own roles, its mappings (writer and what it contains, admin-call), and reports' (a default scope).
      const web = await password('web');
      assert.deepEqual(sorted(web.realm_access?.roles), ['reader', 'secret-role', 'writer']);
      assert.deepEqual(sorted(web.resource_access?.api?.roles), ['admin-call', 'call']);
      assert.deepEqual(web.resource_access?.web?.roles, ['own']);
      // Granted offline_access, the offline_access scope brings its role (Keycloak's built-in mapping).
      const offline = await password('web', 'openid offline_access');
      assert.deepEqual(sorted(offline.realm_access?.roles), ['offline_access', 'reader', 'secret-role', 'writer']);
      // A client of full scope: every role of the user.
      const full = await password('full');
      assert.deepEqual(sorted(full.realm_access?.roles), ['offline_access', 'other', 'reader', 'secret-role', 'writer']);
      assert.deepEqual(sorted(full.resource_access?.api?.roles), ['admin-call', 'call', 'unused']);
      // The service account of robot, without full scope: reader only.
      const robot = await token('scoped', { grant_type: 'client_credentials' }, basic('robot', ROBOT_SECRET));
      assert.deepEqual(robot.realm_access?.roles, ['reader']);
      assert.equal(robot.resource_access, undefined);
    });

    test("a change to a composite in a client's scope after the import reaches the scope (not flattened)", async () => {
      const writer = (await ts.store.roles.find('scoped', '', 'writer'))!;
      const other = (await ts.store.roles.find('scoped', '', 'other'))!;
      const call = (await ts.store.roles.find('scoped', 'api', 'call'))!;
      // sue holds other (mapped) and call (mapped); web's scope holds writer: other comes in, call goes out.
      await ts.store.roles.addComposites('scoped', writer.id, [other.id]);
      await ts.store.roles.removeComposites(writer.id, [call.id]);
      try {
        const web = await password('web');
        assert.deepEqual(sorted(web.realm_access?.roles), ['other', 'reader', 'secret-role', 'writer']);
        assert.deepEqual(web.resource_access?.api?.roles, ['admin-call']);
      } finally {
        await ts.store.roles.removeComposites(writer.id, [other.id]);
        await ts.store.roles.addComposites('scoped', writer.id, [call.id]);
      }
      const web = await password('web');
      assert.deepEqual(sorted(web.realm_access?.roles), ['reader', 'secret-role', 'writer']);
      assert.deepEqual(sorted(web.resource_access?.api?.roles), ['admin-call', 'call']);
    });

    test("the fixture: Keycloak's own mappings (offline_access's scope, account-console's) are reported", async () => {
      const plain = realmOf(await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite' }, actor), 'Migration');
      assert.equal(plain.status, 'imported', plain.reason);
      expectLine(plain, 'scope mappings of client scope offline_access', 'imported', /^realm role offline_access$/);
      expectLine(plain, 'scope mappings of client account-console', 'skipped', /^the client was not imported \(Keycloak's built-in client \(use --include-builtin-clients to import it\)\); its 2 role\(s\) left out: client role manage-account of account, client role view-groups of account$/);
      assert.deepEqual((await ts.store.roleScopes.list('Migration', { kind: 'scope', id: 'offline_access' })).map((r) => r.name), ['offline_access']);
      assert.deepEqual(await ts.store.roleScopes.list('Migration', { kind: 'client', id: 'account-console' }), []);

      const builtin = realmOf(await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'overwrite', includeBuiltinClients: true }, actor), 'Migration');
      assert.equal(builtin.status, 'overwritten', builtin.reason);
      // manage-account contains manage-account-links in Keycloak: kept a composite, mapped as itself.
      expectLine(builtin, 'scope mappings of client account-console', 'imported', /^client role manage-account of account, client role view-groups of account; composite: client role manage-account of account \(what it contains comes into the scope with it, as in Keycloak\)$/);
      assert.equal((await ts.store.clients.get('Migration', 'account-console'))?.fullScopeAllowed, false);
      assert.equal((await ts.store.clients.get('Migration', 'migration-test-client'))?.fullScopeAllowed, true);
      assert.deepEqual((await ts.store.roleScopes.list('Migration', { kind: 'client', id: 'account-console' })).map((r) => `${r.clientId}/${r.name}`), ['account/manage-account', 'account/view-groups']);
    });

    test('export writes fullScopeAllowed, scopeMappings and clientScopeMappings as Keycloak does; they import back the same', async () => {
      const before = await snapshot('scoped');
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'scoped', { withSecrets: true }))) as Record<string, unknown>;
      const clients = rep.clients as Array<Record<string, unknown>>;
      assert.equal(clients.find((c) => c.clientId === 'web')!.fullScopeAllowed, false);
      assert.equal(clients.find((c) => c.clientId === 'full')!.fullScopeAllowed, true);
      // Keycloak's order: the clients' (realm roles), then the client scopes'.
      assert.deepEqual(rep.scopeMappings, [
        { client: 'full', roles: ['other'] },
        { client: 'robot', roles: ['reader'] },
        { client: 'web', roles: ['writer'] },
        { clientScope: 'offline_access', roles: ['offline_access'] },
        { clientScope: 'reports', roles: ['secret-role'] },
      ]);
      assert.deepEqual(rep.clientScopeMappings, { api: [{ client: 'web', roles: ['admin-call'] }] });
      assert.deepEqual((rep.roles as { realm: Array<Record<string, unknown>> }).realm.find((r) => r.name === 'writer')!.composites, { realm: ['reader'], client: { api: ['call'] } });
      // The partial export without clients keeps the client scopes' mappings only (Keycloak's ExportUtils).
      const partial = await exportPartialRealm(ts.store, 'scoped', { clients: false, groupsAndRoles: false });
      assert.deepEqual(partial.scopeMappings, [
        { clientScope: 'offline_access', roles: ['offline_access'] },
        { clientScope: 'reports', roles: ['secret-role'] },
      ]);
      assert.equal(partial.clientScopeMappings, undefined);

      const back = realmOf(await importKeycloakRealms(ts.store, [rep], { ifExists: 'overwrite' }, actor), 'scoped');
      assert.equal(back.status, 'overwritten', back.reason);
      assert.equal(back.lines.some((l) => l.outcome === 'skipped' && /scope mapping/.test(l.element)), false, JSON.stringify(back.lines.filter((l) => l.outcome === 'skipped')));
      assert.deepEqual(await snapshot('scoped'), before);
      const web = await password('web');
      assert.deepEqual(sorted(web.realm_access?.roles), ['reader', 'secret-role', 'writer']);
    });

    test('a scopeMappings or clientScopeMappings of the wrong type fails the realm, nothing stored', async () => {
      for (const [field, value, message] of [
        ['scopeMappings', { client: 'web' }, /^nothing of this realm was stored: scopeMappings must be a list, not an object$/],
        ['clientScopeMappings', [], /^nothing of this realm was stored: clientScopeMappings must be an object, not a list$/],
        ['clientScopeMappings', { api: 'web' }, /^nothing of this realm was stored: clientScopeMappings\.api must be a list, not a string$/],
      ] as const) {
        const r = realmOf(await importKeycloakRealms(ts.store, [{ ...scopedRealm(), realm: 'scoped-bad', [field]: value }], { ifExists: 'fail' }, actor), 'scoped-bad');
        assert.equal(r.status, 'failed');
        assert.match(r.reason!, message);
        assert.equal(await ts.store.realms.get('scoped-bad'), undefined);
      }
    });
  });
}
