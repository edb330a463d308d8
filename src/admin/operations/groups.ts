import type { Store } from '../../storage/store.js';
import { refuseMappedMembershipChange } from './user-storage.js';
import type { Role } from '../../storage/repos/roles.js';
import type { User } from '../../storage/types.js';
import { MAX_GROUP_DEPTH, type Group } from '../../storage/repos/groups.js';
import { randomId } from '../../crypto/random.js';
import { NotFound, ValidationError, checkAttributeEntries, checkText } from '../validation.js';
import { now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { resolveRoles, withContained } from './roles.js';

/**
 * Keycloak's groups: a tree per realm; users join groups, groups are mapped roles, and a member holds
 * the roles of its groups and of every group above them (src/storage/repos/roles.ts effectiveRoles).
 * Whatever changes who holds which role through a group (joining, leaving, mapping, moving, deleting)
 * names those roles to the door's `authorize` before writing, as a user's own role mappings do: an
 * admin may not hand out or take away through a group an admin role it could not map directly.
 */

/** A door's check that the caller may grant or take away these roles (authorization.ts mayMapRole). */
export interface MappingGuard {
  authorize?: (roles: Role[]) => void;
}

/** A group's name: 1 to 255 characters, no control characters, no '/' (it separates a path's names), not blank. */
export function checkGroupName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new ValidationError('the group name must be a non-empty string');
  checkText('the group name', name, 255);
  if (name.includes('/')) throw new ValidationError("the group name must not contain '/' (it separates the names of a group's path)");
  if (name !== name.trim()) throw new ValidationError('the group name must not begin or end with spaces');
  return name;
}

/** A group's description: at most 4000 characters, several lines allowed; empty is none. */
export function checkGroupDescription(description: unknown): string | null {
  if (description === undefined || description === null || description === '') return null;
  if (typeof description !== 'string') throw new ValidationError('the group description must be a string');
  checkText('the group description', description, 4000, { multiline: true });
  return description;
}

/** Keycloak's group attributes: names to lists of values (a lone string is a list of one), checkAttributeEntries's bounds. */
export function checkAttributes(attributes: unknown): Record<string, string[]> {
  if (attributes === undefined || attributes === null) return {};
  return Object.fromEntries(checkAttributeEntries(attributes, 'group', { loneString: true }));
}

export async function requireGroup(store: Store, realmId: string, id: string): Promise<Group> {
  const g = id === '' ? undefined : await store.groups.get(id);
  if (!g || g.realmId !== realmId) throw new NotFound('Could not find group by id');
  return g;
}

async function requireMember(store: Store, realmId: string, userId: string): Promise<User> {
  const user = await store.users.get(userId);
  if (!user || user.realmId !== realmId) throw new NotFound('User not found');
  return user;
}

/** The groups from a group's top-level group down to it (itself last). */
async function lineOf(store: Store, group: Group): Promise<Group[]> {
  return (await store.groups.lineages([group.id])).get(group.id) ?? [group];
}

/** A group's path: the names from its top-level group down to it, each after a '/'. */
export function pathOf(lineage: Group[]): string {
  return `/${lineage.map((g) => g.name).join('/')}`;
}

/** The paths of these groups, by id. */
export async function pathsOf(store: Store, ids: string[]): Promise<Map<string, string>> {
  const lineages = await store.groups.lineages(ids);
  return new Map([...lineages].map(([id, line]) => [id, pathOf(line)]));
}

/** The group at a path ("/parent/child"; the leading '/' optional), or NotFound. */
export async function groupByPath(store: Store, realmId: string, path: string): Promise<Group> {
  const names = path.split('/').filter((n, i) => !(i === 0 && n === ''));
  if (names.length === 0 || names.some((n) => n === '')) throw new NotFound(`Group path does not exist: ${path}`);
  let parentId = '';
  let group: Group | undefined;
  for (const name of names) {
    group = await store.groups.findChild(realmId, parentId, name);
    if (!group) throw new NotFound(`Group path does not exist: ${path}`);
    parentId = group.id;
  }
  return group!;
}

/**
 * The roles a member of this group holds through it: its own and its ancestors', and what those contain
 * when composite, recursively (Keycloak's GroupModel.hasRole: mappings with composites, then the parent).
 */
export async function groupEffectiveRoles(store: Store, group: Group): Promise<Role[]> {
  const line = await lineOf(store, group);
  return withContained(store, await store.groups.rolesOf(line.map((g) => g.id)));
}

