import type { Store } from '../../storage/store.js';
import type { Role, UserRoles } from '../../storage/repos/roles.js';
import { ConflictError } from '../../storage/types.js';
import { randomId } from '../../crypto/random.js';
import { MASTER_REALM, MASTER_ROLES, REALM_MANAGEMENT, REALM_MANAGEMENT_ROLES } from '../authorization.js';
import { NotFound, ValidationError } from '../validation.js';
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
async function resolveRoles(store: Store, realmId: string, clientId: string, refs: Array<{ id?: unknown; name?: unknown }>): Promise<Role[]> {
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
): Promise<Role[]> {
  await requireRealm(store, input.realmId);
  const user = await store.users.get(input.userId);
  if (!user || user.realmId !== input.realmId) throw new NotFound(`user ${input.userId} does not exist in realm ${input.realmId}`);
  if (input.clientId !== '' && !(await store.clients.get(input.realmId, input.clientId))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  const roles = await resolveRoles(store, input.realmId, input.clientId, input.roles);
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
