import type { Kysely } from 'kysely';
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

/** Sessions and refresh chains as administrators end them. */
export class SessionAdminRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async listForUser(realmId: string, userId: string, now: number): Promise<SessionSummary[]> {
    const rows = await this.db
      .selectFrom('browser_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.user_id', 'u.username', 's.auth_time', 's.created_at', 's.expires_at', 's.remember_me'])
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
      .select(['s.id', 's.user_id', 'u.username', 's.auth_time', 's.created_at', 's.expires_at', 's.remember_me'])
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

  /** Ends the browser session and revokes the refresh chains started from it (OIDC: sid = session). */
  async end(realmId: string, sessionId: string, now: number, reason: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.updateTable('browser_sessions').set({ ended_at: now }).where('realm_id', '=', realmId).where('id', '=', sessionId).where('ended_at', 'is', null).execute();
      await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('realm_id', '=', realmId)
        .where('session_id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .execute();
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

  /** Revokes the user's chains for one client (with any organization): a consent withdrawn by an admin. */
  async revokeUserClient(realmId: string, userId: string, clientId: string, now: number, reason: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('consents').where('realm_id', '=', realmId).where('user_id', '=', userId).where('client_id', '=', clientId).execute();
      await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('realm_id', '=', realmId)
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .where('revoked_at', 'is', null)
        .execute();
    });
  }

  private async withClients(
    rows: Array<{ id: string; user_id: string; username: string; auth_time: number; created_at: number; expires_at: number; remember_me: number }>,
    now: number,
  ): Promise<SessionSummary[]> {
    if (rows.length === 0) return [];
    const chains = await this.db
      .selectFrom('refresh_chains as c')
      .leftJoin('refresh_tokens as t', 't.chain_id', 'c.id')
      .select(['c.session_id', 'c.client_id', (eb) => eb.fn.max('t.created_at').as('last')])
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
      const last = Math.max(Number(r.created_at), ...mine.map((c) => Number(c.last ?? 0)));
      return {
        id: r.id,
        userId: r.user_id,
        username: r.username,
        authTime: Number(r.auth_time),
        createdAt: Number(r.created_at),
        lastAccess: last,
        expiresAt: Number(r.expires_at),
        rememberMe: Number(r.remember_me) === 1,
        clients: [...new Set(mine.map((c) => c.client_id))].sort(),
      };
    });
  }
}