function groupEvent(group: Group, path: string): Record<string, unknown> {
  return { id: group.id, name: group.name, path, ...(group.description ? { description: group.description } : {}), attributes: group.attributes };
}

/** Creates a group at the top (parentId '') or under a parent; a sibling of the same name is a ConflictError. */
export async function createGroup(
  store: Store,
  input: { realmId: string; parentId?: string; name: unknown; description?: unknown; attributes?: unknown; id?: string },
  actor: Actor,
): Promise<{ group: Group; path: string }> {
  await requireRealm(store, input.realmId);
  const name = checkGroupName(input.name);
  const description = checkGroupDescription(input.description);
  const attributes = checkAttributes(input.attributes);
  let parentPath = '';
  const parentId = input.parentId ?? '';
  if (parentId !== '') {
    const parent = await requireGroup(store, input.realmId, parentId);
    const line = await lineOf(store, parent);
    if (line.length >= MAX_GROUP_DEPTH) throw new ValidationError(`groups nest at most ${MAX_GROUP_DEPTH} deep`);
    parentPath = pathOf(line);
  }
  const group: Group = { id: input.id ?? randomId(), realmId: input.realmId, parentId, name, description, attributes };
  await store.groups.create(group, now());
  const path = `${parentPath}/${name}`;
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'GROUP', resourcePath: `groups/${group.id}`, representation: groupEvent(group, path) });
  return { group, path };
}

/** Renames a group or changes its description or attributes (Keycloak's PUT: a field left out is kept). */
export async function updateGroup(store: Store, input: { realmId: string; id: string; name?: unknown; description?: unknown; attributes?: unknown }, actor: Actor): Promise<Group> {
  const group = await requireGroup(store, input.realmId, input.id);
  const name = input.name === undefined || input.name === group.name ? undefined : checkGroupName(input.name);
  const description = input.description === undefined ? undefined : checkGroupDescription(input.description);
  const attributes = input.attributes === undefined ? undefined : checkAttributes(input.attributes);
  await store.groups.update(group, { ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}), ...(attributes !== undefined ? { attributes } : {}) });
  const updated: Group = { ...group, ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}), ...(attributes !== undefined ? { attributes } : {}) };
  const path = (await pathsOf(store, [group.id])).get(group.id) ?? `/${updated.name}`;
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'GROUP', resourcePath: `groups/${group.id}`, representation: groupEvent(updated, path) });
  return updated;
}

/** Every role whose holding changes for the members of `subtree` when the groups above it change from `before` to `after`. */
async function rolesChangingWithAncestors(store: Store, subtree: Group[], before: string[], after: string[]): Promise<Role[]> {
  const hasMembers = (await store.groups.memberCounts(subtree.map((g) => g.id))).size > 0;
  if (!hasMembers) return [];
  const [a, b] = await Promise.all([store.groups.rolesOf(before), store.groups.rolesOf(after)]);
  const inA = new Set(a.map((r) => r.id));
  const inB = new Set(b.map((r) => r.id));
  return [...a.filter((r) => !inB.has(r.id)), ...b.filter((r) => !inA.has(r.id))];
}

/**
 * Moves a group (with its subtree) under another group, or to the top (parentId ''). Refused under
 * itself or one of its own subgroups, or deeper than MAX_GROUP_DEPTH; its members gain the new
 * ancestors' roles and lose the old ones', which `authorize` sees first.
 */
export async function moveGroup(store: Store, input: { realmId: string; id: string; parentId: string }, actor: Actor, guard: MappingGuard = {}): Promise<Group> {
  const group = await requireGroup(store, input.realmId, input.id);
  if (group.parentId === input.parentId) return group;
  const subtree = await store.groups.subtree(group.id);
  // Every line from the top to a group of the subtree, the group's own among them: one query.
  const lines = await store.groups.lineages(subtree.map((g) => g.id));
  const ownLine = lines.get(group.id) ?? [group];
  let newLine: Group[] = [];
  if (input.parentId !== '') {
    const parent = await requireGroup(store, input.realmId, input.parentId);
    if (subtree.some((g) => g.id === parent.id)) throw new ValidationError('a group cannot be moved under itself or one of its own subgroups');
    newLine = await lineOf(store, parent);
    const height = Math.max(1, ...[...lines.values()].map((l) => l.length - ownLine.length + 1));
    if (newLine.length + height > MAX_GROUP_DEPTH) throw new ValidationError(`groups nest at most ${MAX_GROUP_DEPTH} deep`);
  }
  const oldLine = ownLine.filter((g) => g.id !== group.id);
  guard.authorize?.(await rolesChangingWithAncestors(store, subtree, oldLine.map((g) => g.id), newLine.map((g) => g.id)));
  await store.groups.move(group, input.parentId);
  const moved = { ...group, parentId: input.parentId };
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'GROUP', resourcePath: `groups/${group.id}`, representation: groupEvent(moved, pathOf([...newLine, moved])) });
  return moved;
}

