import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Keycloak's admin event operation types. */
export type AdminOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'ACTION';

/** An administrative change: what (operation, resource type and path), who, when (ms), from where. */
export interface AdminEvent {
  id: string;
  realmId: string;
  timeMs: number;
  operation: AdminOperation;
  resourceType: string;
  resourcePath: string;
  authRealmId: string | null;
  authClientId: string | null;
  authUserId: string | null;
  authUsername: string | null;
  ip: string | null;
  /** Which door the change came through: api, cli, console, import, bootstrap. */
  via: string;
  /** The new state as JSON, secrets left out. */
  representation: string | null;
}

export class AdminEventRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async record(e: AdminEvent): Promise<void> {
    await this.db
      .insertInto('admin_events')
      .values({
        id: e.id,
        realm_id: e.realmId,
        time_ms: e.timeMs,
        operation_type: e.operation,
        resource_type: e.resourceType,
        resource_path: e.resourcePath,
        auth_realm_id: e.authRealmId,
        auth_client_id: e.authClientId,
        auth_user_id: e.authUserId,
        auth_username: e.authUsername,
        ip: e.ip,
        via: e.via,
        representation: e.representation,
      })
      .execute();
  }

  /** Newest first. */
  async list(realmId: string, f: { operation?: string; resourceType?: string; sinceMs?: number; first?: number; max?: number } = {}): Promise<AdminEvent[]> {
    let q = this.db.selectFrom('admin_events').selectAll().where('realm_id', '=', realmId);
    if (f.operation !== undefined) q = q.where('operation_type', '=', f.operation);
    if (f.resourceType !== undefined) q = q.where('resource_type', '=', f.resourceType);
    if (f.sinceMs !== undefined) q = q.where('time_ms', '>=', f.sinceMs);
    const rows = await q
      .orderBy('time_ms', 'desc')
      .orderBy('id', 'desc')
      .offset(f.first ?? 0)
      .limit(f.max ?? 100)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      realmId: r.realm_id,
      timeMs: Number(r.time_ms),
      operation: r.operation_type as AdminOperation,
      resourceType: r.resource_type,
      resourcePath: r.resource_path,
      authRealmId: r.auth_realm_id,
      authClientId: r.auth_client_id,
      authUserId: r.auth_user_id,
      authUsername: r.auth_username,
      ip: r.ip,
      via: r.via,
      representation: r.representation,
    }));
  }
}
