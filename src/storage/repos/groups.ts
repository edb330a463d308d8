import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, GroupTable } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { ConflictError } from '../types.js';
import { matches } from './organization-admin.js';
import { toRole, type Role } from './roles.js';

/** A group of a realm (Keycloak's): parentId '' at the top; names are unique among siblings. */
export interface Group {
  id: string;
  realmId: string;
  parentId: string;
  name: string;
  description: string | null;
  attributes: Record<string, string[]>;
}

/** How deep a tree of groups may grow: every walk up or down it stops there. */
export const MAX_GROUP_DEPTH = 32;

export function parseAttributes(json: string): Record<string, string[]> {
  try {
    const v: unknown = JSON.parse(json);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    const out: Record<string, string[]> = {};
    for (const [k, x] of Object.entries(v)) if (Array.isArray(x)) out[k] = x.filter((s): s is string => typeof s === 'string');
    return out;
  } catch {
    return {};
  }
}

function toGroup(r: Selectable<GroupTable>): Group {
  return { id: r.id, realmId: r.realm_id, parentId: r.parent_id, name: r.name, description: r.description, attributes: parseAttributes(r.attributes) };
}

function siblingTaken(name: string, parentId: string): ConflictError {
  return new ConflictError(parentId === '' ? `Top level group named '${name}' already exists.` : `Sibling group named '${name}' already exists.`);
}

