import type { Store } from '../../storage/store.js';
import type { Client, Realm } from '../../storage/types.js';
import { MASTER_REALM } from '../authorization.js';
import { NotFound } from '../validation.js';
import { BOOTSTRAP_ACTOR, requireRealm, type Actor } from './common.js';
import { createClient, updateClient } from './clients.js';

/** The public client of the master realm the admin console signs in with (Keycloak's name for it). */
export const CONSOLE_CLIENT = 'security-admin-console';

/** Where the console receives its authorization response, under AUTH_URL. */
export const CONSOLE_CALLBACK_PATH = '/auth/admin/console/callback';

/**
 * Ensures the console's public client exists in the master realm and whitelists `redirectUri` (the
 * console's callback under the current AUTH_URL, which may change between starts). Authorization code
 * flow only; public clients always need PKCE here (RFC 7636, RFC 9700 2.1.1).
 */
export async function ensureConsoleClient(store: Store, input: { redirectUri: string }, actor: Actor = BOOTSTRAP_ACTOR): Promise<Client> {
  await requireRealm(store, MASTER_REALM);
  const existing = await store.clients.get(MASTER_REALM, CONSOLE_CLIENT);
  if (!existing) {
    const { client } = await createClient(
      store,
      { realmId: MASTER_REALM, clientId: CONSOLE_CLIENT, name: 'Admin console', public: true, redirectUris: [input.redirectUri], scopes: 'openid profile', pkceMethod: 'S256' },
      actor,
    );
    return client;
  }
  if (existing.redirectUris.includes(input.redirectUri)) return existing;
  return updateClient(store, { realmId: MASTER_REALM, clientId: CONSOLE_CLIENT, redirectUris: { add: [input.redirectUri] } }, actor);
}

// Read-only queries for the console: it reaches storage only through src/admin/operations.

export function listRealms(store: Store): Promise<Realm[]> {
  return store.realms.list();
}

export async function getRealm(store: Store, realmId: string): Promise<Realm> {
  return requireRealm(store, realmId);
}

export async function listClients(store: Store, input: { realmId: string }): Promise<Client[]> {
  await requireRealm(store, input.realmId);
  return store.clients.list(input.realmId);
}

export async function getClient(store: Store, input: { realmId: string; clientId: string }): Promise<Client> {
  const client = await store.clients.get(input.realmId, input.clientId);
  if (!client) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  return client;
}
