import { Kysely, Migrator, sql, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Database } from './schema.js';
import { MIGRATIONS } from './migrations/index.js';
import { isDatabaseTransient } from './dialects/errors.js';
import { sqliteDialect } from './dialects/sqlite.js';
import { sqliteTokenRunner } from './dialects/sqlite-token-batch.js';
import { walSync } from './dialects/wal-sync.js';
import path from 'node:path';
import type { TokenTransactionRunner } from './token-statements.js';
import { metrics, observePool, secondsSince } from '../metrics.js';
import { SETTINGS } from '../config/defaults.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** Runs the hot token transactions (code redemption, refresh rotation) the fastest way the database allows. */
  runTokenTransaction: TokenTransactionRunner;
  /** Its token statements rotate a current refresh token in one statement (TokenStatements.advanceCurrent). */
  rotatesInOneStatement?: boolean;
  /** PostgreSQL: the schema holding Realmgate's tables (Kysely's migrator otherwise looks in every schema). */
  schema?: string;
  /**
   * Runs `fn` (the migrations) while holding a lock that other processes on the same database respect.
   * SQLite: one BEGIN IMMEDIATE transaction around every migration (Kysely runs SQLite migrations without
   * a transaction or a lock). PostgreSQL: Kysely's migrator already takes an advisory lock; none needed
   * (dialects/postgres.ts lets the migrations wait for their locks past the wait timeout).
   */
  migrationLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  close(): Promise<void>;
}

export class DatabaseUrlError extends Error {}

export interface OpenOptions {
  synchronous?: 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';
  /**
   * How long a statement waits for the database before it fails as busy (errors.ts isDatabaseBusy: the
   * HTTP layer answers 503): SQLite's write lock held by another process (busy_timeout); PostgreSQL, a
   * pooled connection, and each lock another transaction holds (lock_timeout). REALMGATE_DB_WAIT_TIMEOUT_MS.
   */
  waitTimeoutMs?: number;
  /** PostgreSQL: the most connections the pool opens (REALMGATE_DB_POOL_SIZE; default 10). */
  poolSize?: number;
  /**
   * PostgreSQL: create the URL's `schema` when it is missing (default true). False for a command that
   * needs an existing database: a mistyped schema then stays a missing database (isRealmgateDatabase).
   */
  createSchema?: boolean;
  /** SQLite: an existing file, read-only (nothing is written, migrations neither: see unappliedMigrations). */
  readonly?: boolean;
  /**
   * PostgreSQL: told of each connection the database or the network ended (a restart, a failover,
   * pg_terminate_backend, a reset), idle in the pool or in use. The pool drops that connection and opens
   * a new one when next needed; a request that was using it fails as unreachable (503). Without a
   * listener such an error would end the process.
   */
  onConnectionError?: (err: Error) => void;
  /** PostgreSQL: bound each statement (the server's REALMGATE_DB_QUERY_TIMEOUT_MS; dialects/postgres.ts guardQueries). */
  queryTimeoutMs?: number;
}

/** SQLite: how long a process waits for another's migrations (in steps of the wait timeout). */
const MIGRATION_WAIT_MS = 60_000;

