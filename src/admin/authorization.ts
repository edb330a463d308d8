import type { UserRoles } from '../storage/repos/roles.js';

/** The realm whose administrators may administer every realm (Keycloak's admin realm). */
export const MASTER_REALM = 'master';
/** The client every realm has whose roles say who may administer that realm. */
export const REALM_MANAGEMENT = 'realm-management';

/** Keycloak's realm-management client roles, with the words its admin console uses for them. */
export const REALM_MANAGEMENT_ROLES = {
  'realm-admin': 'Everything in this realm',
  'create-client': 'Create clients',
  'manage-realm': 'Change realm settings, keys, client scopes and not-before',
  'view-realm': 'Read realm settings, keys and client scopes',
  'manage-clients': 'Create, change and delete clients, rotate their secrets',
  'view-clients': 'Read clients',
  'query-clients': 'Search clients',
  'manage-users': 'Create, change and delete users, their sessions and role mappings',
  'view-users': 'Read users and their sessions',
  'query-users': 'Search users',
  'query-groups': 'Search groups',
  'manage-events': 'Clear events',
  'view-events': 'Read login and admin events',
  'query-realms': 'List realms',
  'manage-identity-providers': 'Change identity providers',
  'view-identity-providers': 'Read identity providers',
  'manage-authorization': 'Change fine-grained permissions',
  'view-authorization': 'Read fine-grained permissions',
  impersonation: 'Impersonate users',
} as const;

export type AdminRole = keyof typeof REALM_MANAGEMENT_ROLES;

/** Realm roles of the master realm: `admin` may do everything everywhere, `create-realm` create realms. */
export const MASTER_ROLES = { admin: 'Administrator of every realm', 'create-realm': 'Create realms' } as const;

/** Who is calling the admin API, as their (verified) access token says. */
export interface AdminCaller {
  /** The realm that issued the caller's token. */
  realmId: string;
  userId: string;
  username: string | null;
  clientId: string;
  roles: UserRoles;
  ip: string | null;
  /** The browser session the caller's token was issued in (its `sid`), when it has one. */
  sessionId?: string;
}

/** Roles that grant `role` besides itself (Keycloak: managing implies viewing, viewing implies querying). */
const IMPLIED_BY: Partial<Record<AdminRole, AdminRole[]>> = {
  'view-realm': ['manage-realm'],
  'query-realms': ['view-realm', 'manage-realm'],
  'view-clients': ['manage-clients'],
  'query-clients': ['view-clients', 'manage-clients'],
  'create-client': ['manage-clients'],
  'view-users': ['manage-users'],
  'query-users': ['view-users', 'manage-users'],
  'query-groups': ['view-users', 'manage-users'],
  'view-events': ['manage-events'],
  'view-identity-providers': ['manage-identity-providers'],
  'view-authorization': ['manage-authorization'],
};

export function isMasterAdmin(caller: AdminCaller): boolean {
  return caller.realmId === MASTER_REALM && caller.roles.realm.includes('admin');
}

/**
 * Whether the caller holds `role` for `realmId`: an `admin` of the master realm holds every role in
 * every realm; otherwise only the target realm's own realm-management roles count (a token of realm A
 * never administers realm B).
 */
export function hasAdminRole(caller: AdminCaller, realmId: string, role: AdminRole): boolean {
  if (isMasterAdmin(caller)) return true;
  if (caller.realmId !== realmId) return false;
  const held = caller.roles.clients[REALM_MANAGEMENT] ?? [];
  if (held.includes('realm-admin') || held.includes(role)) return true;
  return (IMPLIED_BY[role] ?? []).some((r) => held.includes(r));
}

/** Creating a realm: Keycloak's master `admin` or `create-realm`. */
export function mayCreateRealm(caller: AdminCaller): boolean {
  return caller.realmId === MASTER_REALM && (caller.roles.realm.includes('admin') || caller.roles.realm.includes('create-realm'));
}

/** Whether the caller may see this realm at all (listing realms shows only these). */
export function maySeeRealm(caller: AdminCaller, realmId: string): boolean {
  if (isMasterAdmin(caller)) return true;
  if (caller.realmId !== realmId) return false;
  return (caller.roles.clients[REALM_MANAGEMENT] ?? []).length > 0;
}

/**
 * Whether the caller may grant or take away `role` (Keycloak's rule for its admin roles: an admin maps
 * only the admin roles it holds). An admin role of realm-management only by someone holding it (or
 * realm-admin, or a role that implies it), master's create-realm only by someone who may create realms,
 * master's admin only by a master admin; any other role with manage-users alone. Without it, an admin
 * with manage-users could grant realm-admin, to itself too, or take it from the realm's administrators.
 */
export function mayMapRole(caller: AdminCaller, role: { realmId: string; clientId: string; name: string }): boolean {
  if (isMasterAdmin(caller)) return true;
  if (role.clientId === REALM_MANAGEMENT && Object.hasOwn(REALM_MANAGEMENT_ROLES, role.name)) return hasAdminRole(caller, role.realmId, role.name as AdminRole);
  if (role.clientId === '' && role.realmId === MASTER_REALM && Object.hasOwn(MASTER_ROLES, role.name)) return role.name === 'create-realm' && mayCreateRealm(caller);
  return true;
}
