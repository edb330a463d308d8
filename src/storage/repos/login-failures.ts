import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface FailureState {
  failures: number;
  lockouts: number;
  lastFailure: number;
  blockedUntil: number;
}

function toState(r: { failures: number; lockouts: number; last_failure: number | string; blocked_until: number | string }): FailureState {
  return { failures: Number(r.failures), lockouts: Number(r.lockouts), lastFailure: Number(r.last_failure), blockedUntil: Number(r.blocked_until) };
}

/**
 * Failed-login counters per realm and subject ("user:<name>", "ip:<address>" or "dev:<device id>").
 * Every change is one atomic statement, so parallel attempts never read a count that another attempt
 * is about to change (the burst that checks every guess before any failure is written).
 */
export class LoginFailureRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(realmId: string, subjects: string[]): Promise<Map<string, FailureState>> {
    if (subjects.length === 0) return new Map();
    const rows = await this.db.selectFrom('login_failures').selectAll().where('realm_id', '=', realmId).where('subject', 'in', subjects).execute();
    return new Map(rows.map((r) => [r.subject, toState(r)]));
  }

  /**
   * Reserves one attempt before the password is checked: counts it as a failure unless the subject is
   * blocked (then nothing changes). Failures older than `forgetAfter` seconds start over. Returns the
   * state after the reservation; `failures` numbers this attempt among those in flight and past.
   */
  async reserve(realmId: string, subject: string, now: number, forgetAfter: number): Promise<FailureState> {
    const lf = sql.ref('login_failures');
    const row = await this.db
      .insertInto('login_failures')
      .values({ realm_id: realmId, subject, failures: 1, lockouts: 0, last_failure: now, blocked_until: 0 })
      .onConflict((oc) =>
        oc.columns(['realm_id', 'subject']).doUpdateSet({
          failures: sql<number>`CASE WHEN ${lf}.blocked_until > ${now} THEN ${lf}.failures WHEN ${lf}.last_failure < ${now - forgetAfter} THEN 1 ELSE ${lf}.failures + 1 END`,
          last_failure: sql<number>`CASE WHEN ${lf}.blocked_until > ${now} THEN ${lf}.last_failure ELSE ${now} END`,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toState(row);
  }

  /** Gives back a reservation that turned out not to be a failure (a success, a refused or aborted attempt). */
  async release(realmId: string, subject: string): Promise<void> {
    await this.db
      .updateTable('login_failures')
      .set({ failures: sql<number>`CASE WHEN failures > 0 THEN failures - 1 ELSE 0 END` })
      .where('realm_id', '=', realmId)
      .where('subject', '=', subject)
      .execute();
  }

  /** Sets a short wait before the next attempt (the slow-down before a lockout); never shortens a lock. */
  async delay(realmId: string, subject: string, until: number): Promise<void> {
    await this.db.updateTable('login_failures').set({ blocked_until: until }).where('realm_id', '=', realmId).where('subject', '=', subject).where('blocked_until', '<', until).execute();
  }

  /**
   * Locks the subject when its failures reached `threshold` and it is not locked already. Exactly one
   * of several parallel failures wins (the conditional update); it gets the new lockout number, and the
   * lock's length is set from it. Returns the lock's end, or undefined when this call did not lock.
   */
  async lock(realmId: string, subject: string, opts: { now: number; threshold: number; lockoutSeconds: number; maxLockoutSeconds: number }): Promise<number | undefined> {
    const won = await this.db
      .updateTable('login_failures')
      .set({ failures: 0, lockouts: sql<number>`lockouts + 1`, blocked_until: opts.now + opts.maxLockoutSeconds })
      .where('realm_id', '=', realmId)
      .where('subject', '=', subject)
      .where('failures', '>=', opts.threshold)
      .where('blocked_until', '<=', opts.now)
      .returning('lockouts')
      .executeTakeFirst();
    if (!won) return undefined;
    const until = opts.now + Math.min(opts.lockoutSeconds * 2 ** (Number(won.lockouts) - 1), opts.maxLockoutSeconds);
    await this.db.updateTable('login_failures').set({ blocked_until: until }).where('realm_id', '=', realmId).where('subject', '=', subject).where('lockouts', '=', Number(won.lockouts)).execute();
    return until;
  }

  async clear(realmId: string, subject: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('realm_id', '=', realmId).where('subject', '=', subject).execute();
  }

  /**
   * One bounded slice of clearing every counter of the realm (Keycloak's DELETE
   * attack-detection/brute-force/users): at most `limit` subjects, through the primary key. Returns how
   * many went; the caller repeats while a full slice came back.
   */
  async clearSlice(realmId: string, limit: number): Promise<number> {
    const subjects = (await this.db.selectFrom('login_failures').select('subject').where('realm_id', '=', realmId).limit(limit).execute()).map((r) => r.subject);
    if (subjects.length === 0) return 0;
    const res = await this.db.deleteFrom('login_failures').where('realm_id', '=', realmId).where('subject', 'in', subjects).executeTakeFirst();
    return Number(res.numDeletedRows ?? 0);
  }
}