/** Opens `sqlite:<path>` / `sqlite::memory:` or a `postgres://` URL. */
export async function openDatabase(url: string, opts: OpenOptions = {}): Promise<Db> {
  const waitTimeoutMs = opts.waitTimeoutMs ?? Number(SETTINGS.dbWaitTimeoutMs.default);
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) throw new DatabaseUrlError('sqlite: URL needs a file path, e.g. sqlite:./data/realmgate.db');
    const synchronous = opts.synchronous ?? 'FULL';
    const { dialect, raw } = sqliteDialect({ file, synchronous, busyTimeoutMs: waitTimeoutMs, readonly: opts.readonly ?? false });
    // FULL on a WAL file: the hot token batches sync the WAL off the event loop (dialects/wal-sync.ts).
    const wal = synchronous === 'FULL' && file !== ':memory:' && !opts.readonly && raw.pragma('journal_mode', { simple: true }) === 'wal';
    const kysely = new Kysely<Database>({ dialect });
    const migrationLock = async <T>(fn: () => Promise<T>): Promise<T> => {
      for (let waited = 0; ; waited++) {
        try {
          raw.exec('BEGIN IMMEDIATE');
          break;
        } catch (err) {
          // busy_timeout passed while another process migrates: keep waiting, up to a minute.
          if ((err as { code?: string }).code !== 'SQLITE_BUSY' || (waited + 1) * waitTimeoutMs >= MIGRATION_WAIT_MS) throw err;
        }
      }
      try {
        const result = await fn();
        raw.exec('COMMIT');
        return result;
      } catch (err) {
        if (raw.inTransaction) raw.exec('ROLLBACK');
        throw err;
      }
    };
    const sync = wal ? walSync(`${path.resolve(file)}-wal`) : undefined;
    const close = async (): Promise<void> => {
      await kysely.destroy();
      await sync?.close();
    };
    return { kysely, dialect: 'sqlite', runTokenTransaction: timed(sqliteTokenRunner(raw, kysely, { busyTimeoutMs: waitTimeoutMs, ...(sync ? { walSync: sync } : {}) })), migrationLock, close };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Loaded only for PostgreSQL: an embedded deployment never pays for the driver.
    const { postgresDialect } = await import('./dialects/postgres.js');
    const { postgresTokenRunner } = await import('./dialects/postgres-token-statements.js');
    const { dialect, pool, schema } = await postgresDialect({
      url,
      waitTimeoutMs,
      ...(opts.poolSize !== undefined ? { poolSize: opts.poolSize } : {}),
      ...(opts.queryTimeoutMs !== undefined ? { queryTimeoutMs: opts.queryTimeoutMs } : {}),
      onConnectionError: (err) => {
        metrics.dbConnectionErrors.inc();
        opts.onConnectionError?.(err);
      },
    });
    if (schema && opts.createSchema !== false) {
      // The pool sets search_path on connect; the schema must exist before the first query uses it.
      const client = await pool.connect();
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } catch (err) {
        // Two processes creating the same schema at once: the loser sees a duplicate, which is fine.
        const code = (err as { code?: string }).code;
        if (code !== '23505' && code !== '42P06') throw err;
      } finally {
        client.release();
      }
    }
    const kysely = new Kysely<Database>({ dialect });
    const current = schema ?? (await sql<{ s: string }>`select current_schema() as s`.execute(kysely)).rows[0]?.s ?? 'public';
    observePool(pool);
    return { kysely, dialect: 'postgres', schema: current, runTokenTransaction: timed(postgresTokenRunner(pool)), rotatesInOneStatement: true, close: () => kysely.destroy() };
  }
  throw new DatabaseUrlError(`unsupported database URL ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}: use sqlite:<path> or postgres://...`);
}

/** Times each hot token transaction, commit included (one histogram observation: cheap on the hot path). */
function timed(run: TokenTransactionRunner): TokenTransactionRunner {
  return async (fn) => {
    const start = process.hrtime.bigint();
    try {
      return await run(fn);
    } finally {
      metrics.transactions.observe(secondsSince(start));
    }
  };
}

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/**
 * Kysely orders the applied migrations of one timestamp with localeCompare, which loads ICU's collation
 * data into every server process (about 3 MB resident). Our names are ASCII and kysely sorts its own list
 * by code units: the same order, without ICU.
 */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Migrations that a database lacks run even when their names sort before ones it has: a release made from
 * branches merged in another order than their migrations' dates (a database created between the two
 * merges) otherwise stopped every start with kysely's "corrupted migrations" error. A fresh database
 * applies them in name order, so none depends on one named after it.
 */
function migratorFor(db: Db): Migrator {
  return new Migrator({ db: db.kysely, provider, nameComparator: byCodeUnits, allowUnorderedMigrations: true, ...(db.schema ? { migrationTableSchema: db.schema } : {}) });
}

/**
 * Applies every pending migration; safe to run from several processes at once. Kysely's migrator reads
 * PostgreSQL's catalog across all schemas, which fails now and then while another schema of the same
 * database is being dropped; the migrations run in one transaction, so a failed attempt is retried.
 */
