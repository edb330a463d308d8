import type { Config } from '../../config/config.js';
import { openDatabase, migrate, unappliedMigrations, isRealmgateDatabase, type Db } from '../../storage/database.js';
import { Store } from '../../storage/store.js';

export type { Store };
import { prepareKeyEncryption } from '../../crypto/key-file.js';

/**
 * Opens the deployment's database, migrated, for a server or an administrative command. With `keys`, the
 * key-encryption secret is opened too (key file or REALMGATE_KEY_SECRET, checked before any key is
 * created or opened: private keys are never stored in clear); `announce` says what it did about it. With
 * `existing`, a database without Realmgate's tables is refused (NoDatabaseError) before anything is
 * created in it, a PostgreSQL schema included. The caller closes `db`; a failure before returning closes it here.
 */
export async function openDeploymentStore(
  config: Config,
  opts: {
    synchronous?: Config['sqliteSync'];
    keys?: boolean;
    announce?: (message: string) => void;
    existing?: boolean;
    /** PostgreSQL: each connection the database or the network ended (OpenOptions.onConnectionError). */
    onConnectionError?: (err: Error) => void;
    /** PostgreSQL: bound each statement by config.dbQueryTimeoutMs (the server; CLI commands are not bounded). */
    boundQueries?: boolean;
  } = {},
): Promise<{ db: Db; store: Store }> {
  const db = await openDatabase(config.databaseUrl, {
    synchronous: opts.synchronous ?? config.sqliteSync,
    waitTimeoutMs: config.dbWaitTimeoutMs,
    poolSize: config.dbPoolSize,
    createSchema: !opts.existing,
    ...(opts.onConnectionError ? { onConnectionError: opts.onConnectionError } : {}),
    ...(opts.boundQueries ? { queryTimeoutMs: config.dbQueryTimeoutMs } : {}),
  });
  try {
    if (opts.existing && !(await isRealmgateDatabase(db))) throw new NoDatabaseError();
    await migrate(db);
    const store = new Store(db);
    if (opts.keys) await prepareKeyEncryption(config, store, opts.announce ?? (() => undefined));
    return { db, store };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/**
 * `existing` was asked for, and the database holds no Realmgate tables (an empty file or database, a
 * PostgreSQL schema that does not exist: a mistyped URL): nothing was created or changed.
 */
export class NoDatabaseError extends Error {
  constructor() {
    super('no Realmgate database there');
  }
}

/** A read-only database that lacks migrations of this version (it cannot be migrated by whoever opened it). */
export class UnmigratedDatabaseError extends Error {
  constructor(readonly missing: string[]) {
    super(`the database lacks ${missing.length} migration(s) of this version (${missing[0]}...)`);
  }
}

/**
 * Opens an SQLite file read-only (SQLite refuses every write), without migrating it: it must be migrated
 * already, or UnmigratedDatabaseError. For a command that only reads a database it may not write.
 */
export async function openReadOnlyStore(config: Config): Promise<{ db: Db; store: Store }> {
  const db = await openDatabase(config.databaseUrl, { readonly: true, waitTimeoutMs: config.dbWaitTimeoutMs });
  try {
    const missing = await unappliedMigrations(db);
    if (missing.length > 0) throw new UnmigratedDatabaseError(missing);
    return { db, store: new Store(db) };
  } catch (err) {
    await db.close();
    throw err;
  }
}
