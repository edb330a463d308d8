import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { dialects } from '../helpers/db.js';
import { ManualClock, nowSeconds } from '../../src/clock.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, createRealm, createOrganization, createUser, rotateKeys } from '../../src/admin/operations.js';

for (const dialect of dialects()) {
  describe(`signing keys (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    const jwks = async (realm = REALM): Promise<{ keys: JWK[] }> => (await ts.app.inject({ method: 'GET', url: `/auth/realms/${realm}/protocol/openid-connect/certs` })).json();
    const verify = async (token: string, realm = REALM) =>
      jwtVerify(token, createLocalJWKSet(await jwks(realm)), { issuer: `${ts.config.authUrl}/auth/realms/${realm}`, currentDate: new Date(ts.clock.nowMs()) });

    async function refreshToken(): Promise<string> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      return res.json().refresh_token;
    }

    test('rotation under load: no request fails, old tokens keep verifying, new ones carry the new kid', async () => {
      const [oldKey] = (await jwks()).keys;
      const chains = await Promise.all([refreshToken(), refreshToken(), refreshToken(), refreshToken()]);
      const issued: string[] = [];
      let rotated: { kid: string } | undefined;
      let stop = false;
      // The rotation waits for tokens signed with the old key, not for a fixed time: after 30 ms, a busy
      // machine had sometimes issued none yet (CI, 2026-11-30: "tokens were signed before the rotation").
      let oldKeyUsed!: () => void;
      const signedBefore = new Promise<void>((r) => (oldKeyUsed = r));
      // Each worker keeps refreshing until it has made 3 requests after the rotation.
      const workers = chains.map(async (rt) => {
        let n = 0;
        let afterRotation = 0;
        while (afterRotation < 3 && n < 400) {
          const rotatedBefore = stop;
          const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth });
          assert.equal(res.statusCode, 200, res.body);
          rt = res.json().refresh_token;
          issued.push(res.json().access_token);
          if (issued.length === chains.length) oldKeyUsed();
          n++;
          if (rotatedBefore) afterRotation++;
        }
      });
      // A worker that failed fails the test here rather than leaving it waiting.
      await Promise.race([signedBefore, Promise.all(workers)]);
      rotated = await rotateKeys(ts.store, { realmId: REALM }, { clock: ts.clock });
      stop = true;
      await Promise.all(workers);
      const kids = new Set(issued.map((t) => decodeProtectedHeader(t).kid));
      assert.ok(kids.has(oldKey!.kid), 'tokens were signed before the rotation');
      assert.ok(kids.has(rotated.kid), 'tokens were signed after the rotation');
      assert.equal(decodeProtectedHeader(issued.at(-1)!).kid, rotated.kid);
      // Every token, old or new, verifies with the published JWKS.
      for (const t of issued) await verify(t);
      assert.deepEqual((await jwks()).keys.map((k) => k.kid).sort(), [oldKey!.kid, rotated.kid].sort());
    });

    test('a retired key leaves the JWKS once its longest token has expired', async () => {
      const before = (await jwks()).keys.length;
      assert.equal(before, 2);
      // The retirement time comes from the admin operation's wall clock, which may run ahead of the
      // manual clock when the machine is busy: advance past it rather than by a fixed amount.
      const retiredAt = Math.max(...(await ts.store.keys.list(REALM)).map((k) => k.retiredAt ?? 0));
      ts.clock.advance(Math.max(259_200 + 1, retiredAt + 259_200 + 1 - Math.floor(ts.clock.nowMs() / 1000)));
      assert.equal((await jwks()).keys.length, 1);
    });

    test('rotation dates the retired key by the injected clock, not the real one', async () => {
      // A clock ten days behind the real one: a rotation that read Date.now() would retire the key in its future.
      const clock = new ManualClock(Date.now() - 10 * 86_400_000);
      await createRealm(ts.store, { id: 'r-clock' });
      const before = await ts.store.keys.list('r-clock');
      await rotateKeys(ts.store, { realmId: 'r-clock' }, { clock });
      const retired = (await ts.store.keys.list('r-clock')).find((k) => k.kid === before[0]!.kid)!;
      assert.equal(retired.retiredAt, nowSeconds(clock));
    });

    test('a realm can sign with ES256 or EdDSA', async () => {
      for (const alg of ['ES256', 'EdDSA'] as const) {
        const realm = `r-${alg.toLowerCase()}`;
        await createRealm(ts.store, { id: realm, settings: { signingAlg: alg } });
        await createOrganization(ts.store, { realmId: realm, alias: 'acme' });
        await createUser(ts.store, { realmId: realm, username: 'alice', password: ts.user.password, orgAliases: ['acme'] });
        await createClient(ts.store, { realmId: realm, clientId: 'app', redirectUris: [ts.client.redirectUri], secret: 'app-secret' });
        // The realm's key, and an RS256 key for the ID tokens of its clients (RS256 by default).
        assert.deepEqual((await jwks(realm)).keys.map((k) => k.alg).sort(), [alg, 'RS256'].sort());
      }
      const rotated = await rotateKeys(ts.store, { realmId: REALM, alg: 'ES256' }, { clock: ts.clock });
      assert.equal(rotated.alg, 'ES256');
      const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: await refreshToken() }, { authorization: auth });
      const { protectedHeader } = await verify(res.json().access_token);
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(protectedHeader.kid, rotated.kid);
      // ID tokens keep the client's algorithm (id_token_signed_response_alg, RS256 by default).
      assert.equal(decodeProtectedHeader(res.json().id_token).alg, 'RS256');
      await verify(res.json().id_token);
    });
  });
}
