import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { ConflictError } from '../types.js';
import { MAX_GROUP_DEPTH } from './groups.js';

/** A realm role (clientId '') or a client role (e.g. realm-management's manage-clients). */
export interface Role {
  id: string;
  realmId: string;
  clientId: string;
  name: string;
  description: string | null;
}

/** The roles of a user as access tokens carry them (Keycloak's realm_access and resource_access). */
export interface UserRoles {
  realm: string[];
  clients: Record<string, string[]>;
}

export function toRole(r: { id: string; realm_id: string; client_id: string; name: string; description: string | null }): Role {
  return { id: r.id, realmId: r.realm_id, clientId: r.client_id, name: r.name, description: r.description };
}

export class RoleRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the roles that do not exist yet (idempotent: two processes may ensure at once). */
  async ensure(roles: Array<Omit<Role, 'id'> & { id: string }>, now: number): Promise<void> {
    if (roles.length === 0) return;
    await this.db
      .insertInto('roles')
      .values(roles.map((r) => ({ id: r.id, realm_id: r.realmId, client_id: r.clientId, name: r.name, description: r.description, created_at: now })))
      .onConflict((oc) => oc.columns(['realm_id', 'client_id', 'name']).doNothing())
      .execute();
  }

  /** Inserts one role; a role of that name in the same container is a ConflictError. */
  async create(role: Role, now: number): Promise<void> {
    try {
      await this.db.insertInto('roles').values({ id: role.id, realm_id: role.realmId, client_id: role.clientId, name: role.name, description: role.description, created_at: now }).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`Role with name ${role.name} already exists`);
      throw err;
    }
  }

  /** Renames a role or changes its description; a name taken in the same container is a ConflictError. */
  async update(id: string, patch: { name?: string; description?: string | null }): Promise<void> {
    const values: { name?: string; description?: string | null } = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.description !== undefined) values.description = patch.description;
    if (Object.keys(values).length === 0) return;
    try {
      await this.db.updateTable('roles').set(values).where('id', '=', id).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`Role with name ${patch.name} already exists`);
      throw err;
    }
  }

  async list(realmId: string, clientId: string): Promise<Role[]> {
    const rows = await this.db.selectFrom('roles').selectAll().where('realm_id', '=', realmId).where('client_id', '=', clientId).orderBy('name').execute();
    return rows.map(toRole);
  }

  /** Every role of the realm: its realm roles first, then each client's, by client and name. */
  async listAll(realmId: string): Promise<Role[]> {
    const rows = await this.db.selectFrom('roles').selectAll().where('realm_id', '=', realmId).orderBy('client_id').orderBy('name').execute();
    return rows.map(toRole);
  }

  /** How many users hold each role of the realm (clientId '') or of a client, by role id; a role nobody holds is absent. */
  async userCounts(realmId: string, clientId: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('user_roles')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .select(['roles.id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('roles.realm_id', '=', realmId)
      .where('roles.client_id', '=', clientId)
      .groupBy('roles.id')
      .execute();
    return new Map(rows.map((r) => [r.id, Number(r.n)]));
  }

  async find(realmId: string, clientId: string, name: string): Promise<Role | undefined> {
    const r = await this.db.selectFrom('roles').selectAll().where('realm_id', '=', realmId).where('client_id', '=', clientId).where('name', '=', name).executeTakeFirst();
    return r ? toRole(r) : undefined;
  }

  async get(id: string): Promise<Role | undefined> {
    const r = await this.db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRole(r) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('user_roles').where('role_id', '=', id).execute();
      await trx.deleteFrom('group_roles').where('role_id', '=', id).execute();
      await trx.deleteFrom('role_scope_mappings').where('role_id', '=', id).execute();
      await trx.deleteFrom('role_composites').where((eb) => eb.or([eb('parent_id', '=', id), eb('child_id', '=', id)])).execute();
      // The realm's default role no more: new users get none.
      await trx.updateTable('realms').set({ default_role_id: null }).where('default_role_id', '=', id).execute();
      const r = await trx.deleteFrom('roles').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    });
  }

  /** Removes a client's roles and their mappings (the client is being deleted). */
  async deleteForClient(realmId: string, clientId: string): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const ids = trx.selectFrom('roles').select('id').where('realm_id', '=', realmId).where('client_id', '=', clientId);
      await trx.deleteFrom('user_roles').where('role_id', 'in', ids).execute();
      await trx.deleteFrom('group_roles').where('role_id', 'in', ids).execute();
      await trx.deleteFrom('role_scope_mappings').where('role_id', 'in', ids).execute();
      await trx.deleteFrom('role_composites').where((eb) => eb.or([eb('parent_id', 'in', ids), eb('child_id', 'in', ids)])).execute();
      await trx.updateTable('realms').set({ default_role_id: null }).where('default_role_id', 'in', ids).execute();
      await trx.deleteFrom('roles').where('realm_id', '=', realmId).where('client_id', '=', clientId).execute();
    });
  }

  async grant(userId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db
      .insertInto('user_roles')
      .values(roleIds.map((role_id) => ({ user_id: userId, role_id })))
      .onConflict((oc) => oc.columns(['user_id', 'role_id']).doNothing())
      .execute();
  }

  async revoke(userId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db.deleteFrom('user_roles').where('user_id', '=', userId).where('role_id', 'in', roleIds).execute();
  }

  async mappedRoles(userId: string): Promise<Role[]> {
    const rows = await this.db
      .selectFrom('user_roles')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .select(['roles.id', 'roles.realm_id', 'roles.client_id', 'roles.name', 'roles.description'])
      .where('user_roles.user_id', '=', userId)
      .orderBy('roles.client_id')
      .orderBy('roles.name')
      .execute();
    return rows.map(toRole);
  }

  /**
   * The roles a user holds: those mapped to the user, and those mapped to each group the user belongs to
   * and to every ancestor of those groups (Keycloak's effective role mappings), and every role those
   * contain, recursively (composite roles), in one query. The group branch walks from the user's groups
   * outwards (CROSS JOIN keeps SQLite's join order: left to choose, it scanned group_roles whole). UNION
   * in the composite walk ends a cycle where it began.
   */
  async effectiveRoles(userId: string): Promise<Role[]> {
    const rows = await sql<{ id: string; realm_id: string; client_id: string; name: string; description: string | null }>`
      WITH RECURSIVE member_of(id, parent_id, depth) AS (
        SELECT g.id, g.parent_id, 0 FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = ${userId}
        UNION ALL
        SELECT g.id, g.parent_id, member_of.depth + 1 FROM groups g JOIN member_of ON g.id = member_of.parent_id WHERE member_of.depth < ${MAX_GROUP_DEPTH}
      ),
      held(id) AS (
        SELECT ur.role_id FROM user_roles ur WHERE ur.user_id = ${userId}
        UNION
        SELECT gr.role_id FROM member_of CROSS JOIN group_roles gr WHERE gr.group_id = member_of.id
        UNION
        SELECT rc.child_id FROM held CROSS JOIN role_composites rc WHERE rc.parent_id = held.id
      )
      SELECT r.id, r.realm_id, r.client_id, r.name, r.description FROM held CROSS JOIN roles r WHERE r.id = held.id
      ORDER BY r.client_id, r.name`.execute(this.db);
    return rows.rows.map(toRole);
  }

  /**
   * The roles a user holds, as access tokens carry them. `direct` true reads the user's own mappings
   * only (a realm where no group is mapped a role and no role contains another: the cheaper query of a
   * token's hot path).
   */
  async userRoles(userId: string, opts: { direct?: boolean } = {}): Promise<UserRoles> {
    const out: UserRoles = { realm: [], clients: {} };
    const roles = opts.direct === true ? await this.mappedRoles(userId) : await this.effectiveRoles(userId);
    for (const r of roles) {
      if (r.clientId === '') out.realm.push(r.name);
      else (out.clients[r.clientId] ??= []).push(r.name);
    }
    return out;
  }

  /**
   * Whether any user, and any group, of the realm is mapped a role, and whether any of its roles contains
   * another: most realms have none of these, and their tokens skip the lookup; most of the others map no
   * role to a group and have no composite role, and read the user's own mappings only.
   */
  async realmMappings(realmId: string): Promise<{ users: boolean; groups: boolean; composites: boolean }> {
    const any = async (table: 'user_roles' | 'group_roles'): Promise<boolean> =>
      (await this.db.selectFrom(table).innerJoin('roles', 'roles.id', `${table}.role_id`).select('roles.id').where('roles.realm_id', '=', realmId).limit(1).executeTakeFirst()) !== undefined;
    const anyComposite = async (): Promise<boolean> => (await this.db.selectFrom('role_composites').select('parent_id').where('realm_id', '=', realmId).limit(1).executeTakeFirst()) !== undefined;
    const [users, groups, composites] = await Promise.all([any('user_roles'), any('group_roles'), anyComposite()]);
    return { users, groups, composites };
  }

  /** The roles a role contains directly (Keycloak's composites of a composite role), by client and name. */
  async composites(roleId: string): Promise<Role[]> {
    const rows = await this.db
      .selectFrom('role_composites as rc')
      .innerJoin('roles', 'roles.id', 'rc.child_id')
      .select(['roles.id', 'roles.realm_id', 'roles.client_id', 'roles.name', 'roles.description'])
      .where('rc.parent_id', '=', roleId)
      .orderBy('roles.client_id')
      .orderBy('roles.name')
      .execute();
    return rows.map(toRole);
  }

  /** Every role a role contains, recursively (not the role itself, even where a cycle leads back to it). */
  async effectiveComposites(roleId: string): Promise<Role[]> {
    const rows = await sql<{ id: string; realm_id: string; client_id: string; name: string; description: string | null }>`
      WITH RECURSIVE contained(id) AS (
        SELECT rc.child_id FROM role_composites rc WHERE rc.parent_id = ${roleId}
        UNION
        SELECT rc.child_id FROM contained CROSS JOIN role_composites rc WHERE rc.parent_id = contained.id
      )
      SELECT r.id, r.realm_id, r.client_id, r.name, r.description FROM contained CROSS JOIN roles r WHERE r.id = contained.id AND r.id <> ${roleId}
      ORDER BY r.client_id, r.name`.execute(this.db);
    return rows.rows.map(toRole);
  }

  /** The ids of the realm's roles that contain at least one other (RoleRepresentation's composite flag). */
  async compositeIds(realmId: string): Promise<Set<string>> {
    const rows = await this.db.selectFrom('role_composites').select('parent_id').distinct().where('realm_id', '=', realmId).execute();
    return new Set(rows.map((r) => r.parent_id));
  }

  /** Makes a role contain others (those it contains already stay, once). */
  async addComposites(realmId: string, parentId: string, childIds: readonly string[]): Promise<void> {
    if (childIds.length === 0) return;
    await this.db
      .insertInto('role_composites')
      .values(childIds.map((child_id) => ({ realm_id: realmId, parent_id: parentId, child_id })))
      .onConflict((oc) => oc.columns(['parent_id', 'child_id']).doNothing())
      .execute();
  }

  async removeComposites(parentId: string, childIds: readonly string[]): Promise<void> {
    if (childIds.length === 0) return;
    await this.db.deleteFrom('role_composites').where('parent_id', '=', parentId).where('child_id', 'in', childIds).execute();
  }

  /**
   * A page of the users holding a role, by username: their ids and usernames, and how many hold it in all.
   * One query each, whatever the count (an imported default role is held by every user of the realm).
   */
  async holders(roleId: string, first: number, max: number): Promise<{ users: Array<{ id: string; username: string }>; total: number }> {
    const users = await this.db
      .selectFrom('user_roles')
      .innerJoin('users', 'users.id', 'user_roles.user_id')
      .select(['users.id', 'users.username'])
      .where('user_roles.role_id', '=', roleId)
      .orderBy('users.username')
      .limit(max)
      .offset(first)
      .execute();
    const total = await this.db.selectFrom('user_roles').select((eb) => eb.fn.countAll<number | string>().as('n')).where('role_id', '=', roleId).executeTakeFirstOrThrow();
    return { users, total: Number(total.n) };
  }

  async usersWithRole(roleId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('user_roles').select('user_id').where('role_id', '=', roleId).execute();
    return rows.map((r) => r.user_id);
  }
}