/** Deletes a group and its subgroups; their members lose every role they held through them. */
export async function deleteGroup(store: Store, input: { realmId: string; id: string }, actor: Actor, guard: MappingGuard = {}): Promise<void> {
  const group = await requireGroup(store, input.realmId, input.id);
  const subtree = await store.groups.subtree(group.id);
  if ((await store.groups.memberCounts(subtree.map((g) => g.id))).size > 0) {
    const line = await lineOf(store, group);
    guard.authorize?.(await store.groups.rolesOf([...line, ...subtree].map((g) => g.id)));
  }
  await store.groups.delete(subtree.map((g) => g.id));
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'GROUP', resourcePath: `groups/${group.id}`, representation: { id: group.id, name: group.name } });
}

/** Adds a user to a group (nothing happens if already a member); the user holds the group's roles from the next token on. */
export async function joinGroup(store: Store, input: { realmId: string; userId: string; groupId: string }, actor: Actor, guard: MappingGuard = {}): Promise<Group> {
  const user = await requireMember(store, input.realmId, input.userId);
  const group = await requireGroup(store, input.realmId, input.groupId);
  guard.authorize?.(await groupEffectiveRoles(store, group));
  await refuseMappedMembershipChange(store, user, 'group', [group]);
  await store.groups.addMember(group.id, user.id);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'GROUP_MEMBERSHIP', resourcePath: `users/${user.id}/groups/${group.id}`, representation: { id: group.id, name: group.name } });
  return group;
}

/**
 * Takes a user out of a group; NotFound if the user was not a member, unless `quiet` (Keycloak's API
 * answers 204 either way).
 */
export async function leaveGroup(store: Store, input: { realmId: string; userId: string; groupId: string; quiet?: boolean }, actor: Actor, guard: MappingGuard = {}): Promise<Group> {
  const user = await requireMember(store, input.realmId, input.userId);
  const group = await requireGroup(store, input.realmId, input.groupId);
  guard.authorize?.(await groupEffectiveRoles(store, group));
  await refuseMappedMembershipChange(store, user, 'group', [group]);
  if (!(await store.groups.removeMember(group.id, user.id))) {
    if (input.quiet) return group;
    throw new NotFound(`user ${user.username} is not a member of that group`);
  }
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'GROUP_MEMBERSHIP', resourcePath: `users/${user.id}/groups/${group.id}`, representation: { id: group.id, name: group.name } });
  return group;
}

/** Maps roles to a group (or removes them): realm roles with clientId '', else roles of that client. */
export async function changeGroupRoleMappings(
  store: Store,
  input: { realmId: string; groupId: string; clientId: string; roles: Array<{ id?: unknown; name?: unknown }>; remove?: boolean },
  actor: Actor,
  guard: MappingGuard = {},
): Promise<Role[]> {
  const group = await requireGroup(store, input.realmId, input.groupId);
  if (input.clientId !== '' && !(await store.clients.get(input.realmId, input.clientId))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  const roles = await resolveRoles(store, input.realmId, input.clientId, input.roles);
  // What a composite contains is checked too (see changeRoleMappings).
  if (guard.authorize) guard.authorize(await withContained(store, roles));
  const ids = roles.map((r) => r.id);
  if (input.remove) await store.groups.revokeRoles(group.id, ids);
  else await store.groups.grantRoles(group.id, ids);
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: input.remove ? 'DELETE' : 'CREATE',
    resourceType: input.clientId ? 'CLIENT_ROLE_MAPPING' : 'REALM_ROLE_MAPPING',
    resourcePath: `groups/${group.id}/role-mappings/${input.clientId ? `clients/${input.clientId}` : 'realm'}`,
    representation: roles.map((r) => ({ id: r.id, name: r.name })),
  });
  return roles;
}

