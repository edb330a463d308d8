import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Deployment-wide values every node shares (the `meta` table of the initial migration), by key. */
export class MetaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The value under `key`, created with `make()` if there is none yet. When several processes start at
   * once, the first insert wins and every process reads that one value.
   */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    await this.db
      .insertInto('meta')
      .values({ key, value: make() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  }
}
