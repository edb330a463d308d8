import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

// Issue 12 item 6: a leaked code presented by another client must not burn it for its own client.
for (const dialect of dialects()) {
  describe(`a code presented by the wrong client (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    const other = basic('other-app', 'other-secret');
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
      await createClient(ts.store, { realmId: REALM, clientId: 'other-app', redirectUris: [ts.client.redirectUri], secret: 'other-secret' });
    });
    after(() => ts.close());

    async function code(): Promise<string> {
      const r = await runAuthorization(ts);
      assert.ok(r.code, 'no code');
      return r.code;
    }
    const exchange = (c: string, authorization: string) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code: c, redirect_uri: ts.client.redirectUri }, { authorization });

    test('is refused without being consumed; its own client still redeems it', async () => {
      const c = await code();
      const wrong = await exchange(c, other);
      assert.equal(wrong.statusCode, 400);
      assert.equal(wrong.json().error, 'invalid_grant');
      const right = await exchange(c, auth);
      assert.equal(right.statusCode, 200, right.body);
    });

    test('after redemption, a wrong client gets invalid_grant and revokes nothing; reuse by the right client still revokes', async () => {
      const c = await code();
      const first = await exchange(c, auth);
      assert.equal(first.statusCode, 200, first.body);
      const { refresh_token } = first.json() as { refresh_token: string };
      assert.equal((await exchange(c, other)).json().error, 'invalid_grant');
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token }, { authorization: auth });
      assert.equal(refreshed.statusCode, 200, 'the wrong client did not revoke the grant');
      assert.equal((await exchange(c, auth)).json().error, 'invalid_grant');
      const { refresh_token: next } = refreshed.json() as { refresh_token: string };
      const after = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: next }, { authorization: auth });
      assert.equal(after.json().error, 'invalid_grant', 'reuse by the right client revokes the chain');
    });
  });
}
