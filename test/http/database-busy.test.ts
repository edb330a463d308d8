import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { IDLE_IN_TRANSACTION_MS, parsePostgresUrl } from '../../src/storage/dialects/postgres.js';
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

/**
 * PostgreSQL bounds the same waits (REALMGATE_DB_WAIT_TIMEOUT_MS, short here): a statement waiting for a
 * lock another transaction holds (lock_timeout: an operator's psql left inside BEGIN; SELECT ... FOR
 * UPDATE), and a request waiting for a pooled connection when all are held. Both waited for ever.
 * Real HTTP to a listening server, real PostgreSQL connections holding what they hold.
 */
describe('database busy (postgres)', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  // It bounds opening a connection too: well above the time a busy machine takes to open one.
  const WAIT_MS = 1000;
  /** The pool's size (dialects/postgres.ts). */
  const POOL_SIZE = 10;
  let ts: AdminTestServer;
  before(async () => {
    ts = await startAdminServer({ dialect: 'postgres', config: { dbWaitTimeoutMs: WAIT_MS } });
  });
  after(() => ts.close());

  async function firstRefreshToken(): Promise<string> {
    const { code } = await runAuthorization(ts);
    const first = await tokenRequest(ts, { grant_type: 'authorization_code', code: code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
    assert.equal(first.statusCode, 200, first.body);
    return first.json().refresh_token as string;
  }

  /** A request over HTTP, timed from sending to the whole answer. */
  async function timed(path: string, init: RequestInit = {}): Promise<{ status: number; body: string; retryAfter: string | null; ms: number; end: number }> {
    const start = performance.now();
    const res = await fetch(`${ts.baseUrl}${path}`, init);
    const body = await res.text();
    const end = performance.now();
    return { status: res.status, body, retryAfter: res.headers.get('retry-after'), ms: end - start, end };
  }

  const refresh = (token: string) =>
    timed(realmPath('/protocol/openid-connect/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
    });

  /** Another process's connection to the server's schema (an operator's psql). */
  async function otherConnection(): Promise<pg.Client> {
    const { connectionString, schema } = parsePostgresUrl(ts.db.url);
    const c = new pg.Client({ connectionString, options: `-c search_path=${schema}` });
    await c.connect();
    return c;
  }

  test('a refresh whose chain row another transaction holds (SELECT ... FOR UPDATE): 503 after the wait timeout, then the same token works', async () => {
    const token = await firstRefreshToken();
    const other = await otherConnection();
    try {
      await other.query('BEGIN');
      const locked = await other.query('SELECT id FROM refresh_chains FOR UPDATE');
      assert.ok(locked.rowCount! >= 1);
      // Held, as PostgreSQL reports it, before the request is sent.
      const held = await other.query("SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND relation = 'refresh_chains'::regclass AND mode = 'RowShareLock' AND granted");
      assert.equal(held.rows[0].n, 1);
      const busy = await refresh(token);
      assert.equal(busy.status, 503, busy.body);
      assert.equal(JSON.parse(busy.body).error, 'temporarily_unavailable');
      assert.equal(busy.retryAfter, '2');
      assert.doesNotMatch(busy.body, /lock timeout|\n\s+at\s/);
      // It waited for the lock for the wait timeout, not the default 5 s, and not for ever.
      assert.ok(busy.ms >= WAIT_MS && busy.ms < 5000, `answered after ${Math.round(busy.ms)} ms`);
      await other.query('ROLLBACK');
    } finally {
      await other.end();
    }
    // Nothing was used up: the token presented during the wait is still the chain's current one.
    const after = await refresh(token);
    assert.equal(after.status, 200, after.body);
  });

  test('refreshes arriving together, one of whose chains another transaction holds: the others answer at once, that one 503 after one wait timeout', async () => {
    const chainIds = async () => new Set((await ts.store.db.kysely.selectFrom('refresh_chains').select('id').execute()).map((r) => r.id));
    const before = await chainIds();
    const heldToken = await firstRefreshToken();
    const [heldId] = [...(await chainIds())].filter((id) => !before.has(id));
    const tokens: string[] = [];
    for (let k = 0; k < 6; k++) tokens.push(await firstRefreshToken());
    const other = await otherConnection();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM refresh_chains WHERE id = $1 FOR UPDATE', [heldId]);
      // Sent together, so that the server's group commit puts several in one statement (which one goes
      // with which is up to timing: test/storage/postgres-batch.test.ts shows the skipped row itself).
      const answers = await Promise.all([...tokens.slice(0, 3), heldToken, ...tokens.slice(3)].map((t) => refresh(t)));
      const [held] = answers.splice(3, 1);
      const rest = answers;
      assert.equal(held!.status, 503, held!.body);
      // Not held behind the lock: each is answered before the held one's wait for it ends. (Measured
      // against that wait, not against a fixed time: a busy machine once took 1.7 s to answer all seven,
      // and then a bound of WAIT_MS failed although nothing had waited for the lock.)
      for (const r of rest) {
        assert.equal(r.status, 200, r.body);
        assert.ok(r.end < held!.end, `a chain nobody holds answered ${Math.round(r.end - held!.end)} ms after the held one (after ${Math.round(r.ms)} ms)`);
      }
      // One wait, not a batch's wait and then its retry's.
      assert.ok(held!.ms >= WAIT_MS && held!.ms < 2 * WAIT_MS, `answered after ${Math.round(held!.ms)} ms`);
      await other.query('ROLLBACK');
    } finally {
      await other.end();
    }
    assert.equal((await refresh(heldToken)).status, 200);
  });

  test('every pooled connection held: the token endpoint, a page and the admin API answer 503 after the wait timeout, then work', async () => {
    const token = await firstRefreshToken();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Each holder keeps a pooled connection until released; one after the other, so that the pool opens
    // one connection at a time (each within the wait timeout). Each says what lock_timeout it has.
    const holders: Promise<void>[] = [];
    const lockTimeouts: string[] = [];
    try {
      for (let i = 0; i < POOL_SIZE; i++) {
        await new Promise<void>((holding, failed) => {
          holders.push(
            ts.store.db.kysely
              .connection()
              .execute(async (conn) => {
                const r = await sql<{ ms: string; idle: string }>`SELECT (SELECT setting FROM pg_settings WHERE name = 'lock_timeout') AS ms, (SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout') AS idle`.execute(conn);
                lockTimeouts.push(`${r.rows[0]!.ms} ${r.rows[0]!.idle}`);
                holding();
                await released;
              })
              .catch(failed),
          );
        });
      }
      // Every connection of the pool, not only the one that ran the migrations, waits for locks no longer,
      // and has a transaction it leaves idle ended (IDLE_IN_TRANSACTION_MS) rather than holding its locks.
      assert.deepEqual(lockTimeouts, Array(POOL_SIZE).fill(`${WAIT_MS} ${IDLE_IN_TRANSACTION_MS}`));
      const busy = await refresh(token);
      assert.equal(busy.status, 503, busy.body);
      assert.equal(JSON.parse(busy.body).error, 'temporarily_unavailable');
      assert.equal(busy.retryAfter, '2');
      assert.ok(busy.ms >= WAIT_MS && busy.ms < 5000, `answered after ${Math.round(busy.ms)} ms`);
      const page = await timed(`${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      assert.equal(page.status, 503);
      assert.match(page.body, /The server is busy right now/);
      assert.equal(page.retryAfter, '2');
      const admin = await timed('/auth/admin/realms/test/users', { headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      assert.equal(admin.status, 503, admin.body);
      assert.equal(admin.retryAfter, '2');
      assert.doesNotMatch(admin.body, /timeout|\n\s+at\s/);
    } finally {
      release();
      await Promise.all(holders);
    }
    const after = await refresh(token);
    assert.equal(after.status, 200, after.body);
  });
});
