import { randomId } from '../../crypto/random.js';
import { nowSeconds, type Clock } from '../../clock.js';
import type { Store } from '../../storage/store.js';
import { ConflictError, type Realm, type User, type UserStorageProvider } from '../../storage/types.js';
import { MAX_GROUP_DEPTH } from '../../storage/repos/groups.js';
import { searchEntries, nameable, MAX_GROUP_ENTRIES, LdapUnavailable, type LdapSettings } from './directory.js';
import { escapeFilterValue } from './escape.js';
import { GROUP_MAPPER, HARDCODED_GROUP_MAPPER, HARDCODED_ROLE_MAPPER, ROLE_MAPPER, readGroupMapping, type DirectoryGroupMapping } from './mapper-config.js';

/**
 * Keycloak's GroupLDAPStorageMapper and RoleLDAPStorageMapper: the directory's groups (groupOfNames
 * entries under groups.dn / roles.dn) become local groups (under groups.path, nested as in the directory
 * when preserve.group.inheritance is on) or roles, recorded as the mapper's (ldap_mapper_links); a
 * federated user's memberships among the mapper's groups (role mappings among its roles) are set to the
 * directory's at each sign-in and user sync: added and removed (mode IMPORT: added only). Groups and
 * roles an administrator made are never touched. Every directory read comes before any write: an
 * outage (LdapUnavailable) leaves the memberships as they were.
 */

/** The most groups of one user a sign-in reads from one mapper (more is an error, never a cut list). */
export const MAX_USER_GROUPS = 1_000;

export interface DirectoryGroup {
  dn: string;
  name: string;
  /** The membership attribute's values (a sync's whole read only). */
  members: string[];
  /** preserve.group.inheritance: the group that lists this one as a member. */
  parentDn?: string;
}

type Entry = { dn: string; attributes: Record<string, string[]> };

/** DNs compared loosely: case and spaces around separators do not matter (RFC 4514 values as written). */
export const normDn = (dn: string): string => dn.split(',').map((p) => p.split('=').map((x) => x.trim()).join('=')).join(',').toLowerCase();

const one = (attrs: Record<string, string[]>, name: string): string | undefined => attrs[name.toLowerCase()]?.[0];

/** A directory group's name Realmgate can hold as a group or role name. */
const usableName = (n: string | undefined): n is string => n !== undefined && n.trim() !== '' && n.length <= 255 && !n.includes('/');

function groupFilter(g: DirectoryGroupMapping, member?: string): string {
  const parts = g.objectClasses.map((c) => `(objectClass=${escapeFilterValue(c)})`);
  if (member !== undefined) parts.push(`(${g.membershipAttribute}=${escapeFilterValue(member)})`);
  if (g.filter) parts.push(g.filter);
  return `(&${parts.join('')})`;
}

function toGroups(g: DirectoryGroupMapping, entries: Entry[]): DirectoryGroup[] {
  const out: DirectoryGroup[] = [];
  for (const e of entries) {
    const name = one(e.attributes, g.nameAttribute)?.trim();
    if (usableName(name)) out.push({ dn: e.dn, name, members: e.attributes[g.membershipAttribute.toLowerCase()] ?? [] });
  }
  return out;
}

/** Every group of the mapper in the directory, each with its parent when the nesting is kept (a sync; a sign-in that meets a new group). */
export async function readDirectoryGroups(s: LdapSettings, credential: string | undefined, g: DirectoryGroupMapping): Promise<DirectoryGroup[]> {
  const groups = toGroups(g, await searchEntries(s, credential, { base: g.baseDn, filter: groupFilter(g), attributes: [g.nameAttribute, g.membershipAttribute], max: MAX_GROUP_ENTRIES }));
  if (g.preserveInheritance && g.membershipType === 'DN') {
    const byDn = new Map(groups.map((x) => [normDn(x.dn), x]));
    // A group listed as a member of several: the first parent read wins (Keycloak refuses such a tree).
    for (const parent of groups) for (const m of parent.members) {
      const child = byDn.get(normDn(m));
      if (child && child !== parent && child.parentDn === undefined) child.parentDn = parent.dn;
    }
  }
  return groups;
}

/** The value a group's membership attribute holds for this user: the entry's DN, or its membership.user.ldap.attribute (UID type). */
function memberValue(g: DirectoryGroupMapping, entry: Entry): string | undefined {
  return g.membershipType === 'DN' ? entry.dn : one(entry.attributes, g.membershipUserAttribute);
}

/** What a sign-in asks of the user's entry besides its profile, for these mappers. */
export function entryAttributes(p: UserStorageProvider): string[] {
  const out: string[] = [];
  for (const m of p.mappers) {
    if (m.providerId !== GROUP_MAPPER && m.providerId !== ROLE_MAPPER) continue;
    const g = readGroupMapping(m).mapping;
    out.push(g.strategy === 'memberOf' ? g.memberOfAttribute : g.membershipUserAttribute);
  }
  return out;
}

