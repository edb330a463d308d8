import type { Store } from '../../storage/store.js';
import { refuseMappedMembershipChange } from './user-storage.js';
import type { Role, UserRoles } from '../../storage/repos/roles.js';
import type { User } from '../../storage/types.js';
import { ConflictError } from '../../storage/types.js';
import { randomId } from '../../crypto/random.js';
import { MASTER_REALM, MASTER_ROLES, REALM_MANAGEMENT, REALM_MANAGEMENT_ROLES } from '../authorization.js';
import { NotFound, ValidationError, checkPathSegment, checkText } from '../validation.js';
import { now, recordAdminEvent, requireRealm, type Actor } from './common.js';

/**
 * Every realm has Keycloak's `realm-management` client (no secret, no redirect URI: it only holds the
 * admin roles) with its roles; the master realm also has the realm roles `admin` and `create-realm`.
 * Idempotent: run when a realm is created and for every realm at start.
 */
export async function ensureRealmManagement(store: Store, realmId: string): Promise<void> {
  const t = now();
  if (!(await store.clients.get(realmId, REALM_MANAGEMENT))) {
    try {
      await store.clients.create({
        realmId,
        clientId: REALM_MANAGEMENT,
        name: 'Realm management',
        secretHash: null,
        public: false,
        redirectUris: [],
        scopes: [],
        authMethod: 'client_secret_basic',
        authMethods: ['client_secret_basic'],
        idTokenAlg: 'RS256',
        audiences: [],
        webOrigins: [],
        postLogoutRedirectUris: [],
        standardFlowEnabled: false,
        directAccessGrantsEnabled: false,
        serviceAccountsEnabled: false,
        pkceMethod: '',
        now: t,
      });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  const roles: Role[] = Object.entries(REALM_MANAGEMENT_ROLES).map(([name, description]) => ({ id: randomId(), realmId, clientId: REALM_MANAGEMENT, name, description: description as string }));
  if (realmId === MASTER_REALM) {
    for (const [name, description] of Object.entries(MASTER_ROLES)) roles.push({ id: randomId(), realmId, clientId: '', name, description });
  }
  await store.roles.ensure(roles, t);
}

/** Resolves role references as Keycloak's role-mapping bodies give them ({id} or {name}). */
export async function resolveRoles(store: Store, realmId: string, clientId: string, refs: Array<{ id?: unknown; name?: unknown }>): Promise<Role[]> {
  const out: Role[] = [];
  for (const ref of refs) {
    let role: Role | undefined;
    if (typeof ref.id === 'string') role = await store.roles.get(ref.id);
    else if (typeof ref.name === 'string') role = await store.roles.find(realmId, clientId, ref.name);
    else throw new ValidationError('each role needs an id or a name');
    if (!role || role.realmId !== realmId || role.clientId !== clientId) {
      throw new NotFound(`role ${String(ref.name ?? ref.id)} does not exist${clientId ? ` in client ${clientId}` : ''} in realm ${realmId}`);
    }
    out.push(role);
  }
  return out;
}

/** Adds (or removes) role mappings of a user: realm roles with clientId '', else roles of that client. */
export async function changeRoleMappings(
  store: Store,
  input: { realmId: string; userId: string; clientId: string; roles: Array<{ id?: unknown; name?: unknown }>; remove?: boolean },
  actor: Actor,
  opts: { authorize?: (roles: Role[]) => void } = {},
): Promise<Role[]> {
  await requireRealm(store, input.realmId);
  const user = await store.users.get(input.userId);
  if (!user || user.realmId !== input.realmId) throw new NotFound(`user ${input.userId} does not exist in realm ${input.realmId}`);
  if (input.clientId !== '' && !(await store.clients.get(input.realmId, input.clientId))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  const roles = await resolveRoles(store, input.realmId, input.clientId, input.roles);
  // A door's check of the caller's right to map these roles (authorization.ts mayMapRole), before any write;
  // a composite brings what it contains, so those are checked too (a composite holding realm-admin is
  // mapped only by a caller who could map realm-admin).
  if (opts.authorize) opts.authorize(await withContained(store, roles));
  await refuseMappedMembershipChange(store, user, 'role', roles);
  const ids = roles.map((r) => r.id);
  if (input.remove) await store.roles.revoke(user.id, ids);
  else await store.roles.grant(user.id, ids);
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: input.remove ? 'DELETE' : 'CREATE',
    resourceType: input.clientId ? 'CLIENT_ROLE_MAPPING' : 'REALM_ROLE_MAPPING',
    resourcePath: `users/${user.id}/role-mappings/${input.clientId ? `clients/${input.clientId}` : 'realm'}`,
    representation: roles.map((r) => ({ id: r.id, name: r.name })),
  });
  return roles;
}

/** Grants roles by name (the CLI and the bootstrap). */
export async function grantRolesByName(store: Store, input: { realmId: string; userId: string; clientId: string; names: string[] }, actor: Actor): Promise<Role[]> {
  return changeRoleMappings(store, { realmId: input.realmId, userId: input.userId, clientId: input.clientId, roles: input.names.map((name) => ({ name })) }, actor);
}

/**
 * The roles an admin caller holds now, read from the database on each request rather than from the
 * caller's access token: a role taken away, a user disabled or deleted, a service account disabled takes
 * effect at the next request, not when the token expires (three days by default: Keycloak's master realm
 * keeps its tokens to 60 s for that reason, Realmgate's realms share one default). None for a user that
 * is not the token's realm's, or not enabled.
 */
export async function callerRoles(store: Store, realmId: string, userId: string): Promise<UserRoles> {
  const user = await store.users.get(userId);
  if (!user || user.realmId !== realmId || !user.enabled) return { realm: [], clients: {} };
  return store.roles.userRoles(userId);
}

/** A role's name: 1 to 255 characters (roles.name), no control characters, no '/' and not '.' or '..' (it is a path segment of the admin API), not blank. */
export function checkRoleName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new ValidationError('the role name must be a non-empty string');
  checkText('the role name', name, 255);
  if (name.includes('/')) throw new ValidationError("the role name must not contain '/'");
  checkPathSegment('the role name', name);
  if (name !== name.trim()) throw new ValidationError('the role name must not begin or end with spaces');
  return name;
}

