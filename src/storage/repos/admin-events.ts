import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
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

/** What AdminEventRepository.list selects; every field given narrows it. Times are epoch ms, inclusive. */
export interface AdminEventFilter {
  /** One operation type or any of several; an empty list selects nothing. */
  operation?: string | readonly string[];
  resourceType?: string | readonly string[];
  /** The resource path, `*` standing for any run of characters (Keycloak's resourcePath). */
  resourcePath?: string;
  authRealmId?: string;
  authClientId?: string;
  authUserId?: string;
  ip?: string;
  sinceMs?: number;
  untilMs?: number;
  order?: 'asc' | 'desc';
  first?: number;
  max?: number;
}

function listOf(v: string | readonly string[] | undefined): string[] | undefined {
  return v === undefined ? undefined : typeof v === 'string' ? [v] : [...v];
}

/**
 * A resource path with `*` as LIKE: `*` becomes `%`, and LIKE's own wildcards (% and _) are escaped so
 * they match only themselves; ESCAPE is spelled out because SQLite has no default escape character.
 * (SQLite's LIKE ignores ASCII case, PostgreSQL's does not.)
 */
function pathLike(path: string): RawBuilder<SqlBool> {
  const pattern = path.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return sql<SqlBool>`${sql.ref('resource_path')} like ${pattern} escape '\\'`;
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

  /**
   * One bounded slice of an administrator's clearing of the realm's admin events (Keycloak's DELETE
   * /{realm}/admin-events): at most `limit` events recorded up to `untilMs`, through the (realm_id,
   * time_ms) index, deleted by id. Returns how many went; the caller repeats while a full slice came back.
   */
  async deleteSlice(realmId: string, untilMs: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('admin_events').select('id').where('realm_id', '=', realmId).where('time_ms', '<=', untilMs).limit(limit).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const res = await this.db.deleteFrom('admin_events').where('realm_id', '=', realmId).where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows ?? 0);
  }

  /** Newest first unless `order` says otherwise. */
  async list(realmId: string, f: AdminEventFilter = {}): Promise<AdminEvent[]> {
    const operations = listOf(f.operation);
    const resourceTypes = listOf(f.resourceType);
    if (operations?.length === 0 || resourceTypes?.length === 0) return [];
    let q = this.db.selectFrom('admin_events').selectAll().where('realm_id', '=', realmId);
    if (operations !== undefined) q = q.where('operation_type', 'in', operations);
    if (resourceTypes !== undefined) q = q.where('resource_type', 'in', resourceTypes);
    if (f.resourcePath !== undefined) q = f.resourcePath.includes('*') ? q.where(pathLike(f.resourcePath)) : q.where('resource_path', '=', f.resourcePath);
    if (f.authRealmId !== undefined) q = q.where('auth_realm_id', '=', f.authRealmId);
    if (f.authClientId !== undefined) q = q.where('auth_client_id', '=', f.authClientId);
    if (f.authUserId !== undefined) q = q.where('auth_user_id', '=', f.authUserId);
    if (f.ip !== undefined) q = q.where('ip', '=', f.ip);
    if (f.sinceMs !== undefined) q = q.where('time_ms', '>=', f.sinceMs);
    if (f.untilMs !== undefined) q = q.where('time_ms', '<=', f.untilMs);
    const order = f.order ?? 'desc';
    const rows = await q
      .orderBy('time_ms', order)
      .orderBy('id', order)
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
