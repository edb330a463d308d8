import type { Kysely, Selectable } from 'kysely';
import type { Database, EventTable } from '../schema.js';

/** Every event type; REFRESH_TOKEN_GRACE is counted only (a refresh the grace window answered, also counted as REFRESH_TOKEN). */
export const EVENT_TYPES = [
  'LOGIN',
  'LOGIN_ERROR',
  'LOCKOUT',
  'CONSENT',
  'CONSENT_DENIED',
  'CODE_ISSUED',
  'CODE_TO_TOKEN',
  'CODE_TO_TOKEN_ERROR',
  'REFRESH_TOKEN',
  'REFRESH_TOKEN_ERROR',
  'REFRESH_TOKEN_GRACE',
  'TOKEN_REUSE',
  'DEVICE_APPROVED',
  'DEVICE_TO_TOKEN',
  'REVOKE',
  'LOGOUT',
  'CLIENT_AUTH_ERROR',
  'UPDATE_PASSWORD',
  'UPDATE_TOTP',
  'REMOVE_TOTP',
  'UPDATE_CREDENTIAL',
  'REMOVE_CREDENTIAL',
  'CLIENT_LOGIN',
  'CLIENT_LOGIN_ERROR',
  'TOKEN_EXCHANGE',
  'TOKEN_EXCHANGE_ERROR',
  'IDENTITY_PROVIDER_LOGIN',
  'IDENTITY_PROVIDER_FIRST_LOGIN',
  'IDENTITY_PROVIDER_LOGIN_ERROR',
  'FEDERATED_IDENTITY_LINK',
  'REMOVE_FEDERATED_IDENTITY',
  'SEND_RESET_PASSWORD',
  'SEND_RESET_PASSWORD_ERROR',
  'RESET_PASSWORD',
  'RESET_PASSWORD_ERROR',
  'EXECUTE_ACTIONS',
  'EXECUTE_ACTIONS_ERROR',
  'REGISTER',
  'REGISTER_ERROR',
  'SEND_VERIFY_EMAIL',
  'SEND_VERIFY_EMAIL_ERROR',
  'VERIFY_EMAIL',
  'VERIFY_EMAIL_ERROR',
  'UPDATE_PROFILE',
  'UPDATE_PROFILE_ERROR',
  'UPDATE_EMAIL',
  'CUSTOM_REQUIRED_ACTION',
  'CUSTOM_REQUIRED_ACTION_ERROR',
  'INVITE_ORG',
  'INVITE_ORG_ERROR',
  'CLIENT_REGISTER',
  'CLIENT_REGISTER_ERROR',
  'CLIENT_INFO',
  'CLIENT_INFO_ERROR',
  'CLIENT_UPDATE',
  'CLIENT_UPDATE_ERROR',
  'CLIENT_DELETE',
  'CLIENT_DELETE_ERROR',
  'DELETE_ACCOUNT',
  'DELETE_ACCOUNT_ERROR',
  'IMPERSONATE',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface AuditEvent {
  realmId: string;
  type: EventType;
  outcome: 'success' | 'failure';
  clientId?: string | null;
  userId?: string | null;
  username?: string | null;
  ip?: string | null;
  reason?: string | null;
}

export interface StoredEvent extends AuditEvent {
  id: string;
  time: number;
}

export function eventRow(e: AuditEvent & { id: string; time: number }): Selectable<EventTable> {
  return {
    id: e.id,
    realm_id: e.realmId,
    time: e.time,
    type: e.type,
    outcome: e.outcome,
    client_id: e.clientId ?? null,
    user_id: e.userId ?? null,
    username: e.username ?? null,
    ip: e.ip ?? null,
    reason: e.reason ?? null,
  };
}

/** What EventRepository.list selects; every field given narrows it. Times are epoch seconds, inclusive. */
export interface EventFilter {
  /** With `username`: events of this user id or of this username. */
  userId?: string;
  username?: string;
  clientId?: string;
  /** Any of these stored type names; an empty list selects nothing. */
  types?: readonly string[];
  ip?: string;
  since?: number;
  until?: number;
  /** By time: newest first (`desc`, the default) or oldest first. */
  order?: 'asc' | 'desc';
  offset?: number;
  limit?: number;
}

/** The audit log. Events of the token hot path are written inside its transaction (TokenStatements). */
export class EventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async record(e: AuditEvent & { id: string; time: number }): Promise<void> {
    await this.db.insertInto('events').values(eventRow(e)).execute();
  }

  /**
   * One bounded slice of an administrator's clearing of the realm's events (Keycloak's DELETE
   * /{realm}/events): at most `limit` events recorded up to `until` (seconds), read through the
   * (realm_id, time) index, then deleted by id. Returns how many went; the caller repeats while a full
   * slice came back.
   */
  async deleteSlice(realmId: string, until: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('events').select('id').where('realm_id', '=', realmId).where('time', '<=', until).limit(limit).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const res = await this.db.deleteFrom('events').where('realm_id', '=', realmId).where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows ?? 0);
  }

  async list(realmId: string, f: EventFilter): Promise<StoredEvent[]> {
    // Newest first by default: by the recorded second, then by id (time-ordered to the millisecond, then
    // by a per-process sequence).
    if (f.types !== undefined && f.types.length === 0) return [];
    let q = this.db.selectFrom('events').selectAll().where('realm_id', '=', realmId);
    if (f.userId !== undefined && f.username !== undefined) q = q.where((eb) => eb.or([eb('user_id', '=', f.userId!), eb('username', '=', f.username!)]));
    else if (f.username !== undefined) q = q.where('username', '=', f.username);
    if (f.clientId !== undefined) q = q.where('client_id', '=', f.clientId);
    if (f.types !== undefined) q = q.where('type', 'in', [...f.types]);
    if (f.ip !== undefined) q = q.where('ip', '=', f.ip);
    if (f.since !== undefined) q = q.where('time', '>=', f.since);
    if (f.until !== undefined) q = q.where('time', '<=', f.until);
    const order = f.order ?? 'desc';
    const rows = await q
      .orderBy('time', order)
      .orderBy('id', order)
      .offset(f.offset ?? 0)
      .limit(f.limit ?? 100)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      time: Number(r.time),
      realmId: r.realm_id,
      type: r.type as EventType,
      outcome: r.outcome === 'success' ? 'success' : 'failure',
      clientId: r.client_id,
      userId: r.user_id,
      username: r.username,
      ip: r.ip,
      reason: r.reason,
    }));
  }
}
