import type { Store } from '../../storage/store.js';
import type { Role } from '../../storage/repos/roles.js';
import type { ScopeOwner } from '../../storage/repos/role-scopes.js';
import { NotFound } from '../validation.js';
import { requireRealm, type Actor } from './common.js';
import { resolveRoles } from './roles.js';
import { changeScopeMappings } from './role-scopes.js';

/** The client or client scope whose scope is read or changed; NotFound when the realm has none of that name. */
async function requireOwner(store: Store, realmId: string, owner: ScopeOwner): Promise<void> {
  await requireRealm(store, realmId);
  if (owner.kind === 'client') {
    if (!(await store.clients.get(realmId, owner.id))) throw new NotFound(`client ${owner.id} does not exist in realm ${realmId}`);
  } else if (!(await store.realms.scopes(realmId)).some((s) => s.name === owner.id)) {
    throw new NotFound(`client scope ${owner.id} does not exist in realm ${realmId}`);
  }
}

/** The roles in a client's or client scope's scope (Keycloak's scope mappings), realm roles first. */
export async function listScopeMappings(store: Store, realmId: string, owner: ScopeOwner): Promise<Role[]> {
  await requireOwner(store, realmId, owner);
  return store.roleScopes.list(realmId, owner);
}

/**
 * Adds roles to (or removes them from) a client's or client scope's scope, by name: realm roles with
 * clientId '', else roles of that client. Every role is found first, with a message naming what is
 * missing (one unknown refuses the command, nothing changes); the change itself is the admin API's
 * (changeScopeMappings: Keycloak's REALM_SCOPE_MAPPING or CLIENT_SCOPE_MAPPING admin event).
 */
export async function changeScopeMappingsByName(
  store: Store,
  input: { realmId: string; owner: ScopeOwner; clientId: string; names: string[]; remove?: boolean },
  actor: Actor,
): Promise<Role[]> {
  await requireOwner(store, input.realmId, input.owner);
  if (input.clientId !== '' && !(await store.clients.get(input.realmId, input.clientId))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  const roles = await resolveRoles(store, input.realmId, input.clientId, input.names.map((name) => ({ name })));
  return changeScopeMappings(store, { realmId: input.realmId, owner: input.owner, clientId: input.clientId, roles: roles.map((r) => ({ id: r.id })), remove: input.remove === true }, actor);
}