/**
 * The user's groups of this mapper in the directory: one search under the base for the groups whose
 * membership attribute names the user (the value escaped, RFC 4515), or the entry's memberOf values
 * under the base (their first RDN's value taken as the name: group.name.ldap.attribute must be the RDN's).
 */
export async function userDirectoryGroups(s: LdapSettings, credential: string | undefined, g: DirectoryGroupMapping, entry: Entry): Promise<DirectoryGroup[]> {
  if (g.strategy === 'memberOf') {
    const base = normDn(g.baseDn);
    const values = (entry.attributes[g.memberOfAttribute.toLowerCase()] ?? []).filter((dn) => normDn(dn).endsWith(`,${base}`));
    if (values.length > MAX_USER_GROUPS) throw new LdapUnavailable(`the user is in more than ${MAX_USER_GROUPS} groups of mapper ${g.name}`);
    return values.flatMap((dn) => {
      const rdn = /^\s*([^=]+)=((?:\\.|[^,+])*)/.exec(dn);
      const name = rdn ? rdn[2]!.replace(/\\(.)/g, '$1').trim() : undefined;
      return rdn && rdn[1]!.trim().toLowerCase() === g.nameAttribute.toLowerCase() && usableName(name) ? [{ dn, name, members: [] }] : [];
    });
  }
  const value = memberValue(g, entry);
  if (value === undefined || !nameable(value)) return [];
  return toGroups(g, await searchEntries(s, credential, { base: g.baseDn, filter: groupFilter(g, value), attributes: [g.nameAttribute], max: MAX_USER_GROUPS }));
}

/** The local group a path names, made when missing (the mapper's groups.path). */
async function ensurePath(store: Store, clock: Clock, realmId: string, path: string): Promise<string> {
  let parentId = '';
  for (const name of path.split('/').filter((n) => n !== '')) parentId = await ensureGroup(store, clock, realmId, parentId, name);
  return parentId;
}

/** The child of that name, made when missing; two sign-ins making it at once end with one (the sibling-name constraint). */
async function ensureGroup(store: Store, clock: Clock, realmId: string, parentId: string, name: string): Promise<string> {
  const found = await store.groups.findChild(realmId, parentId, name);
  if (found) return found.id;
  const id = randomId();
  try {
    await store.groups.create({ id, realmId, parentId, name, description: null, attributes: {} }, nowSeconds(clock));
    return id;
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    const winner = await store.groups.findChild(realmId, parentId, name);
    if (!winner) throw err;
    return winner.id;
  }
}

export interface EnsureResult {
  /** Lower-cased directory name -> local group or role id. */
  ids: Map<string, string>;
  added: number;
  updated: number;
}

/**
 * The local groups (or roles) for these directory groups: the mapper's own, else a local one of the
 * name at that place (adopted), else a new one; each recorded as the mapper's.
 */
export async function ensureTargets(store: Store, clock: Clock, realm: Realm, g: DirectoryGroupMapping, groups: DirectoryGroup[], o: { only?: DirectoryGroup[]; wholeTree: boolean }): Promise<EnsureResult> {
  const only = o.only;
  const linked = new Map((await store.userStorage.links(g.id, g.kind)).map((l) => [l.name.toLowerCase(), l]));
  const out: EnsureResult = { ids: new Map(), added: 0, updated: 0 };
  if (g.kind === 'role') {
    const clientId = g.clientId ?? '';
    for (const x of only ?? groups) {
      const key = x.name.toLowerCase();
      if (out.ids.has(key)) continue;
      const link = linked.get(key);
      if (link) {
        out.ids.set(key, link.targetId);
        out.updated++;
        continue;
      }
      let role = await store.roles.find(realm.id, clientId, x.name);
      if (role) out.updated++;
      else {
        await store.roles.ensure([{ id: randomId(), realmId: realm.id, clientId, name: x.name, description: null }], nowSeconds(clock));
        role = await store.roles.find(realm.id, clientId, x.name);
        out.added++;
      }
      if (!role) continue;
      await store.userStorage.link(g.id, 'role', role.id, x.name);
      out.ids.set(key, role.id);
    }
    return out;
  }
  const top = g.groupsPath === '/' ? '' : await ensurePath(store, clock, realm.id, g.groupsPath);
  const topDepth = g.groupsPath.split('/').filter((n) => n !== '').length;
  const byDn = new Map(groups.map((x) => [normDn(x.dn), x]));
  const visiting = new Set<string>();
  const ensure = async (x: DirectoryGroup, depth: number): Promise<string> => {
    const key = x.name.toLowerCase();
    const done = out.ids.get(key);
    if (done) return done;
    visiting.add(key);
    let parentId = top;
    const parent = x.parentDn ? byDn.get(normDn(x.parentDn)) : undefined;
    // A cycle in the directory's nesting, or a tree deeper than groups may nest: the group goes to the top.
    if (parent && !visiting.has(parent.name.toLowerCase()) && topDepth + depth < MAX_GROUP_DEPTH - 1) parentId = await ensure(parent, depth + 1);
    visiting.delete(key);
    const link = linked.get(key);
    let id: string;
    if (link) {
      id = link.targetId;
      // The directory moved it (nesting kept; known from the whole tree only): follow, unless a sibling there has the name.
      if (g.preserveInheritance && o.wholeTree && link.parentId !== parentId) {
        const group = await store.groups.get(id);
        if (group) await store.groups.move(group, parentId).catch((err: unknown) => (err instanceof ConflictError ? undefined : Promise.reject(err)));
      }
      out.updated++;
    } else {
      const existed = await store.groups.findChild(realm.id, parentId, x.name);
      id = existed?.id ?? (await ensureGroup(store, clock, realm.id, parentId, x.name));
      if (existed) out.updated++;
      else out.added++;
      await store.userStorage.link(g.id, 'group', id, x.name);
    }
    out.ids.set(key, id);
    return id;
  };
  // `only`: these and their parents (a sign-in's groups), `groups` giving the tree.
  for (const x of only ?? groups) await ensure(x, 0);
  return out;
}

