import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';
import { MAPPER_TYPES } from '../../src/oauth/protocol-mappers.js';

const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };

for (const dialect of dialects()) {
  describe(`admin API: serverinfo (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("keycloak-admin-client's serverInfo.find: a version the Terraform provider and keycloak-config-cli parse, the features, the algorithms", async () => {
      const info = await ts.kc.serverInfo.find();
      // The Terraform provider parses systemInfo.version with hashicorp/go-version at its first login:
      // MAJOR.MINOR.PATCH, a Keycloak 26 (the admin API Realmgate answers).
      assert.match(info.systemInfo!.version!, /^26\.\d+\.\d+$/);
      assert.equal((info.systemInfo as Record<string, unknown>).realmgateVersion, pkg.version);
      assert.ok(info.systemInfo!.uptimeMillis! >= 0);
      const features = new Map(info.features!.map((f) => [f.name, f.enabled]));
      assert.equal(features.get('ORGANIZATION'), true);
      assert.equal(features.get('PAR'), true, 'RFC 9126 pushed authorization requests');
      assert.equal(features.get('DPOP'), true, 'RFC 9449 DPoP');
      assert.equal(features.get('ADMIN_FINE_GRAINED_AUTHZ_V2'), false, 'the Terraform provider asks for this one');
      assert.deepEqual(info.cryptoInfo!.clientSignatureAsymmetricAlgorithms, ['RS256', 'ES256', 'EdDSA']);
      assert.deepEqual(info.themes!.login!.map((t) => t.name), ['realmgate']);
      assert.ok(info.memoryInfo!.used > 0 && info.memoryInfo!.used < info.memoryInfo!.total);
      // The mapper types the admin API accepts, with the config each reads.
      const types = info.protocolMapperTypes!['openid-connect']!;
      assert.deepEqual(types.map((t) => t.id).sort(), [
        'oidc-audience-mapper',
        'oidc-group-membership-mapper',
        'oidc-hardcoded-claim-mapper',
        'oidc-usermodel-attribute-mapper',
        'oidc-usermodel-client-role-mapper',
        'oidc-usermodel-property-mapper',
        'oidc-usermodel-realm-role-mapper',
        'oidc-usersessionmodel-note-mapper',
      ]);
      // The same list the admin API accepts (one source).
      assert.deepEqual(types.map((t) => t.id).sort(), [...MAPPER_TYPES].sort());
      assert.ok(types.find((t) => t.id === 'oidc-usermodel-client-role-mapper')!.properties.some((p) => p.name === 'usermodel.clientRoleMapping.clientId'));
      assert.ok(types.find((t) => t.id === 'oidc-usermodel-attribute-mapper')!.properties.some((p) => p.name === 'user.attribute'));
      // The identity provider types Realmgate brokers to, as Keycloak lists its factories.
      assert.deepEqual(info.identityProviders, [
        { id: 'oidc', name: 'OpenID Connect v1.0' },
        { id: 'keycloak-oidc', name: 'Keycloak OpenID Connect' },
      ]);
    });

    test('a realm administrator reads it; a token of no administrator gets 403; no token 401', async () => {
      const admin = await serviceAccountAdmin(ts, 'test', 'info-reader', ['view-users']);
      assert.match((await admin.kc.serverInfo.find()).systemInfo!.version!, /^26\./);
      const none = await serviceAccountAdmin(ts, 'test', 'no-roles', []);
      assert.equal(await statusOf(none.kc.serverInfo.find()), 403);
      const anonymous = await fetch(`${ts.baseUrl}/auth/admin/serverinfo`);
      assert.equal(anonymous.status, 401);
    });
  });
}
