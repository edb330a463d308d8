import type { Config } from '../../config/config.js';
import { openDatabase, migrate, type Db } from '../../storage/database.js';
import { Store } from '../../storage/store.js';

export type { Store };
import { prepareKeyEncryption } from '../../crypto/key-file.js';

/**
 * Opens the deployment's database, migrated, for a server or an administrative command. With `keys`, the
 * key-encryption secret is opened too (key file or REALMGATE_KEY_SECRET, checked before any key is
 * created or opened: private keys are never stored in clear); `announce` says what it did about it. The
 * caller closes `db`; a failure before returning closes it here.
 */
export async function openDeploymentStore(
  config: Config,
  opts: { synchronous?: Config['sqliteSync']; keys?: boolean; announce?: (message: string) => void } = {},
): Promise<{ db: Db; store: Store }> {
  const db = await openDatabase(config.databaseUrl, { synchronous: opts.synchronous ?? config.sqliteSync, waitTimeoutMs: config.dbWaitTimeoutMs });
  try {
    await migrate(db);
    const store = new Store(db);
    if (opts.keys) await prepareKeyEncryption(config, store, opts.announce ?? (() => undefined));
    return { db, store };
  } catch (err) {
    await db.close();
    throw err;
  }
}
