import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type CryptoKey } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { authorizeInBrowser } from '../helpers/fetch-browser.js';
import { runAuthorization } from '../helpers/flow.js';
import { runProgram, type ProgramResult } from '../helpers/program.js';
import { createClient } from '../../src/admin/operations.js';
import { ClientKeyCache } from '../../src/oauth/client-keys.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const PYTHON = '/usr/bin/python3';

// Authlib's private_key_jwt (its PrivateKeyJWT: aud the token endpoint, iat now, exp an hour ahead, a new
// jti per request): the code exchange, then a refresh.
const SCRIPT = `
import json, sys
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import PrivateKeyJWT
a = json.loads(sys.argv[1])
s = OAuth2Session(a['client_id'], a['key'], token_endpoint_auth_method=PrivateKeyJWT(a['token_url']), redirect_uri=a['redirect_uri'])
tok = s.fetch_token(a['token_url'], code=a['code'], grant_type='authorization_code')
again = s.refresh_token(a['token_url'], refresh_token=tok['refresh_token'])
print(json.dumps({'first': tok, 'second': again}))
`;

function authlib(args: Record<string, string>): Promise<ProgramResult> {
  return runProgram(PYTHON, ['-c', SCRIPT, JSON.stringify(args)]);
}
const authlibAvailable = fs.existsSync(PYTHON) && (await authlib({}).then((r) => !/No module named/.test(r.err)));

/** A JWKS server for a client's jwks.url: counts requests; its answer can be made slow, huge or a redirect. */
function jwksServer(): Promise<{ url: string; hits: number; mode: 'ok' | 'slow' | 'huge' | 'redirect' | 'error'; keys: JWK[]; redirectHits: number; close(): Promise<void> }> {
  const state = { url: '', hits: 0, redirectHits: 0, mode: 'ok' as 'ok' | 'slow' | 'huge' | 'redirect' | 'error', keys: [] as JWK[], close: async () => undefined as void };
  const server = http.createServer((req, res) => {
    if (req.url === '/elsewhere') {
      state.redirectHits++;
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: state.keys }));
      return;
    }
    state.hits++;
    if (state.mode === 'slow') return void setTimeout(() => res.end(JSON.stringify({ keys: state.keys })), 3000).unref();
    if (state.mode === 'huge') return void res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: state.keys, pad: 'x'.repeat(100_000) }));
    if (state.mode === 'redirect') return void res.writeHead(302, { location: '/elsewhere' }).end();
    if (state.mode === 'error') return void res.writeHead(500).end();
    res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: state.keys }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      state.close = () => new Promise<void>((r) => server.close(() => r()));
      server.unref();
      resolve(state);
    }),
  );
}

