import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toRole, type Role } from './roles.js';

/** Whose scope a role scope mapping widens: a client (by client id) or a client scope (by name). */
export interface ScopeOwner {
  kind: 'client' | 'scope';
  /** The client's client id, or the client scope's name. */
  id: string;
}

/** A realm's role scope mappings, as tokens read them: per owner ('client:<id>' or 'scope:<name>'), its roles. */
export type RealmRoleScopes = ReadonlyMap<string, ReadonlyArray<Pick<Role, 'clientId' | 'name'>>>;

export function ownerKey(owner: ScopeOwner): string {
  return `${owner.kind}:${owner.id}`;
}

/** Keycloak's role scope mappings of clients and client scopes (ScopeContainerModel). */
export class RoleScopeRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The roles mapped to the owner's scope, realm roles first, then by client and name. */
  async list(realmId: string, owner: ScopeOwner): Promise<Role[]> {
    const rows = await this.db
      .selectFrom('role_scope_mappings as m')
      .innerJoin('roles', 'roles.id', 'm.role_id')
      .select(['roles.id', 'roles.realm_id', 'roles.client_id', 'roles.name', 'roles.description'])
      .where('m.realm_id', '=', realmId)
      .where('m.owner_kind', '=', owner.kind)
      .where('m.owner', '=', owner.id)
      .orderBy('roles.client_id')
      .orderBy('roles.name')
      .execute();
    return rows.map(toRole);
  }

  /** Adds roles to the owner's scope (those already in it stay, once). */
  async add(realmId: string, owner: ScopeOwner, roleIds: readonly string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db
      .insertInto('role_scope_mappings')
      .values(roleIds.map((role_id) => ({ realm_id: realmId, owner_kind: owner.kind, owner: owner.id, role_id })))
      .onConflict((oc) => oc.columns(['realm_id', 'owner_kind', 'owner', 'role_id']).doNothing())
      .execute();
  }

  /** Removes roles from the owner's scope; every role when roleIds is undefined. */
  async remove(realmId: string, owner: ScopeOwner, roleIds?: readonly string[]): Promise<void> {
    if (roleIds && roleIds.length === 0) return;
    let q = this.db.deleteFrom('role_scope_mappings').where('realm_id', '=', realmId).where('owner_kind', '=', owner.kind).where('owner', '=', owner.id);
    if (roleIds) q = q.where('role_id', 'in', roleIds);
    await q.execute();
  }

  /**
   * Every role in the scope of each owner of the realm, by owner, as tokens read them (cached,
   * services.ts): the roles mapped to it and what they contain, recursively (Keycloak's getAccess expands
   * the scope's composites); for a client, also what its own composite roles contain (its own roles are
   * always in its scope). One query.
   */
  async realm(realmId: string): Promise<RealmRoleScopes> {
    const rows = await sql<{ owner_kind: 'client' | 'scope'; owner: string; client_id: string; name: string }>`
      WITH RECURSIVE seeds(owner_kind, owner, role_id) AS (
        SELECT m.owner_kind, m.owner, m.role_id FROM role_scope_mappings m WHERE m.realm_id = ${realmId}
        UNION
        SELECT 'client', r.client_id, r.id FROM roles r WHERE r.realm_id = ${realmId} AND r.client_id <> '' AND EXISTS (SELECT 1 FROM role_composites c WHERE c.parent_id = r.id)
      ),
      scoped(owner_kind, owner, role_id) AS (
        SELECT owner_kind, owner, role_id FROM seeds
        UNION
        SELECT s.owner_kind, s.owner, rc.child_id FROM scoped s CROSS JOIN role_composites rc WHERE rc.parent_id = s.role_id
      )
      SELECT s.owner_kind, s.owner, r.client_id, r.name FROM scoped s CROSS JOIN roles r WHERE r.id = s.role_id`.execute(this.db);
    const out = new Map<string, Array<Pick<Role, 'clientId' | 'name'>>>();
    for (const r of rows.rows) {
      const key = ownerKey({ kind: r.owner_kind, id: r.owner });
      let list = out.get(key);
      if (!list) out.set(key, (list = []));
      list.push({ clientId: r.client_id, name: r.name });
    }
    return out;
  }
}
