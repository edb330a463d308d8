import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Deployment-wide values every node shares (a secret created once by whichever node needs it first). */
export class MetaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The stored value of `key`; when there is none, stores `make()` (the first writer wins on a race). */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    await this.db.insertInto('meta').values({ key, value: make() }).onConflict((oc) => oc.column('key').doNothing()).execute();
    const row = await this.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  }
}
