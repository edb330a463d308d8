import type pg from 'pg';
import { PostgresAdapter, PostgresDialect, sql, type Kysely, type MigrationLockOptions, type PostgresDialectConfig } from 'kysely';
import { createRequire } from 'node:module';
import { DatabaseWaitTimeout } from './errors.js';

export interface PostgresOptions {
  url: string;
  poolSize?: number;
  /**
   * How long a caller waits for a pooled connection, and a statement for each lock another transaction
   * holds (lock_timeout), before it fails as busy (errors.ts isDatabaseBusy): the request is answered 503.
   */
  waitTimeoutMs: number;
  /**
   * The server's bound on each statement (REALMGATE_DB_QUERY_TIMEOUT_MS): past it the statement is
   * abandoned (an error isDatabaseUnreachable recognises: 503) and its connection closed. Unset (CLI
   * commands): unbounded. The migrations' statements are never bounded (guardQueries).
   */
  queryTimeoutMs?: number;
  /** Each connection the database or the network ended, idle in the pool or in use (OpenOptions.onConnectionError). */
  onConnectionError?: (err: Error) => void;
}

const INT8_OID = 20;

/**
 * A transaction of this process left open without a statement for this long is ended by PostgreSQL
 * (idle_in_transaction_session_timeout), releasing its row locks: a process frozen mid-transaction (a
 * paused VM, a debugger, SIGSTOP) would otherwise hold them until TCP gives up on its connection, hours
 * later, while every other node's refresh of those rows got a 503. No transaction of Realmgate waits
 * between its statements for more than a moment.
 */
export const IDLE_IN_TRANSACTION_MS = 60_000;

/** Splits our own `schema` query parameter off the URL; the schema is created when missing. */
export function parsePostgresUrl(url: string): { connectionString: string; schema: string | undefined } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('the schema parameter of DATABASE_URL must be a lower-case SQL identifier');
  }
  return { connectionString: u.href, schema };
}

/**
 * The driver, loaded here so that only PostgreSQL's users load it. pg 8 asks as it loads whether it runs
 * in a Cloudflare Worker: when no global `navigator` tells (Node.js 21 and later have one, 20 has none)
 * it builds a `Response`, and reading that global loads Node.js's whole fetch (undici, http, http2, tls):
 * ~20 ms of CPU in every command and server start on PostgreSQL (2026-11-29: `realm list` 174 ms, of
 * which `typeof Response` alone 21 ms) and memory a server never uses. On Node.js 20 a navigator that
 * says Node.js is lent while pg loads: require() is synchronous, so no other code can see it.
 */
function loadPg(): typeof pg {
  const load = createRequire(import.meta.url);
  if ('navigator' in globalThis) return load('pg') as typeof pg;
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: `Node.js/${process.versions.node.split('.')[0]}` }, configurable: true });
  try {
    return load('pg') as typeof pg;
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}

