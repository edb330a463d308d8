import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { pageKind } from '../helpers/flow.js';
import { FetchCookieJar, browse, signInThroughPages } from '../helpers/fetch-browser.js';
import { dialects } from '../helpers/db.js';
import { changeClient } from '../../src/admin/operations.js';

// RFC 9126 with an independent relying party: openid-client v6 reads pushed_authorization_request_endpoint
// from our discovery document, pushes the request (buildAuthorizationUrlWithPAR), and exchanges the code
// with PKCE; the user's part goes over real HTTP as a browser's would.

type Auth = 'basic' | 'post' | 'none';

async function discover(ts: TestServer, auth: Auth): Promise<oidc.Configuration> {
  const metadata = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
  const clientId = auth === 'none' ? 'native-app' : ts.client.id;
  const method = auth === 'basic' ? oidc.ClientSecretBasic(ts.client.secret) : auth === 'post' ? oidc.ClientSecretPost(ts.client.secret) : oidc.None();
  return oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), clientId, metadata, method, { execute: [oidc.allowInsecureRequests] });
}

async function pushedFlow(ts: TestServer, auth: Auth): Promise<{ config: oidc.Configuration; authUrl: URL; tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers }> {
  const config = await discover(ts, auth);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const redirectUri = auth === 'none' ? 'http://127.0.0.1:47001/callback' : ts.client.redirectUri;
  const authUrl = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: redirectUri,
    scope: 'openid core_data',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  // RFC 9126 4: the front channel carries only client_id and request_uri.
  assert.deepEqual([...authUrl.searchParams.keys()].sort(), ['client_id', 'request_uri']);
  assert.match(authUrl.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:/);
  const callback = await signInThroughPages(ts, authUrl);
  assert.equal(`${callback.origin}${callback.pathname}`, redirectUri);
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  assert.equal(tokens.claims()!.sub, ts.user.id);
  assert.equal(tokens.claims()!.nonce, nonce);
  assert.equal(tokens.scope, 'openid core_data');
  return { config, authUrl, tokens };
}

for (const dialect of dialects()) {
  test(`openid-client pushes authorization requests: Basic, client_secret_post, a public client; a used request_uri is refused (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const config = await discover(ts, 'basic');
      const meta = config.serverMetadata();
      assert.equal(meta.pushed_authorization_request_endpoint, `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/ext/par/request`);
      assert.equal(meta.require_pushed_authorization_requests, false);

      const { authUrl } = await pushedFlow(ts, 'basic');
      await pushedFlow(ts, 'post');
      await pushedFlow(ts, 'none');

      // The same authorization URL again (a reload of it, or a replay): refused on a page, no redirect.
      const again = await browse(new FetchCookieJar(), authUrl);
      assert.equal(again.status, 400);
      assert.equal(again.headers.get('location'), null);
      assert.equal(pageKind(await again.text()), 'error');
    } finally {
      await ts.close();
    }
  });

  test(`openid-client: a wrong secret is 401 invalid_client at the PAR endpoint; a client that requires PAR refuses openid-client's plain request, takes its pushed one (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const bad = await oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), ts.client.id, {}, oidc.ClientSecretBasic('not-the-secret'), { execute: [oidc.allowInsecureRequests] });
      await assert.rejects(oidc.buildAuthorizationUrlWithPAR(bad, { redirect_uri: ts.client.redirectUri, scope: 'openid' }), (err: unknown) => {
        assert.ok(err instanceof oidc.ResponseBodyError || err instanceof oidc.WWWAuthenticateChallengeError, String(err));
        assert.equal((err as { status: number }).status, 401);
        return true;
      });
      // An invalid redirect_uri: openid-client gets RFC 9126 2.3's JSON error, no redirect anywhere.
      const config = await discover(ts, 'basic');
      await assert.rejects(oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: 'https://evil.example/cb', scope: 'openid' }), (err: unknown) => {
        assert.ok(err instanceof oidc.ResponseBodyError, String(err));
        assert.equal(err.status, 400);
        assert.equal(err.error, 'invalid_request');
        return true;
      });

      await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { requirePushedAuthorizationRequests: true } });
      const plain = oidc.buildAuthorizationUrl(config, { redirect_uri: ts.client.redirectUri, scope: 'openid', state: 'plain' });
      const refused = await browse(new FetchCookieJar(), plain);
      assert.equal(refused.status, 303);
      const back = new URL(refused.headers.get('location')!);
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      assert.equal(back.searchParams.get('state'), 'plain');
      await pushedFlow(ts, 'basic');
    } finally {
      await ts.close();
    }
  });
}
