import { sql, type Kysely, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { BrowserSessionTable, Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { countPending, type PendingTable } from './pending.js';
import type { AuthorizationParams, BrowserSession, Interaction } from '../types.js';

/** An interaction is unfinished while it has not expired. */
const PENDING: PendingTable = { table: 'interactions', open: '>=' };

/** A pending authorization request while the user logs in, consents and picks an organization. */
export class InteractionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(i: Omit<Interaction, 'consented' | 'organizationId' | 'secondFactor'> & { now: number; ip?: string | null }): Promise<void> {
    await this.db
      .insertInto('interactions')
      .values({
        id: i.id,
        realm_id: i.realmId,
        client_id: i.clientId,
        browser_hash: i.browserHash,
        csrf_token: i.csrfToken,
        params: JSON.stringify(i.params),
        user_id: i.userId,
        session_id: i.sessionId,
        consented: 0,
        organization_id: null,
        created_at: i.now,
        expires_at: i.expiresAt,
        ip: i.ip ?? null,
      })
      .execute();
  }

  /** Unfinished requests from one address, counted up to `upTo` (the cap: no need to count further). */
  countPendingFrom(ip: string, now: number, upTo: number): Promise<number> {
    return countPending(this.db, PENDING, now, { ip, upTo });
  }

  /** Unfinished requests of every address. */
  countPending(now: number): Promise<number> {
    return countPending(this.db, PENDING, now);
  }

  async get(id: string): Promise<Interaction | undefined> {
    const r = await this.db.selectFrom('interactions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    return {
      id: r.id,
      realmId: r.realm_id,
      clientId: r.client_id,
      browserHash: r.browser_hash,
      csrfToken: r.csrf_token,
      params: JSON.parse(r.params) as AuthorizationParams,
      userId: r.user_id,
      sessionId: r.session_id,
      consented: r.consented === 1,
      organizationId: r.organization_id,
      expiresAt: Number(r.expires_at),
      secondFactor: r.second_factor === 1,
    };
  }

  /** sessionId null: the user proved their password but has no session yet (a required action is pending). */
  async update(id: string, patch: { userId?: string; sessionId?: string | null; consented?: boolean; organizationId?: string; csrfToken?: string; secondFactor?: boolean; params?: AuthorizationParams }): Promise<void> {
    const values: Record<string, string | number | null> = {};
    if (patch.params !== undefined) values.params = JSON.stringify(patch.params);
    if (patch.secondFactor !== undefined) values.second_factor = patch.secondFactor ? 1 : 0;
    if (patch.userId !== undefined) values.user_id = patch.userId;
    if (patch.sessionId !== undefined) values.session_id = patch.sessionId;
    if (patch.consented !== undefined) values.consented = patch.consented ? 1 : 0;
    if (patch.organizationId !== undefined) values.organization_id = patch.organizationId;
    if (patch.csrfToken !== undefined) values.csrf_token = patch.csrfToken;
    if (Object.keys(values).length > 0) await this.db.updateTable('interactions').set(values).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('interactions').where('id', '=', id).execute();
  }

  async deleteExpired(now: number, limit = 1_000_000): Promise<number> {
    const ids = await this.db.selectFrom('interactions').select('id').where('expires_at', '<', now).limit(limit).execute();
    if (ids.length === 0) return 0;
    const r = await this.db.deleteFrom('interactions').where('id', 'in', ids.map((x) => x.id)).where('expires_at', '<', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** A browser session's row as the domain has it. */
function toSession(r: Selectable<BrowserSessionTable>): BrowserSession {
  const session: BrowserSession = { id: r.id, realmId: r.realm_id, userId: r.user_id, authTime: Number(r.auth_time), expiresAt: Number(r.expires_at), rememberMe: Number(r.remember_me) === 1, idleTimeout: Number(r.idle_timeout) };
  if (r.impersonator_id !== null) session.impersonator = { userId: r.impersonator_id, username: r.impersonator_username ?? '', realmId: r.impersonator_realm ?? '' };
  if (r.ip_address !== null) session.ipAddress = r.ip_address;
  if (r.user_agent !== null) session.userAgent = r.user_agent;
  return session;
}

/** A session without an idle timeout, or used (or begun) within it. */
export function notIdle(now: number, prefix = ''): RawBuilder<SqlBool> {
  const col = (c: string): RawBuilder<unknown> => sql.ref(`${prefix}${c}`);
  return sql<SqlBool>`(${col('idle_timeout')} = 0 or coalesce(${col('used_at')}, ${col('created_at')}) + ${col('idle_timeout')} > ${now})`;
}

export class SessionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(s: BrowserSession & { secretHash: string; now: number }): Promise<void> {
    await this.db
      .insertInto('browser_sessions')
      .values({
        id: s.id,
        secret_hash: s.secretHash,
        realm_id: s.realmId,
        user_id: s.userId,
        auth_time: s.authTime,
        created_at: s.now,
        expires_at: s.expiresAt,
        ended_at: null,
        remember_me: s.rememberMe ? 1 : 0,
        idle_timeout: s.idleTimeout ?? 0,
        used_at: null,
        impersonator_id: s.impersonator?.userId ?? null,
        impersonator_username: s.impersonator?.username ?? null,
        impersonator_realm: s.impersonator?.realmId ?? null,
        ip_address: s.ipAddress?.slice(0, 64) ?? null,
        user_agent: s.userAgent?.slice(0, 255) ?? null,
      })
      .execute();
  }

  /**
   * The live session whose cookie secret hashes to `secretHash`, if any. A session with an idle timeout
   * (a remembered one) is live while used within it, and this use counts (its used_at moves to now).
   */
  async findActive(realmId: string, secretHash: string, now: number): Promise<BrowserSession | undefined> {
    const r = await this.db
      .selectFrom('browser_sessions')
      .selectAll()
      .where('secret_hash', '=', secretHash)
      .where('realm_id', '=', realmId)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', now)
      .where(notIdle(now))
      .executeTakeFirst();
    if (r && Number(r.idle_timeout) > 0) await this.db.updateTable('browser_sessions').set({ used_at: now }).where('id', '=', r.id).execute();
    return r ? toSession(r) : undefined;
  }

  async get(id: string): Promise<BrowserSession | undefined> {
    const r = await this.db.selectFrom('browser_sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toSession(r) : undefined;
  }

  /** The user's live browser sessions, newest first. */
  async listActive(realmId: string, userId: string, now: number): Promise<Array<BrowserSession & { createdAt: number }>> {
    const rows = await this.db
      .selectFrom('browser_sessions')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('user_id', '=', userId)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', now)
      .where(notIdle(now))
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((r) => ({ ...toSession(r), createdAt: Number(r.created_at) }));
  }

  async end(id: string, now: number): Promise<void> {
    await this.db.updateTable('browser_sessions').set({ ended_at: now }).where('id', '=', id).where('ended_at', 'is', null).execute();
  }

  /** Ends every live browser session of the user (a password change); returns how many. */
  async endAllOfUser(realmId: string, userId: string, now: number): Promise<number> {
    const r = await this.db
      .updateTable('browser_sessions')
      .set({ ended_at: now })
      .where('realm_id', '=', realmId)
      .where('user_id', '=', userId)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}

export class ConsentRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The organizations for which the user already granted this client at least `scopes`. */
  async organizationsCovering(realmId: string, userId: string, clientId: string, scopes: string[]): Promise<string[]> {
    const rows = await this.db
      .selectFrom('consents')
      .select(['organization_id', 'scopes'])
      .where('user_id', '=', userId)
      .where('realm_id', '=', realmId)
      .where('client_id', '=', clientId)
      .execute();
    return rows
      .filter((r) => {
        const granted = new Set(JSON.parse(r.scopes) as string[]);
        return scopes.every((s) => granted.has(s));
      })
      .map((r) => r.organization_id);
  }

  /** Everything the user has granted, per client and organization. */
  async listForUser(realmId: string, userId: string): Promise<Array<{ clientId: string; organizationId: string; scopes: string[]; createdAt: number }>> {
    const rows = await this.db.selectFrom('consents').selectAll().where('realm_id', '=', realmId).where('user_id', '=', userId).orderBy('created_at').execute();
    return rows.map((r) => ({ clientId: r.client_id, organizationId: r.organization_id, scopes: JSON.parse(r.scopes) as string[], createdAt: Number(r.created_at) }));
  }

  async withdraw(realmId: string, userId: string, clientId: string, organizationId: string): Promise<void> {
    await this.db
      .deleteFrom('consents')
      .where('realm_id', '=', realmId)
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .where('organization_id', '=', organizationId)
      .execute();
  }

  /** Records the grant, merging with scopes granted earlier to the same client for the same organization. */
  async grant(c: { realmId: string; userId: string; clientId: string; organizationId: string; scopes: string[]; now: number }): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const existing = await trx
        .selectFrom('consents')
        .select('scopes')
        .where('user_id', '=', c.userId)
        .where('realm_id', '=', c.realmId)
        .where('client_id', '=', c.clientId)
        .where('organization_id', '=', c.organizationId)
        .executeTakeFirst();
      const merged = [...new Set([...(existing ? (JSON.parse(existing.scopes) as string[]) : []), ...c.scopes])].sort();
      await trx
        .insertInto('consents')
        .values({
          realm_id: c.realmId,
          user_id: c.userId,
          client_id: c.clientId,
          organization_id: c.organizationId,
          scopes: JSON.stringify(merged),
          created_at: c.now,
          updated_at: c.now,
        })
        .onConflict((oc) =>
          oc.columns(['user_id', 'realm_id', 'client_id', 'organization_id']).doUpdateSet({ scopes: JSON.stringify(merged), updated_at: c.now }),
        )
        .execute();
    });
  }
}
