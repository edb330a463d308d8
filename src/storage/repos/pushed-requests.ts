import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { countPending, type PendingTable } from './pending.js';

/** A pushed request is pending (its request_uri may still be used, and it counts towards the caps) until it expires. */
const PENDING: PendingTable = { table: 'pushed_authorization_requests', open: '>' };

/** The authorization request's parameters as pushed: strings, resource possibly a list (RFC 8707). */
export type PushedParams = Record<string, string | string[]>;

/**
 * RFC 9126 pushed authorization requests. The request_uri is a bearer reference to them: only the SHA-256
 * of its random part is stored (as codes are), never the value.
 */
export class PushedRequestRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(r: { hash: string; realmId: string; clientId: string; params: PushedParams; ip: string | null; now: number; expiresAt: number }): Promise<void> {
    await this.db
      .insertInto('pushed_authorization_requests')
      .values({ hash: r.hash, realm_id: r.realmId, client_id: r.clientId, params: JSON.stringify(r.params), ip: r.ip, created_at: r.now, expires_at: r.expiresAt, used_at: null })
      .execute();
  }

  /**
   * Takes the pushed request of this realm and client for its one use (RFC 9126 4): marks it used and
   * returns its parameters, in one statement, so that two concurrent uses cannot both succeed. Undefined
   * when there is none, it expired, it was used, or it belongs to another client (which then does not
   * use it up: a request_uri presented by the wrong client stays usable by its own).
   */
  async consume(hash: string, realmId: string, clientId: string, now: number): Promise<PushedParams | undefined> {
    const r = await this.db
      .updateTable('pushed_authorization_requests')
      .set({ used_at: now })
      .where('hash', '=', hash)
      .where('realm_id', '=', realmId)
      .where('client_id', '=', clientId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('params')
      .executeTakeFirst();
    if (!r) return undefined;
    const params: unknown = JSON.parse(r.params);
    return params && typeof params === 'object' && !Array.isArray(params) ? (params as PushedParams) : undefined;
  }

  /** Unexpired pushed requests of one client, counted up to `upTo` (the cap: no need to count further). */
  async countPendingOf(realmId: string, clientId: string, now: number, upTo: number): Promise<number> {
    const r = await this.db
      .selectFrom((eb) =>
        eb.selectFrom('pushed_authorization_requests').select('expires_at').where('realm_id', '=', realmId).where('client_id', '=', clientId).where('expires_at', '>', now).limit(upTo).as('pending'),
      )
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Unexpired pushed requests made from one address, counted up to `upTo`. */
  countPendingFrom(ip: string, now: number, upTo: number): Promise<number> {
    return countPending(this.db, PENDING, now, { ip, upTo });
  }

  /** Unexpired pushed requests of every address. */
  countPending(now: number): Promise<number> {
    return countPending(this.db, PENDING, now);
  }
}
