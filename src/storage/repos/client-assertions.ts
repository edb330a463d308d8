import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * The ids (jti) of client assertions already used (RFC 7523 3 item 7: the server may keep the used ids
 * for as long as the JWT could be accepted, and refuse a second use). The primary key is the SHA-256 of
 * realm, client and jti, so that every node and process sharing the database sees the same set and a
 * second insert fails; a row past its expiry may be taken over (the assertion it recorded is dead) until
 * the collector deletes it.
 */
export class ClientAssertionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records the jti; false when it was used already and is still within its expiry (a replay). */
  async use(realmId: string, clientId: string, jti: string, expiresAt: number, now: number): Promise<boolean> {
    const id = createHash('sha256').update(`${realmId}\0${clientId}\0${jti}`).digest('hex');
    const r = await this.db
      .insertInto('client_assertion_jtis')
      .values({ id, expires_at: expiresAt })
      .onConflict((oc) => oc.column('id').doUpdateSet({ expires_at: expiresAt }).where('client_assertion_jtis.expires_at', '<', now))
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
