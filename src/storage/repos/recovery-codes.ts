import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';

/** Users' recovery codes, by keyed hash. */
export class RecoveryCodeRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The user's codes become these (the earlier ones, used or not, are gone), in one transaction. */
  async replace(realmId: string, userId: string, hashes: readonly string[], now: number): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (hashes.length > 0) await trx.insertInto('recovery_codes').values(hashes.map((code_hash) => ({ user_id: userId, code_hash, realm_id: realmId, created_at: now, used_at: null }))).execute();
    });
  }

  /** The user's codes: how many, how many unused, since when; undefined when none. */
  async summary(userId: string): Promise<{ total: number; remaining: number; createdAt: number } | undefined> {
    const rows = await this.db.selectFrom('recovery_codes').select(['created_at', 'used_at']).where('user_id', '=', userId).execute();
    if (rows.length === 0) return undefined;
    return { total: rows.length, remaining: rows.filter((r) => r.used_at === null).length, createdAt: Math.min(...rows.map((r) => Number(r.created_at))) };
  }

  /** How many unused codes the user has left. */
  async remaining(userId: string): Promise<number> {
    const r = await this.db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Uses the code once: one conditional update, so that of two requests with the same code one wins. */
  async consume(userId: string, hash: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('recovery_codes').set({ used_at: now }).where('user_id', '=', userId).where('code_hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deleteAll(userId: string): Promise<void> {
    await this.db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  }
}
