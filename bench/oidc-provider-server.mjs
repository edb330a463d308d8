#!/usr/bin/env node
/**
 * node-oidc-provider (npm `oidc-provider`, a devDependency) as the peer of the refresh benchmark
 * (bench/compare.ts): its default in-memory adapter, on 127.0.0.1, configured as close to Realmgate's
 * token endpoint as it allows.
 *
 *   node bench/oidc-provider-server.mjs --port 3000 [--config FILE]
 *
 * FILE (JSON, all optional): { "clientId", "clientSecret", "redirectUri", "jwk" (a private RSA JWK),
 * "alg" (the access tokens' algorithm: RS256, the default, or ES256), "ecJwk" (a private P-256 JWK, for ES256) }.
 * Without it a client secret and an RS256 key are generated and printed to stderr; the bench passes its
 * own, generated before the spawn (as Realmgate's key is generated when the realm is seeded), so that
 * key generation is not counted in the start-up time.
 *
 * What is configured, and why:
 * - One confidential client, client_secret_basic, grant types authorization_code and refresh_token,
 *   scopes openid profile email core_data offline_access (the bench realm's).
 * - Access tokens are RS256-signed JWTs (RFC 9068, `typ: at+jwt`), as Realmgate's are: the
 *   resourceIndicators feature resolves every request to one resource server whose tokens are JWTs
 *   (defaultResource), and useGrantedResource lets the token endpoint use the granted resource without a
 *   `resource` parameter (otherwise an `openid` request gets an opaque token for the userinfo endpoint).
 *   The Keycloak-style claims Realmgate writes (azp, preferred_username, email, organization) are added
 *   with extraTokenClaims, so the signed payloads are of about the same size.
 * - rotateRefreshToken: true: every refresh consumes the presented token and issues a new one; a consumed
 *   token presented again revokes the grant (as Realmgate revokes the chain).
 * - TTLs as the bench realm's: access token 259200 s, refresh token 15552000 s, code 45 s.
 * - devInteractions (its development-only login and consent pages, on by default): any login name and
 *   password are accepted, the login name becoming the subject. It grants offline_access (so issues a
 *   refresh token) only to an authorization request that also says prompt=consent.
 * - The account is not looked up anywhere: findAccount answers from the subject alone.
 * - Storage: its default in-memory adapter, a QuickLRU of 1000 entries (plus a previous generation of up
 *   to as many): nothing is written to disk, and old tokens are evicted.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import Provider, { errors } from 'oidc-provider';

const HOST = '127.0.0.1';
const RESOURCE = 'urn:realmgate-bench:api';
const SCOPES = ['openid', 'profile', 'email', 'core_data', 'offline_access'];
const ORGANIZATION = 'acme';

const { values: argv } = parseArgs({
  options: {
    port: { type: 'string' },
    config: { type: 'string' },
  },
});
const port = Number(argv.port);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  process.stderr.write('usage: node bench/oidc-provider-server.mjs --port N [--config FILE]\n');
  process.exit(2);
}
const given = argv.config ? JSON.parse(fs.readFileSync(argv.config, 'utf8')) : {};

const clientId = given.clientId ?? 'bench-app';
const redirectUri = given.redirectUri ?? 'http://127.0.0.1:9/callback';
let clientSecret = given.clientSecret;
let jwk = given.jwk;
const alg = given.alg ?? 'RS256';
let ecJwk = given.ecJwk;
if (alg !== 'RS256' && alg !== 'ES256') {
  process.stderr.write(`alg must be RS256 or ES256, got ${alg}\n`);
  process.exit(2);
}
if (alg === 'ES256' && !ecJwk) ecJwk = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
if (!clientSecret) {
  clientSecret = crypto.randomBytes(32).toString('base64url');
  process.stderr.write(`client ${clientId} secret: ${clientSecret}\n`);
}
if (!jwk) {
  jwk = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  process.stderr.write('generated an RS256 signing key (2048 bits)\n');
}

/** The one resource server: JWT access tokens (RS256 or ES256), Realmgate's default audience and lifetime. */
const resourceServer = {
  scope: SCOPES.join(' '),
  audience: 'account',
  accessTokenTTL: 259200,
  accessTokenFormat: 'jwt',
  jwt: { sign: { alg } },
};

/** Accounts are whatever login the dev interaction was given. */
function account(sub) {
  return { preferred_username: sub, email: `${sub}@example.com` };
}

const provider = new Provider(`http://${HOST}:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [redirectUri],
      scope: SCOPES.join(' '),
    },
  ],
  scopes: SCOPES,
  claims: {
    openid: ['sub'],
    profile: ['preferred_username'],
    email: ['email'],
  },
  // The RSA key stays for ID tokens (the client's default id_token_signed_response_alg is RS256).
  jwks: { keys: [{ ...jwk, alg: 'RS256', use: 'sig' }, ...(ecJwk ? [{ ...ecJwk, alg: 'ES256', use: 'sig' }] : [])] },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  async findAccount(_ctx, sub) {
    return {
      accountId: sub,
      async claims() {
        return { sub, ...account(sub) };
      },
    };
  },
  async extraTokenClaims(_ctx, token) {
    if (!token.accountId) return undefined;
    return { azp: token.clientId, organization: [ORGANIZATION], ...account(token.accountId) };
  },
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      async defaultResource(_ctx, _client, oneOf) {
        return oneOf ? oneOf[0] : RESOURCE;
      },
      async useGrantedResource() {
        return true;
      },
      async getResourceServerInfo(_ctx, resourceIndicator) {
        if (resourceIndicator !== RESOURCE) throw new errors.InvalidTarget();
        return resourceServer;
      },
    },
  },
  rotateRefreshToken: true,
  ttl: {
    AccessToken: 259200,
    AuthorizationCode: 45,
    IdToken: 3600,
    RefreshToken: 15552000,
    Grant: 15552000,
    Session: 36000,
    Interaction: 3600,
  },
});

const server = provider.listen(port, HOST, () => {
  process.stdout.write(`oidc-provider listening on http://${HOST}:${port}\n`);
});
server.on('error', (err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
  });
}
