import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { authorizeQuery, runAuthorization, tokenRequest } from '../helpers/flow.js';

/**
 * Another process holding SQLite's write lock past the busy timeout (a long import, say) makes a token
 * request wait, then answer 503 with Retry-After: the client retries, and nothing it held is used up.
 * It was a 500 server_error.
 */
describe('database busy (sqlite)', () => {
  // REALMGATE_DB_WAIT_TIMEOUT_MS, short here: the busy timeout of the server's connection.
  const WAIT_MS = 500;
  let ts: TestServer;
  before(async () => {
    ts = await startTestServer({ dialect: 'sqlite', config: { dbWaitTimeoutMs: WAIT_MS } });
  });
  after(() => ts.close());

  test('a refresh, or a sign-in, while another connection holds the write lock: 503, then the same token works', async () => {
    const authorization = basic(ts.client.id, ts.client.secret);
    const { code } = await runAuthorization(ts);
    const first = await tokenRequest(ts, { grant_type: 'authorization_code', code: code!, redirect_uri: ts.client.redirectUri }, { authorization });
    assert.equal(first.statusCode, 200, first.body);
    const refreshToken = first.json().refresh_token as string;

    const other = new Database(ts.db.url.slice('sqlite:'.length));
    try {
      other.exec('BEGIN IMMEDIATE');
      let start = performance.now();
      const busy = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization });
      const refreshMs = performance.now() - start;
      assert.equal(busy.statusCode, 503, busy.body);
      assert.equal(busy.json().error, 'temporarily_unavailable');
      assert.ok(busy.headers['retry-after']);
      // After the wait timeout, not the default 5 s.
      assert.ok(refreshMs >= WAIT_MS && refreshMs < 5000, `answered after ${Math.round(refreshMs)} ms`);
      // A browser starting a sign-in (it stores the pending request) gets a page that says so.
      start = performance.now();
      const page = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}` });
      const pageMs = performance.now() - start;
      assert.equal(page.statusCode, 503);
      assert.match(page.body, /The server is busy right now/);
      assert.ok(page.headers['retry-after']);
      assert.ok(pageMs >= WAIT_MS && pageMs < 5000, `answered after ${Math.round(pageMs)} ms`);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    const after = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization });
    assert.equal(after.statusCode, 200, after.body);
  });
});
