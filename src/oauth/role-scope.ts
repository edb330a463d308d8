import type { Services } from '../services.js';
import type { Client } from '../storage/types.js';
import type { UserRoles } from '../storage/repos/roles.js';
import { ownerKey } from '../storage/repos/role-scopes.js';
import { defaultScopesOf } from './scopes.js';

/**
 * The roles of a user that a token of this client may carry (Keycloak's TokenManager.getAccess): all of
 * them when the client has fullScopeAllowed (the default); otherwise those in the client's scope, which
 * are its own client roles, the roles mapped to its scope, and the roles mapped to the scope of each client
 * scope the token is issued with (the client's default scopes and the optional ones granted), each with
 * what it contains if it is a composite (the realm's scope map is expanded when read:
 * RoleScopeRepository.realm). A client of full scope pays nothing more; a limited one a cached read of
 * the realm's mappings (ConfigCache.roleScopes).
 */
export async function tokenRoles(
  services: Services,
  realmId: string,
  userId: string,
  client: Pick<Client, 'clientId' | 'fullScopeAllowed' | 'scopes' | 'optionalScopes'> | undefined,
  granted: readonly string[],
): Promise<UserRoles | undefined> {
  const roles = await services.cache.userRoles(realmId, userId);
  if (!roles || !client || client.fullScopeAllowed) return roles;
  return limitToScope(roles, client, granted, await services.cache.roleScopes(realmId));
}

/** The part of `roles` in the client's scope (tokenRoles); undefined when none is. */
export function limitToScope(
  roles: UserRoles,
  client: Pick<Client, 'clientId' | 'scopes' | 'optionalScopes'>,
  granted: readonly string[],
  mappings: ReadonlyMap<string, ReadonlyArray<{ clientId: string; name: string }>>,
): UserRoles | undefined {
  const inScope = new Set<string>();
  const scopes = new Set([...defaultScopesOf(client), ...granted]);
  const owners = [ownerKey({ kind: 'client', id: client.clientId }), ...[...scopes].map((id) => ownerKey({ kind: 'scope', id }))];
  for (const owner of owners) for (const r of mappings.get(owner) ?? []) inScope.add(`${r.clientId}\0${r.name}`);
  const out: UserRoles = { realm: roles.realm.filter((name) => inScope.has(`\0${name}`)), clients: {} };
  for (const [clientId, names] of Object.entries(roles.clients)) {
    // A client's own roles are always in its scope.
    const kept = clientId === client.clientId ? names : names.filter((name) => inScope.has(`${clientId}\0${name}`));
    if (kept.length > 0) out.clients[clientId] = kept;
  }
  return out.realm.length === 0 && Object.keys(out.clients).length === 0 ? undefined : out;
}
