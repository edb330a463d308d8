import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import { startTestServer, REALM } from '../helpers/server.js';
import { authorizeInBrowser } from '../helpers/fetch-browser.js';
import { dialects } from '../helpers/db.js';

// RFC 9449 with an independent relying party: openid-client v6's DPoP handle (getDPoPHandle) makes the
// proofs of a public client's code exchange (with PKCE and dpop_jkt), its refreshes and its userinfo call;
// the user's part goes over real HTTP as a browser's would.

for (const dialect of dialects()) {
  test(`openid-client with DPoP: code flow with PKCE and dpop_jkt, refresh, userinfo; the bound refresh token refuses another key (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const config = await oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), 'native-app', { [oidc.clockSkew]: 0 }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
      assert.ok((config.serverMetadata().dpop_signing_alg_values_supported ?? []).includes('ES256'));
      const keyPair = await oidc.randomDPoPKeyPair('ES256');
      const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
      const DPoP = oidc.getDPoPHandle(config, keyPair);

      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const redirectUri = 'http://127.0.0.1:47002/callback';
      const authUrl = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid core_data',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        // RFC 9449 10: the code is bound to this key.
        dpop_jkt: jkt,
      });
      const callback = await authorizeInBrowser(ts, authUrl);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true }, undefined, { DPoP });
      assert.equal(tokens.token_type.toLowerCase(), 'dpop');
      assert.deepEqual((decodeJwt(tokens.access_token) as { cnf?: unknown }).cnf, { jkt });

      const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP });
      assert.equal(info.sub, ts.user.id);

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
      assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
      assert.deepEqual((decodeJwt(refreshed.access_token) as { cnf?: unknown }).cnf, { jkt });
      assert.equal((await oidc.fetchUserInfo(config, refreshed.access_token, ts.user.id, { DPoP })).sub, ts.user.id);

      // Another key cannot use the bound refresh token (RFC 9449 5), nor does the token work without DPoP.
      const thief = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      await assert.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: thief }), (err: Error & { error?: string }) => err.error === 'invalid_dpop_proof');
      await assert.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token!), (err: Error & { error?: string }) => err.error === 'invalid_dpop_proof');
      await assert.rejects(oidc.fetchUserInfo(config, refreshed.access_token, ts.user.id), (err: Error & { cause?: unknown }) => /invalid_token|DPoP/.test(JSON.stringify(err.cause ?? err.message)));
    } finally {
      await ts.close();
    }
  });
}
