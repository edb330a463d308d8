import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { bindCredentialOf } from '../../src/admin/operations/user-storage.js';
import { createClient } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { ImportReport, RealmReport } from '../../src/admin/keycloak/import-report.js';
import { signIn } from './helpers.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const FIXTURE_LDAP = '307bba27-f8da-4c4d-a1b9-3c1bf49f824e';
const USER_STORAGE = 'org.keycloak.storage.UserStorageProvider';
const MAPPER = 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper';
const RP = 'https://rp.example.com/callback';
const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

const realmOf = (rep: ImportReport, name: string): RealmReport => rep.realms.find((x) => x.realm === name)!;
const lineOf = (r: RealmReport, element: string) => {
  const l = r.lines.find((x) => x.element === element);
  assert.ok(l, `no line for ${element}: ${JSON.stringify(r.lines.map((x) => x.element))}`);
  return l;
};

// User federation moves with a Keycloak realm: the fixture's LDAP component (disabled, as there), its
// supported mappers, the others named as skipped; users linked to it become federated users; the export
// writes it back in Keycloak's shape.
for (const dialect of dialects()) {
  describe(`Keycloak import and export of LDAP user federation (${dialect})`, () => {
    let ts: TestServer;
    let ldap: LdapServer | undefined;
    let fixture: ImportReport;
    before(async () => {
      ts = await startTestServer({ dialect });
      fixture = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      if (!LDAP_MISSING) ldap = await startLdap({ people: [{ uid: 'carol', password: 'carol-dir-pw', mail: 'carol@corp.example', givenName: 'Carol', sn: 'Dir' }] });
    });
    after(async () => {
      await ts.close();
      await ldap?.stop();
    });

    test("the fixture's ldap component: imported disabled, bindCredential sealed, mappers and Kerberos reported", async () => {
      const m2 = realmOf(fixture, 'Migration2');
      assert.equal(m2.status, 'imported');
      const line = lineOf(m2, 'user federation ldap');
      assert.equal(line.outcome, 'mapped');
      assert.match(line.reason!, /mapper groups \(group-ldap-mapper\): directory groups under ou=Groups,dc=keycloak,dc=org become groups under \/ \(nesting kept\); memberships set at each sign-in \(mode LDAP_ONLY: local changes refused\) \(mapped.group.attributes ignored\)/);
      assert.match(line.reason!, /editMode WRITABLE: password changes are written to the directory/);
      assert.match(line.reason!, /disabled, as in Keycloak/);
      const [p, ...more] = await ts.store.userStorage.list('Migration2');
      assert.equal(more.length, 0);
      assert.equal(p!.id, FIXTURE_LDAP);
      assert.deepEqual(p!.config.enabled, ['false']);
      assert.deepEqual(p!.config.connectionUrl, ['ldap://localhost:10389']);
      assert.equal(p!.config.bindCredential, undefined);
      assert.ok(p!.sealedBindCredential && !p!.sealedBindCredential.includes('anything'));
      assert.equal(await bindCredentialOf(ts.store, p!), 'anything');
      assert.deepEqual(p!.mappers.map((m) => [m.name, m.providerId]).sort(), [['groups', 'group-ldap-mapper'], ['objectGUID', 'user-attribute-ldap-mapper']]);
    });

    test('export writes the component back in Keycloak\'s shape; the credential only with secrets', async () => {
      const plain = await exportRealm(ts.store, 'Migration2', { withSecrets: false });
      const [c] = (plain.components as Json)[USER_STORAGE] as Json[];
      assert.equal(c!.id, FIXTURE_LDAP);
      assert.equal(c!.providerId, 'ldap');
      assert.deepEqual((c!.config as Json).bindCredential, ['**********']);
      assert.deepEqual((c!.config as Json).usersDn, ['ou=People,dc=keycloak,dc=org']);
      const subs = (c!.subComponents as Json)[MAPPER] as Json[];
      assert.deepEqual(subs.map((m) => m.providerId).sort(), ['group-ldap-mapper', 'user-attribute-ldap-mapper']);
      // The group mapper's config goes back as the file had it (a round trip).
      const fileMapper = (((await readExport(FIXTURE)).find((r) => r.realm === 'Migration2')!.components as Json)[USER_STORAGE] as Json[])
        .flatMap((x) => ((x.subComponents as Json)[MAPPER] as Json[]))
        .find((m) => m.providerId === 'group-ldap-mapper')!;
      const exported = subs.find((m) => m.providerId === 'group-ldap-mapper')!;
      assert.equal(exported.id, fileMapper.id);
      assert.deepEqual(exported.config, fileMapper.config);
      const secret = await exportRealm(ts.store, 'Migration2', { withSecrets: true });
      assert.deepEqual(((((secret.components as Json)[USER_STORAGE] as Json[])[0]!.config) as Json).bindCredential, ['anything']);
    });

    test('a federated user of an imported provider moves without a password and signs in through LDAP', { skip: LDAP_MISSING }, async () => {
      const rep: Json = {
        realm: 'dir-corp',
        enabled: true,
        components: {
          [USER_STORAGE]: [
            {
              id: 'a7d1c6e0-0000-4000-8000-00000000ld01',
              name: 'corp-directory',
              providerId: 'ldap',
              subComponents: { [MAPPER]: [{ id: 'm-1', name: 'groups', providerId: 'group-ldap-mapper', config: {} }] },
              config: { connectionUrl: [ldap!.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD], editMode: ['READ_ONLY'], usernameLDAPAttribute: ['uid'], rdnLDAPAttribute: ['uid'], uuidLDAPAttribute: ['entryUUID'], userObjectClasses: ['inetOrgPerson, organizationalPerson'], searchScope: ['1'], authType: ['simple'], enabled: ['true'], allowKerberosAuthentication: ['true'] },
            },
          ],
        },
        users: [
          { id: 'c0c0c0c0-0000-4000-8000-00000000000c', username: 'carol', enabled: true, email: 'carol@corp.example', federationLink: 'a7d1c6e0-0000-4000-8000-00000000ld01', credentials: [] },
          { id: 'c0c0c0c0-0000-4000-8000-00000000000d', username: 'dave', enabled: true, federationLink: 'kerberos-elsewhere', credentials: [] },
        ],
      };
      const r = realmOf(await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor), 'dir-corp');
      assert.equal(r.status, 'imported', r.reason);
      assert.match(lineOf(r, 'user federation corp-directory').reason!, /allowKerberosAuthentication skipped: Kerberos is not supported/);
      assert.match(lineOf(r, 'user federation corp-directory').reason!, /mapper groups \(group-ldap-mapper\) skipped: config\["groups.dn"\] must be a DN/);
      assert.match(lineOf(r, 'user carol').reason!, /federated user \(LDAP\)/);
      assert.equal(lineOf(r, 'user dave').outcome, 'skipped');
      const carol = (await ts.store.users.findByUsername('dir-corp', 'carol'))!;
      assert.equal(carol.federationLink, 'a7d1c6e0-0000-4000-8000-00000000ld01');
      assert.ok(carol.passwordHash.startsWith('!'));
      await createClient(ts.store, { realmId: 'dir-corp', clientId: 'rp', redirectUris: [RP], public: true });
      const ok = await signIn(ts, { realm: 'dir-corp', clientId: 'rp', redirectUri: RP, username: 'carol', password: 'carol-dir-pw' });
      assert.equal(ok.claims?.sub, 'c0c0c0c0-0000-4000-8000-00000000000c', JSON.stringify(ok));
      const wrong = await signIn(ts, { realm: 'dir-corp', clientId: 'rp', redirectUri: RP, username: 'carol', password: 'nope' });
      assert.equal(wrong.error, 'login failed');
      // The export names the link, as Keycloak's.
      const out = await exportRealm(ts.store, 'dir-corp', { withSecrets: false });
      assert.equal((out.users as Json[]).find((u) => u.username === 'carol')!.federationLink, 'a7d1c6e0-0000-4000-8000-00000000ld01');
    });
  });
}
