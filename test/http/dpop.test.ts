import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { updateClient } from '../../src/admin/operations.js';
import { buildApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import { Store } from '../../src/storage/store.js';
import { Collector } from '../../src/collector.js';

interface Key {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
  alg: string;
}

async function newKey(alg = 'ES256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk), alg };
}

const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
const ath = (token: string): string => crypto.createHash('sha256').update(token).digest('base64url');

// RFC 9449 (DPoP), as Keycloak 26 offers it: each rule broken on its own, at the token endpoint, userinfo,
// introspection and the refresh chain.
for (const dialect of dialects()) {
  describe(`DPoP, RFC 9449 (${dialect})`, () => {
    let ts: TestServer;
    let tokenUrl: string;
    let userinfoUrl: string;
    let key: Key;
    let other: Key;
    before(async () => {
      ts = await startTestServer({ dialect });
      tokenUrl = `${ts.config.authUrl}/auth/realms/${REALM}/protocol/openid-connect/token`;
      userinfoUrl = `${ts.config.authUrl}/auth/realms/${REALM}/protocol/openid-connect/userinfo`;
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, serviceAccountsEnabled: true, directAccessGrantsEnabled: true });
      key = await newKey('ES256');
      other = await newKey('RS256');
    });
    after(() => ts.close());

    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);

    /** A proof for the token endpoint unless told otherwise; `header` and `claims` override what they name. */
    async function proof(o: { key?: Key; claims?: JWTPayload; header?: Record<string, unknown>; drop?: string[] } = {}): Promise<string> {
      const k = o.key ?? key;
      const payload: JWTPayload = { jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl, iat: now(), ...o.claims };
      for (const d of o.drop ?? []) delete payload[d];
      return new SignJWT(payload).setProtectedHeader({ alg: k.alg, typ: 'dpop+jwt', jwk: k.jwk, ...o.header } as never).sign(k.privateKey);
    }

    const cc = (headers: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse> =>
      tokenRequest(ts, { grant_type: 'client_credentials' }, { authorization: basic(ts.client.id, ts.client.secret), ...(headers as Record<string, string>) });

    function refused(res: LightMyRequestResponse, status: number, error: string, description?: RegExp): void {
      assert.equal(res.statusCode, status, res.body);
      const body = JSON.parse(res.body) as { error: string; error_description: string };
      assert.equal(body.error, error, res.body);
      if (description) assert.match(body.error_description, description);
      assert.doesNotMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace');
    }

    async function publicFlow(query: Record<string, string> = {}): Promise<{ code: string; verifier: string }> {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
      const r = await runAuthorization(ts, {
        query: { client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri, code_challenge: challenge, code_challenge_method: 'S256', ...query },
      });
      assert.ok(r.code, 'a code');
      return { code: r.code, verifier };
    }

    const publicExchange = (c: { code: string; verifier: string }, headers: Record<string, string> = {}) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code: c.code, redirect_uri: ts.publicClient.redirectUri, client_id: ts.publicClient.id, code_verifier: c.verifier }, headers);

    const publicRefresh = (refreshToken: string, headers: Record<string, string> = {}) =>
      tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: ts.publicClient.id }, headers);

    async function confidentialCode(query: Record<string, string> = {}): Promise<string> {
      const r = await runAuthorization(ts, { query });
      assert.ok(r.code);
      return r.code;
    }
    const confidentialExchange = (code: string, headers: Record<string, string> = {}) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret), ...headers });

    const introspect = (token: string) =>
      ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token/introspect'), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) }, payload: new URLSearchParams({ token }).toString() });

    const userinfo = (authorization: string, dpop?: string, method: 'GET' | 'POST' = 'GET') =>
      ts.app.inject({ method, url: realmPath('/protocol/openid-connect/userinfo'), headers: { authorization, ...(dpop ? { dpop } : {}) } });

    const userinfoProof = (token: string, o: { key?: Key; claims?: JWTPayload } = {}) => proof({ key: o.key, claims: { htm: 'GET', htu: userinfoUrl, ath: ath(token), ...o.claims } });

    test('client_credentials with a proof: the access token carries cnf.jkt, token_type DPoP; introspection says so; without a proof nothing changes', async () => {
      const res = await cc({ dpop: await proof() });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { access_token: string; token_type: string };
      assert.equal(body.token_type, 'DPoP');
      assert.deepEqual((decodeJwt(body.access_token) as { cnf?: unknown }).cnf, { jkt: key.jkt });
      const info = (await introspect(body.access_token)).json() as { active: boolean; token_type: string; cnf?: { jkt: string } };
      assert.equal(info.active, true);
      assert.equal(info.token_type, 'DPoP');
      assert.deepEqual(info.cnf, { jkt: key.jkt });

      const plain = await cc();
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.json().token_type, 'Bearer');
      assert.equal((decodeJwt(plain.json().access_token) as { cnf?: unknown }).cnf, undefined);
      assert.equal((await introspect(plain.json().access_token)).json().token_type, 'Bearer');
    });

    test('every asymmetric algorithm is accepted (RS, PS, ES, EdDSA); discovery lists them and no MAC or none', async () => {
      for (const alg of ['RS256', 'PS256', 'ES384', 'EdDSA']) {
        const k = await newKey(alg);
        const res = await cc({ dpop: await proof({ key: k }) });
        assert.equal(res.statusCode, 200, `${alg}: ${res.body}`);
        assert.deepEqual((decodeJwt(res.json().access_token) as { cnf?: unknown }).cnf, { jkt: k.jkt });
      }
      const doc = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json() as { dpop_signing_alg_values_supported: string[] };
      assert.ok(doc.dpop_signing_alg_values_supported.includes('ES256'));
      assert.ok(doc.dpop_signing_alg_values_supported.includes('EdDSA'));
      assert.ok(!doc.dpop_signing_alg_values_supported.some((a) => a === 'none' || a.startsWith('HS')));
    });

    test('htu and htm: another URL or method refused; the query and fragment of htu and the case of scheme and host do not matter (RFC 9449 4.3)', async () => {
      refused(await cc({ dpop: await proof({ claims: { htu: `${tokenUrl}/x` } }) }), 400, 'invalid_dpop_proof', /htu/);
      refused(await cc({ dpop: await proof({ claims: { htu: userinfoUrl } }) }), 400, 'invalid_dpop_proof', /htu/);
      refused(await cc({ dpop: await proof({ claims: { htu: 'https://localhost:8080' + new URL(tokenUrl).pathname } }) }), 400, 'invalid_dpop_proof', /htu/);
      refused(await cc({ dpop: await proof({ claims: { htu: 'not a url' } }) }), 400, 'invalid_dpop_proof', /htu/);
      refused(await cc({ dpop: await proof({ claims: { htm: 'GET' } }) }), 400, 'invalid_dpop_proof', /htm/);
      refused(await cc({ dpop: await proof({ claims: { htm: 'post' } }) }), 400, 'invalid_dpop_proof', /htm/);
      assert.equal((await cc({ dpop: await proof({ claims: { htu: `${tokenUrl}?a=b#c` } }) })).statusCode, 200);
      assert.equal((await cc({ dpop: await proof({ claims: { htu: tokenUrl.replace('http://localhost:8080', 'HTTP://LOCALHOST:8080') } }) })).statusCode, 200);
    });

    test('iat: older than 60 s or more than 15 s ahead refused; within the window accepted', async () => {
      refused(await cc({ dpop: await proof({ claims: { iat: now() - 61 } }) }), 400, 'invalid_dpop_proof', /more than 60 s ago/);
      refused(await cc({ dpop: await proof({ claims: { iat: now() + 16 } }) }), 400, 'invalid_dpop_proof', /future/);
      assert.equal((await cc({ dpop: await proof({ claims: { iat: now() - 59 } }) })).statusCode, 200);
      assert.equal((await cc({ dpop: await proof({ claims: { iat: now() + 14 } }) })).statusCode, 200);
      refused(await cc({ dpop: await proof({ claims: { exp: now() - 30 } }) }), 400, 'invalid_dpop_proof');
    });

    test('the header: typ, alg (none, HS256 refused), a public jwk only (private members, oct, wrong curve or type refused)', async () => {
      refused(await cc({ dpop: await proof({ header: { typ: 'JWT' } }) }), 400, 'invalid_dpop_proof', /typ/);
      const payload = enc({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl, iat: now() });
      refused(await cc({ dpop: `${enc({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${payload}.` }), 400, 'invalid_dpop_proof');
      refused(await cc({ dpop: `${enc({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${payload}.x` }), 400, 'invalid_dpop_proof', /alg/);
      // HS256 keyed with a secret carried in the header as an oct key: what a server trusting the header would accept.
      const secret = crypto.randomBytes(32);
      const hs = await new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl, iat: now() })
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: secret.toString('base64url') } } as never)
        .sign(secret);
      refused(await cc({ dpop: hs }), 400, 'invalid_dpop_proof', /alg/);
      // The private key in the header (RFC 9449 4.3 item 7).
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const privateJwk = await exportJWK(privateKey);
      const withPrivate = await new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl, iat: now() }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: privateJwk } as never).sign(privateKey);
      refused(await cc({ dpop: withPrivate }), 400, 'invalid_dpop_proof', /private/);
      refused(await cc({ dpop: await proof({ header: { jwk: { ...key.jwk, kty: 'oct' } } }) }), 400, 'invalid_dpop_proof', /jwk/);
      refused(await cc({ dpop: await proof({ header: { jwk: { ...key.jwk, crv: 'P-384' } } }) }), 400, 'invalid_dpop_proof');
      refused(await cc({ dpop: await proof({ header: { jwk: { ...key.jwk, kty: 'RSA' } } }) }), 400, 'invalid_dpop_proof');
      refused(await cc({ dpop: await proof({ header: { jwk: 'x' } }) }), 400, 'invalid_dpop_proof', /jwk/);
      refused(await cc({ dpop: await proof({ header: { jwk: undefined } }) }), 400, 'invalid_dpop_proof', /jwk/);
      // Signed by another key than the one in the header.
      refused(await cc({ dpop: await proof({ key: { ...key, privateKey: (await newKey('ES256')).privateKey } }) }), 400, 'invalid_dpop_proof', /signature/);
      // An ES256 header with an RSA key.
      refused(await cc({ dpop: await proof({ header: { jwk: other.jwk } }) }), 400, 'invalid_dpop_proof');
    });

    test('malformed headers: not a JWT, bad base64, JSON that is not an object, huge, empty, two DPoP headers; never a 5xx', async () => {
      const cases = ['', 'x', 'a.b.c', '!!!.@@@.###', `${enc(['x'])}.${enc({})}.x`, `${Buffer.from('{"alg":').toString('base64url')}.e30.x`, `${enc({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })}.${Buffer.from('not json').toString('base64url')}.AAAA`, 'a'.repeat(9000) + '.b.c', `${enc({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty: 'EC', crv: 'P-256', x: 'A', y: 'B' } })}.${enc({})}.AAAA`];
      for (const dpop of cases) {
        const res = await cc({ dpop });
        assert.ok(res.statusCode === 400, `${dpop.slice(0, 40)}: ${res.statusCode} ${res.body}`);
        assert.equal(res.json().error, 'invalid_dpop_proof');
      }
      refused(await cc({ dpop: await proof({ drop: ['jti'] }) }), 400, 'invalid_dpop_proof', /jti/);
      refused(await cc({ dpop: await proof({ drop: ['htu'] }) }), 400, 'invalid_dpop_proof');
      refused(await cc({ dpop: await proof({ claims: { iat: 'now' as never } }) }), 400, 'invalid_dpop_proof');
      // Exactly one DPoP header (RFC 9449 4.3 item 1).
      refused(await cc({ dpop: [await proof(), await proof()] }), 400, 'invalid_dpop_proof', /exactly one/);
    });

    test('a jti is single-use, also at another server over the same database; the collector deletes it once dead', async () => {
      const p = await proof();
      assert.equal((await cc({ dpop: p })).statusCode, 200);
      refused(await cc({ dpop: p }), 400, 'invalid_dpop_proof', /used already/);
      const second = await buildApp({ services: createServices(ts.config, new Store(ts.db.db), ts.clock) });
      await second.ready();
      try {
        const q = await proof();
        assert.equal((await cc({ dpop: q })).statusCode, 200);
        const res = await second.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret), dpop: q }, payload: 'grant_type=client_credentials' });
        refused(res, 400, 'invalid_dpop_proof', /used already/);
      } finally {
        await second.close();
      }
      const collector = new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 0, eventsRetentionDays: 30, adminEventsRetentionDays: 30 });
      await collector.runOnce();
      const live = Number((await ts.db.db.kysely.selectFrom('dpop_proof_jtis').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.ok(live >= 2);
      assert.equal((await collector.runOnce()).deleted.dpop_proof_jtis, 0, 'live ids stay');
      ts.clock.advance(120);
      assert.equal((await collector.runOnce()).deleted.dpop_proof_jtis, live);
    });

    test('a public client: the code exchange binds the access token and the refresh chain; a refresh needs a proof of the same key', async () => {
      const res = await publicExchange(await publicFlow(), { dpop: await proof() });
      assert.equal(res.statusCode, 200, res.body);
      const first = res.json() as { access_token: string; refresh_token: string; token_type: string };
      assert.equal(first.token_type, 'DPoP');
      assert.deepEqual((decodeJwt(first.access_token) as { cnf?: unknown }).cnf, { jkt: key.jkt });
      const chainRow = await ts.db.db.kysely.selectFrom('refresh_chains').select('dpop_jkt').where('id', '=', (decodeJwt(first.refresh_token) as { chain: string }).chain).executeTakeFirstOrThrow();
      assert.equal(chainRow.dpop_jkt, key.jkt, 'the chain row holds the thumbprint');
      refused(await publicRefresh(first.refresh_token), 400, 'invalid_dpop_proof', /missing/);
      refused(await publicRefresh(first.refresh_token, { dpop: await proof({ key: other }) }), 400, 'invalid_dpop_proof', /key/);
      const next = await publicRefresh(first.refresh_token, { dpop: await proof() });
      assert.equal(next.statusCode, 200, next.body);
      assert.equal(next.json().token_type, 'DPoP');
      assert.deepEqual((decodeJwt(next.json().access_token) as { cnf?: unknown }).cnf, { jkt: key.jkt });
      // The rotated token stays bound (it carries the binding, and its chain does).
      refused(await publicRefresh(next.json().refresh_token, { dpop: await proof({ key: other }) }), 400, 'invalid_dpop_proof', /key/);
      assert.equal((await publicRefresh(next.json().refresh_token, { dpop: await proof() })).statusCode, 200);
    });

    test('a public client without a proof gets an unbound chain (a later proof binds only the access tokens)', async () => {
      const res = await publicExchange(await publicFlow());
      assert.equal(res.json().token_type, 'Bearer');
      const next = await publicRefresh(res.json().refresh_token, { dpop: await proof() });
      assert.equal(next.statusCode, 200, next.body);
      assert.equal(next.json().token_type, 'DPoP');
      assert.equal((await publicRefresh(next.json().refresh_token)).json().token_type, 'Bearer');
    });

    test('a confidential client: its refresh tokens are not bound; each new access token is bound to the proof of its refresh (RFC 9449 5)', async () => {
      const res = await confidentialExchange(await confidentialCode(), { dpop: await proof() });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().token_type, 'DPoP');
      const refresh = (rt: string, headers: Record<string, string> = {}) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(ts.client.id, ts.client.secret), ...headers });
      const plain = await refresh(res.json().refresh_token);
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.json().token_type, 'Bearer');
      const rebound = await refresh(plain.json().refresh_token, { dpop: await proof({ key: other }) });
      assert.equal(rebound.statusCode, 200, rebound.body);
      assert.deepEqual((decodeJwt(rebound.json().access_token) as { cnf?: unknown }).cnf, { jkt: other.jkt });
    });

    test('the password grant binds too', async () => {
      const res = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password, scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret), dpop: await proof() });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().token_type, 'DPoP');
      assert.deepEqual((decodeJwt(res.json().access_token) as { cnf?: unknown }).cnf, { jkt: key.jkt });
    });

    test('dpop_jkt (RFC 9449 10): the code exchange must prove that key; malformed is refused at the authorization endpoint', async () => {
      const missing = await publicExchange(await publicFlow({ dpop_jkt: key.jkt }));
      refused(missing, 400, 'invalid_dpop_proof', /missing/i);
      refused(await publicExchange(await publicFlow({ dpop_jkt: key.jkt }), { dpop: await proof({ key: other }) }), 400, 'invalid_dpop_proof', /dpop_jkt/);
      const ok = await publicExchange(await publicFlow({ dpop_jkt: key.jkt }), { dpop: await proof() });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().token_type, 'DPoP');
      const conf = await confidentialExchange(await confidentialCode({ dpop_jkt: other.jkt }), { dpop: await proof({ key: other }) });
      assert.equal(conf.statusCode, 200, conf.body);
      const bad = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?client_id=${ts.client.id}&redirect_uri=${encodeURIComponent(ts.client.redirectUri)}&response_type=code&scope=openid&dpop_jkt=short` });
      assert.equal(bad.statusCode, 303);
      const loc = new URL(bad.headers.location as string);
      assert.equal(loc.searchParams.get('error'), 'invalid_request');
      assert.match(loc.searchParams.get('error_description') ?? '', /dpop_jkt/);
    });

    test('a client with dpop.bound.access.tokens: requests without a proof are refused in Keycloak\'s words', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, dpopBoundAccessTokens: true });
      try {
        refused(await cc(), 400, 'invalid_request', /DPoP proof is missing/);
        refused(await confidentialExchange(await confidentialCode()), 400, 'invalid_request', /DPoP proof is missing/);
        assert.equal((await cc({ dpop: await proof() })).statusCode, 200);
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, dpopBoundAccessTokens: false });
      }
      assert.equal((await cc()).statusCode, 200);
    });

    test('userinfo: a bound token with the DPoP scheme and a proof (ath, htm, htu) works; as Bearer, without a proof, with a wrong ath, key, method or URL it is refused (RFC 9449 7)', async () => {
      const res = await publicExchange(await publicFlow(), { dpop: await proof() });
      const token = res.json().access_token as string;
      const ok = await userinfo(`DPoP ${token}`, await userinfoProof(token));
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().sub, ts.user.id);

      const asBearer = await userinfo(`Bearer ${token}`);
      assert.equal(asBearer.statusCode, 401);
      assert.match(String(asBearer.headers['www-authenticate']), /^DPoP .*error="invalid_token"/);
      assert.match(String(asBearer.headers['www-authenticate']), /algs="[^"]*ES256/);

      const check = async (r: LightMyRequestResponse, error: string, description: RegExp): Promise<void> => {
        assert.equal(r.statusCode, 401, r.body);
        assert.match(String(r.headers['www-authenticate']), new RegExp(`^DPoP .*error="${error}"`));
        assert.match(r.json().error_description, description);
      };
      await check(await userinfo(`DPoP ${token}`), 'invalid_dpop_proof', /missing/);
      await check(await userinfo(`DPoP ${token}`, await userinfoProof(token, { claims: { ath: ath(token + 'x') } })), 'invalid_dpop_proof', /ath/);
      await check(await userinfo(`DPoP ${token}`, await userinfoProof(token, { claims: { ath: undefined } })), 'invalid_dpop_proof', /ath/);
      await check(await userinfo(`DPoP ${token}`, await userinfoProof(token, { key: other })), 'invalid_dpop_proof', /key/);
      await check(await userinfo(`DPoP ${token}`, await userinfoProof(token, { claims: { htm: 'POST' } })), 'invalid_dpop_proof', /htm/);
      await check(await userinfo(`DPoP ${token}`, await userinfoProof(token, { claims: { htu: tokenUrl } })), 'invalid_dpop_proof', /htu/);
      const used = await userinfoProof(token);
      assert.equal((await userinfo(`DPoP ${token}`, used)).statusCode, 200);
      await check(await userinfo(`DPoP ${token}`, used), 'invalid_dpop_proof', /used already/);
      await check(await userinfo('DPoP !!!', await userinfoProof(token)), 'invalid_token', /malformed/);

      // An unbound token under the DPoP scheme is refused; as Bearer it still works.
      const plain = (await publicExchange(await publicFlow())).json().access_token as string;
      await check(await userinfo(`DPoP ${plain}`, await userinfoProof(plain)), 'invalid_token', /not DPoP-bound/);
      assert.equal((await userinfo(`Bearer ${plain}`)).statusCode, 200);
    });

    test('the admin API and the account profile take no DPoP-bound token as a bearer token (RFC 9449 7.1)', async () => {
      const grant = async (headers: Record<string, string>): Promise<string> => {
        const res = await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password, scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret), ...headers });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().access_token as string;
      };
      const bound = await grant({ dpop: await proof() });
      const plain = await grant({});
      const admin = (token: string) => ts.app.inject({ method: 'GET', url: `/auth/admin/realms/${REALM}/users`, headers: { authorization: `Bearer ${token}` } });
      assert.equal((await admin(bound)).statusCode, 401);
      assert.equal((await admin(plain)).statusCode, 403, 'authenticated, not an administrator');
      const account = (token: string) => ts.app.inject({ method: 'GET', url: realmPath('/account'), headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      const refusedProfile = await account(bound);
      assert.equal(refusedProfile.statusCode, 401);
      assert.match(String(refusedProfile.headers['www-authenticate']), /^DPoP .*error="invalid_token"/);
      assert.equal((await account(plain)).statusCode, 200);
    });

    test('revocation of a bound refresh token by its public client needs no proof (RFC 7009, as Keycloak)', async () => {
      const res = await publicExchange(await publicFlow(), { dpop: await proof() });
      const rt = res.json().refresh_token as string;
      const revoked = await ts.app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/revoke'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ token: rt, client_id: ts.publicClient.id }).toString() });
      assert.equal(revoked.statusCode, 200, revoked.body);
      refused(await publicRefresh(rt, { dpop: await proof() }), 400, 'invalid_grant');
    });
  });
}
