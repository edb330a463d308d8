import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createRealm, rotateKeys } from '../../src/admin/operations.js';
import { openPrivateJwk, KeySecretError } from '../../src/crypto/key-encryption.js';
import { buildApp } from '../../src/app.js';

for (const dialect of dialects()) {
  describe(`secrets at rest and in logs (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('codes, refresh tokens and client secrets are stored only as hashes', async () => {
      const r = await runAuthorization(ts);
      const t = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json();
      const k = ts.store.db.kysely;
      const dump = JSON.stringify([
        await k.selectFrom('authorization_codes').selectAll().execute(),
        await k.selectFrom('refresh_tokens').selectAll().execute(),
        await k.selectFrom('refresh_chains').selectAll().execute(),
        await k.selectFrom('clients').selectAll().execute(),
        await k.selectFrom('browser_sessions').selectAll().execute(),
        await k.selectFrom('users').selectAll().execute(),
        await k.selectFrom('events').selectAll().execute(),
      ]);
      for (const secret of [r.code!, t.refresh_token, ts.client.secret, ts.user.password, t.access_token]) assert.ok(!dump.includes(secret), 'a secret is stored in clear');
      const session = r.jar.cookies.get('RG_SESSION')!;
      assert.ok(!dump.includes(session), 'the session cookie is stored in clear');
      assert.match(dump, /\$argon2id\$/);
    });

    test('with REALMGATE_KEY_SECRET the private signing keys are encrypted', async () => {
      process.env.REALMGATE_KEY_SECRET = 'a long operator secret for tests';
      try {
        const { kid } = await rotateKeys(ts.store, { realmId: REALM });
        const row = await ts.store.db.kysely.selectFrom('signing_keys').selectAll().where('kid', '=', kid).executeTakeFirstOrThrow();
        assert.match(row.private_jwk, /^enc:v1:/);
        assert.doesNotMatch(row.private_jwk, /"d"/);
        // Tokens are signed with it.
        const r = await runAuthorization(ts);
        const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(res.statusCode, 200, res.body);
        process.env.REALMGATE_KEY_SECRET = 'the wrong secret';
        assert.throws(() => openPrivateJwk(row.private_jwk), KeySecretError);
        delete process.env.REALMGATE_KEY_SECRET;
        assert.throws(() => openPrivateJwk(row.private_jwk), /set REALMGATE_KEY_SECRET/);
      } finally {
        delete process.env.REALMGATE_KEY_SECRET;
      }
    });

    test('with REALMGATE_KEY_SECRET the HMAC key of refresh tokens is encrypted too', async () => {
      process.env.REALMGATE_KEY_SECRET = 'a long operator secret for tests';
      try {
        const realm = await createRealm(ts.store, { id: 'sealed-hmac' });
        const row = await ts.store.db.kysely.selectFrom('hmac_keys').selectAll().where('realm_id', '=', realm.id).executeTakeFirstOrThrow();
        assert.match(row.secret_jwk, /^enc:v1:/);
        assert.doesNotMatch(row.secret_jwk, /"k"/);
        assert.ok((await ts.services.keys.refreshKeys(realm.id)).signer.kid === row.kid);
        delete process.env.REALMGATE_KEY_SECRET;
        assert.throws(() => openPrivateJwk(row.secret_jwk), /set REALMGATE_KEY_SECRET/);
      } finally {
        delete process.env.REALMGATE_KEY_SECRET;
      }
    });

    test('nothing secret reaches the log, even at trace level', async () => {
      const lines: string[] = [];
      const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
      const app = await buildApp({ services: ts.services, logger: pino({ level: 'trace' }, sink) });
      await app.ready();
      const view = { ...ts, app };
      try {
        process.env.REALMGATE_KEY_SECRET = 'a long operator secret for tests';
        const r = await runAuthorization(view);
        const form = { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri };
        const t = (await tokenRequest(view, form, { authorization: basic(ts.client.id, ts.client.secret) })).json();
        await tokenRequest(view, form, { authorization: basic(ts.client.id, ts.client.secret) });
        await tokenRequest(view, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: basic(ts.client.id, 'wrong-' + ts.client.secret) });
        await tokenRequest(view, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
        await tokenRequest(view, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
        await app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/userinfo'), headers: { authorization: `Bearer ${t.access_token}` } });
        const log = lines.join('');
        assert.ok(lines.length > 0, 'the server logged something');
        for (const secret of [r.code!, t.refresh_token, t.access_token, ts.client.secret, ts.user.password, r.jar.cookies.get('RG_SESSION')!, 'a long operator secret']) {
          assert.ok(!log.includes(secret), `the log contains a secret: ${secret.slice(0, 8)}...`);
        }
      } finally {
        delete process.env.REALMGATE_KEY_SECRET;
        await app.close();
      }
    });
  });
}
