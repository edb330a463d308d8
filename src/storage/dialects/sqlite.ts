import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';

export interface SqliteOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';
  /** How long a statement waits for another process's write lock before SQLITE_BUSY (busy_timeout). */
  busyTimeoutMs: number;
  /** An existing file, opened read-only: SQLite refuses every write (its journal mode is left as it is). */
  readonly?: boolean;
}

/**
 * The driver, loaded at the first SQLite database a process opens: a server or command on PostgreSQL
 * never loads it (a native addon: ~5 ms and its memory).
 */
export function loadBetterSqlite3(): typeof BetterSqlite3 {
  return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
}

/**
 * better-sqlite3 behind Kysely, with a prepared-statement cache: Kysely prepares a statement on every
 * query, and preparing costs more than running the small indexed statements of the hot paths.
 */
export function sqliteDialect(opts: SqliteOptions): { dialect: SqliteDialect; raw: BetterSqlite3.Database } {
  if (opts.file !== ':memory:' && !opts.readonly) fs.mkdirSync(path.dirname(path.resolve(opts.file)), { recursive: true });
  const raw = new (loadBetterSqlite3())(opts.file, opts.readonly ? { readonly: true, fileMustExist: true } : {});
  // Another process (the CLI, another worker) may hold the write lock for a moment. Set first: switching
  // a fresh file to WAL takes that lock too, and several workers open the file at once.
  raw.pragma(`busy_timeout = ${opts.busyTimeoutMs}`);
  if (!opts.readonly) raw.pragma('journal_mode = WAL');
  raw.pragma(`synchronous = ${opts.synchronous}`);
  raw.pragma('foreign_keys = ON');
  const cache = new Map<string, BetterSqlite3.Statement>();
  const database: SqliteDatabase = {
    prepare(sql: string): SqliteStatement {
      // Kysely begins deferred transactions; a deferred transaction that later writes fails at once with
      // SQLITE_BUSY when another process (the CLI) wrote meanwhile, while IMMEDIATE waits for busy_timeout.
      if (sql === 'begin') sql = 'begin immediate';
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = raw.prepare(sql);
        if (cache.size > 500) cache.clear();
        cache.set(sql, stmt);
      }
      return stmt as unknown as SqliteStatement;
    },
    close(): void {
      cache.clear();
      raw.close();
    },
  };
  return { dialect: new SqliteDialect({ database }), raw };
}