/** A role's description: at most 4000 characters, several lines allowed. */
export function checkRoleDescription(description: unknown): string | null {
  if (description === undefined || description === null || description === '') return null;
  if (typeof description !== 'string') throw new ValidationError('the role description must be a string');
  checkText('the role description', description, 4000, { multiline: true });
  return description;
}

/** The admin roles Realmgate defines (realm-management's, and master's admin and create-realm): their names and mappings decide who administers. */
export function isAdminRole(role: Pick<Role, 'realmId' | 'clientId' | 'name'>): boolean {
  if (role.clientId === REALM_MANAGEMENT) return Object.hasOwn(REALM_MANAGEMENT_ROLES, role.name);
  return role.clientId === '' && role.realmId === MASTER_REALM && Object.hasOwn(MASTER_ROLES, role.name);
}

/** Where a role lives: the realm ('') or one of its clients, which must exist; realm-management holds only the admin roles. */
async function roleContainer(store: Store, realmId: string, clientId: string): Promise<void> {
  await requireRealm(store, realmId);
  if (clientId === '') return;
  if (!(await store.clients.get(realmId, clientId))) throw new NotFound(`client ${clientId} does not exist in realm ${realmId}`);
  if (clientId === REALM_MANAGEMENT) throw new ValidationError(`the roles of ${REALM_MANAGEMENT} are Realmgate's admin roles: they cannot be added, renamed or deleted`);
}

function rolePath(clientId: string, name: string): { resourceType: string; resourcePath: string } {
  return clientId === ''
    ? { resourceType: 'REALM_ROLE', resourcePath: `roles/${name}` }
    : { resourceType: 'CLIENT_ROLE', resourcePath: `clients/${clientId}/roles/${name}` };
}

