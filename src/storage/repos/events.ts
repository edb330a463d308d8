import type { Kysely, Selectable } from 'kysely';
import type { Database, EventTable } from '../schema.js';

export type EventType =
  | 'LOGIN'
  | 'LOGIN_ERROR'
  | 'LOCKOUT'
  | 'CONSENT'
  | 'CONSENT_DENIED'
  | 'CODE_ISSUED'
  | 'CODE_TO_TOKEN'
  | 'CODE_TO_TOKEN_ERROR'
  | 'REFRESH_TOKEN'
  | 'REFRESH_TOKEN_ERROR'
  | 'TOKEN_REUSE'
  | 'DEVICE_APPROVED'
  | 'DEVICE_TO_TOKEN'
  | 'REVOKE'
  | 'LOGOUT'
  | 'CLIENT_AUTH_ERROR'
  | 'CLIENT_LOGIN'
  | 'CLIENT_LOGIN_ERROR';

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

/** The audit log. Events of the token hot path are written inside its transaction (TokenStatements). */
export class EventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async record(e: AuditEvent & { id: string; time: number }): Promise<void> {
    await this.db.insertInto('events').values(eventRow(e)).execute();
  }

  async list(realmId: string, f: { userId?: string; username?: string; clientId?: string; since?: number; limit?: number }): Promise<StoredEvent[]> {
    let q = this.db.selectFrom('events').selectAll().where('realm_id', '=', realmId);
    if (f.userId !== undefined && f.username !== undefined) q = q.where((eb) => eb.or([eb('user_id', '=', f.userId!), eb('username', '=', f.username!)]));
    else if (f.username !== undefined) q = q.where('username', '=', f.username);
    if (f.clientId !== undefined) q = q.where('client_id', '=', f.clientId);
    if (f.since !== undefined) q = q.where('time', '>=', f.since);
    const rows = await q.orderBy('time', 'desc').orderBy('id').limit(f.limit ?? 100).execute();
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
