import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { signIn } from './helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };
const USER_ID = '6f1c0000-0000-4000-8000-000000000301';
type Json = Record<string, unknown>;

const claim = (name: string, type: string, config: Record<string, string>): Json => ({ name, protocol: 'openid-connect', protocolMapper: type, consentRequired: false, config });
const flags = { 'access.token.claim': 'true', 'id.token.claim': 'true', 'userinfo.token.claim': 'true' };

function realmFile(name: string): Json {
  return {
    realm: name,
    enabled: true,
    organizationsEnabled: false,
    clientScopes: [
      {
        name: 'tenancy',
        protocol: 'openid-connect',
        protocolMappers: [
          claim('tenant', 'oidc-usermodel-attribute-mapper', { 'user.attribute': 'tenant', 'claim.name': 'org.tenant', 'jsonType.label': 'String', ...flags }),
          claim('billing api', 'oidc-audience-mapper', { 'included.client.audience': 'billing', 'access.token.claim': 'true' }),
        ],
      },
      // Keycloak's defaults: Realmgate's own claims, nothing moves.
      {
        name: 'profile',
        protocol: 'openid-connect',
        protocolMappers: [
          claim('locale', 'oidc-usermodel-attribute-mapper', { 'user.attribute': 'locale', 'claim.name': 'locale', 'jsonType.label': 'String', ...flags }),
          claim('given name', 'oidc-usermodel-property-mapper', { 'user.attribute': 'firstName', 'claim.name': 'given_name', ...flags }),
        ],
      },
    ],
    clients: [
      {
        clientId: 'app',
        publicClient: true,
        redirectUris: [RP],
        defaultClientScopes: ['profile', 'email', 'tenancy'],
        protocolMappers: [
          claim('plan', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'plan', 'claim.value': '{"tier":"gold"}', 'jsonType.label': 'JSON', ...flags }),
          claim('forged sub', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'sub', 'claim.value': 'admin', ...flags }),
          claim('script', 'oidc-script-based-protocol-mapper', { 'claim.name': 'x' }),
        ],
      },
      { clientId: 'billing', publicClient: true, redirectUris: [RP] },
    ],
    users: [{ id: USER_ID, username: 'erin', enabled: true, credentials: [{ type: 'password', value: 'erin password 1' }] }],
  };
}

function linesOf(r: RealmReport, element: string): Array<[string, string]> {
  return r.lines.filter((l) => l.element === element).map((l) => [l.outcome, l.reason ?? '']);
}

