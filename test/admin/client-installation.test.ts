import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const KEYCLOAK_JSON = 'keycloak-oidc-keycloak-json';

// keycloak-admin-client's clients.getInstallationProviders, unchanged: a client's keycloak.json, whose
// auth-server-url and realm lead an adapter (keycloak-js: `${url}/realms/${realm}/...`) to this realm.
for (const dialect of dialects()) {
  describe(`admin API: a client's keycloak.json (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("a public client's file: Keycloak's keys, and its URL and realm lead to the realm's issuer", async () => {
      const file = (await ts.kc.clients.getInstallationProviders({ realm: REALM, id: ts.publicClient.id, providerId: KEYCLOAK_JSON })) as unknown as Record<string, unknown>;
      assert.deepEqual(file, {
        realm: REALM,
        'auth-server-url': `${ts.config.authUrl}/auth/`,
        'ssl-required': 'external',
        resource: ts.publicClient.id,
        'public-client': true,
        'confidential-port': 0,
      });
      // keycloak-js joins the URL (without its last slash) and the realm: the issuer of the realm's tokens.
      const discovery = (await (await fetch(`${ts.baseUrl}/auth/realms/${REALM}/.well-known/openid-configuration`)).json()) as { issuer: string };
      assert.equal(discovery.issuer, `${String(file['auth-server-url']).replace(/\/$/, '')}/realms/${String(file.realm)}`);
    });

    test("a confidential client's file has no credentials (only the secret's hash is kept); with client roles, use-resource-role-mappings", async () => {
      let file = (await ts.kc.clients.getInstallationProviders({ realm: REALM, id: ts.client.id, providerId: KEYCLOAK_JSON })) as unknown as Record<string, unknown>;
      assert.equal(file['public-client'], undefined);
      assert.equal(file.credentials, undefined);
      assert.ok(!JSON.stringify(file).includes(ts.client.secret), 'never the secret');
      assert.equal(file['use-resource-role-mappings'], undefined);
      await ts.kc.clients.createRole({ realm: REALM, id: ts.client.id, name: 'reader' });
      file = (await ts.kc.clients.getInstallationProviders({ realm: REALM, id: ts.client.id, providerId: KEYCLOAK_JSON })) as unknown as Record<string, unknown>;
      assert.equal(file['use-resource-role-mappings'], true);
    });

    test('refusals: another provider or client 404, view-clients needed', async () => {
      const other = await errorOf(ts.kc.clients.getInstallationProviders({ realm: REALM, id: ts.client.id, providerId: 'keycloak-oidc-keycloak-subsystem' }));
      assert.deepEqual([other.status, other.body.errorMessage], [404, 'Unknown Provider']);
      assert.equal(await statusOf(ts.kc.clients.getInstallationProviders({ realm: REALM, id: 'no-such-client', providerId: KEYCLOAK_JSON })), 404);
      const users = await serviceAccountAdmin(ts, REALM, 'install-users', ['view-users']);
      assert.equal(await statusOf(users.kc.clients.getInstallationProviders({ realm: REALM, id: ts.client.id, providerId: KEYCLOAK_JSON })), 403);
      const viewer = await serviceAccountAdmin(ts, REALM, 'install-viewer', ['view-clients']);
      assert.equal(((await viewer.kc.clients.getInstallationProviders({ realm: REALM, id: ts.client.id, providerId: KEYCLOAK_JSON })) as unknown as { resource: string }).resource, ts.client.id);
    });
  });
}
