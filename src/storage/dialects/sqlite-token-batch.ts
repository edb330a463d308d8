import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database, EventTable } from '../schema.js';
import { metrics } from '../../metrics.js';
import type { WalSync } from './wal-sync.js';
import type { Advance, ChainRow, ChainValues, CodeRow, TokenStatements, TokenTransactionRunner } from '../token-statements.js';

const SUBJECT = 'u.username, u.email, u.first_name, u.last_name, u.email_verified, u.enabled AS user_enabled, o.alias AS org_alias, u.attributes AS user_attributes';

const SQL = {
  findCode: `SELECT a.*, ${SUBJECT} FROM authorization_codes a
    LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id WHERE a.hash = ?`,
  claimCode: 'UPDATE authorization_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL',
  redeemCode: 'UPDATE authorization_codes SET used_at = ?, chain_id = ? WHERE hash = ? AND used_at IS NULL',
  insertChain: `INSERT INTO refresh_chains (id, realm_id, client_id, user_id, organization_id, scopes, session_id, auth_time,
    created_at, max_expires_at, current_hash, generation, dpop_jkt, revoked_at, revoked_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
  findChain: `SELECT c.*, ${SUBJECT} FROM refresh_chains c
    LEFT JOIN users u ON u.id = c.user_id LEFT JOIN organizations o ON o.id = c.organization_id WHERE c.id = ?`,
  advanceChain: `UPDATE refresh_chains SET current_hash = ?, generation = ?, rotated_at = ?, grace_from_gen = ?, grace_used = ?
    WHERE id = ? AND current_hash = ?`,
  revokeChain: 'UPDATE refresh_chains SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
  insertEvent: `INSERT INTO events (id, realm_id, time, type, outcome, client_id, user_id, username, ip, reason)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
} as const;

type Prepared = { [K in keyof typeof SQL]: BetterSqlite3.Statement };

type RowBuilder<T> = (values: unknown[]) => T;

/**
 * Rows of a hot SELECT as plain objects built by a function made for its columns: better-sqlite3 builds
 * row objects key by key through V8's API, which for the 24 columns of a chain cost about as much as the
 * query itself. The statement returns arrays (raw mode); the column names come from SQLite itself and are
 * only ever used as quoted property names.
 */
