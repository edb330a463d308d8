import type { Store } from '../../storage/store.js';
import type { Realm } from '../../storage/types.js';
import type { Role } from '../../storage/repos/roles.js';
import { defaultRoleRepresentation, toRealmRepresentation, type RealmRepresentation } from '../keycloak/representations/realm.js';

/**
 * Keycloak's realm default role (normally the composite default-roles-<realm>): every new user of the
 * realm is mapped to it, whichever door made the user (admin API, CLI, registration, an identity
 * provider's first sign-in, LDAP import, a service account). Realmgate's own realms have none. `store`
 * may be a transaction's.
 */
export async function grantDefaultRole(store: Pick<Store, 'roles'>, realm: Pick<Realm, 'defaultRoleId'>, userId: string): Promise<void> {
  if (realm.defaultRoleId) await store.roles.grant(userId, [realm.defaultRoleId]);
}

/** The realm's default role, as Keycloak's RealmRepresentation.defaultRole answers it; undefined: none. */
export async function defaultRoleOf(store: Pick<Store, 'roles'>, realm: Pick<Realm, 'defaultRoleId'>): Promise<Role | undefined> {
  return realm.defaultRoleId ? store.roles.get(realm.defaultRoleId) : undefined;
}

/** The realm in Keycloak's words, with its default role (when it has one) as Keycloak's brief role: GET, list and export. */
export async function realmRepresentation(store: Pick<Store, 'roles'>, realm: Realm): Promise<RealmRepresentation> {
  const role = await defaultRoleOf(store, realm);
  return toRealmRepresentation(realm, role ? defaultRoleRepresentation(role, (await store.roles.composites(role.id)).length > 0) : undefined);
}
