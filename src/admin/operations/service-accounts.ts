import type { Store } from '../../storage/store.js';
import type { Client, User } from '../../storage/types.js';
import { ConflictError } from '../../storage/types.js';
import { grantDefaultRole } from './default-role.js';
import { randomId } from '../../crypto/random.js';
import { now } from './common.js';

/** Keycloak names a client's service-account user `service-account-<client id>` (lower case). */
export function serviceAccountUsername(clientId: string): string {
  return `service-account-${clientId}`.toLowerCase();
}

/**
 * Not an argon2 hash: no password ever verifies against it, so a service account can only act through
 * its client's credentials (client_credentials), never log in.
 */
export const NO_PASSWORD = '!service-account';

export async function findServiceAccount(store: Store, client: Pick<Client, 'realmId' | 'clientId'>): Promise<User | undefined> {
  return store.users.findByUsername(client.realmId, serviceAccountUsername(client.clientId));
}

/** The client's service-account user, created on first need (enabling service accounts). */
export async function ensureServiceAccount(store: Store, client: Pick<Client, 'realmId' | 'clientId'>): Promise<User> {
  const existing = await findServiceAccount(store, client);
  if (existing) return existing;
  try {
    const id = randomId();
    await store.users.create({ id, realmId: client.realmId, username: serviceAccountUsername(client.clientId), email: null, firstName: null, lastName: null, emailVerified: false, passwordHash: NO_PASSWORD, now: now(), organizationIds: [] });
    // Keycloak's service-account users get the realm's default role too (ClientManager.enableServiceAccount).
    const realm = await store.realms.get(client.realmId);
    if (realm) await grantDefaultRole(store, realm, id);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
  const user = await findServiceAccount(store, client);
  if (!user) throw new Error('service account vanished after insert');
  return user;
}
