import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { jwtVerify } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

for (const dialect of dialects()) {
  describe(`realm document and account JSON (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function accessToken(): Promise<string> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      return res.json().access_token;
    }

    test("GET /auth/realms/<realm>: Keycloak's published realm, whose public_key verifies our tokens", async () => {
      const res = await ts.app.inject({ method: 'GET', url: realmPath('') });
      assert.equal(res.statusCode, 200);
      const doc = res.json();
      const base = `${ts.config.authUrl}/auth/realms/${REALM}`;
      assert.deepEqual(Object.keys(doc).sort(), ['account-service', 'public_key', 'realm', 'token-service', 'tokens-not-before']);
      assert.equal(doc.realm, REALM);
      assert.equal(doc['token-service'], `${base}/protocol/openid-connect`);
      assert.equal(doc['account-service'], `${base}/account`);
      assert.equal(doc['tokens-not-before'], 0);
      const key = crypto.createPublicKey({ key: Buffer.from(doc.public_key, 'base64'), format: 'der', type: 'spki' });
      const { payload } = await jwtVerify(await accessToken(), key, { algorithms: ['RS256'] });
      assert.equal(payload.iss, base);
      assert.equal((await ts.app.inject({ method: 'GET', url: '/auth/realms/nope' })).statusCode, 404);
    });

    test('the account URL answers JSON to a bearer token, and the HTML page to a browser', async () => {
      const token = await accessToken();
      const json = await ts.app.inject({ method: 'GET', url: realmPath('/account'), headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      assert.equal(json.statusCode, 200);
      assert.deepEqual(json.json(), { id: ts.user.id, username: 'alice', email: 'alice@example.com', emailVerified: false, attributes: {} });
      assert.equal(json.headers['cache-control'], 'no-store');
      const html = await ts.app.inject({ method: 'GET', url: realmPath('/account'), headers: { accept: 'text/html,application/xhtml+xml' } });
      assert.match(String(html.headers['content-type']), /text\/html/);
      const none = await ts.app.inject({ method: 'GET', url: realmPath('/account'), headers: { accept: 'application/json' } });
      assert.equal(none.statusCode, 401);
      assert.match(String(none.headers['www-authenticate']), /^Bearer realm=/);
      const bad = await ts.app.inject({ method: 'GET', url: realmPath('/account'), headers: { authorization: 'Bearer abc.def.ghi', accept: 'application/json' } });
      assert.equal(bad.statusCode, 401);
      assert.equal(bad.json().error, 'invalid_token');
    });
  });
}