async function requireRole(store: Store, realmId: string, clientId: string, name: string): Promise<Role> {
  const role = await store.roles.find(realmId, clientId, name);
  if (!role) throw new NotFound(`role ${name} does not exist${clientId ? ` in client ${clientId}` : ''} in realm ${realmId}`);
  return role;
}

/**
 * A realm role (clientId '') or a client role, as Keycloak's RoleContainerResource creates them. Users
 * granted it carry it in their access tokens (realm_access.roles, resource_access.<client>.roles), which
 * APIs and keycloak-js (hasRealmRole, hasResourceRole) read.
 */
export async function createRole(
  store: Store,
  input: { realmId: string; clientId: string; name: unknown; description?: unknown; composites?: unknown },
  actor: Actor,
  opts: { authorize?: (roles: Role[]) => void } = {},
): Promise<Role> {
  const name = checkRoleName(input.name);
  const description = checkRoleDescription(input.description);
  if (isAdminRole({ realmId: input.realmId, clientId: input.clientId, name })) throw new ConflictError(`Role with name ${name} already exists`);
  await roleContainer(store, input.realmId, input.clientId);
  const members = await resolveCompositeNames(store, input.realmId, input.composites);
  opts.authorize?.(await withContained(store, members));
  const role: Role = { id: randomId(), realmId: input.realmId, clientId: input.clientId, name, description };
  await store.roles.create(role, now());
  if (members.length > 0) await store.roles.addComposites(input.realmId, role.id, members.map((m) => m.id));
  const composites = members.length > 0 ? { composite: true, composites: compositeNames(members) } : {};
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', ...rolePath(input.clientId, name), representation: { id: role.id, name, description, ...composites } });
  return role;
}

/** A RoleRepresentation's `composites`: realm role names, and role names by client id. */
function compositeNames(roles: readonly Role[]): { realm?: string[]; client?: Record<string, string[]> } {
  const realm = roles.filter((r) => r.clientId === '').map((r) => r.name);
  const client: Record<string, string[]> = {};
  for (const r of roles.filter((x) => x.clientId !== '')) (client[r.clientId] ??= []).push(r.name);
  return { ...(realm.length > 0 ? { realm } : {}), ...(Object.keys(client).length > 0 ? { client } : {}) };
}

/**
 * The roles a new role's RoleRepresentation `composites` names (`{realm: [names], client: {clientId:
 * [names]}}`), as Keycloak 26's createRole adds them (RepresentationToModel.addComposites, by name).
 * Every one is found before the role is created: an unknown one is a 404 and nothing is created.
 */
async function resolveCompositeNames(store: Store, realmId: string, composites: unknown): Promise<Role[]> {
  if (composites === undefined || composites === null) return [];
  if (typeof composites !== 'object' || Array.isArray(composites)) throw new ValidationError('composites must be an object with realm and client role names');
  const c = composites as { realm?: unknown; client?: unknown };
  const names = (v: unknown, what: string): string[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((n) => typeof n !== 'string')) throw new ValidationError(`${what} must be a list of role names`);
    return v as string[];
  };
  const out: Role[] = [];
  for (const n of names(c.realm, 'composites.realm')) {
    const role = await store.roles.find(realmId, '', n);
    if (!role) throw new NotFound(`Could not find composite realm role: ${n}`);
    out.push(role);
  }
  if (c.client !== undefined && c.client !== null) {
    if (typeof c.client !== 'object' || Array.isArray(c.client)) throw new ValidationError('composites.client must map client ids to lists of role names');
    for (const [clientId, list] of Object.entries(c.client)) {
      const roleNames = names(list, `composites.client.${clientId}`);
      if (!(await store.clients.get(realmId, clientId))) throw new NotFound(`Could not find client: ${clientId}`);
      for (const n of roleNames) {
        const role = await store.roles.find(realmId, clientId, n);
        if (!role) throw new NotFound(`Could not find composite client role: ${n}`);
        out.push(role);
      }
    }
  }
  return [...new Map(out.map((r) => [r.id, r])).values()];
}

