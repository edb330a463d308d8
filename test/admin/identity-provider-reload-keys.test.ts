import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { FetchCookieJar, browse } from '../helpers/fetch-browser.js';
import { pageKind } from '../helpers/flow.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { updateRealm } from '../../src/admin/operations.js';
import { discoverProvider } from '../../src/admin/operations/identity-providers.js';
import { serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// keycloak-admin-client 26's identityProviders.reloadKeys (Keycloak's IdentityProviderResource.reloadKeys):
// a provider's cached JWKS is dropped, so the next sign-in through it fetches the keys again. The
// provider's JWKS URL points at a counter in front of node-oidc-provider's, to see each fetch.
for (const dialect of dialects()) {
  describe(`admin API: reloading an identity provider's keys (${dialect})`, () => {
    let ts: AdminTestServer;
    let up: Upstream;
    let jwksServer: http.Server;
    let fetches = 0;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/${REALM}/broker/corp/endpoint` });
      const endpoints = await discoverProvider(up.issuer);
      jwksServer = http.createServer((_req, res) => {
        fetches++;
        void fetch(endpoints.jwksUrl!).then(async (r) => res.writeHead(200, { 'content-type': 'application/json' }).end(await r.text()));
      });
      await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
      const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as { port: number }).port}/jwks`;
      const config = { ...endpoints, jwksUrl, validateSignature: 'true', useJwksUrl: 'true', clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile' };
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config });
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'unsigned', providerId: 'oidc', config: { ...config, validateSignature: 'false' } });
    });
    after(async () => {
      await up.close();
      await new Promise((r) => jwksServer.close(r));
      await ts.close();
    });

    /** A sign-in through corp up to its callback (where the ID token is checked): the page it lands on. */
    async function signInThroughCorp(sub: string): Promise<string> {
      const jar = new FetchCookieJar();
      let url = new URL(`/auth/realms/${REALM}/protocol/openid-connect/auth?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1', kc_idp_hint: 'corp' })}`, ts.baseUrl);
      up.nextAccount = { sub, email: `${sub}@corp.example`, preferred_username: sub };
      for (let i = 0; i < 20; i++) {
        if (url.host === new URL(ts.client.redirectUri).host) return 'client';
        const res = await browse(jar, url);
        if (res.status !== 302 && res.status !== 303) return pageKind(await res.text());
        url = new URL(res.headers.get('location')!, url);
      }
      throw new Error('too many redirects');
    }

    const signedIn = (kind: string): void => assert.ok(['consent', 'organization', 'client'].includes(kind), `signed in through the provider, then ${kind}`);

    test('reloadKeys drops the cached JWKS: the next sign-in fetches it again; true only for a provider with such keys', async () => {
      signedIn(await signInThroughCorp('u-1'));
      assert.equal(fetches, 1, 'the JWKS is fetched at the first sign-in');
      signedIn(await signInThroughCorp('u-2'));
      assert.equal(fetches, 1, 'and cached for the next one');

      assert.equal(await ts.kc.identityProviders.reloadKeys({ realm: REALM, alias: 'corp' }), true);
      signedIn(await signInThroughCorp('u-3'));
      assert.equal(fetches, 2, 'fetched again after reload-keys');

      assert.equal(await ts.kc.identityProviders.reloadKeys({ realm: REALM, alias: 'unsigned' }), false, 'no signature check: no keys to reload');
      assert.equal(await statusOf(ts.kc.identityProviders.reloadKeys({ realm: REALM, alias: 'nope' })), 404);
    });

    test('manage-identity-providers reloads; view-identity-providers gets 403', async () => {
      const viewer = await serviceAccountAdmin(ts, REALM, 'keys-viewer', ['view-identity-providers']);
      assert.equal(await statusOf(viewer.kc.identityProviders.reloadKeys({ realm: REALM, alias: 'corp' })), 403);
      const manager = await serviceAccountAdmin(ts, REALM, 'keys-manager', ['manage-identity-providers']);
      assert.equal(await manager.kc.identityProviders.reloadKeys({ realm: REALM, alias: 'corp' }), true);
    });
  });
}
