import type { UsedIdTable } from './client-assertions.js';
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * The collector's deletions, each one bounded slice: read at most `limit` keys of expired rows through
 * an index, then delete those keys (re-checking the condition, so a row changed meanwhile stays). Every
 * function returns how many rows it deleted; a caller repeats it while a full slice came back.
 */
export class CollectorRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async expiredInteractions(before: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('interactions').select('id').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('interactions').where('id', 'in', ids).where('expires_at', '<', before).executeTakeFirst());
  }

  /** Codes are kept past their expiry (`before` is earlier than now) so that a late reuse is still recognised. */
  async expiredCodes(before: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('authorization_codes').select('hash').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.hash);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('authorization_codes').where('hash', 'in', ids).where('expires_at', '<', before).executeTakeFirst());
  }

  /**
   * Device codes that issued tokens are kept past their expiry until `consumedBefore`, as codes are (a late
   * reuse is recognised); the others (never approved, denied, approved but never polled) issued nothing
   * and are deleted once expired before `unusedBefore`: anyone may ask for them on a public client, so
   * keeping them a day would let a flood hold far more rows than the cap on pending ones.
   */
  async expiredDeviceCodes(unusedBefore: number, consumedBefore: number, limit: number): Promise<number> {
    const expired = (eb: ExpressionBuilder<Database, 'device_codes'>) =>
      eb.or([eb('expires_at', '<', consumedBefore), eb.and([eb('expires_at', '<', unusedBefore), eb('status', '<>', 'consumed')])]);
    const ids = (await this.db.selectFrom('device_codes').select('hash').where(expired).limit(limit).execute()).map((r) => r.hash);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('device_codes').where('hash', 'in', ids).where(expired).executeTakeFirst());
  }

  /** Pushed authorization requests (RFC 9126) expired before `before`, used or not. */
  async expiredPushedRequests(before: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('pushed_authorization_requests').select('hash').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.hash);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('pushed_authorization_requests').where('hash', 'in', ids).where('expires_at', '<', before).executeTakeFirst());
  }

  async expiredRevocations(before: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('revoked_access_tokens').select('jti').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.jti);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('revoked_access_tokens').where('jti', 'in', ids).where('expires_at', '<', before).executeTakeFirst());
  }

  /** Used client assertion or DPoP proof ids whose JWT can no longer be accepted. */
  async expiredUsedIds(table: UsedIdTable, before: number, limit: number): Promise<number> {
    const t = table as 'client_assertion_jtis';
    const ids = (await this.db.selectFrom(t).select('id').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom(t).where('id', 'in', ids).where('expires_at', '<', before).executeTakeFirst());
  }

  /** Browser sessions that expired or were ended before `before`. */
  async deadSessions(before: number, limit: number): Promise<number> {
    const ids = (
      await this.db
        .selectFrom('browser_sessions')
        .select('id')
        .where((eb) => eb.or([eb('expires_at', '<', before), eb('ended_at', '<', before)]))
        .limit(limit)
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    return count(await this.db.deleteFrom('browser_sessions').where('id', 'in', ids).executeTakeFirst());
  }

  /**
   * Dead refresh chains and their token rows: revoked, past their absolute lifetime, or idle (no token
   * of the chain still valid), all before `before`. The one place that knows how a chain is stored:
   * when token storage changes (a row per chain), only this function changes. Returns the rows deleted
   * (chains and tokens).
   */
  async deadChains(before: number, limit: number): Promise<number> {
    const ids = new Set<string>();
    const revoked = await this.db.selectFrom('refresh_chains').select('id').where('revoked_at', '<', before).limit(limit).execute();
    for (const r of revoked) ids.add(r.id);
    if (ids.size < limit) {
      const ended = await this.db.selectFrom('refresh_chains').select('id').where('max_expires_at', '<', before).limit(limit - ids.size).execute();
      for (const r of ended) ids.add(r.id);
    }
    if (ids.size < limit) {
      // Idle: no rotation within the realm's refresh idle lifetime. Storage is per chain, so the chain's
      // own row says when it last moved (a grace answer does not move rotated_at: 300 s, the longest
      // grace window, is added as a margin).
      const idle = await this.db
        .selectFrom('refresh_chains as c')
        .innerJoin('realms as r', 'r.id', 'c.realm_id')
        .select('c.id')
        .where(sql<boolean>`coalesce(c.rotated_at, c.created_at) + r.refresh_idle_lifetime + 300 < ${before}`)
        .limit(limit - ids.size)
        .execute();
      for (const r of idle) ids.add(r.id);
    }
    if (ids.size === 0) return 0;
    const list = [...ids];
    // Tokens first: the foreign key's cascade would otherwise do the same work unbounded and unseen.
    const tokens = count(await this.db.deleteFrom('refresh_tokens').where('chain_id', 'in', list).executeTakeFirst());
    const chains = count(await this.db.deleteFrom('refresh_chains').where('id', 'in', list).executeTakeFirst());
    return tokens + chains;
  }

  /**
   * Login and token events past their realm's retention (its own, else `defaultRetention`, seconds),
   * realm by realm through the (realm_id, time) index.
   */
  oldEvents(now: number, defaultRetention: number, limit: number): Promise<number> {
    return this.pastRetention('events', now, defaultRetention, limit);
  }

  /** Admin events past their realm's retention (as oldEvents; their time is in milliseconds), through the (realm_id, time_ms) index. */
  oldAdminEvents(now: number, defaultRetention: number, limit: number): Promise<number> {
    return this.pastRetention('admin_events', now, defaultRetention, limit);
  }

  private async pastRetention(table: 'events' | 'admin_events', now: number, defaultRetention: number, limit: number): Promise<number> {
    const [own, time, unit] = table === 'events' ? (['events_retention', 'time', 1] as const) : (['admin_events_retention', 'time_ms', 1000] as const);
    let deleted = 0;
    const realms = await this.db.selectFrom('realms').select(['id', own]).execute();
    for (const realm of realms) {
      if (deleted >= limit) break;
      const retention = (realm as Record<string, unknown>)[own] as number | null;
      const before = (now - (retention ?? defaultRetention)) * unit;
      const ids = (await this.db.selectFrom(table).select('id').where('realm_id', '=', realm.id).where(time, '<', before).limit(limit - deleted).execute()).map((r) => r.id);
      if (ids.length > 0) deleted += count(await this.db.deleteFrom(table).where('id', 'in', ids).executeTakeFirst());
    }
    return deleted;
  }

  /** Login-failure counters with no failure and no lock since `before`. */
  async staleLoginFailures(before: number, limit: number): Promise<number> {
    const rows = await this.db.selectFrom('login_failures').select(['realm_id', 'subject']).where('last_failure', '<', before).where('blocked_until', '<', before).limit(limit).execute();
    if (rows.length === 0) return 0;
    const res = await this.db
      .deleteFrom('login_failures')
      .where('last_failure', '<', before)
      .where('blocked_until', '<', before)
      .where((eb) => eb.or(rows.map((r) => eb.and([eb('realm_id', '=', r.realm_id), eb('subject', '=', r.subject)]))))
      .executeTakeFirst();
    return count(res);
  }
}

function count(r: { numDeletedRows: bigint } | undefined): number {
  return Number(r?.numDeletedRows ?? 0);
}