/** Renames a role or changes its description (Keycloak's PUT of a RoleRepresentation; a field left out is kept). */
export async function updateRole(store: Store, input: { realmId: string; clientId: string; name: string; newName?: unknown; description?: unknown }, actor: Actor): Promise<Role> {
  const role = await requireRole(store, input.realmId, input.clientId, input.name);
  const newName = input.newName === undefined || input.newName === role.name ? undefined : checkRoleName(input.newName);
  const description = input.description === undefined ? undefined : checkRoleDescription(input.description);
  if (isAdminRole(role) && (newName !== undefined || (description !== undefined && description !== role.description))) {
    throw new ValidationError(`${role.name} is one of Realmgate's admin roles: it cannot be renamed or changed`);
  }
  if (newName !== undefined && isAdminRole({ ...role, name: newName })) throw new ConflictError(`Role with name ${newName} already exists`);
  await store.roles.update(role.id, { ...(newName !== undefined ? { name: newName } : {}), ...(description !== undefined ? { description } : {}) });
  const updated = { ...role, ...(newName !== undefined ? { name: newName } : {}), ...(description !== undefined ? { description } : {}) };
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', ...rolePath(input.clientId, role.name), representation: { id: role.id, name: updated.name, description: updated.description } });
  return updated;
}

/** Deletes a role and every user's mapping to it: from their next token on, they no longer carry it. */
export async function deleteRole(store: Store, input: { realmId: string; clientId: string; name: string }, actor: Actor): Promise<void> {
  const role = await requireRole(store, input.realmId, input.clientId, input.name);
  if (isAdminRole(role)) throw new ValidationError(`${role.name} is one of Realmgate's admin roles: it cannot be deleted`);
  await store.roles.delete(role.id);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', ...rolePath(input.clientId, role.name), representation: { id: role.id, name: role.name } });
}

