import type { Store } from '../../storage/store.js';
import { MASTER_REALM } from '../authorization.js';
import { ValidationError } from '../validation.js';
import { BOOTSTRAP_ACTOR, type Actor } from './common.js';
import { createRealm } from './realms.js';
import { createUser } from './users.js';
import { createClient } from './clients.js';
import { ensureRealmManagement, grantRolesByName } from './roles.js';
import { ensureConsoleClient } from './console.js';

/** The public client Keycloak's admin tools log in with (password grant). */
export const ADMIN_CLI = 'admin-cli';

export type BootstrapOutcome = 'created' | 'exists';

/**
 * Keycloak 26's bootstrap admin: on a database without an administrator, creates the `master` realm (if
 * missing), its `admin-cli` public client with the password grant on, and the user with the master
 * `admin` and `create-realm` roles. Does nothing when the master realm already has an admin.
 */
export async function bootstrapAdmin(
  store: Store,
  input: { username: string; password: string; /** The admin console's callback under AUTH_URL: creates its client. */ consoleRedirectUri?: string },
  actor: Actor = BOOTSTRAP_ACTOR,
): Promise<BootstrapOutcome> {
  if (!input.username) throw new ValidationError('the bootstrap admin needs a username');
  if (!(await store.realms.get(MASTER_REALM))) {
    // Administrators belong to no organization (Keycloak's master realm has none): the admin console's
    // browser sign-in must not require one.
    await createRealm(store, { id: MASTER_REALM, displayName: 'Realmgate administration', settings: { organizationRequired: false } }, actor);
  }
  await ensureRealmManagement(store, MASTER_REALM);
  if (input.consoleRedirectUri) await ensureConsoleClient(store, { redirectUri: input.consoleRedirectUri }, actor);
  const admin = await store.roles.find(MASTER_REALM, '', 'admin');
  if (admin && (await store.roles.usersWithRole(admin.id)).length > 0) return 'exists';
  if (!(await store.clients.get(MASTER_REALM, ADMIN_CLI))) {
    await createClient(
      store,
      { realmId: MASTER_REALM, clientId: ADMIN_CLI, name: 'Admin CLI', public: true, redirectUris: [], standardFlowEnabled: false, directAccessGrantsEnabled: true, scopes: 'openid profile email' },
      actor,
    );
  }
  const existing = await store.users.findByUsername(MASTER_REALM, input.username.toLowerCase());
  if (existing) throw new ValidationError(`user ${input.username} already exists in realm ${MASTER_REALM} without the admin role: grant it the role or choose another name`);
  const { id } = await createUser(store, { realmId: MASTER_REALM, username: input.username, password: input.password });
  await grantRolesByName(store, { realmId: MASTER_REALM, userId: id, clientId: '', names: ['admin', 'create-realm'] }, actor);
  return 'created';
}
