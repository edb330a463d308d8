import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';

/** A client initial access token as stored and listed (the token itself is never kept). */
export interface InitialAccess {
  id: string;
  realmId: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; 0: never. */
  expiresAt: number;
  count: number;
  remaining: number;
}

type Row = Database['client_initial_access'];

function toInitialAccess(r: Omit<Row, 'token_hash'>): InitialAccess {
  return { id: r.id, realmId: r.realm_id, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), count: Number(r.count), remaining: Number(r.remaining) };
}

/**
 * Dynamic client registration's stored state (RFC 7591, RFC 7592): Keycloak's client initial access
 * tokens, and each registered client's current registration access token. Only SHA-256 hashes of
 * either token are stored.
 */
export class ClientRegistrationRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async createInitialAccess(a: InitialAccess & { tokenHash: string }): Promise<void> {
    await this.db
      .insertInto('client_initial_access')
      .values({ id: a.id, realm_id: a.realmId, token_hash: a.tokenHash, created_at: a.createdAt, expires_at: a.expiresAt, count: a.count, remaining: a.remaining })
      .execute();
  }

  /** The realm's initial access tokens that can still register a client at `now`, newest first. */
  async listInitialAccess(realmId: string, now: number): Promise<InitialAccess[]> {
    const rows = await this.db
      .selectFrom('client_initial_access')
      .select(['id', 'realm_id', 'created_at', 'expires_at', 'count', 'remaining'])
      .where('realm_id', '=', realmId)
      .where('remaining', '>', 0)
      .where((eb) => eb.or([eb('expires_at', '=', 0), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toInitialAccess);
  }

  /** Deletes one of the realm's initial access tokens; false when it has none of that id. */
  async deleteInitialAccess(realmId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('client_initial_access').where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Uses up one registration of the realm's initial access token of this hash, if it is live at `now`:
   * one conditional update, so that N parallel registrations with a token of count n < N get exactly n
   * winners. The token's row goes with its last registration, as in Keycloak. Undefined: no such live
   * token (unknown, of another realm, expired or used up).
   */
  async consumeInitialAccess(realmId: string, tokenHash: string, now: number): Promise<InitialAccess | undefined> {
    return inTransaction(this.db, async (trx) => {
      const row = await trx
        .updateTable('client_initial_access')
        .set((eb) => ({ remaining: eb('remaining', '-', 1) }))
        .where('realm_id', '=', realmId)
        .where('token_hash', '=', tokenHash)
        .where('remaining', '>', 0)
        .where((eb) => eb.or([eb('expires_at', '=', 0), eb('expires_at', '>', now)]))
        .returning(['id', 'realm_id', 'created_at', 'expires_at', 'count', 'remaining'])
        .executeTakeFirst();
      if (!row) return undefined;
      if (Number(row.remaining) <= 0) await trx.deleteFrom('client_initial_access').where('id', '=', row.id).where('remaining', '<=', 0).execute();
      return toInitialAccess(row);
    });
  }

  /** Gives back a registration that `consumeInitialAccess` took when the client could not be made after all. */
  async restoreInitialAccess(a: InitialAccess & { tokenHash: string }): Promise<void> {
    const r = await this.db
      .updateTable('client_initial_access')
      .set((eb) => ({ remaining: eb('remaining', '+', 1) }))
      .where('id', '=', a.id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) await this.createInitialAccess({ ...a, remaining: 1 }).catch(() => undefined);
  }

  /** Initial access tokens that expired before `before` (the collector's; bounded like its others). */
  async deleteExpiredInitialAccess(before: number, limit: number): Promise<number> {
    const ids = (
      await this.db.selectFrom('client_initial_access').select('id').where('expires_at', '>', 0).where('expires_at', '<', before).limit(limit).execute()
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    const r = await this.db.deleteFrom('client_initial_access').where('id', 'in', ids).where('expires_at', '>', 0).where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** The hash of the client's current registration access token; null: none; undefined: no such client. */
  async registrationTokenHash(realmId: string, clientId: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('clients').select('registration_token_hash').where('realm_id', '=', realmId).where('client_id', '=', clientId).executeTakeFirst();
    return row ? row.registration_token_hash : undefined;
  }

  /** Sets (or, with null, clears) the client's registration access token; false when there is no such client. */
  async setRegistrationToken(realmId: string, clientId: string, hash: string | null): Promise<boolean> {
    const r = await this.db.updateTable('clients').set({ registration_token_hash: hash }).where('realm_id', '=', realmId).where('client_id', '=', clientId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Replaces the client's registration access token if it is still `current` (one conditional update:
   * of two requests presenting the same token at once, exactly one rotates it). False: it was not.
   */
  async rotateRegistrationToken(realmId: string, clientId: string, current: string, next: string): Promise<boolean> {
    const r = await this.db
      .updateTable('clients')
      .set({ registration_token_hash: next })
      .where('realm_id', '=', realmId)
      .where('client_id', '=', clientId)
      .where('registration_token_hash', '=', current)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
