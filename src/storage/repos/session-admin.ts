import { sql, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { notIdle } from './interactions.js';

/** A live browser session with the clients that hold live refresh chains from it (Keycloak's UserSessionRepresentation). */
export interface SessionSummary {
  id: string;
  userId: string;
  username: string;
  authTime: number;
  createdAt: number;
  lastAccess: number;
  expiresAt: number;
  /** The user ticked "Remember me" when signing in. */
  rememberMe: boolean;
  /** The administrator (username) who opened the session by impersonating the user, if one did. */
  impersonator?: string;
  /** The address and User-Agent the session was started from, when known. */
  ipAddress?: string;
  userAgent?: string;
  clients: string[];
}

/** A client used in a browser session (it holds a refresh chain started in it): who a logout tells. */
export interface SessionClient {
  sessionId: string;
  userId: string;
  clientId: string;
}

/** At most this many (session, client) pairs are told of one logout: a bound on the work one request starts. */
export const MAX_SESSION_CLIENTS = 1000;

/** Keycloak's client-session-stats row: a client's live online sessions and offline sessions. */
export interface ClientSessionCounts {
  clientId: string;
  active: number;
  offline: number;
}

/**
 * A refresh chain that holds offline access (Keycloak's offline session of the client): granted
 * offline_access, not revoked, within its absolute lifetime, used within the realm's refresh idle lifetime
 * and not older than the realm's not-before (the refresh grant refuses it otherwise). Its browser
 * session may have ended: offline access outlives it. Needs `refresh_chains as c` joined to `realms as r`.
 */
function liveOffline(now: number) {
  return (eb: ExpressionBuilder<Database & { c: Database['refresh_chains']; r: Database['realms'] }, 'c' | 'r'>) =>
    eb.and([
      eb('c.revoked_at', 'is', null),
      eb('c.max_expires_at', '>', now),
      eb('c.created_at', '>=', eb.ref('r.not_before')),
      // Scopes are a JSON array of scope tokens (which hold no quote): the quoted name is one element.
      sql<SqlBool>`${sql.ref('c.scopes')} like ${'%"offline\\_access"%'} escape '\\'`,
      sql<SqlBool>`coalesce(${sql.ref('c.rotated_at')}, ${sql.ref('c.created_at')}) + ${sql.ref('r.refresh_idle_lifetime')} > ${now}`,
    ]);
}

/** Sessions and refresh chains as administrators end them. */
export class SessionAdminRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async listForUser(realmId: string, userId: string, now: number): Promise<SessionSummary[]> {
    const rows = await this.db
      .selectFrom('browser_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.user_id', 'u.username', 's.auth_time', 's.created_at', 's.expires_at', 's.remember_me', 's.impersonator_username', 's.ip_address', 's.user_agent', 's.used_at'])
      .where('s.realm_id', '=', realmId)
      .where('s.user_id', '=', userId)
      .where('s.ended_at', 'is', null)
      .where('s.expires_at', '>', now)
      .where(notIdle(now, 's.'))
      .orderBy('s.created_at', 'desc')
      .execute();
    return this.withClients(rows, now);
  }

  /** Live sessions from which the client holds a live refresh chain. */
  async listForClient(realmId: string, clientId: string, now: number, page: { first?: number; max?: number }): Promise<SessionSummary[]> {
    const rows = await this.db
      .selectFrom('browser_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.user_id', 'u.username', 's.auth_time', 's.created_at', 's.expires_at', 's.remember_me', 's.impersonator_username', 's.ip_address', 's.user_agent', 's.used_at'])
      .where('s.realm_id', '=', realmId)
      .where('s.ended_at', 'is', null)
      .where('s.expires_at', '>', now)
      .where(notIdle(now, 's.'))
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('refresh_chains as c')
            .select('c.id')
            .whereRef('c.session_id', '=', 's.id')
            .where('c.client_id', '=', clientId)
            .where('c.revoked_at', 'is', null)
            .where('c.max_expires_at', '>', now),
        ),
      )
      .orderBy('s.created_at', 'desc')
      .offset(page.first ?? 0)
      .limit(page.max ?? 100)
      .execute();
    return this.withClients(rows, now);
  }

  async get(realmId: string, sessionId: string): Promise<{ id: string; userId: string; ended: boolean } | undefined> {
    const r = await this.db.selectFrom('browser_sessions').select(['id', 'user_id', 'ended_at']).where('realm_id', '=', realmId).where('id', '=', sessionId).executeTakeFirst();
    return r ? { id: r.id, userId: r.user_id, ended: r.ended_at !== null } : undefined;
  }

  /**
   * Revokes the offline refresh chains (granted offline_access) started in a browser session, ended or
   * not: Keycloak's offline session of that id. The session itself is left as it is. Returns how many.
   */
  async revokeOffline(realmId: string, sessionId: string, now: number, reason: string): Promise<number> {
    return inTransaction(this.db, async (trx) => {
      const live = await trx.selectFrom('refresh_chains').select(['id', 'scopes']).where('realm_id', '=', realmId).where('session_id', '=', sessionId).where('revoked_at', 'is', null).execute();
      const ids = live.filter((c) => (JSON.parse(c.scopes) as string[]).includes('offline_access')).map((c) => c.id);
      if (ids.length === 0) return 0;
      const r = await trx.updateTable('refresh_chains').set({ revoked_at: now, revoked_reason: reason }).where('id', 'in', ids).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
  }

  /**
   * The clients used in the given sessions, or in the user's sessions that have not ended (optionally only
   * `clientId`): those holding a refresh chain started in them, revoked or not (a client that revoked its
   * own token still has its session). Read before the sessions end (a deleted user's chains go with them).
   */
  async sessionClients(realmId: string, by: { sessionIds: string[] } | { userId: string; clientId?: string }): Promise<SessionClient[]> {
    let rows: Array<{ session_id: string; user_id: string; client_id: string }>;
    if ('sessionIds' in by) {
      if (by.sessionIds.length === 0) return [];
      rows = await this.db
        .selectFrom('refresh_chains')
        .select(['session_id', 'user_id', 'client_id'])
        .distinct()
        .where('realm_id', '=', realmId)
        .where('session_id', 'in', by.sessionIds)
        .orderBy('session_id')
        .orderBy('client_id')
        .limit(MAX_SESSION_CLIENTS)
        .execute();
    } else {
      let q = this.db
        .selectFrom('refresh_chains as c')
        .innerJoin('browser_sessions as s', 's.id', 'c.session_id')
        .select(['c.session_id', 'c.user_id', 'c.client_id'])
        .distinct()
        .where('s.realm_id', '=', realmId)
        .where('s.user_id', '=', by.userId)
        .where('s.ended_at', 'is', null)
        .where('c.realm_id', '=', realmId);
      if (by.clientId !== undefined) q = q.where('c.client_id', '=', by.clientId);
      rows = await q.orderBy('c.session_id').orderBy('c.client_id').limit(MAX_SESSION_CLIENTS).execute();
    }
    return rows.map((r) => ({ sessionId: r.session_id, userId: r.user_id, clientId: r.client_id }));
  }

  /**
   * A logout (the end-session endpoint, the account page): ends the browser session and revokes the
   * refresh chains started in it but the offline ones (offline_access outlives the session, as in
   * Keycloak), and the user's offline chains of `revokeOfflineOf` (clients with
   * backchannel.logout.revoke.offline.tokens), in one transaction.
   */
  async endForLogout(realmId: string, session: { id: string; userId: string }, now: number, opts: { reason: string; revokeOfflineOf: string[] }): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.updateTable('browser_sessions').set({ ended_at: now }).where('realm_id', '=', realmId).where('id', '=', session.id).where('ended_at', 'is', null).execute();
      const live = await trx
        .selectFrom('refresh_chains')
        .select(['id', 'scopes', 'session_id', 'client_id'])
        .where('realm_id', '=', realmId)
        .where('user_id', '=', session.userId)
        .where('revoked_at', 'is', null)
        .where((eb) => (opts.revokeOfflineOf.length > 0 ? eb.or([eb('session_id', '=', session.id), eb('client_id', 'in', opts.revokeOfflineOf)]) : eb('session_id', '=', session.id)))
        .execute();
      const offline = (scopes: string): boolean => (JSON.parse(scopes) as string[]).includes('offline_access');
      const ids = live.filter((c) => (offline(c.scopes) ? opts.revokeOfflineOf.includes(c.client_id) : c.session_id === session.id)).map((c) => c.id);
      if (ids.length > 0) await trx.updateTable('refresh_chains').set({ revoked_at: now, revoked_reason: opts.reason }).where('id', 'in', ids).where('revoked_at', 'is', null).execute();
    });
  }

  /** Ends every browser session of the user; with `chains`, revokes all their refresh chains too. */
  async endAllForUser(realmId: string, userId: string, now: number, opts: { chains: boolean; reason: string }): Promise<{ sessions: number; chains: number }> {
    return inTransaction(this.db, async (trx) => {
      const s = await trx.updateTable('browser_sessions').set({ ended_at: now }).where('realm_id', '=', realmId).where('user_id', '=', userId).where('ended_at', 'is', null).executeTakeFirst();
      let chains = 0;
      if (opts.chains) {
        const c = await trx
          .updateTable('refresh_chains')
          .set({ revoked_at: now, revoked_reason: opts.reason })
          .where('realm_id', '=', realmId)
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        chains = Number(c.numUpdatedRows);
      }
      return { sessions: Number(s.numUpdatedRows), chains };
    });
  }

  /** Revokes every live refresh chain of a user or of a client (and so the access tokens they issued). */
  async revokeChains(realmId: string, by: { userId: string } | { clientId: string }, now: number, reason: string): Promise<number> {
    let q = this.db.updateTable('refresh_chains').set({ revoked_at: now, revoked_reason: reason }).where('realm_id', '=', realmId).where('revoked_at', 'is', null);
    q = 'userId' in by ? q.where('user_id', '=', by.userId) : q.where('client_id', '=', by.clientId);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * Revokes the user's chains for one client (with any organization), online and offline; with
   * `consent`, withdraws the user's consent to it too (an administrator's or the user's revocation).
   * Returns how many chains it revoked.
   */
  async revokeUserClient(realmId: string, userId: string, clientId: string, now: number, reason: string, opts: { consent: boolean } = { consent: true }): Promise<number> {
    return inTransaction(this.db, async (trx) => {
      if (opts.consent) await trx.deleteFrom('consents').where('realm_id', '=', realmId).where('user_id', '=', userId).where('client_id', '=', clientId).execute();
      const r = await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('realm_id', '=', realmId)
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
  }

  /** How many live sessions `listForClient` would list (Keycloak's session-count of a client). */
  async countForClient(realmId: string, clientId: string, now: number): Promise<number> {
    const r = await this.db
      .selectFrom('browser_sessions as s')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('s.realm_id', '=', realmId)
      .where('s.ended_at', 'is', null)
      .where('s.expires_at', '>', now)
      .where(notIdle(now, 's.'))
      .where((eb) => eb.exists(this.liveChainOf(eb, clientId, now)))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Offline sessions of a client (or of one user and a client): the browser sessions its offline chains started in. */
  async countOffline(realmId: string, clientId: string, now: number): Promise<number> {
    const r = await this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('realms as r', 'r.id', 'c.realm_id')
      .select((eb) => eb.fn.count<number | string | bigint>('c.session_id').distinct().as('n'))
      .where('c.realm_id', '=', realmId)
      .where('c.client_id', '=', clientId)
      .where(liveOffline(now))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Offline sessions (Keycloak's UserSessionRepresentation of an offline session) in which `clientId`
   * holds offline access, newest first; each lists every client with offline access in it. Start: its
   * first offline grant; last access: its last token.
   */
  async listOffline(realmId: string, by: { clientId: string; userId?: string }, now: number, page: { first?: number; max?: number }): Promise<SessionSummary[]> {
    let q = this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('realms as r', 'r.id', 'c.realm_id')
      .select(['c.session_id', (eb) => eb.fn.max('c.created_at').as('newest')])
      .where('c.realm_id', '=', realmId)
      .where('c.client_id', '=', by.clientId)
      .where(liveOffline(now));
    if (by.userId !== undefined) q = q.where('c.user_id', '=', by.userId);
    const ids = (
      await q
        .groupBy('c.session_id')
        .orderBy('newest', 'desc')
        .orderBy('c.session_id')
        .offset(page.first ?? 0)
        .limit(page.max ?? 100)
        .execute()
    ).map((r) => r.session_id);
    if (ids.length === 0) return [];
    const chains = await this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('realms as r', 'r.id', 'c.realm_id')
      .innerJoin('users as u', 'u.id', 'c.user_id')
      .leftJoin('browser_sessions as s', 's.id', 'c.session_id')
      .select(['c.session_id', 'c.user_id', 'u.username', 'c.client_id', 'c.auth_time', 'c.created_at', 'c.rotated_at', 'c.max_expires_at', 's.remember_me'])
      .where('c.realm_id', '=', realmId)
      .where('c.session_id', 'in', ids)
      .where(liveOffline(now))
      .execute();
    const out: SessionSummary[] = [];
    for (const id of ids) {
      const mine = chains.filter((c) => c.session_id === id);
      const first = mine[0];
      if (!first) continue;
      out.push({
        id,
        userId: first.user_id,
        username: first.username,
        authTime: Math.min(...mine.map((c) => Number(c.auth_time))),
        createdAt: Math.min(...mine.map((c) => Number(c.created_at))),
        lastAccess: Math.max(...mine.map((c) => Number(c.rotated_at ?? c.created_at))),
        expiresAt: Math.max(...mine.map((c) => Number(c.max_expires_at))),
        rememberMe: Number(first.remember_me ?? 0) === 1,
        clients: [...new Set(mine.map((c) => c.client_id))].sort(),
      });
    }
    return out;
  }

  /** Every client of the realm with a live online or offline session, and how many (Keycloak's client-session-stats). */
  async clientCounts(realmId: string, now: number): Promise<ClientSessionCounts[]> {
    const online = await this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('browser_sessions as s', 's.id', 'c.session_id')
      .select(['c.client_id', (eb) => eb.fn.count<number | string | bigint>('c.session_id').distinct().as('n')])
      .where('c.realm_id', '=', realmId)
      .where('c.revoked_at', 'is', null)
      .where('c.max_expires_at', '>', now)
      .where('s.realm_id', '=', realmId)
      .where('s.ended_at', 'is', null)
      .where('s.expires_at', '>', now)
      .where(notIdle(now, 's.'))
      .groupBy('c.client_id')
      .execute();
    const offline = await this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('realms as r', 'r.id', 'c.realm_id')
      .select(['c.client_id', (eb) => eb.fn.count<number | string | bigint>('c.session_id').distinct().as('n')])
      .where('c.realm_id', '=', realmId)
      .where(liveOffline(now))
      .groupBy('c.client_id')
      .execute();
    const byClient = new Map<string, ClientSessionCounts>();
    const row = (clientId: string): ClientSessionCounts => byClient.get(clientId) ?? byClient.set(clientId, { clientId, active: 0, offline: 0 }).get(clientId)!;
    for (const r of online) row(r.client_id).active = Number(r.n);
    for (const r of offline) row(r.client_id).offline = Number(r.n);
    return [...byClient.values()].filter((c) => c.active > 0 || c.offline > 0).sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  }

  /**
   * The clients used in the realm's sessions that have not ended (as `sessionClients` of a user), at most
   * `limit` pairs: whom a realm-wide logout tells. Read before the sessions end.
   */
  async realmSessionClients(realmId: string, limit: number): Promise<SessionClient[]> {
    const rows = await this.db
      .selectFrom('refresh_chains as c')
      .innerJoin('browser_sessions as s', 's.id', 'c.session_id')
      .select(['c.session_id', 'c.user_id', 'c.client_id'])
      .distinct()
      .where('s.realm_id', '=', realmId)
      .where('s.ended_at', 'is', null)
      .where('c.realm_id', '=', realmId)
      .orderBy('c.session_id')
      .orderBy('c.client_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ sessionId: r.session_id, userId: r.user_id, clientId: r.client_id }));
  }

  /** Ends every browser session of the realm and revokes every refresh chain of its users, offline ones included, in one transaction. */
  async endAllForRealm(realmId: string, now: number, reason: string): Promise<{ sessions: number; chains: number }> {
    return inTransaction(this.db, async (trx) => {
      const s = await trx.updateTable('browser_sessions').set({ ended_at: now }).where('realm_id', '=', realmId).where('ended_at', 'is', null).executeTakeFirst();
      const c = await trx.updateTable('refresh_chains').set({ revoked_at: now, revoked_reason: reason }).where('realm_id', '=', realmId).where('revoked_at', 'is', null).executeTakeFirst();
      return { sessions: Number(s.numUpdatedRows), chains: Number(c.numUpdatedRows) };
    });
  }

  private liveChainOf(eb: ExpressionBuilder<Database & { s: Database['browser_sessions'] }, 's'>, clientId: string, now: number) {
    return eb
      .selectFrom('refresh_chains as c')
      .select('c.id')
      .whereRef('c.session_id', '=', 's.id')
      .where('c.client_id', '=', clientId)
      .where('c.revoked_at', 'is', null)
      .where('c.max_expires_at', '>', now);
  }

  private async withClients(
    rows: Array<{ id: string; user_id: string; username: string; auth_time: number; created_at: number; expires_at: number; remember_me: number; impersonator_username: string | null; ip_address: string | null; user_agent: string | null; used_at: number | null }>,
    now: number,
  ): Promise<SessionSummary[]> {
    if (rows.length === 0) return [];
    // A chain was last used at its last rotation (refresh tokens are rows of their own no more).
    const chains = await this.db
      .selectFrom('refresh_chains as c')
      .select(['c.session_id', 'c.client_id', (eb) => eb.fn.max(eb.fn.coalesce('c.rotated_at', 'c.created_at')).as('last')])
      .where(
        'c.session_id',
        'in',
        rows.map((r) => r.id),
      )
      .where('c.revoked_at', 'is', null)
      .where('c.max_expires_at', '>', now)
      .groupBy(['c.session_id', 'c.client_id'])
      .execute();
    return rows.map((r) => {
      const mine = chains.filter((c) => c.session_id === r.id);
      // Last used: the browser's last visit (a remembered session's used_at), or a refresh of a chain of it.
      const last = Math.max(Number(r.created_at), Number(r.used_at ?? 0), ...mine.map((c) => Number(c.last ?? 0)));
      return {
        id: r.id,
        userId: r.user_id,
        username: r.username,
        authTime: Number(r.auth_time),
        createdAt: Number(r.created_at),
        lastAccess: last,
        expiresAt: Number(r.expires_at),
        rememberMe: Number(r.remember_me) === 1,
        ...(r.impersonator_username !== null ? { impersonator: r.impersonator_username } : {}),
        ...(r.ip_address !== null ? { ipAddress: r.ip_address } : {}),
        ...(r.user_agent !== null ? { userAgent: r.user_agent } : {}),
        clients: [...new Set(mine.map((c) => c.client_id))].sort(),
      };
    });
  }
}
