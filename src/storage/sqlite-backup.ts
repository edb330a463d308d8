import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { loadBetterSqlite3 } from './dialects/sqlite.js';
import { MIGRATIONS } from './migrations/index.js';

/** What a backup or a restore copied: read from the copy, after its integrity check. */
export interface SqliteCopySummary {
  bytes: number;
  realms: number;
  users: number;
  migrations: number;
}

/** A file that is not a database Realmgate can restore or a backup that could not be made. */
export class SqliteBackupError extends Error {}

/**
 * A consistent copy of a live SQLite database (VACUUM INTO: one read transaction, so the copy is the
 * database as of one commit, while servers go on reading and writing it in WAL mode), made beside
 * `target` under a temporary name, synced, checked (PRAGMA integrity_check), then renamed into place.
 * The copy holds password, secret and token hashes and sealed keys: it is created 0600. `target` must
 * not exist.
 */
export function backupSqlite(source: string, target: string, busyTimeoutMs: number): SqliteCopySummary {
  const tmp = `${target}.${process.pid}.tmp`;
  // VACUUM INTO writes into an empty file; made first so that it is never readable by others.
  fs.closeSync(fs.openSync(tmp, 'wx', 0o600));
  try {
    const db = new (loadBetterSqlite3())(source, { fileMustExist: true, timeout: busyTimeoutMs });
    try {
      requireRealmgate(db, source);
      db.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      db.close();
    }
    fsyncPath(tmp);
    const summary = checkedSummary(tmp);
    // link + unlink rather than rename: a target created meanwhile is never replaced.
    fs.linkSync(tmp, target);
    fs.unlinkSync(tmp);
    fsyncPath(path.dirname(target));
    return summary;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Puts the backup `source` in place of the database `target` (which may not exist yet), only while no
 * process has `target` open: a server or command using it (in WAL mode every connection holds a shared
 * lock on the file) makes this refuse, since it would go on with the database it had open. The backup
 * is checked first (a Realmgate database, integrity_check, no migration this build does not know);
 * the database it replaces is kept beside it as `<target>.replaced-<time>`, with its WAL checkpointed
 * into it; a WAL or shared-memory file of the replaced database never stays beside the restored one
 * (SQLite would apply that WAL to it). Returns the summary and the name of the replaced file, if any.
 */
export function restoreSqlite(source: string, target: string, now: Date): SqliteCopySummary & { replaced: string | undefined } {
  const summary = checkedSummary(source, { known: true });
  const tmp = `${target}.${process.pid}.tmp`;
  let replaced: string | undefined;
  let db: BetterSqlite3.Database | undefined;
  try {
    if (fs.existsSync(target)) {
      db = new (loadBetterSqlite3())(target, { fileMustExist: true, timeout: 0 });
      try {
        // Before the first access: this connection takes the file's lock for itself, which it gets only
        // when no other connection has the database open.
        db.pragma('locking_mode = EXCLUSIVE');
        db.exec('BEGIN EXCLUSIVE');
        db.exec('COMMIT');
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_BUSY') {
          throw new SqliteBackupError(`the database ${target} is in use: stop every server and command using it, then restore`);
        }
        throw err;
      }
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(source, tmp, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(tmp, 0o600);
    fsyncPath(tmp);
    if (db) {
      // Closing the last connection checkpoints its WAL into the file and removes the WAL and -shm files.
      db.close();
      db = undefined;
      replaced = `${target}.replaced-${now.toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(target, replaced);
      for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${target}${suffix}`, { force: true });
    }
    fs.renameSync(tmp, target);
    fsyncPath(path.dirname(target));
    return { ...summary, replaced };
  } catch (err) {
    db?.close();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function requireRealmgate(db: BetterSqlite3.Database, file: string): string[] {
  const table = db.prepare("select name from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!table) throw new SqliteBackupError(`${file} is not a Realmgate database (it has no migration table)`);
  return (db.prepare('select name from kysely_migration').all() as Array<{ name: string }>).map((r) => r.name);
}

/** Opens a copy read-only, checks it whole, and counts what it holds. */
function checkedSummary(file: string, opts: { known?: boolean } = {}): SqliteCopySummary {
  let db: BetterSqlite3.Database;
  try {
    db = new (loadBetterSqlite3())(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new SqliteBackupError(`cannot open ${file} as an SQLite database: ${(err as Error).message}`);
  }
  try {
    let check: string;
    try {
      check = String(db.pragma('integrity_check', { simple: true }));
    } catch (err) {
      throw new SqliteBackupError(`${file} is not a usable SQLite database: ${(err as Error).message}`);
    }
    if (check !== 'ok') throw new SqliteBackupError(`${file} fails SQLite's integrity check: ${check.slice(0, 200)}`);
    const migrations = requireRealmgate(db, file);
    const unknown = migrations.find((m) => !Object.hasOwn(MIGRATIONS, m));
    if (opts.known && unknown !== undefined) {
      throw new SqliteBackupError(`${file} was migrated by a newer Realmgate (its migration ${unknown} is unknown to this version): restore it with that version`);
    }
    const count = (t: string): number => Number((db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n);
    return { bytes: fs.statSync(file).size, realms: count('realms'), users: count('users'), migrations: migrations.length };
  } finally {
    db.close();
  }
}

/** Syncs a file's data, or a directory's entries (a rename or a link is durable only once its directory is synced). */
function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
