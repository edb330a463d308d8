import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { pageKind } from '../helpers/flow.js';
import { FetchCookieJar as CookieJar, authorizeInBrowser, browse, seeOther } from '../helpers/fetch-browser.js';
import { dialects } from '../helpers/db.js';
import { createClient, updateClient } from '../../src/admin/operations.js';
import { SESSION_COOKIE } from '../../src/http/cookies.js';

/** A relying party configured only from the server's discovery document. */
async function discover(ts: TestServer, secret: string, clientId = ts.client.id): Promise<oidc.Configuration> {
  // The server's clock is manual: tell openid-client how far it is from ours, so that it checks the
  // id token's iat and exp against the server's time.
  const metadata = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
  // The test server is plain http on 127.0.0.1; openid-client refuses http unless told otherwise.
  return oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/test`), clientId, metadata, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

interface FlowStart {
  config: oidc.Configuration;
  /** The authorization request the browser was sent to. */
  authUrl: URL;
  callback: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/**
 * Runs discovery and the browser part; returns the configuration, the client's callback URL and the PKCE verifier.
 * By default as web-app, asking for `openid core_data offline_access`, in a new browser.
 */
async function startFlow(ts: TestServer, secret: string, opts: { clientId?: string; scope?: string; jar?: CookieJar; resources?: string[] } = {}): Promise<FlowStart> {
  const config = await discover(ts, secret, opts.clientId);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params = new URLSearchParams({
    redirect_uri: ts.client.redirectUri,
    scope: opts.scope ?? 'openid core_data offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  for (const r of opts.resources ?? []) params.append('resource', r);
  const authUrl = oidc.buildAuthorizationUrl(config, params);
  const callback = await authorizeInBrowser(ts, authUrl, opts.jar);
  return { config, authUrl, callback, verifier, state, nonce };
}

/** Keeps the raw JSON of successful token responses: openid-client normalizes some fields before we see them. */
function recordTokenResponses(config: oidc.Configuration, seen: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  config[oidc.customFetch] = async (url, options) => {
    // @types/node 20 does not list Uint8Array as a fetch body, though undici accepts it.
    const res = await fetch(url, options as RequestInit);
    if (url === config.serverMetadata().token_endpoint && res.ok) seen.push((await res.clone().json()) as Record<string, unknown>);
    return res;
  };
  return seen;
}

/** RFC 6750 3 / RFC 6749 5.2: a failure that carries WWW-Authenticate, which oauth4webapi raises as a challenge error. */
async function challengeError(promise: Promise<unknown>, status: number, scheme: string): Promise<oidc.WWWAuthenticateChallengeError> {
  const err = await promise.then(
    () => assert.fail('the request succeeded'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof oidc.WWWAuthenticateChallengeError, `expected a WWWAuthenticateChallengeError, got ${String(err)}`);
  assert.equal(err.status, status);
  assert.equal(err.cause[0]?.scheme, scheme);
  return err;
}

async function assertRejected(promise: Promise<unknown>, error: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof oidc.ResponseBodyError, `expected a ResponseBodyError, got ${String(err)}`);
    assert.equal(err.error, error);
    assert.equal(err.status, 400);
    return true;
  });
}

/** A relying party that registered where to return after logout. */
const RP = { id: 'rp-app', secret: 'rp-app-secret', postLogoutUri: 'https://rp.example/after-logout' };

for (const dialect of dialects()) {
  test(`openid-client: discovery, code flow with PKCE, rotation and reuse detection (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const { callback, verifier, state, nonce } = await startFlow(ts, ts.client.secret);
      let config = await discover(ts, ts.client.secret);
      const server = config.serverMetadata();
      assert.equal(server.issuer, `${ts.baseUrl}/auth/realms/test`);
      assert.equal(`${callback.origin}${callback.pathname}`, ts.client.redirectUri);
      assert.equal(callback.searchParams.get('state'), state);
      assert.equal(callback.searchParams.get('iss'), server.issuer);
      assert.ok(callback.searchParams.get('code'));

      const jwks = createRemoteJWKSet(new URL(server.jwks_uri!));
      // The server's clock is manual: verify exp/iat against it, not the wall clock.
      const verifyAccessToken = async (token: string): Promise<void> => {
        const { payload } = await jwtVerify(token, jwks, { issuer: server.issuer, audience: 'account', currentDate: new Date(ts.clock.nowMs()) });
        assert.equal(payload.azp, ts.client.id);
        assert.equal(payload.sub, ts.user.id);
        assert.deepEqual(payload.organization, ['acme']);
        assert.equal(payload.scope, 'openid core_data offline_access');
      };

      const raw = recordTokenResponses(config);
      // openid-client validates the id token: signature through the JWKS, iss, aud, exp, iat, nonce, at_hash.
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      const idClaims = tokens.claims()!;
      assert.equal(idClaims.sub, ts.user.id);
      assert.equal(idClaims.aud, ts.client.id);
      assert.equal(idClaims.nonce, nonce);
      assert.equal(typeof idClaims.auth_time, 'number');
      assert.equal(typeof idClaims.at_hash, 'string');
      assert.equal(idClaims.sid, tokens.session_state);
      // oauth4webapi lowercases token_type; the spec's value is "Bearer".
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(raw[0]?.token_type, 'Bearer');
      assert.equal(tokens.expires_in, 259_200);
      assert.equal(tokens.refresh_expires_in, 15_552_000);
      assert.equal(tokens['not-before-policy'], 0);
      assert.equal(tokens.scope, 'openid core_data offline_access');
      assert.ok(tokens.refresh_token);
      await verifyAccessToken(tokens.access_token);

      const refreshTokens = [tokens.refresh_token];
      for (let i = 0; i < 3; i++) {
        // A day later each time: every refresh must start a fresh refresh period.
        ts.clock.advance(86_400);
        config = await discover(ts, ts.client.secret);
        recordTokenResponses(config, raw);
        const r = await oidc.refreshTokenGrant(config, refreshTokens.at(-1)!);
        // OIDC Core 12.2: a refreshed id token keeps sub and auth_time.
        assert.equal(r.claims()?.sub, ts.user.id);
        assert.equal(r.claims()?.auth_time, idClaims.auth_time);
        assert.ok(r.refresh_token);
        assert.ok(!refreshTokens.includes(r.refresh_token), 'a refresh token was issued twice');
        assert.equal(r.refresh_expires_in, 15_552_000);
        assert.equal(r.expires_in, 259_200);
        await verifyAccessToken(r.access_token);
        refreshTokens.push(r.refresh_token);
      }

      assert.equal(raw.length, 4);
      assert.ok(raw.every((body) => body.token_type === 'Bearer'));

      // Reuse of a rotated token means theft: it fails, and so does the latest token of the same chain.
      await assertRejected(oidc.refreshTokenGrant(config, refreshTokens[1]!), 'invalid_grant');
      await assertRejected(oidc.refreshTokenGrant(config, refreshTokens[3]!), 'invalid_grant');
    } finally {
      await ts.close();
    }
  });

  test(`openid-client: RFC 8707 resources bind the grant; the token requests narrow them (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const [api, exportsApi, billing] = ['https://api.example.com', 'https://exports.example.com/v1', 'https://billing.example.com'];
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, audiences: { set: [api, exportsApi, billing] } });
      const { config, callback, verifier, state, nonce } = await startFlow(ts, ts.client.secret, { resources: [api, exportsApi] });
      const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const audOf = async (token: string): Promise<unknown> =>
        (await jwtVerify(token, jwks, { issuer: config.serverMetadata().issuer, currentDate: new Date(ts.clock.nowMs()) })).payload.aud;

      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
      assert.deepEqual(await audOf(tokens.access_token), [api, exportsApi]);
      const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: exportsApi });
      assert.equal(await audOf(narrowed.access_token), exportsApi);
      // billing is the client's, not the grant's: refused, and the refresh token is not used up.
      await assertRejected(oidc.refreshTokenGrant(config, narrowed.refresh_token!, { resource: billing }), 'invalid_target');
      const both = await oidc.refreshTokenGrant(config, narrowed.refresh_token!);
      assert.deepEqual(await audOf(both.access_token), [api, exportsApi]);
    } finally {
      await ts.close();
    }
  });

  test(`openid-client: a wrong client secret fails the code exchange with invalid_client (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      const { callback, verifier, state, nonce } = await startFlow(ts, ts.client.secret);
      const impostor = await discover(ts, `${ts.client.secret}x`);
      // RFC 6749 5.2: a 401 carries WWW-Authenticate, so oauth4webapi raises a challenge error, not a body error.
      const err = await challengeError(oidc.authorizationCodeGrant(impostor, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }), 401, 'basic');
      assert.equal(((await err.response.json()) as { error?: string }).error, 'invalid_client');
      // Control: the same code is still good for the real client, so the failure was the secret alone.
      const genuine = await discover(ts, ts.client.secret);
      const tokens = await oidc.authorizationCodeGrant(genuine, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
      assert.ok(tokens.access_token);
    } finally {
      await ts.close();
    }
  });

  test(`openid-client: userinfo, introspection, revocation and RP-initiated logout (${dialect})`, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    try {
      // web-app registers no post-logout redirect URI: a relying party that does.
      await createClient(ts.store, { realmId: REALM, clientId: RP.id, name: 'Relying Party', redirectUris: [ts.client.redirectUri], secret: RP.secret, postLogoutRedirectUris: [RP.postLogoutUri] });
      const jar = new CookieJar();
      const { config, authUrl, callback, verifier, state, nonce } = await startFlow(ts, RP.secret, { clientId: RP.id, scope: 'openid profile email core_data offline_access', jar });
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      const sub = tokens.claims()!.sub;
      assert.equal(sub, ts.user.id);
      assert.ok(tokens.refresh_token, 'a refresh token');
      assert.ok(tokens.id_token, 'an id token');

      // UserInfo (OIDC Core 5.3): openid-client sends the access token as Bearer and checks sub against the id token's.
      const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
      assert.equal(info.sub, ts.user.id);
      assert.equal(info.preferred_username, ts.user.username, 'the profile scope releases preferred_username');
      assert.equal(info.email, 'alice@example.com', 'the email scope releases email');

      // Introspection (RFC 7662) of both tokens, by the client that holds them.
      const access = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(access.active, true);
      assert.equal(access.client_id, RP.id);
      assert.equal(access.sub, ts.user.id);
      assert.equal(access.token_type, 'Bearer');
      assert.equal(access.scope, 'openid profile email core_data offline_access');
      const refresh = await oidc.tokenIntrospection(config, tokens.refresh_token, { token_type_hint: 'refresh_token' });
      assert.equal(refresh.active, true);
      assert.equal(refresh.client_id, RP.id);
      assert.equal(refresh.sub, ts.user.id);
      assert.equal(refresh.token_type, 'refresh_token');
      // Another confidential client of the realm (an API) may introspect the access token and learns
      // which client it was issued to; the refresh token stays its own client's business.
      const other = await discover(ts, ts.client.secret);
      const seen = await oidc.tokenIntrospection(other, tokens.access_token);
      assert.equal(seen.active, true);
      assert.equal(seen.client_id, RP.id);
      assert.deepEqual(await oidc.tokenIntrospection(other, tokens.refresh_token), { active: false });

      // Revocation (RFC 7009) of the refresh token ends its chain, and the access token issued from it.
      await oidc.tokenRevocation(config, tokens.refresh_token);
      assert.deepEqual(await oidc.tokenIntrospection(config, tokens.refresh_token, { token_type_hint: 'refresh_token' }), { active: false });
      assert.deepEqual(await oidc.tokenIntrospection(config, tokens.access_token), { active: false });
      await assertRejected(oidc.refreshTokenGrant(config, tokens.refresh_token), 'invalid_grant');
      const denied = await challengeError(oidc.fetchUserInfo(config, tokens.access_token, sub), 401, 'bearer');
      assert.equal(denied.cause[0]?.parameters.error, 'invalid_token');

      // Revoking tokens does not end the browser session: the same authorization request is answered
      // without any page (in a copy of the browser, so as not to disturb it).
      assert.ok(jar.has(SESSION_COOKIE), 'the browser has a session');
      const stolen = jar.clone();
      assert.equal(seeOther(await browse(jar.clone(), authUrl), ts.baseUrl).origin, new URL(ts.client.redirectUri).origin, 'SSO before logout');

      // RP-Initiated Logout 1.0 with a hint for this very session: no question, straight back with the state.
      const logoutState = 'bye /+&=é';
      const endSession = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token, post_logout_redirect_uri: RP.postLogoutUri, state: logoutState });
      assert.equal(`${endSession.origin}${endSession.pathname}`, config.serverMetadata().end_session_endpoint);
      assert.equal(endSession.searchParams.get('client_id'), RP.id);
      const back = seeOther(await browse(jar, endSession), ts.baseUrl);
      assert.equal(`${back.origin}${back.pathname}`, RP.postLogoutUri);
      assert.equal(back.searchParams.get('state'), logoutState);
      assert.ok(!jar.has(SESSION_COOKIE), 'the session cookie is cleared');

      // The session ended on the server, not only in the browser: its old cookie now meets the login page.
      const next = seeOther(await browse(stolen, authUrl), ts.baseUrl);
      assert.match(next.pathname, /^\/auth\/realms\/test\/login-actions\/[^/]+$/);
      assert.equal(pageKind(await (await browse(stolen, next)).text()), 'login');
    } finally {
      await ts.close();
    }
  });
}