/** What a sign-in read of one mapper before writing anything. */
export interface MapperPlan {
  g: DirectoryGroupMapping;
  groups: DirectoryGroup[];
  /** The whole directory tree, read when the user is in a group not yet made here and the nesting is kept. */
  tree?: DirectoryGroup[];
}

/** The directory reads of a sign-in for every group and role mapper of the provider (throws LdapUnavailable, before any write). */
export async function readMapperPlans(store: Store, s: LdapSettings, credential: string | undefined, p: UserStorageProvider, entry: Entry): Promise<MapperPlan[]> {
  const plans: MapperPlan[] = [];
  for (const m of p.mappers) {
    if (m.providerId !== GROUP_MAPPER && m.providerId !== ROLE_MAPPER) continue;
    const { mapping: g, problems } = readGroupMapping(m);
    if (problems.length > 0) continue;
    const groups = await userDirectoryGroups(s, credential, g, entry);
    const plan: MapperPlan = { g, groups };
    if (g.kind === 'group' && g.preserveInheritance) {
      const known = new Set((await store.userStorage.links(g.id, 'group')).map((l) => l.name.toLowerCase()));
      if (groups.some((x) => !known.has(x.name.toLowerCase()))) plan.tree = await readDirectoryGroups(s, credential, g);
    }
    plans.push(plan);
  }
  return plans;
}

/**
 * Sets the user's memberships (role mappings) among the mapper's groups (roles) to the directory's
 * `groups`: missing groups made first; mode IMPORT only adds.
 */
export async function applyPlan(store: Store, clock: Clock, realm: Realm, user: User, plan: MapperPlan): Promise<void> {
  const { g } = plan;
  // With the tree, the user's groups are made with their parents (the tree holds them all, with nesting).
  const dns = new Set(plan.groups.map((x) => normDn(x.dn)));
  const wanted = plan.tree ? plan.tree.filter((x) => dns.has(normDn(x.dn))) : plan.groups;
  const ensured = await ensureTargets(store, clock, realm, g, plan.tree ?? plan.groups, { only: wanted, wholeTree: plan.tree !== undefined });
  const want = new Set(plan.groups.map((x) => ensured.ids.get(x.name.toLowerCase())).filter((id): id is string => id !== undefined));
  const mine = new Set((await store.userStorage.links(g.id, g.kind)).map((l) => l.targetId));
  if (g.kind === 'group') {
    const current = (await store.groups.userGroups(user.id)).map((x) => x.id).filter((id) => mine.has(id));
    for (const id of want) if (!current.includes(id)) await store.groups.addMember(id, user.id);
    if (g.mode !== 'IMPORT') for (const id of current) if (!want.has(id)) await store.groups.removeMember(id, user.id);
    return;
  }
  const current = (await store.roles.mappedRoles(user.id)).map((r) => r.id).filter((id) => mine.has(id));
  await store.roles.grant(user.id, [...want].filter((id) => !current.includes(id)));
  if (g.mode !== 'IMPORT') await store.roles.revoke(user.id, current.filter((id) => !want.has(id)));
}