/** The roles of the realm (clientId '') or of one of its clients, by name. */
export async function listRoles(store: Store, input: { realmId: string; clientId: string }): Promise<Role[]> {
  await requireRealm(store, input.realmId);
  if (input.clientId !== '' && !(await store.clients.get(input.realmId, input.clientId))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  return store.roles.list(input.realmId, input.clientId);
}

/** The usernames of the users granted a role, sorted. */
export async function roleUsers(store: Store, input: { realmId: string; clientId: string; name: string }): Promise<string[]> {
  const role = await requireRole(store, input.realmId, input.clientId, input.name);
  return (await store.roles.holders(role.id, 0, Number.MAX_SAFE_INTEGER)).users.map((u) => u.username);
}

/** The roles of the realm (clientId '') or of one of its clients, each with how many users hold it. */
export async function listRolesWithCounts(store: Store, input: { realmId: string; clientId: string }): Promise<Array<Role & { users: number }>> {
  const roles = await listRoles(store, input);
  const counts = await store.roles.userCounts(input.realmId, input.clientId);
  return roles.map((r) => ({ ...r, users: counts.get(r.id) ?? 0 }));
}

/** A role and the users granted it (by username, at most `max`), for the console's role page. */
export async function roleWithUsers(store: Store, input: { realmId: string; clientId: string; name: string; max: number }): Promise<{ role: Role; users: User[]; total: number }> {
  const role = await requireRole(store, input.realmId, input.clientId, input.name);
  const page = await store.roles.holders(role.id, 0, input.max);
  const users = (await Promise.all(page.users.map((u) => store.users.get(u.id)))).filter((u): u is User => u !== undefined);
  return { role, users, total: page.total };
}

/** A role of the realm by its id, or undefined (the console's forms name roles by id, so any name is safe in them). */
export async function findRoleById(store: Store, realmId: string, id: string): Promise<Role | undefined> {
  if (id === '') return undefined;
  const role = await store.roles.get(id);
  return role?.realmId === realmId ? role : undefined;
}

/** The roles a user of the realm holds (realm roles first, then by client), and every role of the realm they do not hold yet. */
export async function userRoleChoices(store: Store, input: { realmId: string; userId: string }): Promise<{ granted: Role[]; available: Role[] }> {
  const user = await store.users.get(input.userId);
  if (!user || user.realmId !== input.realmId) throw new NotFound(`user ${input.userId} does not exist in realm ${input.realmId}`);
  const [granted, all] = await Promise.all([store.roles.mappedRoles(user.id), store.roles.listAll(input.realmId)]);
  const held = new Set(granted.map((r) => r.id));
  return { granted, available: all.filter((r) => !held.has(r.id)) };
}

/** A role of the realm by its id (Keycloak's roles-by-id), else NotFound with Keycloak's words. */
export async function requireRoleById(store: Store, realmId: string, id: string): Promise<Role> {
  await requireRealm(store, realmId);
  const role = await store.roles.get(id);
  if (!role || role.realmId !== realmId) throw new NotFound('Could not find role with id');
  return role;
}

/**
 * Roles with every role they contain, recursively (each once, in the order met). Only the roles that are
 * composite cost a query (one for the realm's composite ids, one per composite role).
 */
export async function withContained(store: Store, roles: readonly Role[]): Promise<Role[]> {
  if (roles.length === 0) return [];
  const composite = await store.roles.compositeIds(roles[0]!.realmId);
  const out = new Map(roles.map((r) => [r.id, r]));
  for (const r of roles) {
    if (!composite.has(r.id)) continue;
    for (const c of await store.roles.effectiveComposites(r.id)) if (!out.has(c.id)) out.set(c.id, c);
  }
  if (out.size === roles.length) return [...roles];
  const key = (r: Role): string => `${r.clientId}\u0000${r.name}`;
  return [...out.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * The roles a role contains directly (Keycloak's RoleResource.getRoleComposites: role.getCompositesStream(),
 * not recursive), by client and name: all of them (`container` undefined), the realm's (`container` '')
 * or one client's (which must exist: Keycloak's 404 "Could not find client").
 */
export async function roleComposites(store: Store, input: { realmId: string; roleId: string; container?: string }): Promise<Role[]> {
  const role = await requireRoleById(store, input.realmId, input.roleId);
  if (input.container !== undefined && input.container !== '' && !(await store.clients.get(input.realmId, input.container))) throw new NotFound('Could not find client');
  const all = await store.roles.composites(role.id);
  return input.container === undefined ? all : all.filter((r) => r.clientId === input.container);
}

/** A role found by name in its container, with Keycloak's RoleContainerResource 404 ("Could not find role"). */
export async function requireRoleByName(store: Store, realmId: string, clientId: string, name: string): Promise<Role> {
  await requireRealm(store, realmId);
  if (clientId !== '' && !(await store.clients.get(realmId, clientId))) throw new NotFound('Could not find client');
  const role = await store.roles.find(realmId, clientId, name);
  if (!role) throw new NotFound('Could not find role');
  return role;
}

/**
 * Refuses a composite whose members would make `role` contain itself (directly, or through a member that
 * contains it): Keycloak does not check this, a cycle there is harmless to its tokens but meaningless;
 * Realmgate answers 400 so a mistake is seen.
 */
async function refuseSelfContainment(store: Store, role: Role, members: readonly Role[]): Promise<void> {
  for (const m of members) {
    if (m.id === role.id) throw new ValidationError(`role ${role.name} cannot contain itself`);
  }
  const contained = await withContained(store, members);
  if (contained.some((c) => c.id === role.id)) throw new ValidationError(`role ${role.name} cannot contain a role that contains it`);
}

/**
 * Adds roles to a composite, or removes them (Keycloak's POST and DELETE .../composites: a list of
 * RoleRepresentations, each found by its id in the realm; one without an id or unknown is Keycloak's 404
 * "Could not find composite role", and nothing changes). A role may not contain itself (400). Removing a
 * role not contained changes nothing (204). `authorize` is the door's check of the caller's right over
 * the roles added or removed and everything they contain (mappingGuard: an admin role only by a caller
 * holding it, as Keycloak's requireMapComposite), before any write. One admin event, as Keycloak's: CREATE
 * (add) or DELETE (remove), REALM_ROLE or CLIENT_ROLE, the request's path (`resourcePath`), the roles.
 */
export async function changeComposites(
  store: Store,
  input: { realmId: string; roleId: string; roles: Array<{ id?: unknown; name?: unknown }>; remove?: boolean; resourcePath?: string },
  actor: Actor,
  opts: { authorize?: (roles: Role[]) => void } = {},
): Promise<Role[]> {
  const role = await requireRoleById(store, input.realmId, input.roleId);
  const members: Role[] = [];
  for (const ref of input.roles) {
    const member = typeof ref.id === 'string' && ref.id !== '' ? await store.roles.get(ref.id) : undefined;
    if (!member || member.realmId !== input.realmId) throw new NotFound('Could not find composite role');
    if (!members.some((m) => m.id === member.id)) members.push(member);
  }
  if (!input.remove) await refuseSelfContainment(store, role, members);
  opts.authorize?.(await withContained(store, members));
  if (members.length === 0) return [];
  const ids = members.map((m) => m.id);
  if (input.remove) await store.roles.removeComposites(role.id, ids);
  else await store.roles.addComposites(input.realmId, role.id, ids);
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: input.remove ? 'DELETE' : 'CREATE',
    resourceType: role.clientId === '' ? 'REALM_ROLE' : 'CLIENT_ROLE',
    resourcePath: input.resourcePath ?? `roles-by-id/${role.id}/composites`,
    representation: members.map((m) => ({ id: m.id, name: m.name, clientRole: m.clientId !== '', containerId: m.clientId || m.realmId })),
  });
  return members;
}