for (const dialect of dialects()) {
  describe(`private_key_jwt with real clients and a JWKS URL (${dialect})`, () => {
    let ts: TestServer;
    let tokenUrl: string;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      tokenUrl = `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`;
      // Short bounds, so that the slow JWKS below costs half a second, not five.
      ts.services.clientKeys = new ClientKeyCache({ timeoutMs: 500, maxAgeMs: 600_000, cooldownMs: 30_000 }, () => ts.clock.nowMs());
    });
    after(() => ts.close());

    async function jwtClient(clientId: string, jwtKeys: Parameters<typeof createClient>[1]['jwtKeys']): Promise<void> {
      await createClient(ts.store, { realmId: REALM, clientId, redirectUris: [ts.client.redirectUri], authMethods: ['private_key_jwt'], serviceAccountsEnabled: true, jwtKeys });
    }

    async function discover(clientId: string, key: CryptoKey, kid?: string): Promise<oidc.Configuration> {
      const metadata = { [oidc.clockSkew]: Math.round((ts.clock.nowMs() - Date.now()) / 1000) };
      return oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), clientId, metadata, oidc.PrivateKeyJwt(kid ? { key, kid } : key), { execute: [oidc.allowInsecureRequests] });
    }

    test('openid-client v6 (PrivateKeyJwt, aud the issuer): code exchange with PKCE, refresh, client_credentials, introspection', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      await jwtClient('oidc-jwt', { useJwksString: true, jwksString: JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'e1' }] }) });
      const config = await discover('oidc-jwt', privateKey, 'e1');
      assert.ok(config.serverMetadata().token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
      assert.ok(config.serverMetadata().token_endpoint_auth_signing_alg_values_supported?.includes('ES256'));
      const verifier = oidc.randomPKCECodeVerifier();
      const authUrl = oidc.buildAuthorizationUrl(config, { redirect_uri: ts.client.redirectUri, scope: 'openid core_data offline_access', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's1' });
      const callback = await authorizeInBrowser(ts, authUrl);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's1', idTokenExpected: true });
      assert.equal(tokens.claims()?.aud, 'oidc-jwt');
      const again = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(again.refresh_token, tokens.refresh_token);
      const service = await oidc.clientCredentialsGrant(config);
      assert.equal(typeof service.access_token, 'string');
      const intro = await oidc.tokenIntrospection(config, again.access_token);
      assert.equal(intro.active, true);
      assert.equal(intro.client_id, 'oidc-jwt');
    });

    test("Authlib's PrivateKeyJWT (aud the token endpoint, exp an hour ahead): code exchange and refresh", { skip: authlibAvailable ? false : 'python3-authlib is not installed' }, async () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      await jwtClient('authlib-jwt', { useJwksString: true, jwksString: JSON.stringify({ keys: [publicKey.export({ format: 'jwk' })] }) });
      const r = await runAuthorization(ts, { query: { client_id: 'authlib-jwt', scope: 'core_data offline_access' } });
      const res = await authlib({ client_id: 'authlib-jwt', key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), redirect_uri: ts.client.redirectUri, code: r.code!, token_url: tokenUrl });
      assert.equal(res.code, 0, res.err);
      const { first, second } = JSON.parse(res.out) as { first: Record<string, unknown>; second: Record<string, unknown> };
      assert.equal(typeof first.access_token, 'string');
      assert.notEqual(first.refresh_token, second.refresh_token);
    });

    describe('keys from jwks.url', () => {
      let jwks: Awaited<ReturnType<typeof jwksServer>>;
      let k1: { privateKey: CryptoKey; publicKey: CryptoKey };
      before(async () => {
        jwks = await jwksServer();
        k1 = await generateKeyPair('RS256');
        jwks.keys = [{ ...(await exportJWK(k1.publicKey)), kid: 'k1', alg: 'RS256' }];
        await jwtClient('url-jwt', { useJwksUrl: true, jwksUrl: jwks.url });
      });
      after(() => jwks.close());

      const issuer = (): string => `${ts.baseUrl}/auth/realms/${REALM}`;
      async function assertion(clientId: string, key: CryptoKey, kid: string): Promise<string> {
        const t = Math.floor(ts.clock.nowMs() / 1000);
        return new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(clientId).setSubject(clientId).setAudience(issuer()).setIssuedAt(t).setExpirationTime(t + 60).sign(key);
      }
      async function grant(jwt: string): Promise<{ status: number; body: Record<string, unknown> }> {
        const res = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }

      test('fetched once and cached; an unknown kid refetches at most once per cooldown; a rotated key is found', async () => {
        assert.equal((await grant(await assertion('url-jwt', k1.privateKey, 'k1'))).status, 200);
        assert.equal((await grant(await assertion('url-jwt', k1.privateKey, 'k1'))).status, 200);
        assert.equal(jwks.hits, 1, 'cached');
        const k2 = await generateKeyPair('RS256');
        // Within the cooldown of the first fetch an unknown kid fetches nothing.
        assert.equal((await grant(await assertion('url-jwt', k2.privateKey, 'unknown'))).status, 401);
        assert.equal(jwks.hits, 1);
        ts.clock.advance(31);
        // An attacker's kid: one refetch, then none within the cooldown however many are sent.
        for (let i = 0; i < 5; i++) {
          const r = await grant(await assertion('url-jwt', k2.privateKey, `unknown-${i}`));
          assert.equal(r.status, 401);
          assert.equal(r.body.error, 'invalid_client');
        }
        assert.equal(jwks.hits, 2, 'one refetch for an unknown kid within the cooldown');
        // The client rotates: k2 published; after the cooldown it is found.
        jwks.keys = [...jwks.keys, { ...(await exportJWK(k2.publicKey)), kid: 'k2', alg: 'RS256' }];
        ts.clock.advance(61); // past the cooldown and the failure limiter's window
        assert.equal((await grant(await assertion('url-jwt', k2.privateKey, 'k2'))).status, 200);
        assert.equal(jwks.hits, 3);
      });

      for (const [mode, what] of [['slow', 'slower than the timeout'], ['huge', 'larger than 64 KB'], ['redirect', 'a redirect (not followed)'], ['error', 'an HTTP 500']] as const) {
        test(`a JWKS URL answering with ${what} gives invalid_client, never a 500`, async () => {
          const clientId = `url-${mode}`;
          await jwtClient(clientId, { useJwksUrl: true, jwksUrl: `${jwks.url}?${mode}` });
          jwks.mode = mode;
          try {
            const started = Date.now();
            const r = await grant(await assertion(clientId, k1.privateKey, 'k1'));
            assert.equal(r.status, 401, JSON.stringify(r.body));
            assert.equal(r.body.error, 'invalid_client');
            assert.ok(Date.now() - started < 2500, 'bounded by the timeout');
            // Within the cooldown, no second request to the URL.
            const hits = jwks.hits;
            assert.equal((await grant(await assertion(clientId, k1.privateKey, 'k1'))).status, 401);
            assert.equal(jwks.hits, hits);
          } finally {
            jwks.mode = 'ok';
          }
          if (mode === 'redirect') assert.equal(jwks.redirectHits, 0);
          ts.clock.advance(61);
        });
      }

      test('an unreachable JWKS URL gives invalid_client', async () => {
        const closed = http.createServer();
        await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
        const port = (closed.address() as AddressInfo).port;
        await new Promise<void>((r) => closed.close(() => r()));
        await jwtClient('url-dead', { useJwksUrl: true, jwksUrl: `http://127.0.0.1:${port}/jwks` });
        const r = await grant(await assertion('url-dead', k1.privateKey, 'k1'));
        assert.equal(r.status, 401);
        assert.equal(r.body.error, 'invalid_client');
      });
    });
  });
}