/** hardcoded-ldap-role-mapper and hardcoded-ldap-group-mapper: every user of the provider has the role, or is in the group. */
export async function applyHardcoded(store: Store, realm: Realm, user: User, p: UserStorageProvider): Promise<void> {
  for (const m of p.mappers) {
    if (m.providerId === HARDCODED_ROLE_MAPPER) {
      const role = await hardcodedRole(store, realm.id, m.config.role?.[0] ?? '');
      if (role) await store.roles.grant(user.id, [role]);
    } else if (m.providerId === HARDCODED_GROUP_MAPPER) {
      const group = await groupAtPath(store, realm.id, m.config.group?.[0] ?? '');
      if (group) await store.groups.addMember(group, user.id);
    }
  }
}

/** Keycloak's role reference: "clientId.roleName" when that client has that role, else a realm role of the whole name. */
export async function hardcodedRole(store: Store, realmId: string, ref: string): Promise<string | undefined> {
  const dot = ref.indexOf('.');
  if (dot > 0) {
    const role = await store.roles.find(realmId, ref.slice(0, dot), ref.slice(dot + 1));
    if (role) return role.id;
  }
  return (await store.roles.find(realmId, '', ref))?.id;
}

export async function groupAtPath(store: Store, realmId: string, path: string): Promise<string | undefined> {
  let parentId = '';
  const names = path.split('/').filter((n) => n !== '');
  if (names.length === 0) return undefined;
  for (const name of names) {
    const g = await store.groups.findChild(realmId, parentId, name);
    if (!g) return undefined;
    parentId = g.id;
  }
  return parentId;
}

/** Keycloak's SynchronizationResultRepresentation. */
export interface MapperSyncResult {
  ignored: boolean;
  added: number;
  updated: number;
  removed: number;
  failed: number;
  status: string;
}

/**
 * A mapper's sync, direction fedToKeycloak: every directory group made or updated here; with
 * drop.non.existing.groups.during.sync, the mapper's groups the directory no longer has are deleted.
 */
export async function syncMapper(store: Store, clock: Clock, realm: Realm, s: LdapSettings, credential: string | undefined, g: DirectoryGroupMapping): Promise<MapperSyncResult> {
  const groups = await readDirectoryGroups(s, credential, g);
  await store.userStorage.pruneLinks(g.id, g.kind);
  const r = await ensureTargets(store, clock, realm, g, groups, { wholeTree: true });
  let removed = 0;
  if (g.kind === 'group' && g.dropNonExisting) {
    const gone = (await store.userStorage.links(g.id, 'group')).filter((l) => !r.ids.has(l.name.toLowerCase()));
    for (const l of gone) {
      const subtree = await store.groups.subtree(l.targetId);
      await store.groups.delete(subtree.map((x) => x.id));
      await store.userStorage.unlink(g.id, 'group', [l.targetId]);
      removed++;
    }
  }
  const what = g.kind === 'group' ? 'groups' : 'roles';
  return { ignored: false, added: r.added, updated: r.updated, removed, failed: 0, status: `${r.added} imported ${what}, ${r.updated} updated ${what}, ${removed} removed ${what}` };
}

/** For a user sync: each mapper's whole directory read once, the users' groups found in it (no search per user). */
export async function readSyncIndex(store: Store, s: LdapSettings, credential: string | undefined, p: UserStorageProvider): Promise<Array<{ g: DirectoryGroupMapping; tree: DirectoryGroup[]; byMember: Map<string, DirectoryGroup[]> }>> {
  const out = [];
  for (const m of p.mappers) {
    if (m.providerId !== GROUP_MAPPER && m.providerId !== ROLE_MAPPER) continue;
    const { mapping: g, problems } = readGroupMapping(m);
    if (problems.length > 0) continue;
    const tree = await readDirectoryGroups(s, credential, g);
    const byMember = new Map<string, DirectoryGroup[]>();
    for (const x of tree) for (const v of x.members) {
      const key = g.membershipType === 'DN' ? normDn(v) : v.toLowerCase();
      byMember.set(key, [...(byMember.get(key) ?? []), x]);
    }
    out.push({ g, tree, byMember });
  }
  return out;
}

/** The plan of one user of a sync, from the index. */
export function planFromIndex(index: { g: DirectoryGroupMapping; tree: DirectoryGroup[]; byMember: Map<string, DirectoryGroup[]> }, entry: Entry): MapperPlan {
  const { g } = index;
  if (g.strategy === 'memberOf') {
    const dns = new Set((entry.attributes[g.memberOfAttribute.toLowerCase()] ?? []).map(normDn));
    return { g, groups: index.tree.filter((x) => dns.has(normDn(x.dn))), tree: index.tree };
  }
  const v = memberValue(g, entry);
  const key = v === undefined ? undefined : g.membershipType === 'DN' ? normDn(v) : v.toLowerCase();
  return { g, groups: key === undefined ? [] : (index.byMember.get(key) ?? []), tree: index.tree };
}
