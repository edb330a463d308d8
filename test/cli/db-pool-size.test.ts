import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { BIN, cliDatabase, cliRunner } from '../helpers/cli.js';
import { parsePostgresUrl } from '../../src/storage/dialects/postgres.js';

// REALMGATE_DB_POOL_SIZE (docs/capacity.md, Connections): the most PostgreSQL connections one server
// process opens, so that nodes x workers x pool fits the server's max_connections. It was fixed at 10.
describe('REALMGATE_DB_POOL_SIZE (postgres)', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const database = cliDatabase('postgres', 'realmgate-pool-');
  const { ok, fails } = cliRunner(() => database.url);

  test('a bad value is refused in one line, exit status 1', () => {
    try {
      for (const bad of ['0', 'ten', '1001']) {
        process.env.REALMGATE_DB_POOL_SIZE = bad;
        fails(['migrate'], /^realmgate: REALMGATE_DB_POOL_SIZE must be an integer from 1 to 1000$/m, { status: 1 });
      }
    } finally {
      delete process.env.REALMGATE_DB_POOL_SIZE;
    }
    assert.match(ok(['migrate']), /database is up to date|applied/);
  });

  test('REALMGATE_DB_QUERY_TIMEOUT_MS: a bad value, or one not above the wait timeout, is refused in one line', () => {
    try {
      for (const [bad, message] of [
        ['999', /^realmgate: REALMGATE_DB_QUERY_TIMEOUT_MS must be an integer from 1000 to 3600000$/m],
        ['5000', /^realmgate: REALMGATE_DB_QUERY_TIMEOUT_MS must be more than REALMGATE_DB_WAIT_TIMEOUT_MS$/m],
      ] as const) {
        process.env.REALMGATE_DB_QUERY_TIMEOUT_MS = bad;
        fails(['migrate'], message, { status: 1 });
      }
    } finally {
      delete process.env.REALMGATE_DB_QUERY_TIMEOUT_MS;
    }
  });

  test('a server never opens more connections than the setting, however many requests wait for the database', async () => {
    const POOL = 2;
    // The server's connections, told apart from everyone else's by their application_name (PGAPPNAME).
    const appName = `realmgate-pool-test-${process.pid}`;
    const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--host', '127.0.0.1', '--workers', '1'], {
      env: { ...process.env, DATABASE_URL: database.url, REALMGATE_DB_POOL_SIZE: String(POOL), REALMGATE_DB_WAIT_TIMEOUT_MS: '2000', PGAPPNAME: appName, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const { connectionString, schema } = parsePostgresUrl(database.url);
    const locker = new pg.Client({ connectionString, options: `-c search_path=${schema}` });
    const probe = new pg.Client({ connectionString });
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /listening on (http:\/\/[^\s]+) /.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
      });
      assert.equal((await fetch(`${base}/health/ready`)).status, 200);
      await locker.connect();
      await probe.connect();
      const connections = async (): Promise<number> =>
        (await probe.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName])).rows[0]!.n;
      // Every readiness check reads the migration list: with its table locked, each request holds a
      // connection while it waits for the lock, or waits for a connection.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE kysely_migration IN ACCESS EXCLUSIVE MODE');
      const waiting = Array.from({ length: 8 }, () => fetch(`${base}/health/ready`).then((r) => r.status));
      // Until PostgreSQL shows the server's connections waiting for the lock.
      let most = 0;
      for (let tries = 0; ; tries++) {
        const waits = (
          await probe.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [appName])
        ).rows[0]!.n;
        most = Math.max(most, await connections());
        if (waits >= POOL) break;
        assert.ok(tries < 500, `the server's connections never waited for the lock (${waits} waiting)`);
        await new Promise((r) => setTimeout(r, 10));
      }
      for (let k = 0; k < 20; k++) {
        most = Math.max(most, await connections());
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(most, POOL, `the server opened ${most} connections`);
      await locker.query('ROLLBACK');
      const statuses = await Promise.all(waiting);
      // Each was answered: ready, or not ready while it could not reach the database in time.
      for (const s of statuses) assert.ok(s === 200 || s === 503, String(s));
      assert.equal((await fetch(`${base}/health/ready`)).status, 200);
    } finally {
      await locker.end().catch(() => undefined);
      await probe.end().catch(() => undefined);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
