import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createRealm } from '../../src/admin/operations.js';
import { openPrivateJwk } from '../../src/crypto/key-encryption.js';
import { signRefreshJwt, type RefreshClaims, type RefreshKeys } from '../../src/crypto/refresh-jwt.js';

// Refresh tokens are HS512 JWTs signed by a realm key (contract item 1): checked here with jose as an
// independent verifier, and shown to be refused before the database when forged, foreign or expired.
for (const dialect of dialects()) {
  describe(`refresh tokens are JWTs (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    let issuer: string;
    // Calls into the database's rotation and token-state lookups, counted (the real methods still run).
    const calls = { rotate: 0 };
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
      issuer = `${ts.config.authUrl}/auth/realms/${REALM}`;
      const rotate = ts.store.refresh.rotate.bind(ts.store.refresh);
      ts.store.refresh.rotate = ((...args: Parameters<typeof rotate>) => {
        calls.rotate++;
        return rotate(...args);
      }) as typeof rotate;
    });
    after(() => ts.close());

    async function login(scope?: string): Promise<{ refresh_token: string; refresh_expires_in: number; session_state: string }> {
      const r = await runAuthorization(ts, { query: scope ? { scope } : {} });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    const refresh = (rt: string) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth });

    async function realmSecret(realmId: string): Promise<Uint8Array> {
      const [key] = await ts.store.hmacKeys.list(realmId);
      assert.ok(key, 'the realm has an HMAC key');
      const jwk = JSON.parse(openPrivateJwk(key.secretJwk)) as { k: string; kty: string; alg: string };
      assert.equal(jwk.kty, 'oct');
      assert.equal(jwk.alg, 'HS512');
      const secret = Buffer.from(jwk.k, 'base64url');
      assert.equal(secret.length * 8, 512);
      return secret;
    }

    function assertInvalidGrant(res: { statusCode: number; json(): unknown }): void {
      assert.equal(res.statusCode, 400);
      assert.equal((res.json() as { error: string }).error, 'invalid_grant');
    }

    test('the refresh token is an HS512 JWT with Keycloak-shaped claims, the chain and its generation', async () => {
      const t = await login();
      const header = decodeProtectedHeader(t.refresh_token);
      assert.equal(header.alg, 'HS512');
      assert.equal(header.typ, 'JWT');
      assert.equal(typeof header.kid, 'string');
      const { payload } = await jwtVerify(t.refresh_token, await realmSecret(REALM), {
        algorithms: ['HS512'],
        issuer,
        audience: issuer,
        currentDate: new Date(ts.clock.nowMs()),
      });
      assert.deepEqual(Object.keys(payload).sort(), ['aud', 'azp', 'chain', 'exp', 'gen', 'iat', 'iss', 'jti', 'scope', 'sid', 'sub', 'typ'].sort());
      assert.equal(payload.sub, ts.user.id);
      assert.equal(payload.azp, ts.client.id);
      assert.equal(payload.sid, t.session_state);
      // The default scope of the test flow includes offline_access: Keycloak calls that an Offline token.
      assert.equal(payload.typ, 'Offline');
      assert.equal(payload.scope, 'openid core_data offline_access');
      assert.equal(payload.gen, 1);
      assert.equal(payload.exp! - payload.iat!, t.refresh_expires_in);
      // At least 128 random bits of jti.
      assert.ok(Buffer.from(payload.jti!, 'base64url').length >= 16);
      // Stored only as its hash, in its chain's row (storage per chain, issue 11).
      const stored = await ts.store.db.kysely.selectFrom('refresh_chains').select(['current_hash', 'generation']).where('id', '=', payload.chain as string).execute();
      assert.deepEqual(stored, [{ current_hash: crypto.createHash('sha256').update(t.refresh_token).digest('base64url'), generation: 1 }]);
    });

    test('without offline_access the type is Refresh', async () => {
      const t = await login('openid core_data');
      assert.equal(decodeJwt(t.refresh_token).typ, 'Refresh');
    });

    test('rotation keeps the chain, counts the generation, and changes jti', async () => {
      const t1 = await login();
      ts.clock.advance(5);
      const r2 = await refresh(t1.refresh_token);
      assert.equal(r2.statusCode, 200, r2.body);
      const t2 = r2.json().refresh_token as string;
      const r3 = await refresh(t2);
      assert.equal(r3.statusCode, 200, r3.body);
      const [c1, c2, c3] = [t1.refresh_token, t2, r3.json().refresh_token as string].map((t) => decodeJwt(t));
      assert.equal(c1!.chain, c2!.chain);
      assert.equal(c2!.chain, c3!.chain);
      assert.deepEqual([c1!.gen, c2!.gen, c3!.gen], [1, 2, 3]);
      assert.equal(new Set([c1!.jti, c2!.jti, c3!.jti]).size, 3);
      assert.equal(c2!.iat, c1!.iat! + 5);
      // Reuse of the first token still revokes the chain.
      assertInvalidGrant(await refresh(t1.refresh_token));
      assertInvalidGrant(await refresh(r3.json().refresh_token));
    });

    test('keycloak-js can decode it: the payload segment is a JSON object with exp, iat and typ', async () => {
      const t = await login();
      // keycloak-js's decodeToken: split on '.', base64url-decode the second part, JSON.parse.
      const payload = JSON.parse(Buffer.from(t.refresh_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
      assert.equal(typeof payload.exp, 'number');
      assert.equal(typeof payload.iat, 'number');
      assert.equal(typeof payload.typ, 'string');
    });

    test('a forged, altered, foreign-realm or unsigned token is invalid_grant and changes nothing; a malformed or foreign one before any database access', async () => {
      const t = await login();
      const claims = decodeJwt(t.refresh_token) as unknown as RefreshClaims;
      const [h, p, s] = t.refresh_token.split('.') as [string, string, string];
      const kid = decodeProtectedHeader(t.refresh_token).kid!;
      const other = await createRealm(ts.store, { id: `other-${dialect}` });
      const otherKeys = await ts.services.keys.refreshKeys(other.id);
      const forgedKeys = (key: crypto.KeyObject, keyId = kid): RefreshKeys => ({
        signer: { kid: keyId, key, header: Buffer.from(JSON.stringify({ alg: 'HS512', typ: 'JWT', kid: keyId })).toString('base64url') },
        byKid: new Map([[keyId, key]]),
      });
      const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
      const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
      const candidates: Record<string, string> = {
        'signed with a guessed key and the realm kid': signRefreshJwt(forgedKeys(crypto.createSecretKey(crypto.randomBytes(64))), claims),
        'signed by another realm, claiming this issuer': signRefreshJwt(otherKeys, claims),
        'signed by another realm, with its own issuer': signRefreshJwt(otherKeys, { ...claims, iss: `${ts.config.authUrl}/auth/realms/${other.id}`, aud: `${ts.config.authUrl}/auth/realms/${other.id}` }),
        'a later generation pasted onto the signature': `${h}.${b64({ ...claims, gen: 2 })}.${s}`,
        'signature altered': `${h}.${p}.${flipped}`,
        'alg none': `${b64({ alg: 'none', typ: 'JWT', kid })}.${p}.`,
        'HS256 header': `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${p}.${s}`,
        'not a JWT': crypto.randomBytes(40).toString('base64url'),
        // Values no token of ours holds and PostgreSQL refuses in a text or integer column: refused before
        // the database, where one request's bad value would fail a statement shared with others.
        'a NUL in the chain id': `${h}.${b64({ ...claims, chain: `${claims.chain}\u0000` })}.${s}`,
        'a NUL in the subject': `${h}.${b64({ ...claims, sub: `\u0000${claims.sub}` })}.${s}`,
        'a NUL in the session id': `${h}.${b64({ ...claims, sid: `${claims.sid}\u0000` })}.${s}`,
        'a NUL in the scope': `${h}.${b64({ ...claims, scope: `${claims.scope} x\u0000` })}.${s}`,
        'a generation beyond a 32-bit integer': `${h}.${b64({ ...claims, gen: 2 ** 31 })}.${s}`,
        // RFC 8707 resources: a list of 1 to 20 strings, as minted.
        'a resource that is not a list': `${h}.${b64({ ...claims, resource: 'https://api.example.com' })}.${s}`,
        'an empty resource list': `${h}.${b64({ ...claims, resource: [] })}.${s}`,
        'a resource that is not a string': `${h}.${b64({ ...claims, resource: [1] })}.${s}`,
        'more than 20 resources': `${h}.${b64({ ...claims, resource: Array.from({ length: 21 }, (_, k) => `https://a${k}.example.com`) })}.${s}`,
      };
      // A well-formed token of this realm's key reaches the database with its signature unchecked (its
      // hash decides: src/oauth/grants/refresh-token.ts); not being the chain's current token, its
      // signature is then checked and it is refused without counting as a reuse.
      const reachesDatabase = new Set(['signed with a guessed key and the realm kid', 'a later generation pasted onto the signature', 'signature altered']);
      for (const [name, token] of Object.entries(candidates)) {
        const before = calls.rotate;
        const res = await refresh(token);
        assertInvalidGrant(res);
        assert.equal((res.json() as { error_description: string }).error_description, 'the refresh token is invalid', name);
        if (reachesDatabase.has(name)) assert.equal(calls.rotate, before + 1, `${name}: the database decides`);
        else assert.equal(calls.rotate, before, `${name}: the database was consulted`);
      }
      // The genuine token still works: nothing above touched its chain.
      assert.equal((await refresh(t.refresh_token)).statusCode, 200);
    });

    test('an expired token is refused from its signed expiry, before the database (no reuse alarm)', async () => {
      const t1 = await login();
      ts.clock.advance(10);
      const r2 = await refresh(t1.refresh_token);
      assert.equal(r2.statusCode, 200, r2.body);
      const t2 = r2.json().refresh_token as string;
      // t1 (already used) has expired; t2, issued 10 s later, has not.
      ts.clock.advance(decodeJwt(t1.refresh_token).exp! - decodeJwt(t1.refresh_token).iat! - 5);
      const before = calls.rotate;
      const res = await refresh(t1.refresh_token);
      assertInvalidGrant(res);
      assert.match((res.json() as { error_description: string }).error_description, /expired/);
      assert.equal(calls.rotate, before);
      // Its signature holds: the failure event names the token's user.
      const [failed] = (await ts.store.events.list(REALM, { limit: 10 })).filter((e) => e.type === 'REFRESH_TOKEN_ERROR');
      assert.match(failed?.reason ?? '', /expired/);
      assert.equal(failed?.userId, ts.user.id);
      assert.equal(failed?.username, ts.user.username);
      // Presented after its expiry, a used token says nothing about theft: the chain lives on.
      assert.equal((await refresh(t2)).statusCode, 200);
    });

    test('a refresh token from before the upgrade (opaque, 43 characters) still works once and is rotated into a JWT', async () => {
      const t = await login();
      const chain = decodeJwt(t.refresh_token).chain as string;
      // What an earlier release stored: the hash of 256 random bits, in a live chain.
      const legacy = crypto.randomBytes(32).toString('base64url');
      const now = Math.floor(ts.clock.nowMs() / 1000);
      await ts.store.db.kysely
        .insertInto('refresh_tokens')
        .values({ hash: crypto.createHash('sha256').update(legacy).digest('base64url'), chain_id: chain, created_at: now, expires_at: now + 3600, used_at: null })
        .execute();
      // Storage per chain: the upgrade's migration made the chain's one unused token its current one.
      await ts.store.db.kysely
        .updateTable('refresh_chains')
        .set({ current_hash: crypto.createHash('sha256').update(legacy).digest('base64url'), generation: 0 })
        .where('id', '=', chain)
        .execute();
      const res = await refresh(legacy);
      assert.equal(res.statusCode, 200, res.body);
      const next = decodeJwt(res.json().refresh_token);
      assert.equal(next.chain, chain);
      assert.equal(next.gen, 2);
      // Single use still holds for it: presented again, it revokes the chain.
      assertInvalidGrant(await refresh(legacy));
      assertInvalidGrant(await refresh(res.json().refresh_token));
    });

    test('introspection and revocation accept the JWT refresh token', async () => {
      const t = await login();
      const introspect = (token: string) =>
        ts.app.inject({
          method: 'POST',
          url: `/auth/realms/${REALM}/protocol/openid-connect/token/introspect`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams({ token, token_type_hint: 'refresh_token' }).toString(),
        });
      const active = (await introspect(t.refresh_token)).json();
      assert.equal(active.active, true);
      assert.equal(active.token_type, 'refresh_token');
      assert.equal(active.exp, decodeJwt(t.refresh_token).exp);
      const revoke = await ts.app.inject({
        method: 'POST',
        url: `/auth/realms/${REALM}/protocol/openid-connect/revoke`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: new URLSearchParams({ token: t.refresh_token }).toString(),
      });
      assert.equal(revoke.statusCode, 200);
      assert.deepEqual((await introspect(t.refresh_token)).json(), { active: false });
      assertInvalidGrant(await refresh(t.refresh_token));
    });

    test('a realm without an HMAC key (created before this release) gets one on first use', async () => {
      await ts.store.db.kysely.deleteFrom('hmac_keys').where('realm_id', '=', REALM).execute();
      ts.services.keys.clear();
      const t = await login();
      assert.equal((await ts.store.hmacKeys.list(REALM)).length, 1);
      await jwtVerify(t.refresh_token, await realmSecret(REALM), { algorithms: ['HS512'], currentDate: new Date(ts.clock.nowMs()) });
    });
  });
}
