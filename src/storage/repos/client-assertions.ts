import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** The tables of single-use ids: each row the SHA-256 of an id's parts, kept until its expiry. */
export type UsedIdTable = 'client_assertion_jtis' | 'dpop_proof_jtis';

/**
 * Ids that may be used once: the jti of client assertions (RFC 7523 3 item 7: the server may keep the used
 * ids for as long as the JWT could be accepted, and refuse a second use) and of DPoP proofs (RFC 9449 11.1).
 * The primary key is the SHA-256 of the id's parts (realm, client or htu, jti), so that every node and
 * process sharing the database sees the same set and a second insert fails; a row past its expiry may be
 * taken over (the JWT it recorded is dead) until the collector deletes it.
 */
export class UsedIdRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly table: UsedIdTable,
  ) {}

  /** Records the id; false when it was used already and is still within its expiry (a replay). */
  async use(parts: readonly string[], expiresAt: number, now: number): Promise<boolean> {
    const id = createHash('sha256').update(parts.join('\0')).digest('hex');
    const table = this.table as 'client_assertion_jtis';
    const r = await this.db
      .insertInto(table)
      .values({ id, expires_at: expiresAt })
      .onConflict((oc) => oc.column('id').doUpdateSet({ expires_at: expiresAt }).where(`${table}.expires_at`, '<', now))
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}

/** Used client assertion ids, by realm, client and jti. */
export class ClientAssertionRepository {
  private readonly ids: UsedIdRepository;
  constructor(db: Kysely<Database>) {
    this.ids = new UsedIdRepository(db, 'client_assertion_jtis');
  }

  /** Records the jti; false when it was used already and is still within its expiry (a replay). */
  use(realmId: string, clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean> {
    return this.ids.use([realmId, clientId, jti], expiresAt, now);
  }
}
