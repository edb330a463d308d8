import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Named leases: a node that holds an unexpired lease may do the work it names; another node takes the
 * lease only once it has expired. One conditional statement each, so that it works the same on
 * PostgreSQL with many nodes and on SQLite with several processes on one file.
 */
export class LeaseRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** True when `holder` now holds the lease until `expiresAt` (it was free, expired, or already its own). */
  async acquire(name: string, holder: string, now: number, expiresAt: number): Promise<boolean> {
    await this.db.insertInto('leases').values({ name, holder, expires_at: 0 }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const res = await this.db
      .updateTable('leases')
      .set({ holder, expires_at: expiresAt })
      .where('name', '=', name)
      .where((eb) => eb.or([eb('holder', '=', holder), eb('expires_at', '<=', now)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Gives the lease up early (a node shutting down), so another node need not wait for its expiry. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.updateTable('leases').set({ expires_at: 0 }).where('name', '=', name).where('holder', '=', holder).execute();
  }
}
