/**
 * PostgreSQL going away under a running server (a restart, a failover, pg_terminate_backend, a pooler or
 * the network resetting connections) must cost at most 503s while it is away: never the process, never a
 * 500, never a token a client received. pg emits an 'error' event for a connection that ends; without a
 * listener that event threw and ended every server process at the first reset. The real server
 * (bin/realmgate.js start, the bundle: `npm run build` first) runs behind a real TCP proxy standing for
 * the network, so that the database other tests share is never stopped.
 */
import { describe, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { BIN } from '../helpers/cli.js';
import { freePort } from '../helpers/built.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { Store } from '../../src/storage/store.js';
import { checkChainInvariants, heldTokenState } from './invariants.js';
import { REALM, killServerProcess, outputMatches, seedTokenClient, startServerProcess, type TokenClient } from './harness.js';

const URL_ = process.env.TEST_DATABASE_URL;

/**
 * The cases in two halves, one test file each (connection-loss-postgres-1/-2.test.ts), so that each file
 * stays well within the runner's per-file time limit with three files at a time on a loaded machine
 * (together they took ~64 s on a quiet one at that concurrency).
 */
export function connectionLossSuite(half: 1 | 2): void {
  let registered = 0;
  // The first five cases are the first half (the fifth, a cluster through an outage, the longest); a vanished host and ten losses under load the second.
  const test: typeof nodeTest = ((name: string, fn: (t: import('node:test').TestContext) => Promise<void>) => {
    registered++;
    return (registered <= 5) === (half === 1) ? nodeTest(name, fn) : undefined;
  }) as typeof nodeTest;
  describe(`PostgreSQL connections lost under a running server (half ${half} of 2)`, { skip: !URL_ && 'TEST_DATABASE_URL is not set' }, () => {
    let tdb: TestDatabase;
    let store: Store;
    let tc: TokenClient;
    let proxy: TcpProxy;
    let admin: pg.Client;
    /** The server's connections, told apart from every other test's by their application_name. */
    const appName = `realmgate-lost-${process.pid}`;

    const setUp = async (): Promise<void> => {
      tdb = await createTestDatabase('postgres');
      store = new Store(tdb.db);
      tc = await seedTokenClient(store, 8);
      const u = new URL(URL_!);
      proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
      admin = new pg.Client({ connectionString: URL_ });
      await admin.connect();
    };
    const tearDown = async (): Promise<void> => {
      await admin.end().catch(() => undefined);
      await proxy.close();
      await tc.close();
      await tdb.drop();
    };
    const start = () => startServerProcess(throughProxy(tdb.url, proxy), { PGAPPNAME: appName, REALMGATE_DB_WAIT_TIMEOUT_MS: '2000' });
    /** Ends every connection of the server's processes from PostgreSQL's side, as a restart or an operator does. */
    const terminate = async (): Promise<number> =>
      (await admin.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName])).rows[0]!.n;
    /** Until the server has logged `n` lost connections in all (each process hears of its own asynchronously). */
    const heardLost = async (server: { output(): string }, n: number): Promise<void> => {
      const lost = (): number => (server.output().match(/a database connection was lost/g) ?? []).length;
      for (let tries = 0; lost() < n; tries++) {
        assert.ok(tries < 500, `the server logged ${lost()} of ${n} lost connections:\n${server.output()}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    /** A PostgreSQL role for the server, with rights on the test's schema, and the server's URL (through the proxy) as that role. */
    const serverRole = async (suffix: string): Promise<{ role: string; url: string; drop(): Promise<void> }> => {
      const role = `realmgate_${suffix}_${process.pid}`;
      const schema = new URL(tdb.url).searchParams.get('schema')!;
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      // CREATE on the database: a start creates the URL's schema when missing (CREATE SCHEMA IF NOT EXISTS).
      await admin.query(`GRANT CREATE ON DATABASE ${new URL(tdb.url).pathname.slice(1)} TO ${role}`);
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const url = new URL(throughProxy(tdb.url, proxy));
      url.username = role;
      return {
        role,
        url: url.href,
        drop: async () => {
          await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
          await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
        },
      };
    };
    const connections = async (): Promise<number> =>
      (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName])).rows[0]!.n;

    test('idle connections ended by PostgreSQL: the process stays up, says so in one line each and in its metrics, and the next requests are served', async () => {
      await setUp();
      const metricsPort = await freePort();
      // One process, whose metrics are its own (a cluster's primary serves its workers' only).
      const server = await startServerProcess(throughProxy(tdb.url, proxy), { PGAPPNAME: appName, REALMGATE_METRICS_PORT: String(metricsPort) }, ['--workers', '1']);
      try {
        let token = await tc.newChain(server);
        for (let i = 0; i < 4; i++) {
          const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
          assert.equal(r.status, 200, JSON.stringify(r.json));
          token = r.json.refresh_token as string;
        }
        const ended = await terminate();
        assert.ok(ended >= 1, 'the server held no connection to end');
        // Until the process has heard of its ended connections (one warning per connection).
        await heardLost(server, ended);
        for (let i = 0; i < 6; i++) {
          const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
          assert.equal(r.status, 200, JSON.stringify(r.json));
          token = r.json.refresh_token as string;
        }
        assert.equal((await fetch(`${server.base}/health/ready`)).status, 200);
        assert.equal(server.child.exitCode, null, 'the server exited');
        assert.doesNotMatch(server.output(), /Unhandled 'error' event|worker exited|\n\s+at /, 'a stack trace or a dead worker');
        await outputMatches(server, /"code":"57P01","reason":"terminating connection due to administrator command"/);
        const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const counted = Number(/^realmgate_db_connection_errors_total (\d+)$/m.exec(metrics)?.[1]);
        assert.ok(counted >= ended, `realmgate_db_connection_errors_total ${counted} for ${ended} ended connections`);
      } finally {
        await killServerProcess(server);
        await tearDown();
      }
    });

    test('the database unreachable: 503 in each protocol\'s form while it is away (the CLI: one line, exit 75), served again when it is back, nothing rotated by a refused request', async () => {
      await setUp();
      const server = await start();
      try {
        const token = await tc.newChain(server);
        await proxy.down();
        // The token endpoint: RFC 6749 JSON with Retry-After, the refresh token left as it was.
        const refused = await fetch(`${server.base}/auth/realms/${REALM}/protocol/openid-connect/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: tc.authorization },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
        });
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '2');
        assert.equal(((await refused.json()) as { error: string }).error, 'temporarily_unavailable');
        // A browser's login: an error page, not a stack trace.
        const page = await fetch(`${server.base}/auth/realms/${REALM}/protocol/openid-connect/auth?client_id=app&response_type=code&redirect_uri=${encodeURIComponent('https://app.example.com/cb')}&scope=openid`, { redirect: 'manual' });
        assert.equal(page.status, 503);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
        assert.doesNotMatch(await page.text(), /ECONNREFUSED|\n\s+at /);
        assert.equal((await fetch(`${server.base}/health/ready`)).status, 503);
        assert.equal((await fetch(`${server.base}/health/live`)).status, 200);
        // An administrative command on the same database.
        const cli = spawnSync(process.execPath, [BIN, 'realm', 'list'], { env: { ...process.env, DATABASE_URL: throughProxy(tdb.url, proxy) }, encoding: 'utf8' });
        assert.equal(cli.status, 75, cli.stderr);
        assert.match(cli.stderr, /^realmgate: cannot reach the database \(connect ECONNREFUSED 127\.0\.0\.1:\d+\): check that it is running and that DATABASE_URL names it; try again$/m);
        assert.doesNotMatch(cli.stderr, /\n\s+at /);

        await proxy.up();
        const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
        assert.equal(r.status, 200, `the token a refused request carried no longer works: ${JSON.stringify(r.json)}`);
        assert.equal((await fetch(`${server.base}/health/ready`)).status, 200);
        assert.equal(server.child.exitCode, null, 'the server exited');
        assert.doesNotMatch(server.output(), /Unhandled 'error' event|worker exited|\n\s+at /, 'a stack trace or a dead worker');
      } finally {
        await killServerProcess(server);
        await tearDown();
      }
    });

    test('a read-only server (a standby the address still names after a failover): writes answered 503 and not ready, served again once connections reach a primary', async () => {
      await setUp();
      // A role whose sessions are read-only stands for a standby: PostgreSQL refuses each write with 25006.
      const { role, url, drop } = await serverRole('ro');
      let server: Awaited<ReturnType<typeof start>> | undefined;
      try {
        // One process: a cluster's worker still starting when its connection is ended fails its start
        // (and is replaced) instead of logging the loss that heardLost counts.
        server = await startServerProcess(url, { PGAPPNAME: appName, REALMGATE_DB_WAIT_TIMEOUT_MS: '2000' }, ['--workers', '1']);
        const token = await tc.newChain(server);
        await admin.query(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
        // The pool's next connections are read-only sessions.
        let ended = await terminate();
        await heardLost(server, ended);
        for (let i = 0; i < 3; i++) {
          const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
          assert.equal(r.status, 503, JSON.stringify(r.json));
          assert.equal(r.json.error, 'temporarily_unavailable');
        }
        assert.equal(await heldTokenState(store, token), 'current');
        await outputMatches(server, /"code":"25006"/);
        // Not ready: a load balancer sends the requests to nodes whose connections reach the primary.
        assert.equal((await fetch(`${server.base}/health/ready`)).status, 503);
        assert.equal((await fetch(`${server.base}/health/live`)).status, 200);
        // The failover completes: connections opened from now on reach a writable server.
        await admin.query(`ALTER ROLE ${role} SET default_transaction_read_only = off`);
        ended += await terminate();
        await heardLost(server, ended);
        const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        assert.equal((await fetch(`${server.base}/health/ready`)).status, 200);
        assert.equal(server.child.exitCode, null, 'the server exited');
        assert.doesNotMatch(server.output(), /Unhandled 'error' event|worker exited|\n\s+at /, 'a stack trace or a dead worker');
      } finally {
        if (server) await killServerProcess(server);
        await drop();
        await tearDown();
      }
    });

    test("a statement canceled by the role's statement_timeout (57014, a DBA's limit): 503, then served", async () => {
      await setUp();
      const { role, url, drop } = await serverRole('st');
      // Shorter than the lock wait the server allows itself (lock_timeout = the wait timeout, 2 s).
      await admin.query(`ALTER ROLE ${role} SET statement_timeout = 300`);
      const locker = new pg.Client({ connectionString: URL_, options: `-c search_path=${new URL(tdb.url).searchParams.get('schema')}` });
      let server: Awaited<ReturnType<typeof start>> | undefined;
      try {
        server = await startServerProcess(url, { PGAPPNAME: appName, REALMGATE_DB_WAIT_TIMEOUT_MS: '2000' }, ['--workers', '1']);
        const token = await tc.newChain(server);
        // An operator's transaction holds the chain's row: the refresh waits for it until PostgreSQL cancels it.
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('SELECT id FROM refresh_chains FOR UPDATE');
        const refused = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
        assert.deepEqual([refused.status, refused.json.error], [503, 'temporarily_unavailable'], JSON.stringify(refused.json));
        await outputMatches(server, /"code":"57014"/);
        await locker.query('ROLLBACK');
        const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
        assert.equal(r.status, 200, JSON.stringify(r.json));
      } finally {
        await locker.end().catch(() => undefined);
        if (server) await killServerProcess(server);
        await drop();
        await tearDown();
      }
    });

    test('a worker that dies while PostgreSQL is unreachable is replaced, however long the outage, once it is back; the cluster keeps serving', async () => {
      await setUp();
      // A fixed port, as in production: with port 0, a worker that binds after every listening worker has
      // died gets a new random port, and the announced address is refused for good (seen under load).
      const port = await freePort();
      const server = await startServerProcess(
        throughProxy(tdb.url, proxy),
        { PGAPPNAME: appName, REALMGATE_DB_WAIT_TIMEOUT_MS: '2000', LOG_LEVEL: 'info' },
        ['--workers', '2', '--port', String(port)],
      );
      const workers = (): number[] =>
        fs.readFileSync(`/proc/${server.child.pid}/task/${server.child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      const failedStarts = (): number => (server.output().match(/a worker could not start: the database is busy or unreachable/g) ?? []).length;
      try {
        const token = await tc.newChain(server);
        // Both workers serving before the outage (the primary says so for each).
        await outputMatches(server, /"msg":"worker listening"[^]*"msg":"worker listening"/);
        await proxy.down();
        process.kill(workers()[0]!, 'SIGKILL');
        // Its replacements cannot reach the database: more of them than the cluster's limit of failed
        // starts in a row (5), which stopped the whole cluster.
        for (let tries = 0; failedStarts() < 7; tries++) {
          assert.equal(server.child.exitCode, null, `the cluster stopped:\n${server.output()}`);
          assert.ok(tries < 6000, `${failedStarts()} failed starts logged:\n${server.output()}`);
          await new Promise((r) => setTimeout(r, 10));
        }
        await proxy.up();
        // Served again once a worker listens: the survivor, or (when the other was still starting as the
        // outage began, and so could not start either) the first replacement after the database is back.
        let r: Awaited<ReturnType<typeof tc.post>> | undefined;
        for (let tries = 0; r === undefined; tries++) {
          assert.equal(server.child.exitCode, null, `the cluster stopped:\n${server.output()}`);
          assert.ok(tries < 1200, `not served again after the database came back:\n${server.output()}`);
          r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token }).catch(async (err: { code?: string }) => {
            if (err.code !== 'ECONNREFUSED') throw err;
            await new Promise((res) => setTimeout(res, 50));
            return undefined;
          });
        }
        assert.equal(r.status, 200, JSON.stringify(r.json));
        // Two workers again (the replacement forked after the database came back starts).
        for (let tries = 0; workers().length < 2; tries++) {
          assert.ok(tries < 1000, `${workers().length} workers`);
          await new Promise((res) => setTimeout(res, 10));
        }
        assert.equal(server.child.exitCode, null, 'the cluster stopped');
        assert.doesNotMatch(server.output(), /stopping|\n\s+at /);
      } finally {
        await killServerProcess(server);
        await tearDown();
      }
    });

    test('a database host gone without a reset (connections that stopped answering, the address now reaching a live server): 503 within the query timeout, then served', async (t) => {
      await setUp();
      const server = await startServerProcess(
        throughProxy(tdb.url, proxy),
        { PGAPPNAME: appName, REALMGATE_DB_WAIT_TIMEOUT_MS: '1000', REALMGATE_DB_QUERY_TIMEOUT_MS: '2000' },
        ['--workers', '1'],
      );
      try {
        const tokens = await Promise.all(Array.from({ length: 12 }, () => tc.newChain(server)));
        const refresh = async (i: number): Promise<number> => {
          const res = await fetch(`${server.base}/auth/realms/${REALM}/protocol/openid-connect/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: tc.authorization },
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens[i]! }),
            // Far past the query timeout: what hung before (until TCP gave up, some 15 minutes) fails here.
            signal: AbortSignal.timeout(20_000),
          });
          const body = (await res.json()) as { refresh_token?: string; error?: string };
          if (res.status === 200) tokens[i] = body.refresh_token!;
          else assert.deepEqual([res.status, body.error], [503, 'temporarily_unavailable']);
          return res.status;
        };
        // Every pooled connection in use at once, then all of them stop answering.
        await Promise.all(tokens.map((_, i) => refresh(i)));
        assert.ok(proxy.open() >= 2, `${proxy.open()} connections`);
        proxy.stallOpen();
        const stalled = proxy.open();
        // Each stalled connection is closed by the first statement that meets it, past the query timeout
        // (503); a request waiting meanwhile for a connection gets its 503 after the wait timeout. So after
        // at most a round per pooled connection, every refresh is served again.
        let rounds = 0;
        for (let statuses: number[] = []; !statuses.length || statuses.includes(503); rounds++) {
          assert.ok(rounds <= stalled + 1, `still refused after ${rounds} rounds`);
          statuses = await Promise.all(tokens.map((_, i) => refresh(i)));
          if (rounds === 0) assert.ok(statuses.includes(503), 'no request met a stalled connection');
        }
        assert.deepEqual(await Promise.all(tokens.map((_, i) => refresh(i))), tokens.map(() => 200));
        t.diagnostic(`${stalled} connections stalled; every refresh served again after ${rounds} rounds`);
        for (const t of tokens) assert.equal(await heldTokenState(store, t), 'current');
        await outputMatches(server, /a database connection was lost/);
        assert.equal(server.child.exitCode, null, 'the server exited');
      } finally {
        await killServerProcess(server);
        await tearDown();
      }
    });

    test('connections ended ten times under refresh load: every answer is 200 or 503, and every client keeps its chain', async (t) => {
      await setUp();
      // A refresh whose commit reached the database but whose answer did not (the connection ended in
      // between) is retried by the client: the grace window answers it with a successor (issue 11, item 5).
      await store.realms.update(REALM, { refreshGraceSeconds: 300, refreshGraceMax: 100 });
      const server = await start();
      const CLIENTS = 6;
      try {
        const clients = await Promise.all(Array.from({ length: CLIENTS }, async () => ({ held: await tc.newChain(server) })));
        let ok = 0;
        let unavailable = 0;
        let stop = false;
        let failure: unknown;
        const load = clients.map(async (c) => {
          while (!stop) {
            const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: c.held });
            if (r.status === 503) {
              assert.equal(r.json.error, 'temporarily_unavailable');
              unavailable++;
              await new Promise((res) => setTimeout(res, 5));
              continue; // The same token again, as a client told to retry does.
            }
            assert.equal(r.status, 200, JSON.stringify(r.json));
            c.held = r.json.refresh_token as string;
            ok++;
          }
        }).map((p) => p.catch((err: unknown) => {
          failure ??= err;
        }));
        /** Until `n` more refreshes were answered 200; a client's failed assertion ends the test instead of stalling it. */
        const progress = async (n: number): Promise<void> => {
          const target = ok + n;
          while (ok < target && failure === undefined) await new Promise((r) => setImmediate(r));
          if (failure !== undefined) throw failure;
        };
        let ended = 0;
        try {
          for (let round = 0; round < 10; round++) {
            // At a random point of the load (never after a fixed time).
            await progress(20 + crypto.randomInt(60));
            if (round % 2 === 0) ended += await terminate();
            else {
              ended += proxy.open();
              proxy.cut();
            }
          }
          await progress(50);
        } finally {
          stop = true;
          await Promise.all(load);
        }
        if (failure !== undefined) throw failure;
        assert.equal(server.child.exitCode, null, 'the server exited');
        assert.doesNotMatch(server.output(), /Unhandled 'error' event|worker exited|\n\s+at /, 'a stack trace or a dead worker');
        await checkChainInvariants(tdb.db, 'postgres');
        for (const c of clients) assert.equal(await heldTokenState(store, c.held), 'current');
        assert.ok((await connections()) >= 1);
        t.diagnostic(`${ok} refreshes answered 200, ${unavailable} 503 while ${ended} connections were ended in 10 rounds`);
      } finally {
        await killServerProcess(server);
        await tearDown();
      }
    });
  });
}
