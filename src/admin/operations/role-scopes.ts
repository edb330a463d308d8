import type { Store } from '../../storage/store.js';
import type { Role } from '../../storage/repos/roles.js';
import type { ScopeOwner } from '../../storage/repos/role-scopes.js';
import type { Client } from '../../storage/types.js';
import { NotFound, ValidationError } from '../validation.js';
import { recordAdminEvent, requireRealm, type Actor } from './common.js';
import { withContained } from './roles.js';

/**
 * Keycloak's role scope mappings (ScopeMappedResource, ScopeMappedClientResource) of a client or a client
 * scope: the roles its tokens may carry when the client is not "full scope allowed". A client's id is its
 * client id, a client scope's its name. A role container is the realm ('') or one of its clients (its
 * client id). A composite role in scope brings what it contains (Keycloak's hasScope: a mapped role's
 * hasRole), recursively.
 */

/** The owner of scope mappings, loaded: a client (its fullScopeAllowed and own roles count) or a client scope. */
export type ScopeContainer = { kind: 'client'; id: string; client: Client } | { kind: 'scope'; id: string };

/** A role reference of a request body, as Keycloak's RoleRepresentation lists give them. */
export type RoleRef = { id?: unknown; name?: unknown };

/** The client or client scope whose scope mappings a request addresses, with Keycloak's 404 texts. */
export async function requireScopeContainer(store: Store, realmId: string, owner: ScopeOwner): Promise<ScopeContainer> {
  await requireRealm(store, realmId);
  if (owner.kind === 'client') {
    const client = await store.clients.get(realmId, owner.id);
    if (!client) throw new NotFound('Could not find client');
    return { kind: 'client', id: client.clientId, client };
  }
  if (!(await store.realms.scopes(realmId)).some((s) => s.name === owner.id)) throw new NotFound('Could not find client scope');
  return { kind: 'scope', id: owner.id };
}

/** A role container: the realm ('') or a client, which must exist (Keycloak: 404 "Could not find client"). */
async function requireRoleContainer(store: Store, realmId: string, clientId: string): Promise<void> {
  if (clientId !== '' && !(await store.clients.get(realmId, clientId))) throw new NotFound('Could not find client');
}

function ownerOf(c: ScopeContainer): ScopeOwner {
  return { kind: c.kind, id: c.id };
}

/** Keycloak's hasDirectScope: mapped to the owner's scope, or (a client) one of the client's own roles. */
function directlyInScope(c: ScopeContainer, mapped: ReadonlySet<string>, role: Role): boolean {
  return mapped.has(role.id) || (c.kind === 'client' && role.clientId === c.client.clientId);
}

/** Every role mapped to the owner's scope (realm roles first, then by client and name). */
export async function listScopeMappings(store: Store, input: { realmId: string; owner: ScopeOwner }): Promise<Role[]> {
  const c = await requireScopeContainer(store, input.realmId, input.owner);
  return store.roleScopes.list(input.realmId, ownerOf(c));
}

/** The roles of one container (the realm '' or a client) mapped to the owner's scope. */
export async function containerScopeMappings(store: Store, input: { realmId: string; owner: ScopeOwner; clientId: string }): Promise<Role[]> {
  const c = await requireScopeContainer(store, input.realmId, input.owner);
  await requireRoleContainer(store, input.realmId, input.clientId);
  return (await store.roleScopes.list(input.realmId, ownerOf(c))).filter((r) => r.clientId === input.clientId);
}

/**
 * The roles of a container that could still be mapped to the owner's scope (Keycloak's .../available):
 * those not directly in it. A client's own roles always are, so they are never available to it.
 */
export async function availableScopeMappings(store: Store, input: { realmId: string; owner: ScopeOwner; clientId: string }): Promise<Role[]> {
  const c = await requireScopeContainer(store, input.realmId, input.owner);
  await requireRoleContainer(store, input.realmId, input.clientId);
  const mapped = new Set((await store.roleScopes.list(input.realmId, ownerOf(c))).map((r) => r.id));
  return (await store.roles.list(input.realmId, input.clientId)).filter((r) => !directlyInScope(c, mapped, r));
}

