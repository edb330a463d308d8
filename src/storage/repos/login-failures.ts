import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface FailureState {
  failures: number;
  lockouts: number;
  lastFailure: number;
  blockedUntil: number;
}

/** Failed-login counters per realm and subject ("user:<name>" or "ip:<address>"). */
export class LoginFailureRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(realmId: string, subjects: string[]): Promise<Map<string, FailureState>> {
    if (subjects.length === 0) return new Map();
    const rows = await this.db.selectFrom('login_failures').selectAll().where('realm_id', '=', realmId).where('subject', 'in', subjects).execute();
    return new Map(rows.map((r) => [r.subject, { failures: r.failures, lockouts: r.lockouts, lastFailure: Number(r.last_failure), blockedUntil: Number(r.blocked_until) }]));
  }

  async put(realmId: string, subject: string, s: FailureState): Promise<void> {
    const values = { failures: s.failures, lockouts: s.lockouts, last_failure: s.lastFailure, blocked_until: s.blockedUntil };
    await this.db
      .insertInto('login_failures')
      .values({ realm_id: realmId, subject, ...values })
      .onConflict((oc) => oc.columns(['realm_id', 'subject']).doUpdateSet(values))
      .execute();
  }

  async clear(realmId: string, subject: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('realm_id', '=', realmId).where('subject', '=', subject).execute();
  }
}
