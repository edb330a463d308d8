import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { startTestServer, REALM } from '../helpers/server.js';
import { pageKind } from '../helpers/flow.js';
import { FetchCookieJar, browse, signInThroughPages } from '../helpers/fetch-browser.js';
import { dialects } from '../helpers/db.js';
import { changeClient, createClient } from '../../src/admin/operations.js';

// RFC 9101 with an independent relying party: openid-client v6 signs the authorization request
// (buildAuthorizationUrlWithJAR: iss, aud the issuer, client_id, iat, nbf, exp, jti), sends it by value,
// or pushes it (buildAuthorizationUrlWithPAR after JAR, RFC 9126 3), and exchanges the code with PKCE.

const CLIENT = 'jar-rp';

for (const dialect of dialects()) {
  test(`openid-client signs its authorization requests (JAR), by value and pushed; a client requiring request objects refuses a plain one; another key's object is an error page (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const { privateKey, publicKey } = await generateKeyPair('PS256');
      const { secret } = await createClient(ts.store, {
        realmId: REALM,
        clientId: CLIENT,
        redirectUris: [ts.client.redirectUri],
        jwtKeys: { useJwksString: true, jwksString: JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'p1', alg: 'PS256' }] }) },
        requestObjectSignatureAlg: 'PS256',
      });
      const metadata = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
      const config = await oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), CLIENT, metadata, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
      const meta = config.serverMetadata();
      assert.equal(meta.request_parameter_supported, true);
      assert.ok(meta.request_object_signing_alg_values_supported?.includes('PS256'));

      const flow = async (o: { par: boolean; key?: CryptoKey }): Promise<URL> => {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        const jarUrl = await oidc.buildAuthorizationUrlWithJAR(
          config,
          { redirect_uri: ts.client.redirectUri, scope: 'openid core_data', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, max_age: '3600' },
          { key: o.key ?? privateKey, kid: 'p1' },
        );
        // RFC 9101 5: the front channel carries client_id and the request object.
        assert.deepEqual([...jarUrl.searchParams.keys()].sort(), ['client_id', 'request']);
        const authUrl = o.par ? await oidc.buildAuthorizationUrlWithPAR(config, jarUrl.searchParams) : jarUrl;
        if (o.par) assert.match(authUrl.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:/);
        if (o.key) return authUrl;
        const callback = await signInThroughPages(ts, authUrl);
        assert.equal(`${callback.origin}${callback.pathname}`, ts.client.redirectUri);
        const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
        assert.equal(tokens.claims()!.sub, ts.user.id);
        assert.equal(tokens.scope, 'openid core_data');
        return authUrl;
      };
      await flow({ par: false });
      await flow({ par: true });

      // Another key: the object is not the client's word, so nothing is redirected.
      const other = (await generateKeyPair('PS256')).privateKey;
      const forged = await browse(new FetchCookieJar(), await flow({ par: false, key: other }));
      assert.equal(forged.status, 400);
      assert.equal(forged.headers.get('location'), null);
      assert.equal(pageKind(await forged.text()), 'error');
      // Pushed, it is openid-client's error: invalid_request_object in JSON (RFC 9126 2.3).
      await assert.rejects(flow({ par: true, key: other }), (err: unknown) => {
        assert.ok(err instanceof oidc.ResponseBodyError, String(err));
        assert.equal(err.error, 'invalid_request_object');
        return true;
      });

      await changeClient(ts.store, { realmId: REALM, clientId: CLIENT, changes: { requestObjectRequired: 'request only' } });
      const plain = oidc.buildAuthorizationUrl(config, { redirect_uri: ts.client.redirectUri, scope: 'openid', state: 'plain' });
      const refused = new URL((await browse(new FetchCookieJar(), plain)).headers.get('location')!);
      assert.equal(`${refused.origin}${refused.pathname}`, ts.client.redirectUri);
      assert.equal(refused.searchParams.get('error'), 'invalid_request');
      assert.equal(refused.searchParams.get('state'), 'plain');
      await flow({ par: false });
      await flow({ par: true });
    } finally {
      await ts.close();
    }
  });
}
