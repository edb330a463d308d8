import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { signInThroughPages } from '../helpers/fetch-browser.js';
import { dialects } from '../helpers/db.js';
import { createInitialAccess } from '../../src/admin/operations/initial-access.js';

// RFC 7591 with an independent relying party: openid-client v6 finds registration_endpoint in our
// discovery document, registers itself with an initial access token (dynamicClientRegistration), then
// signs a user in with the client it was given, refreshes, and uses the registration's own metadata.

async function register(ts: TestServer, metadata: Partial<oidc.ClientMetadata>, auth: oidc.ClientAuth): Promise<oidc.Configuration> {
  const { token } = await createInitialAccess(ts.store, { realmId: REALM });
  // The server's clock is manual: openid-client checks the id token's iat and exp against it.
  const skew = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
  return oidc.dynamicClientRegistration(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), { ...metadata, ...skew }, auth, {
    initialAccessToken: token,
    execute: [oidc.allowInsecureRequests],
  });
}

async function signIn(ts: TestServer, config: oidc.Configuration, redirectUri: string): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const authUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const callback = await signInThroughPages(ts, authUrl);
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  assert.equal(tokens.claims()!.sub, ts.user.id);
  assert.equal(tokens.claims()!.aud, config.clientMetadata().client_id);
  return tokens;
}

for (const dialect of dialects()) {
  test(`openid-client registers through discovery with an initial access token, signs in and refreshes with the new client (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const redirectUri = 'https://rp.example.net/callback';
      // A confidential client: Basic with the secret the registration returned.
      const config = await register(ts, { redirect_uris: [redirectUri], client_name: 'openid-client RP', token_endpoint_auth_method: 'client_secret_basic' }, oidc.ClientSecretBasic());
      assert.equal(config.serverMetadata().registration_endpoint, `${ts.baseUrl}/auth/realms/${REALM}/clients-registrations/openid-connect`);
      const meta = config.clientMetadata();
      assert.match(meta.client_id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof meta.client_secret, 'string');
      assert.equal(meta.client_name, 'openid-client RP');
      assert.equal(typeof meta.registration_access_token, 'string');
      const tokens = await signIn(ts, config, redirectUri);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.ok(refreshed.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      const info = await oidc.fetchUserInfo(config, refreshed.access_token, ts.user.id);
      assert.equal(info.sub, ts.user.id);

      // A public client (none): no secret, PKCE.
      const nativeRedirect = 'http://127.0.0.1:47123/cb';
      const native = await register(ts, { redirect_uris: [nativeRedirect], token_endpoint_auth_method: 'none' }, oidc.None());
      assert.equal(native.clientMetadata().client_secret, undefined);
      await signIn(ts, native, nativeRedirect);

      // The registration client URI reads the registration back with its registration access token (RFC 7592).
      const read = await fetch(String(meta.registration_client_uri), { headers: { authorization: `Bearer ${String(meta.registration_access_token)}` } });
      assert.equal(read.status, 200);
      assert.equal((await read.json()).client_id, meta.client_id);

      // A used-up initial access token: openid-client surfaces the 401 with RFC 6750's challenge.
      const { token } = await createInitialAccess(ts.store, { realmId: REALM });
      const server = new URL(`${ts.baseUrl}/auth/realms/${REALM}`);
      await oidc.dynamicClientRegistration(server, { redirect_uris: [redirectUri] }, undefined, { initialAccessToken: token, execute: [oidc.allowInsecureRequests] });
      await assert.rejects(oidc.dynamicClientRegistration(server, { redirect_uris: [redirectUri] }, undefined, { initialAccessToken: token, execute: [oidc.allowInsecureRequests] }), (err: unknown) => {
        assert.equal((err as { status?: number }).status, 401, String(err));
        return true;
      });
      // Bad metadata: RFC 7591's error code reaches the library.
      const { token: t2 } = await createInitialAccess(ts.store, { realmId: REALM });
      await assert.rejects(oidc.dynamicClientRegistration(server, { redirect_uris: ['http://rp.example.net/cb'] }, undefined, { initialAccessToken: t2, execute: [oidc.allowInsecureRequests] }), (err: unknown) => {
        assert.equal((err as { error?: string }).error, 'invalid_redirect_uri', String(err));
        return true;
      });
    } finally {
      await ts.close();
    }
  });
}