export async function postgresDialect(opts: PostgresOptions): Promise<{ dialect: PostgresDialect; pool: pg.Pool; schema: string | undefined }> {
  const { connectionString, schema } = parsePostgresUrl(opts.url);
  const waitMs = Math.trunc(opts.waitTimeoutMs);
  const pg = loadPg();
  const pool = new pg.Pool({
    connectionString,
    max: opts.poolSize ?? 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    // A fallback that frees the caller's place in pg's queue (or ends a connection still being opened):
    // the caller has been told a second earlier, by boundConnect's own timer.
    connectionTimeoutMillis: waitMs + 1000,
    // Every connection's lock waits are bounded: a request behind another process's transaction (an
    // operator's SELECT ... FOR UPDATE left open, a long import) fails with 55P03 instead of waiting for
    // it, and cannot pile up until it holds every connection. A SET once per connection rather than a
    // startup parameter, which PgBouncer refuses unless configured to. What waits on purpose takes it
    // off for itself (the migrations: MigrationAdapter below).
    onConnect: (client) => client.query(`SET lock_timeout = ${waitMs}; SET idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`),
    // Timestamps are bigint columns; they fit a JavaScript number for the next 285,000 years.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  boundConnect(pool, waitMs);
  const { queryTimeoutMs, onConnectionError } = opts;
  // pg emits 'error' on the client whose connection ends, in use (besides failing its query) or idle, and
  // for an idle one on the pool too: an 'error' event without a listener throws, which ended the process.
  // Each is reported once, from the client; the pool drops the connection and opens another when needed.
  pool.on('connect', (client) => {
    client.on('error', (err: Error) => onConnectionError?.(err));
    if (queryTimeoutMs !== undefined) guardQueries(client, queryTimeoutMs);
  });
  pool.on('error', () => undefined);
  return { dialect: new RealmgateDialect({ pool }, waitMs), pool, schema };
}

/** pg's error for a statement that passed its query_timeout. */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * Bounds every statement of a pooled connection by `timeoutMs` (pg's query_timeout), and closes the
 * connection of a statement that passes it. A database host gone without a reset (powered off, a network
 * partition, a failover that moved its address) leaves each connection to it waiting for an answer until
 * TCP gives up, some 15 minutes: every pooled connection, then every request, waited with it (measured
 * behind a proxy that stopped carrying bytes: every refresh hung, none got its 503), while new connections
 * to the new address would have worked. pg leaves a timed-out statement's connection busy with it, so the
 * connection is destroyed: the pool drops it and opens a new one.
 *
 * The migrations wait for their locks as long as they need (MigrationAdapter): on their connection, from
 * `SET lock_timeout = 0` until the timeout is set back, statements are not bounded.
 */
function guardQueries(client: pg.PoolClient, timeoutMs: number): void {
  type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;
  const query = client.query.bind(client) as Query;
  let migrating = false;
  const guarded: Query = (config, values, callback) => {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text === 'string' && text.startsWith('SET lock_timeout = ')) migrating = text.startsWith('SET lock_timeout = 0');
    // Callback style (pg's own pool.query) and submittables (cursors) keep pg's behaviour.
    if (migrating || typeof values === 'function' || typeof callback === 'function' || typeof (config as { submit?: unknown } | null)?.submit === 'function') {
      return query(config, values, callback);
    }
    const bounded = typeof config === 'string' ? { text: config, ...(values !== undefined ? { values } : {}), query_timeout: timeoutMs } : { ...(config as object), query_timeout: timeoutMs };
    const result = query(bounded) as Promise<unknown>;
    result.catch((err: unknown) => {
      if ((err as Error | null)?.message === QUERY_TIMEOUT_MESSAGE) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    });
    return result;
  };
  (client as unknown as { query: Query }).query = guarded;
}

/**
 * pool.connect() (Kysely's and the token statements') fails with DatabaseWaitTimeout when no connection
 * comes within `waitMs`: recognised by its type, where pg's own timeout error is a plain Error told
 * apart only by its message. A connection that comes after all goes straight back to the pool.
 */
function boundConnect(pool: pg.Pool, waitMs: number): void {
  const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<pg.PoolClient> | undefined;
  pool.connect = ((callback?: unknown) => {
    // pg's pool.query passes a callback; Realmgate never calls it, and it keeps pg's own behaviour.
    if (callback) return connect(callback);
    return new Promise<pg.PoolClient>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new DatabaseWaitTimeout(`no database connection within ${waitMs} ms`));
      }, waitMs);
      connect()!.then(
        (client) => {
          if (!late) {
            clearTimeout(timer);
            resolve(client);
          } else client.release();
        },
        (err: unknown) => {
          if (late) return;
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }) as pg.Pool['connect'];
}

/**
 * The migrations wait for their locks as long as it takes, as they did before connections had a
 * lock_timeout: a node starting while another migrates waits for it (Kysely's advisory lock, whose
 * wait Kysely itself bounds by an hour), and a migration's ALTER TABLE waits for the transactions
 * using the table. Requests queued behind it meanwhile still get their 503. Session-level SETs on the
 * migrator's one connection, held from before the advisory lock until after its release, around the
 * migrations' transaction; the connection goes back to the pool with the request path's timeout.
 */
class MigrationAdapter extends PostgresAdapter {
  constructor(private readonly lockTimeoutMs: number) {
    super();
  }

  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    await sql`SET lock_timeout = 0`.execute(db);
    await super.acquireMigrationLock(db, options);
  }

  override async releaseMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    try {
      await super.releaseMigrationLock(db, options);
    } finally {
      await sql.raw(`SET lock_timeout = ${this.lockTimeoutMs}`).execute(db);
    }
  }
}

class RealmgateDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly lockTimeoutMs: number,
  ) {
    super(config);
  }

  override createAdapter(): PostgresAdapter {
    return new MigrationAdapter(this.lockTimeoutMs);
  }
}
