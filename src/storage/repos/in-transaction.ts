import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Runs `fn` in a transaction, or inside the caller's one when `db` already is a transaction: Kysely
 * cannot nest transactions, and a realm import runs every repository inside one (a failed import must
 * leave the database as it was).
 */
export function inTransaction<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<Database>) : db.transaction().execute(fn);
}
