import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Migrator, sql } from 'kysely';
import { dialects } from '../helpers/db.js';
import { openDatabase, migrate, migrationsApplied, type Db } from '../../src/storage/database.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../helpers/migrate-child.ts');

// Issue 11 item 4: nodes may start together; their migrations take turns under a lock.
for (const dialect of dialects()) {
  describe(`migrations under a lock (${dialect})`, () => {
    test('four processes migrating one fresh database at the same moment all succeed', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-migrate-'));
      const go = path.join(dir, 'go');
      let url = `sqlite:${path.join(dir, 'fresh.db')}`;
      const schema = `m_${crypto.randomBytes(6).toString('hex')}`;
      if (dialect === 'postgres') {
        const u = new URL(process.env.TEST_DATABASE_URL!);
        u.searchParams.set('schema', schema);
        url = u.href;
      }
      try {
        const children = Array.from({ length: 4 }, () => {
          const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DATABASE_URL: url, GO_FILE: go } });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          const done = new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
          const ready = async (): Promise<void> => {
            while (!out.includes('ready')) {
              if (child.exitCode !== null) throw new Error(out);
              await new Promise((r) => setTimeout(r, 10));
            }
          };
          return { ready, done };
        });
        // Every process has its connection open; then all start migrating at once.
        await Promise.all(children.map((c) => c.ready()));
        fs.writeFileSync(go, '');
        const outputs = await Promise.all(children.map((c) => c.done));
        for (const out of outputs) assert.match(out, /migrated/, out);
        const db = await openDatabase(url);
        try {
          assert.equal(await migrationsApplied(db), true);
        } finally {
          await db.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
        if (dialect === 'postgres') {
          const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
          await c.connect();
          await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => c.end());
        }
      }
    });
  });
}

/**
 * PostgreSQL connections have a lock_timeout (REALMGATE_DB_WAIT_TIMEOUT_MS, short here), and the
 * migrations must not: a node waits for another node's migrations however long they take, and a
 * migration's ALTER TABLE waits for the transactions using the table. Each test holds the lock from a
 * connection of its own, then waits until PostgreSQL reports that the migrating connection has waited
 * for it three times the wait timeout in one wait (a lock_timeout would have cancelled that wait and the
 * retries of migrate() would have given up), then lets go: the migration completes.
 * Each in a database of its own: Kysely's advisory lock and its catalog reads are per database, so the
 * lock held here does not stop other test files' migrations, and the schemas other test files drop
 * meanwhile do not disturb the catalog reads of Migrator.migrateTo here (which, unlike migrate(), does
 * not try again).
 */
describe('PostgreSQL migrations wait for locks past the wait timeout', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  // It bounds opening a connection too: well above the time a busy machine takes to open one.
  const WAIT_MS = 1000;
  const base = process.env.TEST_DATABASE_URL!;

  /** Runs `fn` with the URL of a new, empty database (dropped afterwards) and a name for its Db's connections. */
  async function inOwnDatabase(fn: (url: string, app: string) => Promise<void>): Promise<void> {
    const name = `rg_m_${crypto.randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      const u = new URL(base);
      u.pathname = `/${name}`;
      await fn(u.href, name);
    } finally {
      try {
        // Every client made here has ended, but a server process may outlive its client's end() for a
        // moment (and DROP ... WITH (FORCE) would send its client an error nobody listens to any more).
        while ((await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0].n > 0) {
          await new Promise((r) => setTimeout(r, 10));
        }
        await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      } finally {
        await admin.end();
      }
    }
  }

  /**
   * A Db as the server opens it, with the short wait timeout and statements bounded by twice that
   * (REALMGATE_DB_QUERY_TIMEOUT_MS: the migrations' own statements are not), whose connections PostgreSQL
   * names `app` (pg_stat_activity.application_name).
   */
  function open(url: string, app: string): Promise<Db> {
    const u = new URL(url);
    u.searchParams.set('application_name', app);
    return openDatabase(u.href, { waitTimeoutMs: WAIT_MS, queryTimeoutMs: 2 * WAIT_MS });
  }

  /** migrate(db), its outcome ('migrated' or the error) never left unhandled, and whether it has one yet. */
  function migrating(db: Db): { settled: () => boolean; outcome: Promise<unknown> } {
    let settled = false;
    const outcome = migrate(db).then(
      () => 'migrated',
      (err: unknown) => err,
    );
    void outcome.finally(() => (settled = true));
    return { settled: () => settled, outcome };
  }

  /** Returns once a connection named `app` has waited for one lock for 3 wait timeouts, or once `settled()`. */
  async function waitedLong(url: string, app: string, settled: () => boolean): Promise<void> {
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    try {
      while (!settled()) {
        const r = await probe.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE a.application_name = $1 AND NOT l.granted AND clock_timestamp() - l.waitstart > $2::int * interval '1 millisecond'`,
          [app, 3 * WAIT_MS],
        );
        if (r.rows[0].n > 0) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await probe.end();
    }
  }

  /** The lock_timeout of the Db's connection (its only one when nothing else runs: migrate() runs one statement at a time). */
  async function lockTimeout(db: Db): Promise<string | undefined> {
    return (await sql<{ ms: string }>`SELECT setting AS ms FROM pg_settings WHERE name = 'lock_timeout'`.execute(db.kysely)).rows[0]?.ms;
  }

  test("a node waits for another node's migration lock past the wait timeout", () =>
    inOwnDatabase(async (url, app) => {
      // Another node migrating: it holds Kysely's migration lock (kysely's PostgresAdapter, LOCK_ID).
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      let db: Db | undefined;
      try {
        await other.query("SELECT pg_advisory_lock('3853314791062309107'::bigint)");
        db = await open(url, app);
        const m = migrating(db);
        await waitedLong(url, app, m.settled);
        if (m.settled()) assert.fail(`the migration ended while the other node held the lock: ${String(await m.outcome)}`);
        await other.query("SELECT pg_advisory_unlock('3853314791062309107'::bigint)");
        assert.equal(await m.outcome, 'migrated');
        assert.equal(await migrationsApplied(db), true);
        // The migrator's connection is back in the pool with the request path's lock_timeout.
        assert.equal(await lockTimeout(db), String(WAIT_MS));
      } finally {
        await other.end();
        await db?.close();
      }
    }));

  test("a migration's ALTER TABLE waits past the wait timeout for a transaction that reads the table", () =>
    inOwnDatabase(async (url, app) => {
      const db = await open(url, app);
      const reader = new pg.Client({ connectionString: url });
      try {
        // A database one migration behind: the last one adds a column to authorization_codes.
        const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => MIGRATIONS } });
        assert.equal((await migrator.migrateTo('2026-11-23T1000_organization_required')).error, undefined);
        // An operator's transaction that has read the table holds a lock the ALTER TABLE must wait for.
        await reader.connect();
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM authorization_codes');
        const m = migrating(db);
        await waitedLong(url, app, m.settled);
        if (m.settled()) assert.fail(`the migration ended while the table was in use: ${String(await m.outcome)}`);
        await reader.query('COMMIT');
        assert.equal(await m.outcome, 'migrated');
        assert.equal(await migrationsApplied(db), true);
        assert.equal(await lockTimeout(db), String(WAIT_MS));
      } finally {
        await reader.end();
        await db.close();
      }
    }));
});