/**
 * A role the CLI names: `name` (a realm role) or `client/name` (a role of that client, by its client id;
 * the last '/' splits them, as a role name has none and a client id, a URL for some, may).
 */
export function parseRoleRef(ref: string): { clientId: string; name: string } {
  const slash = ref.lastIndexOf('/');
  return slash < 0 ? { clientId: '', name: ref } : { clientId: ref.slice(0, slash), name: ref.slice(slash + 1) };
}

/** Adds or removes contained roles by name (the CLI): `contained` as parseRoleRef reads them. */
export async function changeCompositesByName(
  store: Store,
  input: { realmId: string; clientId: string; name: string; contained: string[]; remove?: boolean },
  actor: Actor,
): Promise<Role[]> {
  const role = await cliRole(store, input.realmId, input.clientId, input.name);
  const refs: Array<{ id: string }> = [];
  for (const text of input.contained) {
    const { clientId, name } = parseRoleRef(text);
    if (clientId !== '' && !(await store.clients.get(input.realmId, clientId))) throw new NotFound(`client ${clientId} does not exist in realm ${input.realmId}`);
    const member = await store.roles.find(input.realmId, clientId, name);
    if (!member) throw new NotFound(`role ${name} does not exist${clientId ? ` in client ${clientId}` : ''} in realm ${input.realmId}`);
    refs.push({ id: member.id });
  }
  return changeComposites(store, { realmId: input.realmId, roleId: role.id, roles: refs, remove: input.remove, resourcePath: `${rolePath(input.clientId, role.name).resourcePath}/composites` }, actor);
}

/** A role by name, for the CLI: its realm, client and role must exist (messages naming what is missing). */
async function cliRole(store: Store, realmId: string, clientId: string, name: string): Promise<Role> {
  await requireRealm(store, realmId);
  if (clientId !== '' && !(await store.clients.get(realmId, clientId))) throw new NotFound(`client ${clientId} does not exist in realm ${realmId}`);
  return requireRole(store, realmId, clientId, name);
}

/** The roles a role (by name) contains directly (the CLI). */
export async function roleCompositesByName(store: Store, input: { realmId: string; clientId: string; name: string }): Promise<Role[]> {
  const role = await cliRole(store, input.realmId, input.clientId, input.name);
  return store.roles.composites(role.id);
}
