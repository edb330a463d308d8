import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { OtpAlgorithm, OtpCredential } from '../types.js';

type Row = Database['otp_credentials'] & { last_step: number | string };

function toCredential(r: Omit<Row, 'last_step'>): OtpCredential {
  return {
    id: r.id,
    realmId: r.realm_id,
    userId: r.user_id,
    label: r.label,
    sealedSecret: r.secret,
    algorithm: r.algorithm as OtpAlgorithm,
    digits: Number(r.digits),
    period: Number(r.period),
    createdAt: Number(r.created_at),
  };
}

/** Users' TOTP authenticators (Keycloak's otp credentials). */
export class OtpRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async list(userId: string): Promise<OtpCredential[]> {
    const rows = await this.db.selectFrom('otp_credentials').select(['id', 'realm_id', 'user_id', 'label', 'secret', 'algorithm', 'digits', 'period', 'created_at']).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toCredential);
  }

  /** Whether the user has an authenticator (one indexed lookup). */
  async has(userId: string): Promise<boolean> {
    return (await this.db.selectFrom('otp_credentials').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst()) !== undefined;
  }

  async create(c: OtpCredential): Promise<void> {
    await this.db
      .insertInto('otp_credentials')
      .values({ id: c.id, realm_id: c.realmId, user_id: c.userId, label: c.label, secret: c.sealedSecret, algorithm: c.algorithm, digits: c.digits, period: c.period, created_at: c.createdAt })
      .execute();
  }

  async rename(userId: string, id: string, label: string | null): Promise<boolean> {
    const r = await this.db.updateTable('otp_credentials').set({ label }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('otp_credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  async deleteAll(userId: string): Promise<number> {
    const r = await this.db.deleteFrom('otp_credentials').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Accepts the time step `step` of the credential once: one conditional update, so that of two requests
   * presenting the same code (or codes of one step) exactly one wins, and an earlier step after a later
   * one is refused too (Keycloak's otpPolicyCodeReusable false).
   */
  async claimStep(id: string, step: number): Promise<boolean> {
    const r = await this.db.updateTable('otp_credentials').set({ last_step: step }).where('id', '=', id).where('last_step', '<', step).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
