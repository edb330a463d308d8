#!/usr/bin/env node
/**
 * The physical limit of a refresh on this machine (bench/compare.ts): an HTTP server that does only what
 * no token server can skip. On POST /token it reads and parses the form body, signs an access token of
 * Realmgate's shape and size with the same algorithm and key type, the way src/crypto/jws.ts signs
 * (node:crypto's sign in libuv's thread pool; `--sign webcrypto`: jose's CompactSign over WebCrypto, as
 * Realmgate did until it moved to node:crypto, which costs the event loop about twice as much per
 * signature), draws a random 256-bit refresh token and its SHA-256, and answers the JSON token response.
 * No client authentication, no database, no routing framework.
 *
 *   node bench/sign-only-server.mjs --port 3000 [--alg RS256|ES256|EdDSA] [--sign node|webcrypto]
 *
 * GET /ready answers 200 once the key is imported.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';

const HOST = '127.0.0.1';
const { values: argv } = parseArgs({ options: { port: { type: 'string' }, alg: { type: 'string' }, sign: { type: 'string' } } });
const port = Number(argv.port);
const alg = argv.alg ?? 'RS256';
const signWith = argv.sign ?? 'node';
if (!Number.isInteger(port) || port <= 0 || port > 65535 || !['RS256', 'ES256', 'EdDSA'].includes(alg) || !['node', 'webcrypto'].includes(signWith)) {
  process.stderr.write('usage: node bench/sign-only-server.mjs --port N [--alg RS256|ES256|EdDSA] [--sign node|webcrypto]\n');
  process.exit(2);
}

const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'RS256' ? { modulusLength: 2048 } : {});
const kid = crypto.createHash('sha256').update(JSON.stringify(await exportJWK(publicKey))).digest('base64url').slice(0, 16);
const header = { alg, kid, typ: 'JWT' };
const encodedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
const nodeKey = crypto.KeyObject.from(privateKey);
// RFC 7518 3.3, 3.4; RFC 8037: the digest and signature encoding node:crypto needs for each algorithm.
const nodeSign = { RS256: ['sha256', nodeKey], ES256: ['sha256', { key: nodeKey, dsaEncoding: 'ieee-p1363' }], EdDSA: [null, nodeKey] }[alg];

function signNode(payload) {
  const input = `${encodedHeader}.${Buffer.from(payload).toString('base64url')}`;
  return new Promise((resolve, reject) =>
    crypto.sign(nodeSign[0], Buffer.from(input), nodeSign[1], (err, sig) => (err ? reject(err) : resolve(`${input}.${sig.toString('base64url')}`))),
  );
}
const encoder = new TextEncoder();
const issuer = `http://${HOST}:${port}/auth/realms/bench`;
const chainId = crypto.randomUUID();
const sessionId = crypto.randomUUID();
const userId = crypto.randomUUID();

async function tokenResponse(form) {
  const now = Math.floor(Date.now() / 1000);
  // Realmgate's access token claims (src/oauth/tokens.ts), so that the signed payload is the same size.
  const claims = {
    iss: issuer,
    sub: userId,
    aud: 'account',
    azp: 'bench-app',
    typ: 'Bearer',
    exp: now + 259200,
    iat: now,
    jti: `${chainId}.${crypto.randomBytes(12).toString('base64url')}`,
    scope: form.get('scope') ?? 'profile email core_data offline_access',
    sid: sessionId,
    organization: ['acme'],
    preferred_username: 'alice',
    email: 'alice@example.com',
  };
  const accessToken =
    signWith === 'node'
      ? await signNode(JSON.stringify(claims))
      : await new CompactSign(encoder.encode(JSON.stringify(claims))).setProtectedHeader(header).sign(privateKey);
  const refreshToken = crypto.randomBytes(32).toString('base64url');
  // Realmgate stores the token's hash: computed here too, the one cryptographic step besides signing.
  crypto.createHash('sha256').update(refreshToken).digest('base64url');
  return JSON.stringify({
    access_token: accessToken,
    expires_in: 259200,
    refresh_expires_in: 15552000,
    refresh_token: refreshToken,
    token_type: 'Bearer',
    'not-before-policy': 0,
    session_state: sessionId,
    scope: claims.scope,
  });
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/ready') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/token') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    if (!form.get('grant_type')) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_request"}');
      return;
    }
    tokenResponse(form).then(
      (body) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' }).end(body),
      (err) => res.writeHead(500).end(String(err)),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, HOST);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
  });
}
