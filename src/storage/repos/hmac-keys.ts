import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** A realm's HMAC key for refresh tokens; `secretJwk` is sealed (crypto/key-encryption.ts). */
export interface HmacKey {
  kid: string;
  realmId: string;
  alg: string;
  secretJwk: string;
  status: 'active' | 'retired';
  createdAt: number;
}

export class HmacKeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: HmacKey): Promise<void> {
    await this.db
      .insertInto('hmac_keys')
      .values({ kid: k.kid, realm_id: k.realmId, alg: k.alg, secret_jwk: k.secretJwk, status: k.status, created_at: k.createdAt })
      .execute();
  }

  /** Every HMAC key of every realm (kid and stored secret). */
  async listAll(): Promise<Array<{ kid: string; secretJwk: string }>> {
    const rows = await this.db.selectFrom('hmac_keys').select(['kid', 'secret_jwk']).execute();
    return rows.map((r) => ({ kid: r.kid, secretJwk: r.secret_jwk }));
  }

  /** Replaces a stored secret (clear -> sealed) unless another process did it first. */
  async replaceSecret(kid: string, before: string, after: string): Promise<void> {
    await this.db.updateTable('hmac_keys').set({ secret_jwk: after }).where('kid', '=', kid).where('secret_jwk', '=', before).execute();
  }

  /** Every HMAC key of the realm, newest first. */
  async list(realmId: string): Promise<HmacKey[]> {
    const rows = await this.db.selectFrom('hmac_keys').selectAll().where('realm_id', '=', realmId).orderBy('created_at', 'desc').execute();
    return rows.map((r) => ({
      kid: r.kid,
      realmId: r.realm_id,
      alg: r.alg,
      secretJwk: r.secret_jwk,
      status: r.status === 'active' ? 'active' : 'retired',
      createdAt: Number(r.created_at),
    }));
  }
}