/** A group with what the console and the CLI show of it: path, subgroups, direct members (a page), roles. */
export async function groupDetails(
  store: Store,
  input: { realmId: string; id: string; maxMembers: number },
): Promise<{ group: Group; path: string; children: Group[]; members: User[]; memberCount: number; roles: Role[]; inheritedRoles: Role[] }> {
  const group = await requireGroup(store, input.realmId, input.id);
  const line = await lineOf(store, group);
  const [children, page, roles, inherited] = await Promise.all([
    store.groups.children(input.realmId, group.id, { first: 0, max: 1000 }),
    store.groups.members(group.id, 0, input.maxMembers),
    store.groups.mappedRoles(group.id),
    store.groups.rolesOf(line.filter((g) => g.id !== group.id).map((g) => g.id)),
  ]);
  const members = (await Promise.all(page.users.map((u) => store.users.get(u.id)))).filter((u): u is User => u !== undefined);
  return { group, path: pathOf(line), children, members, memberCount: page.total, roles, inheritedRoles: inherited };
}

/** The groups a user belongs to directly, each with its path. */
export async function userGroupsWithPaths(store: Store, input: { realmId: string; userId: string }): Promise<Array<{ group: Group; path: string }>> {
  const user = await requireMember(store, input.realmId, input.userId);
  const groups = await store.groups.userGroups(user.id);
  const paths = await pathsOf(store, groups.map((g) => g.id));
  return groups.map((group) => ({ group, path: paths.get(group.id) ?? `/${group.name}` })).sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Makes a group one of the realm's default groups, or not (Keycloak's default-groups): every user
 * created from then on (admin API, console, command line; not an import, whose users keep their own
 * groups) joins them, and holds their roles.
 */
export async function setDefaultGroup(store: Store, input: { realmId: string; groupId: string; isDefault: boolean }, actor: Actor): Promise<Group> {
  const group = await requireGroup(store, input.realmId, input.groupId);
  await store.groups.setDefault(group.id, input.isDefault);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: input.isDefault ? 'CREATE' : 'DELETE', resourceType: 'REALM', resourcePath: `default-groups/${group.id}`, representation: { id: group.id, name: group.name } });
  return group;
}

/** The realm's default groups, by name. */
export async function listDefaultGroups(store: Store, input: { realmId: string }): Promise<Group[]> {
  await requireRealm(store, input.realmId);
  return store.groups.defaults(input.realmId);
}

/**
 * The groups a new user joins: the realm's default groups and those named (by path), checked before
 * the user exists: every path must exist, and the caller may give the roles they bring.
 */
export async function groupsForNewUser(store: Store, realmId: string, paths: string[], guard: MappingGuard = {}): Promise<Group[]> {
  const groups = await store.groups.defaults(realmId);
  for (const path of paths) {
    const g = await groupByPath(store, realmId, path);
    if (!groups.some((x) => x.id === g.id)) groups.push(g);
  }
  for (const g of groups) guard.authorize?.(await groupEffectiveRoles(store, g));
  return groups;
}

/** A group of the realm's tree as the CLI and the console list it: its path, depth (0 at the top), direct members and subgroups. */
export interface GroupTreeEntry {
  group: Group;
  path: string;
  depth: number;
  members: number;
  subgroups: number;
}

// Member counts are read for this many groups per statement (SQLite allows 32766 bound values, PostgreSQL 65535).
const COUNT_CHUNK = 500;

/**
 * Every group of the realm in tree order: each right after its parent, siblings by name (code points, the
 * same on both databases), with its path and how many direct members it has. Two queries for the groups
 * and one per 500 groups for the counts, whatever the depth.
 */