export class GroupRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts a group; a sibling of the same name is a ConflictError (Keycloak's words). */
  async create(g: Group, now: number): Promise<void> {
    try {
      await this.db
        .insertInto('groups')
        .values({ id: g.id, realm_id: g.realmId, parent_id: g.parentId, name: g.name, description: g.description, attributes: JSON.stringify(g.attributes), created_at: now })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw siblingTaken(g.name, g.parentId);
      throw err;
    }
  }

  async get(id: string): Promise<Group | undefined> {
    const r = await this.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toGroup(r) : undefined;
  }

  async findChild(realmId: string, parentId: string, name: string): Promise<Group | undefined> {
    const r = await this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).where('parent_id', '=', parentId).where('name', '=', name).executeTakeFirst();
    return r ? toGroup(r) : undefined;
  }

  /** Renames a group or changes its description or attributes; a sibling's name is a ConflictError. */
  async update(g: Group, patch: { name?: string; description?: string | null; attributes?: Record<string, string[]> }): Promise<void> {
    const values: { name?: string; description?: string | null; attributes?: string } = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.description !== undefined) values.description = patch.description;
    if (patch.attributes !== undefined) values.attributes = JSON.stringify(patch.attributes);
    if (Object.keys(values).length === 0) return;
    try {
      await this.db.updateTable('groups').set(values).where('id', '=', g.id).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw siblingTaken(patch.name ?? g.name, g.parentId);
      throw err;
    }
  }

  /** Moves a group under another parent ('' for the top); a sibling there of its name is a ConflictError. */
  async move(g: Group, parentId: string): Promise<void> {
    try {
      await this.db.updateTable('groups').set({ parent_id: parentId }).where('id', '=', g.id).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw siblingTaken(g.name, parentId);
      throw err;
    }
  }

  /**
   * The children of a parent ('' for the top-level groups), by name, a page of them; `search` keeps
   * those whose name contains it (case-insensitive), `exact` those whose name is it.
   */
  async children(realmId: string, parentId: string, opts: { search?: string; exact?: boolean; first: number; max: number }): Promise<Group[]> {
    let q = this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).where('parent_id', '=', parentId);
    if (opts.search !== undefined) q = q.where(matches(sql.ref('name'), opts.search.toLowerCase(), opts.exact));
    const rows = await q.orderBy('name').orderBy('id').limit(opts.max).offset(opts.first).execute();
    return rows.map(toGroup);
  }

  /** Every group of the realm whose name contains `search` (or is it, with `exact`), at any depth. */
  async searchByName(realmId: string, search: string, exact: boolean): Promise<Group[]> {
    const rows = await this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).where(matches(sql.ref('name'), search.toLowerCase(), exact)).orderBy('name').execute();
    return rows.map(toGroup);
  }

  /** Every group of the realm, by name (an export builds the tree from them). */
  async all(realmId: string): Promise<Group[]> {
    const rows = await this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).orderBy('name').orderBy('id').execute();
    return rows.map(toGroup);
  }

  /** Every group of the realm that has attributes (for an attribute query: attributes are JSON, matched in the application). */
  async withAttributes(realmId: string): Promise<Group[]> {
    const rows = await this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).where('attributes', '!=', '{}').orderBy('name').execute();
    return rows.map(toGroup);
  }

  /** How many groups the realm has (all, or the top-level ones), or how many are named with `search` in it. */
  async count(realmId: string, opts: { top?: boolean; search?: string } = {}): Promise<number> {
    let q = this.db.selectFrom('groups').select((eb) => eb.fn.countAll<number | string>().as('n')).where('realm_id', '=', realmId);
    if (opts.top) q = q.where('parent_id', '=', '');
    if (opts.search !== undefined) q = q.where(matches(sql.ref('name'), opts.search.toLowerCase()));
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  /** How many children each of these groups has; a group without any is absent. */
  async childCounts(ids: string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('groups')
      .select(['parent_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('parent_id', 'in', ids)
      .groupBy('parent_id')
      .execute();
    return new Map(rows.map((r) => [r.parent_id, Number(r.n)]));
  }

  /**
   * Each group's line of ancestors, from its top-level group down to itself (its path is their names),
   * in one recursive query whatever the depth.
   */
  async lineages(ids: string[]): Promise<Map<string, Group[]>> {
    const out = new Map<string, Group[]>();
    if (ids.length === 0) return out;
    const rows = await sql<Selectable<GroupTable> & { start_id: string; depth: number }>`
      WITH RECURSIVE up(start_id, id, parent_id, depth) AS (
        SELECT id, id, parent_id, 0 FROM groups WHERE id IN (${sql.join(ids)})
        UNION ALL
        SELECT up.start_id, g.id, g.parent_id, up.depth + 1 FROM groups g JOIN up ON g.id = up.parent_id WHERE up.depth < ${MAX_GROUP_DEPTH}
      )
      SELECT up.start_id, up.depth, g.* FROM up JOIN groups g ON g.id = up.id`.execute(this.db);
    const byStart = new Map<string, Array<{ depth: number; group: Group }>>();
    for (const r of rows.rows) {
      const list = byStart.get(r.start_id) ?? [];
      list.push({ depth: Number(r.depth), group: toGroup(r) });
      byStart.set(r.start_id, list);
    }
    for (const [id, list] of byStart) out.set(id, list.sort((a, b) => b.depth - a.depth).map((x) => x.group));
    return out;
  }

  /** The group and every group below it, at any depth. */
  async subtree(id: string): Promise<Group[]> {
    const rows = await sql<Selectable<GroupTable>>`
      WITH RECURSIVE down(id, depth) AS (
        SELECT id, 0 FROM groups WHERE id = ${id}
        UNION ALL
        SELECT g.id, down.depth + 1 FROM groups g JOIN down ON g.parent_id = down.id WHERE down.depth < ${MAX_GROUP_DEPTH}
      )
      SELECT g.* FROM down JOIN groups g ON g.id = down.id`.execute(this.db);
    return rows.rows.map(toGroup);
  }

  /** Deletes these groups (a group and its subtree) with their members and role mappings, in one transaction. */
  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('group_members').where('group_id', 'in', ids).execute();
      await trx.deleteFrom('group_roles').where('group_id', 'in', ids).execute();
      await trx.deleteFrom('groups').where('id', 'in', ids).execute();
    });
  }

  /** A page of a group's direct members by username, and how many it has. */
  async members(groupId: string, first: number, max: number): Promise<{ users: Array<{ id: string; username: string }>; total: number }> {
    const users = await this.db
      .selectFrom('group_members')
      .innerJoin('users', 'users.id', 'group_members.user_id')
      .select(['users.id', 'users.username'])
      .where('group_members.group_id', '=', groupId)
      .orderBy('users.username')
      .limit(max)
      .offset(first)
      .execute();
    const total = await this.db.selectFrom('group_members').select((eb) => eb.fn.countAll<number | string>().as('n')).where('group_id', '=', groupId).executeTakeFirstOrThrow();
    return { users, total: Number(total.n) };
  }

  /** How many direct members each of these groups has. */
  async memberCounts(ids: string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('group_members')
      .select(['group_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('group_id', 'in', ids)
      .groupBy('group_id')
      .execute();
    return new Map(rows.map((r) => [r.group_id, Number(r.n)]));
  }

  async addMember(groupId: string, userId: string): Promise<void> {
    await this.db.insertInto('group_members').values({ group_id: groupId, user_id: userId }).onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing()).execute();
  }

  async removeMember(groupId: string, userId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** The groups a user belongs to directly, by name. */
  async userGroups(userId: string): Promise<Group[]> {
    const rows = await this.db
      .selectFrom('group_members')
      .innerJoin('groups', 'groups.id', 'group_members.group_id')
      .selectAll('groups')
      .where('group_members.user_id', '=', userId)
      .orderBy('groups.name')
      .execute();
    return rows.map(toGroup);
  }

  /** The realm's default groups (every user created joins them), by name. */
  async defaults(realmId: string): Promise<Group[]> {
    const rows = await this.db.selectFrom('groups').selectAll().where('realm_id', '=', realmId).where('realm_default', '=', 1).orderBy('name').execute();
    return rows.map(toGroup);
  }

  async setDefault(id: string, isDefault: boolean): Promise<void> {
    await this.db.updateTable('groups').set({ realm_default: isDefault ? 1 : 0 }).where('id', '=', id).execute();
  }

  /** The paths of the groups a user belongs to directly ("/parent/child"), sorted. */
  async userGroupPaths(userId: string): Promise<string[]> {
    return (await this.userGroupLines(userId)).map((line) => `/${line.map((g) => g.name).join('/')}`).sort();
  }

  /** Each group of the user (by name) with its line of ancestors, from its top-level group down to it. */
  async userGroupLines(userId: string): Promise<Group[][]> {
    const groups = await this.userGroups(userId);
    if (groups.length === 0) return [];
    const lineages = await this.lineages(groups.map((g) => g.id));
    return groups.map((g) => lineages.get(g.id) ?? [g]);
  }

  async grantRoles(groupId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db
      .insertInto('group_roles')
      .values(roleIds.map((role_id) => ({ group_id: groupId, role_id })))
      .onConflict((oc) => oc.columns(['group_id', 'role_id']).doNothing())
      .execute();
  }

  async revokeRoles(groupId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await this.db.deleteFrom('group_roles').where('group_id', '=', groupId).where('role_id', 'in', roleIds).execute();
  }

  /** The roles mapped to a group itself (realm roles first, then by client and name). */
  async mappedRoles(groupId: string): Promise<Role[]> {
    const rows = await this.db
      .selectFrom('group_roles')
      .innerJoin('roles', 'roles.id', 'group_roles.role_id')
      .select(['roles.id', 'roles.realm_id', 'roles.client_id', 'roles.name', 'roles.description'])
      .where('group_roles.group_id', '=', groupId)
      .orderBy('roles.client_id')
      .orderBy('roles.name')
      .execute();
    return rows.map(toRole);
  }

  /** The roles mapped to any of these groups (their ancestors' are not included: pass them too). */
  async rolesOf(groupIds: string[]): Promise<Role[]> {
    if (groupIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('group_roles')
      .innerJoin('roles', 'roles.id', 'group_roles.role_id')
      .select(['roles.id', 'roles.realm_id', 'roles.client_id', 'roles.name', 'roles.description'])
      .distinct()
      .where('group_roles.group_id', 'in', groupIds)
      .orderBy('roles.client_id')
      .orderBy('roles.name')
      .execute();
    return rows.map(toRole);
  }

  /** The groups a role is mapped to, by name. */
  async groupsWithRole(roleId: string): Promise<Group[]> {
    const rows = await this.db
      .selectFrom('group_roles')
      .innerJoin('groups', 'groups.id', 'group_roles.group_id')
      .selectAll('groups')
      .where('group_roles.role_id', '=', roleId)
      .orderBy('groups.name')
      .execute();
    return rows.map(toGroup);
  }
}
