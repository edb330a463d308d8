import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createClient } from '../../src/admin/operations.js';

// RFC 8693 with an independent client: openid-client v6 reads grant_types_supported from our discovery
// document and sends the exchange with genericGrantRequest, authenticated by client_secret_basic,
// client_secret_post and private_key_jwt; the user's token comes from the password grant of another client.

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const RT = 'urn:ietf:params:oauth:token-type:refresh_token';

async function discover(ts: TestServer, clientId: string, method: oidc.ClientAuth): Promise<oidc.Configuration> {
  const metadata = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
  return oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), clientId, metadata, method, { execute: [oidc.allowInsecureRequests] });
}

for (const dialect of dialects()) {
  test(`openid-client exchanges a user's token (Basic, client_secret_post, private_key_jwt); refusals are RFC 6749 errors (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const spa = await createClient(ts.store, { realmId: REALM, clientId: 'spa', redirectUris: [], standardFlowEnabled: false, directAccessGrantsEnabled: true, audiences: ['api', 'api-post', 'api-jwt'] });
      const api = await createClient(ts.store, { realmId: REALM, clientId: 'api', redirectUris: [], standardFlowEnabled: false, standardTokenExchange: true, tokenExchangeRefresh: 'SAME_SESSION', audiences: ['backend'] });
      const post = await createClient(ts.store, { realmId: REALM, clientId: 'api-post', redirectUris: [], standardFlowEnabled: false, standardTokenExchange: true, authMethods: ['client_secret_post'] });
      await createClient(ts.store, {
        realmId: REALM,
        clientId: 'api-jwt',
        redirectUris: [],
        standardFlowEnabled: false,
        standardTokenExchange: true,
        authMethods: ['private_key_jwt'],
        jwtKeys: { useJwksString: true, jwksString: JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] }) },
      });
      const outsider = await createClient(ts.store, { realmId: REALM, clientId: 'outsider', redirectUris: [], standardFlowEnabled: false, standardTokenExchange: true });
      await createClient(ts.store, { realmId: REALM, clientId: 'backend', redirectUris: [], standardFlowEnabled: false });

      const spaConfig = await discover(ts, 'spa', oidc.ClientSecretBasic(spa.secret!));
      assert.ok(spaConfig.serverMetadata().grant_types_supported?.includes(GRANT));
      const user = await oidc.genericGrantRequest(spaConfig, 'password', { username: ts.user.username, password: ts.user.password, scope: 'openid profile core_data' });
      const sid = user.claims()?.sid;

      const apiConfig = await discover(ts, 'api', oidc.ClientSecretBasic(api.secret!));
      const exchanged = await oidc.genericGrantRequest(apiConfig, GRANT, { subject_token: user.access_token, subject_token_type: AT, audience: 'backend', scope: 'core_data' });
      assert.equal(exchanged.token_type, 'bearer');
      assert.equal(exchanged.scope, 'core_data');
      assert.equal(exchanged.issued_token_type, AT);
      assert.equal(exchanged.refresh_token, undefined);
      assert.equal(typeof exchanged.expires_in, 'number');
      const intro = await oidc.tokenIntrospection(apiConfig, exchanged.access_token);
      assert.equal(intro.active, true);
      assert.equal(intro.aud, 'backend');
      assert.equal(intro.azp, 'api');
      assert.equal(intro.sub, ts.user.id);
      assert.equal(intro.sid, sid);

      // SAME_SESSION: a refresh token, which openid-client then refreshes as any other.
      const withRefresh = await oidc.genericGrantRequest(apiConfig, GRANT, { subject_token: user.access_token, subject_token_type: AT, requested_token_type: RT });
      assert.equal(typeof withRefresh.refresh_token, 'string');
      const refreshed = await oidc.refreshTokenGrant(apiConfig, withRefresh.refresh_token!);
      assert.equal((await oidc.tokenIntrospection(apiConfig, refreshed.access_token)).sid, sid);

      const postConfig = await discover(ts, 'api-post', oidc.ClientSecretPost(post.secret!));
      const byPost = await oidc.genericGrantRequest(postConfig, GRANT, { subject_token: user.access_token, subject_token_type: AT });
      assert.equal(byPost.issued_token_type, AT);
      const jwtConfig = await discover(ts, 'api-jwt', oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' }));
      const byJwt = await oidc.genericGrantRequest(jwtConfig, GRANT, { subject_token: user.access_token, subject_token_type: AT, scope: 'openid' });
      assert.equal(byJwt.scope, 'openid');

      // Refusals reach the client as RFC 6749 5.2 errors, in Keycloak's words.
      const refusal = async (config: oidc.Configuration, params: Record<string, string>): Promise<{ error: string; status: number; description: string | undefined }> => {
        try {
          await oidc.genericGrantRequest(config, GRANT, { subject_token_type: AT, ...params });
        } catch (err) {
          assert.ok(err instanceof oidc.ResponseBodyError, String(err));
          return { error: err.error, status: err.status, description: err.error_description };
        }
        assert.fail('the exchange was accepted');
      };
      assert.deepEqual(await refusal(await discover(ts, 'outsider', oidc.ClientSecretBasic(outsider.secret!)), { subject_token: user.access_token }), {
        error: 'access_denied',
        status: 403,
        description: 'Client is not within the token audience',
      });
      assert.deepEqual(await refusal(apiConfig, { subject_token: `${user.access_token.slice(0, -4)}AAAA` }), { error: 'invalid_request', status: 400, description: 'Invalid token' });
      assert.deepEqual(await refusal(apiConfig, { subject_token: user.access_token, scope: 'exports' }), { error: 'invalid_scope', status: 400, description: 'Invalid scopes: exports' });
      assert.deepEqual(await refusal(spaConfig, { subject_token: user.access_token }), {
        error: 'invalid_request',
        status: 400,
        description: 'Standard token exchange is not enabled for the requested client',
      });
    } finally {
      await ts.close();
    }
  });
}
