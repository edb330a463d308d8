import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliRunner } from '../helpers/cli.js';
import { dialects, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/keycloak/migration-realm-26.6.0.json');

for (const dialect of dialects()) {
  describe(`realmgate realm import / export (${dialect})`, () => {
    let tdb: TestDatabase;
    let dir: string;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      await tdb.db.close();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-cli-'));
    });
    after(async () => {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const { run } = cliRunner(() => tdb.url);

    test('imports the fixture and prints the report; a second run with --if-exists skip changes nothing', () => {
      const r = run(['realm', 'import', FIXTURE]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^realm Migration: imported$/m);
      assert.match(r.stdout, /^realm master: skipped \(Keycloak's master realm/m);
      assert.match(r.stdout, /^ {2}mapped {3}realm setting accessCodeLifespan - 60 is outside Realmgate's range 30-50: set to 50$/m);
      assert.match(r.stdout, /^ {2}skipped {2}client migration-saml-client - a saml client/m);
      assert.match(r.stdout, /^ {2}imported user offline-test-user$/m);
      assert.match(r.stdout, /^ {2}imported realm role migration-test-realm-role$/m);
      assert.match(r.stdout, /^ {2}mapped {3}realm role offline_access - Keycloak's built-in role, .*; granted to 3 user\(s\)$/m);
      assert.match(r.stdout, /^ {2}skipped {2}role mappings to client account - 3 user\(s\), view-profile, manage-account: the client was not imported/m);
      assert.match(r.stdout, /^ {2}skipped {2}composites of realm role default-roles-migration - client role view-profile of account, client role manage-account of account: the client was not imported/m);
      assert.match(r.stdout, /^ {2}imported group \/migration-test-group$/m);
      assert.match(r.stdout, /^ {2}mapped {3}identity provider m1-acme-idp - oidc, of organization m1-acme; /m);
      assert.match(r.stdout, /^ {2}imported identity provider gitlab - gitlab$/m);
      const again = run(['realm', 'import', FIXTURE, '--if-exists', 'skip', '--json']);
      assert.equal(again.status, 0, again.stderr);
      assert.deepEqual((JSON.parse(again.stdout) as { realms: Array<{ status: string }> }).realms.map((x) => x.status), ['unchanged', 'unchanged', 'skipped']);
      const fail = run(['realm', 'import', FIXTURE]);
      assert.equal(fail.status, 1);
      assert.match(fail.stdout, /realm Migration: failed \(the realm exists already/);
    });

    test('bad files: one clear line, exit 1, no stack trace', () => {
      fs.writeFileSync(path.join(dir, 'bad.json'), '[{"realm": "x",');
      for (const [file, message] of [
        [path.join(dir, 'bad.json'), /bad\.json is not valid JSON/],
        [path.join(dir, 'none.json'), /cannot read .*none\.json: ENOENT/],
      ] as const) {
        const r = run(['realm', 'import', file]);
        assert.equal(r.status, 1);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
      assert.notEqual(run(['realm', 'import', FIXTURE, '--if-exists', 'maybe']).status, 0);
    });

    test('export: secrets masked without --with-secrets; the file imports back', () => {
      const plain = run(['realm', 'export', 'Migration']);
      assert.equal(plain.status, 0, plain.stderr);
      const rep = JSON.parse(plain.stdout) as { realm: string; users: Array<{ username: string; id: string; credentials: unknown[] }> };
      assert.equal(rep.realm, 'Migration');
      assert.equal(rep.users.find((u) => u.username === 'offline-test-user')!.id, '47611b1e-6e38-415f-99b1-8babab008505');
      assert.deepEqual(rep.users.find((u) => u.username === 'offline-test-user')!.credentials, []);
      // Identity providers' secrets are masked too; their organizations name them.
      const idps = (rep as unknown as { identityProviders: Array<{ alias: string; config: Record<string, string> }> }).identityProviders;
      assert.deepEqual(idps.map((p) => [p.alias, p.config.clientSecret]), [1, 2, 3, 4, 5].map((n) => [`m${n}-acme-idp`, '**********']));
      assert.deepEqual((rep as unknown as { organizations: Array<{ alias: string; identityProviders: unknown }> }).organizations.find((o) => o.alias === 'm1-acme')!.identityProviders, [{ alias: 'm1-acme-idp' }]);
      assert.equal((rep as unknown as { components?: unknown }).components, undefined, 'no keys without --with-secrets');
      // Roles and each user's mappings travel (the admin roles of realm-management are Keycloak's and Realmgate's own: not exported).
      const roles = (rep as unknown as { roles: { realm: Array<{ name: string; composite: boolean; composites?: unknown }>; client: Record<string, Array<{ name: string }>> } }).roles;
      assert.deepEqual(roles.realm.map((x) => x.name), ['default-roles-migration', 'migration-test-realm-role', 'offline_access', 'uma_authorization']);
      // The default role is a composite of what moved of it; the others contain nothing.
      assert.deepEqual(roles.realm.map((x) => [x.name, x.composite, x.composites]), [
        ['default-roles-migration', true, { realm: ['migration-test-realm-role', 'offline_access', 'uma_authorization'] }],
        ['migration-test-realm-role', false, undefined],
        ['offline_access', false, undefined],
        ['uma_authorization', false, undefined],
      ]);
      assert.deepEqual(roles.client, { 'migration-test-client': [roles.client['migration-test-client']![0]!] });
      assert.equal(roles.client['migration-test-client']![0]!.name, 'migration-test-client-role');
      assert.deepEqual((rep.users.find((u) => u.username === 'offline-test-user') as unknown as { realmRoles: string[] }).realmRoles, ['offline_access', 'uma_authorization']);
      const file = path.join(dir, 'migration.json');
      const full = run(['realm', 'export', 'Migration', '--file', file, '--with-secrets']);
      assert.equal(full.status, 0, full.stderr);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      // The signing key Keycloak's file brought travels under its kid, as Keycloak's own provider for a given RSA key.
      // With secrets, an identity provider's secret is in clear, as kc.sh export writes it.
      assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { identityProviders: Array<{ alias: string; config: Record<string, string> }> }).identityProviders.find((p) => p.alias === 'm3-acme-idp')!.config.clientSecret, 'm3-secret');
      const providers = (JSON.parse(fs.readFileSync(file, 'utf8')) as { components: Record<string, Array<{ providerId: string; config: Record<string, string[]> }>> }).components['org.keycloak.keys.KeyProvider']!;
      const kid = providers.find((p) => p.providerId === 'rsa')!.config.kid![0]!;
      const fixtureKey = ((JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as Array<{ realm: string; components: Record<string, Array<{ name: string; config: Record<string, string[]> }>> }>).find((r) => r.realm === 'Migration')!.components['org.keycloak.keys.KeyProvider']!).find((p) => p.name === 'rsa-generated')!.config;
      assert.equal(providers.find((p) => p.providerId === 'rsa')!.config.privateKey![0], fixtureKey.privateKey![0]);
      assert.equal(providers.find((p) => p.providerId === 'rsa')!.config.certificate![0], fixtureKey.certificate![0]);
      const back = run(['realm', 'import', file, '--if-exists', 'overwrite']);
      assert.equal(back.status, 0, back.stdout + back.stderr);
      assert.match(back.stdout, /^realm Migration: overwritten$/m);
      assert.match(back.stdout, /^ {2}imported user offline-test-user$/m);
      assert.match(back.stdout, /^ {2}mapped {3}identity provider m3-acme-idp - oidc, of organization m3-acme; /m);
      assert.match(back.stdout, /^ {2}mapped {3}realm role uma_authorization - .*granted to 3 user\(s\)$/m);
      assert.match(back.stdout, /^ {2}imported client role migration-test-client-role of migration-test-client$/m);
      assert.match(back.stdout, new RegExp(`^ {2}imported signing key realmgate-rs256-1 - RS256, kid ${kid}: signs the realm's tokens`, 'm'));
      assert.equal(JSON.parse(run(['realm', 'export', 'Migration']).stdout).roles.realm.length, 4);
      assert.match(run(['realm', 'export', '--help']).stdout, /--with-secrets/);
    });
  });
}