function rowBuilder<T>(stmt: BetterSqlite3.Statement): RowBuilder<T> {
  stmt.raw(true);
  const names = stmt.columns().map((c) => c.name);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the names are the statement's own columns, JSON-quoted
  return new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`) as RowBuilder<T>;
}

/**
 * The hot statements, prepared once; each call runs synchronously on the shared connection, inside the
 * group commit's savepoint, so a compound write (claim plus what it creates) is atomic.
 */
class SqliteTokenStatements implements TokenStatements {
  private readonly codeRow: RowBuilder<CodeRow>;
  private readonly chainRow: RowBuilder<ChainRow>;
  constructor(private readonly s: Prepared) {
    this.codeRow = rowBuilder<CodeRow>(s.findCode);
    this.chainRow = rowBuilder<ChainRow>(s.findChain);
  }
  async findCode(hash: string): Promise<CodeRow | undefined> {
    const row = this.s.findCode.get(hash) as unknown[] | undefined;
    return row && this.codeRow(row);
  }
  async claimCode(hash: string, now: number): Promise<boolean> {
    return this.s.claimCode.run(now, hash).changes === 1;
  }
  async redeemCode(r: { hash: string; now: number; chain: ChainValues; event: EventTable | null }): Promise<boolean> {
    if (this.s.redeemCode.run(r.now, r.chain.id, r.hash).changes !== 1) return false;
    const c = r.chain;
    this.s.insertChain.run(c.id, c.realm_id, c.client_id, c.user_id, c.organization_id, c.scopes, c.session_id, c.auth_time, c.created_at, c.max_expires_at, c.current_hash, c.generation, c.dpop_jkt ?? null);
    if (r.event) this.insertEvent(r.event);
    return true;
  }
  async findChain(id: string): Promise<ChainRow | undefined> {
    const row = this.s.findChain.get(id) as unknown[] | undefined;
    return row && this.chainRow(row);
  }
  async advanceChain(a: Advance): Promise<boolean> {
    if (this.s.advanceChain.run(a.nextHash, a.generation, a.rotatedAt, a.graceFromGen, a.graceUsed, a.id, a.expectHash).changes !== 1) return false;
    if (a.event) this.insertEvent(a.event);
    return true;
  }
  async revokeChain(r: { id: string | null; now: number; reason: string; event: EventTable | null }): Promise<void> {
    if (r.id !== null) this.s.revokeChain.run(r.now, r.reason, r.id);
    if (r.event) this.insertEvent(r.event);
  }
  private insertEvent(e: EventTable): void {
    this.s.insertEvent.run(e.id, e.realm_id, e.time, e.type, e.outcome, e.client_id, e.user_id, e.username, e.ip, e.reason);
  }
}

interface Pending {
  fn: (s: TokenStatements) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  result?: unknown;
  error?: unknown;
  failed?: boolean;
}

/**
 * Group commit for SQLite: token transactions that arrive in the same turn of the event loop run in one
 * database transaction, each inside its own savepoint (so one failure undoes only its own writes), and
 * share one commit, the one fsync of synchronous=FULL. Every caller is answered after that commit, so a
 * token a client receives is always on disk. The batch holds Kysely's connection lock, so it never
 * interleaves with another transaction on the single SQLite connection.
 *
 * With `walSync` (a file database in WAL mode under synchronous=FULL), the batch commits under NORMAL and
 * its callers are answered once `walSync` has synced the WAL: FULL's durability, with the sync in the
 * thread pool instead of blocking the event loop (wal-sync.ts). Every other transaction on the connection
 * still commits under FULL.
 */
export function sqliteTokenRunner(raw: BetterSqlite3.Database, kysely: Kysely<Database>, opts: { walSync?: WalSync; busyTimeoutMs: number }): TokenTransactionRunner {
  // How long a batch waits for another process's write lock: the connection's busy_timeout (dialects/sqlite.ts).
  const { walSync, busyTimeoutMs } = opts;
  // Prepared on first use: the tables exist only once migrations have run.
  let prepared:
    | {
        statements: SqliteTokenStatements;
        savepoint: BetterSqlite3.Statement;
        release: BetterSqlite3.Statement;
        rollbackTo: BetterSqlite3.Statement;
        begin: BetterSqlite3.Statement;
      }
    | undefined;
  const prepare = (): NonNullable<typeof prepared> =>
    (prepared ??= {
      statements: new SqliteTokenStatements(Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, raw.prepare(sql)])) as Prepared),
      savepoint: raw.prepare('SAVEPOINT tok'),
      release: raw.prepare('RELEASE tok'),
      rollbackTo: raw.prepare('ROLLBACK TO tok'),
      begin: raw.prepare('BEGIN IMMEDIATE'),
    });
  let queue: Pending[] = [];
  let scheduled = false;

  /**
   * BEGIN IMMEDIATE without SQLite's busy handler, which sleeps on the event loop (1, 2, 5, 10 ms...)
   * while another process (another worker, the CLI) holds the write lock: false when the lock is taken.
   */
  function tryBegin(p: NonNullable<typeof prepared>): boolean {
    raw.exec('PRAGMA busy_timeout = 0');
    try {
      p.begin.run();
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw err;
    } finally {
      raw.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    }
  }

  /** In the transaction tryBegin opened: one savepoint per caller, one commit. */
  async function runBatch(p: NonNullable<typeof prepared>, batch: Pending[]): Promise<void> {
    try {
      for (const item of batch) {
        p.savepoint.run();
        try {
          item.result = await item.fn(p.statements);
          p.release.run();
        } catch (err) {
          p.rollbackTo.run();
          p.release.run();
          item.failed = true;
          item.error = err;
        }
      }
      raw.exec('COMMIT');
    } catch (err) {
      if (raw.inTransaction) raw.exec('ROLLBACK');
      throw err;
    }
  }

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = queue;
    queue = [];
    metrics.batchSize.observe(batch.length);
    try {
      // Another process holds the write lock: let go of the connection (reads go on), wait a moment
      // without blocking the event loop, and try again, up to the busy timeout.
      // Measured on the monotonic clock: counting the nominal delays fell behind the time really spent (a
      // 5 ms timer fires late on a busy machine, each attempt takes a connection): 6.3 to 6.9 s for 5 s.
      const startedAt = performance.now();
      for (let attempt = 0; ; attempt++) {
        const began = await kysely.connection().execute(async () => {
          const p = prepare();
          // Outside any transaction: the setting applies to the commits that follow it on this connection.
          // exec, never a prepared statement: SQLite applies these pragmas when it compiles them, so a
          // prepared PRAGMA run again may leave the setting as it was.
          if (walSync) raw.exec('PRAGMA synchronous = NORMAL');
          try {
            if (!tryBegin(p)) return false;
            await runBatch(p, batch);
            return true;
          } finally {
            if (walSync) raw.exec('PRAGMA synchronous = FULL');
          }
        });
        if (began) break;
        if (performance.now() - startedAt >= busyTimeoutMs) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        const delay = attempt < 3 ? 0 : Math.min(5, attempt - 2);
        await new Promise((r) => (delay === 0 ? setImmediate(r) : setTimeout(r, delay)));
      }
      // Nobody hears of this batch before its commit is on disk.
      if (walSync) await walSync();
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    for (const item of batch) {
      if (item.failed) item.reject(item.error);
      else item.resolve(item.result);
    }
  }

  return <T>(fn: (s: TokenStatements) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => void flush());
      }
    });
}
