import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import type { SigningKey } from '../types.js';

export class KeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: SigningKey): Promise<void> {
    await this.db
      .insertInto('signing_keys')
      .values({
        kid: k.kid,
        realm_id: k.realmId,
        alg: k.alg,
        public_jwk: k.publicJwk,
        private_jwk: k.privateJwk,
        status: k.status,
        created_at: k.createdAt,
        retired_at: k.retiredAt ?? null,
      })
      .execute();
  }

  /** Which of these kids are stored already (in any realm: a kid is the table's key). */
  async existingKids(kids: readonly string[]): Promise<Set<string>> {
    if (kids.length === 0) return new Set();
    const rows = await this.db.selectFrom('signing_keys').select('kid').where('kid', 'in', [...kids]).execute();
    return new Set(rows.map((r) => r.kid));
  }

  /** Makes `key` the realm's only active key; the others are retired now but stay published for a while. */
  async rotate(key: SigningKey, now: number): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx
        .updateTable('signing_keys')
        .set({ status: 'retired', retired_at: now })
        .where('realm_id', '=', key.realmId)
        .where('status', '=', 'active')
        .execute();
      await trx
        .insertInto('signing_keys')
        .values({
          kid: key.kid,
          realm_id: key.realmId,
          alg: key.alg,
          public_jwk: key.publicJwk,
          private_jwk: key.privateJwk,
          status: 'active',
          created_at: key.createdAt,
          retired_at: null,
        })
        .execute();
    });
  }

  /** Whether any private key is stored sealed (encrypted). */
  async anySealed(): Promise<boolean> {
    const r = await this.db.selectFrom('signing_keys').select('kid').where('private_jwk', 'like', 'enc:%').limit(1).executeTakeFirst();
    return r !== undefined;
  }

  /** Every key of every realm, newest first. */
  async listAll(): Promise<Array<{ kid: string; privateJwk: string }>> {
    const rows = await this.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).orderBy('created_at', 'desc').execute();
    return rows.map((r) => ({ kid: r.kid, privateJwk: r.private_jwk }));
  }

  /** Replaces a stored private key (clear -> sealed) unless another process did it first. */
  async replacePrivate(kid: string, before: string, after: string): Promise<void> {
    await this.db.updateTable('signing_keys').set({ private_jwk: after }).where('kid', '=', kid).where('private_jwk', '=', before).execute();
  }

  /** Every key of the realm, newest first. */
  async list(realmId: string): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().where('realm_id', '=', realmId).orderBy('created_at', 'desc').execute();
    return rows.map((r) => ({
      kid: r.kid,
      realmId: r.realm_id,
      alg: r.alg,
      publicJwk: r.public_jwk,
      privateJwk: r.private_jwk,
      status: r.status === 'active' ? 'active' : 'retired',
      createdAt: Number(r.created_at),
      retiredAt: r.retired_at === null ? null : Number(r.retired_at),
    }));
  }
}