export async function migrate(db: Db): Promise<void> {
  if (await upToDate(db)) return;
  const migrator = migratorFor(db);
  for (let attempt = 1; ; attempt++) {
    const { error, results } = db.migrationLock ? await lockedMigration(db.migrationLock, migrator) : await migrator.migrateToLatest();
    if (!error) return;
    // A database that cannot take the migration now (SQLite's write lock held by another process past the
    // wait, PostgreSQL unreachable) is busy or away, not broken: the error keeps its code, so that it is
    // reported as such.
    if (isDatabaseTransient(error)) throw error;
    // Kysely refuses, before it runs anything, a database that records a migration this build lacks.
    const unknown = /previously executed migration (\S+) is missing/.exec(String((error as Error)?.message ?? error))?.[1];
    if (unknown !== undefined) throw new NewerDatabaseError(unknown);
    if (attempt < 4 && db.dialect === 'postgres') {
      await new Promise((r) => setTimeout(r, 100 * attempt));
      continue;
    }
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed ? `${failed.migrationName} ` : ''}failed: ${(error as Error).message ?? String(error)}`);
  }
}

/** The database was migrated by a newer Realmgate: this build does not know one of its migrations. */
export class NewerDatabaseError extends Error {
  constructor(readonly migration: string) {
    super(
      `the database was migrated by a newer Realmgate (its migration ${migration} is unknown to this version): this version cannot use it; ` +
        'run the newer version, or restore a backup made before the upgrade',
    );
  }
}

/**
 * True when the database records exactly this build's migrations, read with one SELECT: the migrator is
 * then not started. It would take the migration lock and write (SQLite's write lock) on every start and
 * every command, so that a process holding the database (a long import) failed even commands that only
 * read, and nodes starting together queued on the lock for nothing. A committed migration list is what
 * another node's migration leaves, never half of it (each runs in one transaction). A database missing
 * the table, missing a migration, or recording one this build does not know goes to the migrator.
 */
async function upToDate(db: Db): Promise<boolean> {
  const table = db.schema ? sql.table(`${db.schema}.kysely_migration`) : sql.table('kysely_migration');
  let names: string[];
  try {
    names = (await sql<{ name: string }>`select name from ${table}`.execute(db.kysely)).rows.map((r) => r.name);
  } catch (err) {
    if (isDatabaseTransient(err)) throw err;
    return false;
  }
  const known = Object.keys(MIGRATIONS);
  const applied = new Set(names);
  return applied.size === known.length && known.every((name) => applied.has(name));
}

/** Under the lock, a failed migration rolls everything back (the migrator reports errors instead of throwing). */
async function lockedMigration(lock: NonNullable<Db['migrationLock']>, migrator: Migrator): Promise<MigrationResultSet> {
  try {
    return await lock(async () => {
      const r = await migrator.migrateToLatest();
      if (r.error) throw new FailedMigration(r);
      return r;
    });
  } catch (err) {
    if (err instanceof FailedMigration) return err.result;
    return { error: err };
  }
}

class FailedMigration extends Error {
  constructor(readonly result: MigrationResultSet) {
    super('migration failed');
  }
}

/**
 * The migrations of this build the database has not applied, read without writing anything (a database
 * opened read-only cannot be migrated); a database that records a migration this build does not know is
 * refused as migrate refuses it.
 */
export async function unappliedMigrations(db: Db): Promise<string[]> {
  const migrator = migratorFor(db);
  const known = new Set(Object.keys(MIGRATIONS));
  const listed = await migrator.getMigrations();
  const applied = new Set(listed.filter((m) => m.executedAt !== undefined).map((m) => m.name));
  const table = db.schema ? sql.table(`${db.schema}.kysely_migration`) : sql.table('kysely_migration');
  if (applied.size > 0) {
    const rows = await sql<{ name: string }>`select name from ${table}`.execute(db.kysely);
    const unknown = rows.rows.map((r) => r.name).find((name) => !known.has(name));
    if (unknown !== undefined) throw new NewerDatabaseError(unknown);
  }
  return [...known].filter((name) => !applied.has(name));
}

/** True when every migration of this build is recorded as applied in the database. */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const table = db.schema ? sql.table(`${db.schema}.kysely_migration`) : sql.table('kysely_migration');
  const rows = await sql<{ name: string }>`select name from ${table}`.execute(db.kysely);
  const applied = new Set(rows.rows.map((r) => r.name));
  return Object.keys(MIGRATIONS).every((name) => applied.has(name));
}

/**
 * True when the database holds Realmgate's tables (its migration list, even an old one): not an empty
 * SQLite file, an empty PostgreSQL database, or a PostgreSQL schema that does not exist.
 */
export async function isRealmgateDatabase(db: Db): Promise<boolean> {
  const table = db.schema ? sql.table(`${db.schema}.kysely_migration`) : sql.table('kysely_migration');
  try {
    await sql`select 1 from ${table} limit 1`.execute(db.kysely);
    return true;
  } catch (err) {
    // A database that cannot be reached now is not said to be missing.
    if (isDatabaseTransient(err)) throw err;
    return false;
  }
}

/**
 * Whether this process can serve with its database now (the readiness check): the database answers,
 * every migration of this build is applied, and (PostgreSQL) it takes writes. A read-only server (a
 * standby an address still names after a failover, a primary demoted) would answer every refresh and
 * login 503: reporting it not ready lets a load balancer send the requests to nodes that reach the primary.
 */
export async function databaseReady(db: Db): Promise<boolean> {
  try {
    if (db.dialect === 'postgres') {
      const r = await sql<{ ro: string }>`select current_setting('transaction_read_only') as ro`.execute(db.kysely);
      if (r.rows[0]?.ro !== 'off') return false;
    } else await sql`select 1`.execute(db.kysely);
    return await migrationsApplied(db);
  } catch {
    return false;
  }
}
