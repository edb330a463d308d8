import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database, EventTable } from '../schema.js';
import type { ChainValues, CodeRow, TokenRow, TokenStatements, TokenTransactionRunner } from '../token-statements.js';

const SUBJECT = 'u.username, u.email, u.first_name, u.last_name, u.email_verified, u.enabled AS user_enabled, o.alias AS org_alias';

const SQL = {
  findCode: `SELECT a.*, ${SUBJECT} FROM authorization_codes a
    LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id WHERE a.hash = ?`,
  claimCode: 'UPDATE authorization_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL',
  setCodeChain: 'UPDATE authorization_codes SET chain_id = ? WHERE hash = ?',
  insertChain: `INSERT INTO refresh_chains (id, realm_id, client_id, user_id, organization_id, scopes, session_id, auth_time,
    created_at, max_expires_at, revoked_at, revoked_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
  findToken: `SELECT t.hash, t.created_at AS t_created_at, t.expires_at AS t_expires_at, t.used_at AS t_used_at,
    c.id, c.realm_id, c.client_id, c.user_id, c.organization_id, c.scopes, c.session_id, c.auth_time, c.created_at,
    c.max_expires_at, c.revoked_at, c.revoked_reason, ${SUBJECT}
    FROM refresh_tokens t JOIN refresh_chains c ON c.id = t.chain_id
    LEFT JOIN users u ON u.id = c.user_id LEFT JOIN organizations o ON o.id = c.organization_id WHERE t.hash = ?`,
  claimToken: 'UPDATE refresh_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL',
  insertToken: 'INSERT INTO refresh_tokens (hash, chain_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, NULL)',
  revokeChain: 'UPDATE refresh_chains SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL',
  insertEvent: `INSERT INTO events (id, realm_id, time, type, outcome, client_id, user_id, username, ip, reason)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
} as const;

type Prepared = { [K in keyof typeof SQL]: BetterSqlite3.Statement };

/** The hot statements, prepared once; each call runs synchronously on the shared connection. */
class SqliteTokenStatements implements TokenStatements {
  constructor(private readonly s: Prepared) {}
  async findCode(hash: string): Promise<CodeRow | undefined> {
    return this.s.findCode.get(hash) as CodeRow | undefined;
  }
  async claimCode(hash: string, now: number): Promise<boolean> {
    return this.s.claimCode.run(now, hash).changes === 1;
  }
  async setCodeChain(hash: string, chainId: string): Promise<void> {
    this.s.setCodeChain.run(chainId, hash);
  }
  async insertChain(c: ChainValues): Promise<void> {
    this.s.insertChain.run(c.id, c.realm_id, c.client_id, c.user_id, c.organization_id, c.scopes, c.session_id, c.auth_time, c.created_at, c.max_expires_at);
  }
  async findToken(hash: string): Promise<TokenRow | undefined> {
    return this.s.findToken.get(hash) as TokenRow | undefined;
  }
  async claimToken(hash: string, now: number): Promise<boolean> {
    return this.s.claimToken.run(now, hash).changes === 1;
  }
  async insertToken(t: { hash: string; chain_id: string; created_at: number; expires_at: number }): Promise<void> {
    this.s.insertToken.run(t.hash, t.chain_id, t.created_at, t.expires_at);
  }
  async revokeChain(id: string, now: number, reason: string): Promise<void> {
    this.s.revokeChain.run(now, reason, id);
  }
  async insertEvent(e: EventTable): Promise<void> {
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
 */
export function sqliteTokenRunner(raw: BetterSqlite3.Database, kysely: Kysely<Database>): TokenTransactionRunner {
  // Prepared on first use: the tables exist only once migrations have run.
  let prepared: { statements: SqliteTokenStatements; savepoint: BetterSqlite3.Statement; release: BetterSqlite3.Statement; rollbackTo: BetterSqlite3.Statement } | undefined;
  const prepare = (): NonNullable<typeof prepared> =>
    (prepared ??= {
      statements: new SqliteTokenStatements(Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, raw.prepare(sql)])) as Prepared),
      savepoint: raw.prepare('SAVEPOINT tok'),
      release: raw.prepare('RELEASE tok'),
      rollbackTo: raw.prepare('ROLLBACK TO tok'),
    });
  let queue: Pending[] = [];
  let scheduled = false;

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = queue;
    queue = [];
    try {
      await kysely.connection().execute(async () => {
        const { statements, savepoint, release, rollbackTo } = prepare();
        raw.exec('BEGIN IMMEDIATE');
        try {
          for (const item of batch) {
            savepoint.run();
            try {
              item.result = await item.fn(statements);
              release.run();
            } catch (err) {
              rollbackTo.run();
              release.run();
              item.failed = true;
              item.error = err;
            }
          }
          raw.exec('COMMIT');
        } catch (err) {
          if (raw.inTransaction) raw.exec('ROLLBACK');
          throw err;
        }
      });
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
