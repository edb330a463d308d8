import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type JWTPayload, type CryptoKey } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { tokenRequest } from '../helpers/flow.js';
import { createClient, updateClient } from '../../src/admin/operations.js';
import { buildApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import { Store } from '../../src/storage/store.js';
import { Collector } from '../../src/collector.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A self-signed certificate made by the openssl binary: its base64 DER (Keycloak's jwt.credential.certificate) and its key. */
function certificate(): { der: string; key: crypto.KeyObject } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkjwt-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`, '-days', '1', '-subj', '/CN=cert-app'], { stdio: 'ignore' });
    const der = new crypto.X509Certificate(fs.readFileSync(`${dir}/c.pem`)).raw.toString('base64');
    return { der, key: crypto.createPrivateKey(fs.readFileSync(`${dir}/k.pem`)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// RFC 7523 2.2 and 3, OpenID Connect Core 1.0 9 (private_key_jwt): every rule, each broken on its own.
for (const dialect of dialects()) {
  describe(`private_key_jwt client authentication (${dialect})`, () => {
    let ts: TestServer;
    let issuer: string;
    let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
    let publicJwk: JWK;
    let other: { privateKey: CryptoKey };
    let cert: { der: string; key: crypto.KeyObject };
    before(async () => {
      ts = await startTestServer({ dialect });
      issuer = `${ts.config.authUrl}/auth/realms/${REALM}`;
      rsa = await generateKeyPair('RS256', { extractable: true });
      other = await generateKeyPair('RS256');
      publicJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k1', use: 'sig' };
      await createClient(ts.store, {
        realmId: REALM,
        clientId: 'jwt-app',
        redirectUris: [ts.client.redirectUri],
        authMethods: ['private_key_jwt'],
        serviceAccountsEnabled: true,
        jwtKeys: { useJwksString: true, jwksString: JSON.stringify({ keys: [publicJwk] }) },
      });
      cert = certificate();
      await createClient(ts.store, { realmId: REALM, clientId: 'cert-app', redirectUris: [ts.client.redirectUri], authMethods: ['private_key_jwt'], serviceAccountsEnabled: true, jwtKeys: { certificate: cert.der } });
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, serviceAccountsEnabled: true });
    });
    after(() => ts.close());

    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);

    async function assertion(claims: JWTPayload = {}, o: { key?: CryptoKey | crypto.KeyObject | Uint8Array; alg?: string; kid?: string; drop?: string[] } = {}): Promise<string> {
      const t = now();
      const payload: JWTPayload = { iss: 'jwt-app', sub: 'jwt-app', aud: issuer, iat: t, exp: t + 60, jti: crypto.randomUUID(), ...claims };
      for (const k of o.drop ?? []) delete payload[k];
      return new SignJWT(payload).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'k1' }).sign(o.key ?? rsa.privateKey);
    }

    const grant = (jwt: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
      tokenRequest(ts, { grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt, ...extra }, headers);

    function refused(res: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, error: string, description?: RegExp): void {
      assert.equal(res.statusCode, status, res.body);
      const body = JSON.parse(res.body) as { error: string; error_description: string };
      assert.equal(body.error, error);
      if (description) assert.match(body.error_description, description);
      assert.doesNotMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace');
    }

    /** Each failure counts in the limiter (60 s window): a test that sends several lets it pass, so the next is not refused for that. */
    function resetLimiter(): void {
      ts.clock.advance(61);
    }

    test('a valid assertion gets a client_credentials token, with or without client_id; its jti is single-use', async () => {
      const jwt = await assertion();
      const res = await grant(jwt, { client_id: 'jwt-app' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(typeof res.json().access_token, 'string');
      refused(await grant(jwt), 401, 'invalid_client', /used already/);
      assert.equal((await grant(await assertion())).statusCode, 200);
    });

    test('aud: the issuer or the token endpoint as one value; anything else or several values refused', async () => {
      assert.equal((await grant(await assertion({ aud: `${issuer}/protocol/openid-connect/token` }))).statusCode, 200);
      assert.equal((await grant(await assertion({ aud: [issuer] }))).statusCode, 200);
      refused(await grant(await assertion({ aud: 'https://elsewhere.example.com' })), 401, 'invalid_client', /aud/);
      refused(await grant(await assertion({ aud: [issuer, 'https://elsewhere.example.com'] })), 401, 'invalid_client', /aud/);
      refused(await grant(await assertion({ aud: `${issuer}/protocol/openid-connect/token/introspect` })), 401, 'invalid_client', /aud/);
      refused(await grant(await assertion({}, { drop: ['aud'] })), 401, 'invalid_client');
    });

    test('signature: a key not the client\'s, alg none, HS256 keyed with the public key (alg confusion) are refused', async () => {
      refused(await grant(await assertion({}, { key: other.privateKey })), 401, 'invalid_client', /signature/);
      const t = now();
      const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
      const body = enc({ iss: 'jwt-app', sub: 'jwt-app', aud: issuer, iat: t, exp: t + 60, jti: crypto.randomUUID() });
      refused(await grant(`${enc({ alg: 'none', kid: 'k1' })}.${body}.`), 401, 'invalid_client');
      // The public key as an HMAC secret: what a server that trusts the header's alg would verify with.
      const pem = crypto.createPublicKey({ key: publicJwk as crypto.JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
      const hs = `${enc({ alg: 'HS256', kid: 'k1' })}.${body}`;
      const mac = crypto.createHmac('sha256', pem).update(hs).digest('base64url');
      refused(await grant(`${hs}.${mac}`), 401, 'invalid_client', /algorithm/);
      resetLimiter();
    });

    test('time: expired, too long-lived, used too long after iat, issued in the future, nbf ahead are refused; leeway 15 s', async () => {
      const t = now();
      refused(await grant(await assertion({ exp: t - 60 })), 401, 'invalid_client', /expired/);
      assert.equal((await grant(await assertion({ exp: t - 10 }))).statusCode, 200, 'within the leeway');
      // Keycloak's rule: without iat, exp at most max.exp (60 s) ahead; with iat, used within 60 s of it.
      refused(await grant(await assertion({ exp: t + 3600 }, { drop: ['iat'] })), 401, 'invalid_client', /too long/);
      assert.equal((await grant(await assertion({ exp: t + 60 }, { drop: ['iat'] }))).statusCode, 200);
      refused(await grant(await assertion({ iat: t - 200, exp: t + 60 })), 401, 'invalid_client', /issued more than 60 s ago/);
      // Authlib's default: iat now, exp an hour ahead (Keycloak takes it; it is usable for 60 s only).
      assert.equal((await grant(await assertion({ iat: t, exp: t + 3600 }))).statusCode, 200);
      refused(await grant(await assertion({ iat: t + 120, exp: t + 160 })), 401, 'invalid_client', /future/);
      refused(await grant(await assertion({ nbf: t + 120 })), 401, 'invalid_client', /nbf/);
      refused(await grant(await assertion({}, { drop: ['exp'] })), 401, 'invalid_client', /exp/);
      refused(await grant(await assertion({}, { drop: ['jti'] })), 401, 'invalid_client', /jti/);
      resetLimiter();
    });

    test('who: iss != sub, sub another client, an unknown client, a client_id that is not the sub, a client-secret client are refused', async () => {
      refused(await grant(await assertion({ iss: 'someone' })), 401, 'invalid_client', /iss/);
      refused(await grant(await assertion({ iss: 'cert-app', sub: 'cert-app' })), 401, 'invalid_client', /verified|signature|key/);
      refused(await grant(await assertion({ iss: 'nobody', sub: 'nobody' })), 401, 'invalid_client', /client authentication failed/);
      // The failure event names the client the assertion claimed to be.
      const events = await ts.store.events.list(REALM, { limit: 20 });
      assert.ok(events.some((e) => e.type === 'CLIENT_AUTH_ERROR' && e.clientId === 'nobody'), JSON.stringify(events.map((e) => [e.type, e.clientId])));
      refused(await grant(await assertion(), { client_id: 'web-app' }), 401, 'invalid_client', /client_id/);
      // web-app authenticates with its secret: an assertion in its name is refused whatever signs it.
      refused(await grant(await assertion({ iss: 'web-app', sub: 'web-app' })), 401, 'invalid_client', /does not authenticate with a signed JWT/);
      // And the jwt client's secret methods are off: a Basic header with any secret is refused.
      refused(await tokenRequest(ts, { grant_type: 'client_credentials' }, { authorization: basic('jwt-app', 'x') }), 401, 'invalid_client');
      resetLimiter();
    });

    test('request: with Basic or client_secret is invalid_request; a missing or other client_assertion_type, a malformed or huge JWT', async () => {
      const jwt = await assertion();
      refused(await grant(jwt, {}, { authorization: basic(ts.client.id, ts.client.secret) }), 400, 'invalid_request', /more than one/);
      refused(await grant(jwt, { client_secret: 'x' }), 400, 'invalid_request', /more than one/);
      refused(await tokenRequest(ts, { grant_type: 'client_credentials', client_assertion: jwt }), 400, 'invalid_request', /client_assertion_type/);
      refused(await grant(jwt, { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }), 400, 'invalid_request', /client_assertion_type/);
      refused(await grant('not.a.jwt'), 401, 'invalid_client', /not a JWT/);
      refused(await grant('x'.repeat(9000)), 400, 'invalid_request', /too long/);
      const wrongTypes = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: { a: 1 } }) });
      assert.ok(wrongTypes.statusCode === 400 || wrongTypes.statusCode === 415, wrongTypes.body);
      const twice = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(TYPE)}&client_assertion=${jwt}&client_assertion=${jwt}` });
      refused(twice, 400, 'invalid_request');
      resetLimiter();
    });

    test('token.endpoint.auth.signing.alg restricts the algorithm', async () => {
      const ec = await generateKeyPair('ES256');
      await updateClient(ts.store, { realmId: REALM, clientId: 'jwt-app', jwtKeys: { jwksString: JSON.stringify({ keys: [publicJwk, { ...(await exportJWK(ec.publicKey)), kid: 'e1' }] }), signingAlg: 'ES256' } });
      ts.services.cache.clear();
      refused(await grant(await assertion()), 401, 'invalid_client', /algorithm/);
      assert.equal((await grant(await assertion({}, { key: ec.privateKey, alg: 'ES256', kid: 'e1' }))).statusCode, 200);
      await updateClient(ts.store, { realmId: REALM, clientId: 'jwt-app', jwtKeys: { signingAlg: null } });
      ts.services.cache.clear();
      assert.equal((await grant(await assertion())).statusCode, 200);
      resetLimiter();
    });

    test("a client with Keycloak's jwt.credential.certificate authenticates with the certificate's key", async () => {
      const jwt = await assertion({ iss: 'cert-app', sub: 'cert-app' }, { key: cert.key, alg: 'ES256', kid: 'none-needed' });
      const res = await grant(jwt);
      assert.equal(res.statusCode, 200, res.body);
    });

    test("a client with Keycloak's jwt.credential.public.key (PEM given, stored as base64 DER) authenticates with it", async () => {
      const k = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
      await createClient(ts.store, { realmId: REALM, clientId: 'key-app', redirectUris: [ts.client.redirectUri], authMethods: ['private_key_jwt'], serviceAccountsEnabled: true, jwtKeys: { publicKey: k.publicKey.export({ type: 'spki', format: 'pem' }).toString() } });
      assert.equal((await ts.store.clients.get(REALM, 'key-app'))!.jwtKeys?.publicKey, k.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'));
      assert.equal((await grant(await assertion({ iss: 'key-app', sub: 'key-app' }, { key: k.privateKey, alg: 'ES256' }))).statusCode, 200);
      refused(await grant(await assertion({ iss: 'key-app', sub: 'key-app' }, { key: other.privateKey })), 401, 'invalid_client');
      resetLimiter();
    });

    test('introspection and revocation take the assertion too', async () => {
      const { access_token } = (await grant(await assertion())).json();
      const form = async (): Promise<string> => new URLSearchParams({ token: access_token, client_assertion_type: TYPE, client_assertion: await assertion() }).toString();
      const intro = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token/introspect'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: await form() });
      assert.equal(intro.statusCode, 200, intro.body);
      assert.equal(intro.json().active, true);
      const rev = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/revoke'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: await form() });
      assert.equal(rev.statusCode, 200, rev.body);
    });

    test('the device authorization endpoint takes the assertion too', async () => {
      const res = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/auth/device'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ client_assertion_type: TYPE, client_assertion: await assertion(), scope: 'openid' }).toString() });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(typeof res.json().device_code, 'string');
      const bad = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/auth/device'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ client_assertion_type: TYPE, client_assertion: await assertion({}, { key: other.privateKey }) }).toString() });
      refused(bad, 401, 'invalid_client');
    });

    test('the pushed authorization request endpoint takes the assertion too (RFC 9126 2: as the token endpoint)', async () => {
      const push = async (jwt: string) =>
        ts.app.inject({
          method: 'POST',
          url: realmPath('/protocol/openid-connect/ext/par/request'),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ client_assertion_type: TYPE, client_assertion: jwt, response_type: 'code', redirect_uri: ts.client.redirectUri, scope: 'openid', state: 's1', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }).toString(),
        });
      const res = await push(await assertion());
      assert.equal(res.statusCode, 201, res.body);
      assert.match(res.json().request_uri, /^urn:ietf:params:oauth:request_uri:/);
      refused(await push(await assertion({}, { key: other.privateKey })), 401, 'invalid_client');
    });

    test('failed assertions count in the client-failure limiter: after 10, even a valid one waits', async () => {
      resetLimiter();
      for (let i = 0; i < 10; i++) refused(await grant(await assertion({}, { key: other.privateKey })), 401, 'invalid_client');
      const res = await grant(await assertion());
      refused(res, 401, 'invalid_client', /too many/);
      assert.ok(Number(res.headers['retry-after']) > 0);
      ts.clock.advance(61);
      assert.equal((await grant(await assertion())).statusCode, 200);
    });

    test('a jti used at one server is refused at another over the same database', async () => {
      const second = await buildApp({ services: createServices(ts.config, new Store(ts.db.db), ts.clock) });
      await second.ready();
      try {
        const jwt = await assertion();
        assert.equal((await grant(jwt)).statusCode, 200);
        const res = await second.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }).toString() });
        refused(res, 401, 'invalid_client', /used already/);
      } finally {
        await second.close();
      }
    });

    test('the collector deletes used ids once their assertion is dead, and not before', async () => {
      const collector = new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 0, eventsRetentionDays: 30, adminEventsRetentionDays: 30 });
      const rows = async (): Promise<number> => Number((await ts.db.db.kysely.selectFrom('client_assertion_jtis').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      // Those the earlier tests left (the clock moved past most of them).
      await collector.runOnce();
      const jwt = await assertion();
      assert.equal((await grant(jwt)).statusCode, 200);
      const live = await rows();
      assert.ok(live >= 1);
      assert.equal((await collector.runOnce()).deleted.client_assertion_jtis, 0, 'a live id stays');
      refused(await grant(jwt), 401, 'invalid_client', /used already/);
      ts.clock.advance(3600);
      assert.equal((await collector.runOnce()).deleted.client_assertion_jtis, live);
      assert.equal(await rows(), 0);
      // Its row gone, the assertion is still refused: it has expired.
      refused(await grant(jwt), 401, 'invalid_client', /expired/);
    });
  });
}