/**
 * The roles of a container in the owner's scope (Keycloak's .../composite, the effective scope): every
 * one for a client with fullScopeAllowed; else those mapped and a client's own roles, and what they
 * contain, recursively (Keycloak's ClientModel.hasScope: a scope mapping or own role that hasRole).
 * Keycloak's .../available stays with hasDirectScope (availableScopeMappings).
 */
export async function effectiveScopeMappings(store: Store, input: { realmId: string; owner: ScopeOwner; clientId: string }): Promise<Role[]> {
  const c = await requireScopeContainer(store, input.realmId, input.owner);
  await requireRoleContainer(store, input.realmId, input.clientId);
  const all = await store.roles.list(input.realmId, input.clientId);
  if (c.kind === 'client' && c.client.fullScopeAllowed) return all;
  const mapped = await store.roleScopes.list(input.realmId, ownerOf(c));
  const own = c.kind === 'client' ? await store.roles.list(input.realmId, c.client.clientId) : [];
  const inScope = new Set((await withContained(store, [...mapped, ...own])).map((r) => r.id));
  return all.filter((r) => inScope.has(r.id));
}

/**
 * One role of a body's list, in the container. Keycloak finds a realm role by its id
 * (ScopeMappedResource: realm.getRoleById) and a client role by its name (ScopeMappedClientResource:
 * scopedClient.getRole); either is accepted here, the one Keycloak reads first. A role of another
 * container is not found (Keycloak's /realm would take any role of the realm by id: Realmgate keeps each
 * path to its own container). Keycloak's 404 "Role not found".
 */
async function resolveRole(store: Store, realmId: string, clientId: string, ref: RoleRef): Promise<Role> {
  const id = typeof ref.id === 'string' && ref.id !== '' ? ref.id : undefined;
  const name = typeof ref.name === 'string' && ref.name !== '' ? ref.name : undefined;
  if (id === undefined && name === undefined) throw new ValidationError('each role needs an id or a name');
  const role =
    clientId === ''
      ? id !== undefined
        ? await store.roles.get(id)
        : await store.roles.find(realmId, '', name!)
      : name !== undefined
        ? await store.roles.find(realmId, clientId, name)
        : await store.roles.get(id!);
  if (!role || role.realmId !== realmId || role.clientId !== clientId) throw new NotFound('Role not found');
  return role;
}

/**
 * Adds roles of a container to the owner's scope, or removes them. `roles` undefined (a DELETE without a
 * body) removes every role of that container from it, as Keycloak's. Every role is found before anything
 * changes: one unknown is a 404 and nothing changes. One admin event (REALM_SCOPE_MAPPING or
 * CLIENT_SCOPE_MAPPING, Keycloak's), naming the roles. Returns the roles added or removed.
 */
export async function changeScopeMappings(
  store: Store,
  input: { realmId: string; owner: ScopeOwner; clientId: string; roles: RoleRef[] | undefined; remove: boolean },
  actor: Actor,
): Promise<Role[]> {
  const c = await requireScopeContainer(store, input.realmId, input.owner);
  await requireRoleContainer(store, input.realmId, input.clientId);
  const owner = ownerOf(c);
  let roles: Role[];
  if (input.roles === undefined) {
    if (!input.remove) throw new ValidationError('the request body must be a list of roles');
    roles = (await store.roleScopes.list(input.realmId, owner)).filter((r) => r.clientId === input.clientId);
  } else {
    roles = [];
    for (const ref of input.roles) roles.push(await resolveRole(store, input.realmId, input.clientId, ref));
  }
  const ids = [...new Set(roles.map((r) => r.id))];
  if (input.remove) await store.roleScopes.remove(input.realmId, owner, ids);
  else await store.roleScopes.add(input.realmId, owner, ids);
  const base = c.kind === 'client' ? `clients/${c.id}` : `client-scopes/${c.id}`;
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: input.remove ? 'DELETE' : 'CREATE',
    resourceType: input.clientId === '' ? 'REALM_SCOPE_MAPPING' : 'CLIENT_SCOPE_MAPPING',
    resourcePath: `${base}/scope-mappings/${input.clientId === '' ? 'realm' : `clients/${input.clientId}`}`,
    representation: roles.map((r) => ({ id: r.id, name: r.name })),
  });
  return roles;
}
