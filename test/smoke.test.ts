import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, basic } from './helpers/server.js';
import { runAuthorization, tokenRequest } from './helpers/flow.js';
import { dialects } from './helpers/db.js';

for (const dialect of dialects()) {
  test(`smoke: code flow and refresh (${dialect})`, async () => {
    const ts = await startTestServer({ dialect });
    try {
      const r = await runAuthorization(ts);
      assert.deepEqual(r.pages, ['login', 'consent', 'organization']);
      assert.ok(r.code);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      const res2 = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res2.statusCode, 200, res2.body);
      console.log(res2.json());
    } finally {
      await ts.close();
    }
  });
}