export async function groupTree(store: Store, input: { realmId: string }): Promise<GroupTreeEntry[]> {
  await requireRealm(store, input.realmId);
  const all = await store.groups.all(input.realmId);
  const counts = new Map<string, number>();
  for (let i = 0; i < all.length; i += COUNT_CHUNK) {
    for (const [id, n] of await store.groups.memberCounts(all.slice(i, i + COUNT_CHUNK).map((g) => g.id))) counts.set(id, n);
  }
  const children = new Map<string, Group[]>();
  for (const g of all) {
    const siblings = children.get(g.parentId);
    if (siblings) siblings.push(g);
    else children.set(g.parentId, [g]);
  }
  for (const list of children.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
  const out: GroupTreeEntry[] = [];
  const seen = new Set<string>();
  const walk = (parentId: string, parentPath: string, depth: number): void => {
    if (depth >= MAX_GROUP_DEPTH) return;
    for (const group of children.get(parentId) ?? []) {
      if (seen.has(group.id)) continue;
      seen.add(group.id);
      const path = `${parentPath}/${group.name}`;
      out.push({ group, path, depth, members: counts.get(group.id) ?? 0, subgroups: children.get(group.id)?.length ?? 0 });
      walk(group.id, path, depth + 1);
    }
  };
  walk('', '', 0);
  return out;
}

/** The groups of a tree that are not `id` or below it: where that group may be moved (besides the top). */
export function outsideSubtree(tree: GroupTreeEntry[], id: string): GroupTreeEntry[] {
  const at = tree.findIndex((e) => e.group.id === id);
  if (at < 0) return tree;
  let end = at + 1;
  while (end < tree.length && tree[end]!.depth > tree[at]!.depth) end++;
  return [...tree.slice(0, at), ...tree.slice(end)];
}

/** Splits a typed path ("/parent/child", the leading '/' optional) into its parent's path ('' at the top) and the last name. */
function splitPath(path: string): { parent: string; name: string } {
  const cut = path.lastIndexOf('/');
  const name = path.slice(cut + 1);
  if (name === '') throw new ValidationError(`a group path names the group last, after a '/': /parent/child (not ${JSON.stringify(path)})`);
  return { parent: cut <= 0 ? '' : path.slice(0, cut), name };
}

/** Creates the group at a path: its parents must exist; a group of that name there already is a ConflictError. */
export async function createGroupAtPath(
  store: Store,
  input: { realmId: string; path: string; description?: unknown },
  actor: Actor,
): Promise<{ group: Group; path: string }> {
  await requireRealm(store, input.realmId);
  const { parent, name } = splitPath(input.path);
  const parentId = parent === '' ? '' : (await groupByPath(store, input.realmId, parent)).id;
  return createGroup(store, { realmId: input.realmId, parentId, name, description: input.description }, actor);
}

/** The group a path names, for a door that names groups by path (the CLI): NotFound when a part of it does not exist. */
export async function requireGroupByPath(store: Store, realmId: string, path: string): Promise<Group> {
  await requireRealm(store, realmId);
  return groupByPath(store, realmId, path);
}

/** The usernames of a group's direct members, sorted. */
export async function groupMemberNames(store: Store, input: { realmId: string; id: string }): Promise<string[]> {
  const group = await requireGroup(store, input.realmId, input.id);
  return (await store.groups.members(group.id, 0, Number.MAX_SAFE_INTEGER)).users.map((u) => u.username);
}

/** The roles mapped to a group, those it inherits from the groups above it, and every other role of the realm (to map). */
export async function groupRoleChoices(store: Store, input: { realmId: string; id: string }): Promise<{ granted: Role[]; inherited: Role[]; available: Role[] }> {
  const group = await requireGroup(store, input.realmId, input.id);
  const line = await lineOf(store, group);
  const [granted, inherited, all] = await Promise.all([
    store.groups.mappedRoles(group.id),
    store.groups.rolesOf(line.filter((g) => g.id !== group.id).map((g) => g.id)),
    store.roles.listAll(input.realmId),
  ]);
  const held = new Set(granted.map((r) => r.id));
  return { granted, inherited, available: all.filter((r) => !held.has(r.id)) };
}

/**
 * The groups a user belongs to (by path), the roles the user holds through them (theirs and those of the
 * groups above them), and the realm's other groups it may join, in tree order.
 */
export async function userGroupChoices(
  store: Store,
  input: { realmId: string; userId: string },
): Promise<{ joined: Array<{ group: Group; path: string }>; roles: Role[]; available: Array<{ group: Group; path: string }> }> {
  const joined = await userGroupsWithPaths(store, input);
  const ids = new Set(joined.map((j) => j.group.id));
  const tree = await groupTree(store, { realmId: input.realmId });
  const lines = await store.groups.lineages([...ids]);
  const roles = await store.groups.rolesOf([...new Set([...lines.values()].flat().map((g) => g.id))]);
  return { joined, roles, available: tree.filter((e) => !ids.has(e.group.id)).map((e) => ({ group: e.group, path: e.path })) };
}
