import fs from 'node:fs';
import path from 'node:path';
import { sqliteFile } from '../../config/data-dir.js';
import { backupSqlite, restoreSqlite, SqliteBackupError, type SqliteCopySummary } from '../../storage/sqlite-backup.js';
import { ValidationError } from '../validation.js';

/**
 * `realmgate backup` and `restore`: copies of the embedded SQLite database (src/storage/sqlite-backup.ts).
 * PostgreSQL has its own tools (pg_dump, base backups), which these point to.
 */
function sqliteDatabase(databaseUrl: string, verb: 'back up' | 'restore'): string {
  const file = sqliteFile(databaseUrl);
  if (file !== undefined) return file;
  if (databaseUrl.startsWith('sqlite:')) throw new ValidationError(`an in-memory database cannot be ${verb === 'back up' ? 'backed up' : 'restored'}`);
  throw new ValidationError(
    verb === 'back up'
      ? 'backup copies the embedded SQLite database; on PostgreSQL use pg_dump or your base backups (docs/operations.md, Backup and restore)'
      : 'restore puts back an SQLite backup; on PostgreSQL use pg_restore or psql with your dump (docs/operations.md, Backup and restore)',
  );
}

/** The SQLite file and its companions (-wal, -shm), which no backup may be written over. */
function isDatabaseFile(file: string, database: string): boolean {
  return [database, `${database}-wal`, `${database}-shm`, `${database}-journal`].includes(file);
}

export function backupDatabase(input: { databaseUrl: string; target: string; busyTimeoutMs: number }): SqliteCopySummary & { source: string; target: string } {
  const source = sqliteDatabase(input.databaseUrl, 'back up');
  const target = path.resolve(input.target);
  if (isDatabaseFile(target, source)) throw new ValidationError(`the backup cannot be written over the database itself (${target})`);
  if (!fs.existsSync(source) || fs.statSync(source).size === 0) throw new ValidationError(`no database at ${source} to back up`);
  if (fs.existsSync(target)) throw new ValidationError(`${target} exists: a backup never replaces a file; choose another name`);
  if (!fs.existsSync(path.dirname(target))) throw new ValidationError(`the folder ${path.dirname(target)} does not exist`);
  try {
    return { ...backupSqlite(source, target, input.busyTimeoutMs), source, target };
  } catch (err) {
    if (err instanceof SqliteBackupError) throw new ValidationError(err.message);
    throw err;
  }
}

export function restoreDatabase(input: { databaseUrl: string; backup: string; now: Date }): SqliteCopySummary & { target: string; backup: string; replaced: string | undefined } {
  const target = sqliteDatabase(input.databaseUrl, 'restore');
  const backup = path.resolve(input.backup);
  if (isDatabaseFile(backup, target)) throw new ValidationError(`${backup} is the database itself: name a backup made by realmgate backup`);
  if (!fs.existsSync(backup) || !fs.statSync(backup).isFile()) throw new ValidationError(`no backup at ${backup}`);
  try {
    return { ...restoreSqlite(backup, target, input.now), target, backup };
  } catch (err) {
    if (err instanceof SqliteBackupError) throw new ValidationError(err.message);
    throw err;
  }
}