// Keycloak's protocol mappers in a realm import: the supported types move (checked with the admin API's
// rules), the others are reported; Realmgate's export writes them back.
for (const dialect of dialects()) {
  describe(`import and export of protocol mappers (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('supported mappers move and give their claims; a reserved claim or another type is reported, its owner imported', async () => {
      const r = (await importKeycloakRealms(ts.store, [realmFile('mapped')], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', r.reason);
      assert.deepEqual(linesOf(r, 'client scope tenancy protocol mappers'), [['imported', 'tenant, billing api']]);
      assert.deepEqual(linesOf(r, 'client app protocol mappers'), [['imported', 'plan']]);
      const [[outcome, reason]] = linesOf(r, 'client app protocol mapper forged sub') as [[string, string]];
      assert.equal(outcome, 'skipped');
      assert.match(reason, /the claim sub is Realmgate's own/);
      assert.match(linesOf(r, 'client app')[0]![1], /1 protocol mapper\(s\) not moved/);
      assert.match(linesOf(r, 'client scope profile')[0]![1], /^2 protocol mapper\(s\) not moved: Realmgate issues its own claims$/);
      assert.deepEqual((await ts.store.protocolMappers.list({ realmId: 'mapped', ownerType: 'scope', owner: 'profile' })), []);

      await ts.store.users.update(USER_ID, { attributes: { tenant: ['t-7'], locale: ['de'] } });
      const s = await signIn(ts, { realm: 'mapped', clientId: 'app', redirectUri: RP, username: 'erin', password: 'erin password 1', scope: 'openid tenancy' });
      assert.deepEqual(s.claims!.org, { tenant: 't-7' });
      assert.deepEqual(s.claims!.plan, { tier: 'gold' });
      assert.deepEqual(s.claims!.aud, ['account', 'billing']);
      assert.equal(s.claims!.sub, USER_ID);
      // Keycloak's default locale mapper did not move (no mapper on profile, above): the claim is the one
      // Realmgate's profile scope releases from the attribute itself, as that mapper did.
      assert.equal(s.claims!.locale, 'de');
      assert.deepEqual(s.idClaims!.org, { tenant: 't-7' });
    });

    test('export writes them; importing the export elsewhere gives the same mappers', async () => {
      const rep = JSON.parse(JSON.stringify(await exportRealm(ts.store, 'mapped', { withSecrets: true }))) as Json;
      const app = (rep.clients as Json[]).find((c) => c.clientId === 'app')!;
      assert.deepEqual((app.protocolMappers as Json[]).map((m) => [m.name, m.protocolMapper]), [['plan', 'oidc-hardcoded-claim-mapper']]);
      rep.realm = 'copied';
      const r = (await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', r.reason);
      const strip = (list: Array<{ name: string; type: string; config: Record<string, string>; ownerType: string; owner: string }>) => list.map(({ name, type, config, ownerType, owner }) => ({ name, type, config, ownerType, owner }));
      assert.deepEqual(strip(await ts.store.protocolMappers.listRealm('copied')), strip(await ts.store.protocolMappers.listRealm('mapped')));
      assert.equal((await ts.store.protocolMappers.listRealm('copied')).length, 3);
      // Deleting the realm deletes its mappers.
      await ts.kc.realms.del({ realm: 'copied' });
      assert.deepEqual(await ts.store.protocolMappers.listRealm('copied'), []);
    });

    test('partialImport: a client moves with its mappers; OVERWRITE replaces them', async () => {
      const client = (mappers: Json[]): Json => ({ clientId: 'partial', publicClient: true, redirectUris: [RP], protocolMappers: mappers });
      const one = claim('one', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'one', 'claim.value': '1', ...flags });
      const two = claim('two', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'two', 'claim.value': '2', ...flags });
      await ts.kc.realms.partialImport({ realm: 'mapped', rep: { ifResourceExists: 'SKIP', clients: [client([one])] } as never });
      const names = async (): Promise<string[]> => (await ts.kc.clients.listProtocolMappers({ realm: 'mapped', id: 'partial' })).map((m) => m.name!);
      assert.deepEqual(await names(), ['one']);
      await ts.kc.realms.partialImport({ realm: 'mapped', rep: { ifResourceExists: 'OVERWRITE', clients: [client([two])] } as never });
      assert.deepEqual(await names(), ['two']);
    });

    test("Keycloak's own export (the fixture): its standard scopes' mappers are Realmgate's own claims; MicroProfile JWT's upn and groups move", async () => {
      const realms = JSON.parse(fs.readFileSync('/work/shared/fixtures/keycloak/migration-realm-26.6.0.json', 'utf8')) as Json[];
      const r = await importKeycloakRealms(ts.store, realms.filter((x) => x.realm !== 'master'), { ifExists: 'fail' }, actor);
      assert.deepEqual(r.realms.map((x) => x.realm), ['Migration', 'Migration2']);
      for (const realm of r.realms) {
        assert.equal(realm.status, 'imported', realm.reason);
        const moved = (await ts.store.protocolMappers.listRealm(realm.realm)).map((m) => [m.ownerType, m.owner, m.name, m.type, m.config['claim.name']]);
        assert.deepEqual(moved.sort(), [
          ['scope', 'microprofile-jwt', 'groups', 'oidc-usermodel-realm-role-mapper', 'groups'],
          ['scope', 'microprofile-jwt', 'upn', 'oidc-usermodel-property-mapper', 'upn'],
        ]);
        // Nothing refused: the defaults of profile, email, roles... are not moved, and say so on their scope's line.
        assert.ok(!realm.lines.some((l) => /protocol mapper /.test(l.element)), JSON.stringify(realm.lines.filter((l) => /mapper/.test(l.element))));
        for (const scope of ['profile', 'email', 'roles', 'basic']) assert.match(linesOf(realm, `client scope ${scope}`)[0]![1], /protocol mapper\(s\) not moved: Realmgate issues its own claims/, scope);
        // Keycloak's service account notes: client_id is Realmgate's own claim; the client's host and address are no note of Realmgate's.
        assert.match(linesOf(realm, 'client scope service_account')[0]![1], /^2 session note mapper\(s\) not moved: Realmgate's sessions keep no note clientHost, clientAddress \(they keep IMPERSONATOR_ID, IMPERSONATOR_USERNAME, AUTH_TIME\); 1 protocol mapper\(s\) not moved: Realmgate issues its own claims$/);
        const [[outcome, names]] = linesOf(realm, 'client scope microprofile-jwt protocol mappers') as [[string, string]];
        assert.equal(outcome, 'imported');
        assert.deepEqual(names.split(', ').sort(), ['groups', 'upn']);
      }
      // A user of Migration with a realm role: upn and the roles as groups with the scope.
      await ts.kc.clients.create({ realm: 'Migration', clientId: 'quarkus-app', publicClient: true, redirectUris: [RP], directAccessGrantsEnabled: true, defaultClientScopes: ['openid', 'profile', 'microprofile-jwt'] });
      await ts.kc.users.create({ realm: 'Migration', username: 'mp-user', enabled: true, credentials: [{ type: 'password', value: 'mp user password 1', temporary: false }] });
      const [user] = await ts.kc.users.find({ realm: 'Migration', username: 'mp-user', exact: true });
      const role = (await ts.kc.roles.find({ realm: 'Migration' })).find((x) => !x.name!.startsWith('default-roles') && x.name !== 'offline_access' && x.name !== 'uma_authorization')!;
      await ts.kc.users.addRealmRoleMappings({ realm: 'Migration', id: user!.id!, roles: [{ id: role.id!, name: role.name! }] });
      const res = await fetch(`${ts.baseUrl}/auth/realms/Migration/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', client_id: 'quarkus-app', username: 'mp-user', password: 'mp user password 1', scope: 'openid microprofile-jwt' }),
      });
      const body = (await res.json()) as { access_token: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      const claims = decodeJwt(body.access_token);
      assert.equal(claims.upn, 'mp-user');
      assert.ok((claims.groups as string[]).includes(role.name!), JSON.stringify(claims.groups));
      assert.deepEqual(claims.groups, (claims.realm_access as { roles: string[] }).roles);
    });
  });
}
