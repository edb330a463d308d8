import type { Store } from '../../storage/store.js';
import { NotFound } from '../validation.js';
import { requireRealm } from './common.js';

/** Keycloak's installation provider of the keycloak.json adapter file (the one keycloak-js reads). */
export const KEYCLOAK_JSON = 'keycloak-oidc-keycloak-json';

/**
 * A client's keycloak.json, as Keycloak's KeycloakOIDCClientInstallation writes it, for
 * `new Keycloak('/keycloak.json')` and Keycloak's other adapters. `auth-server-url` is Realmgate's base
 * with its `/auth` (where keycloak-js finds the realm's endpoints); `ssl-required` is Keycloak's default,
 * `external` (Realmgate has no per-realm setting: TLS is its proxy's); a confidential client's file has no
 * `credentials`: Realmgate keeps only the secret's hash, shown once when it is made. Any other provider
 * (Keycloak's XML subsystems, the CLI snippets) is Keycloak's "Unknown Provider".
 */
export async function clientAdapterConfig(store: Store, input: { realmId: string; clientId: string; providerId: string; authUrl: string }): Promise<Record<string, unknown>> {
  const realm = await requireRealm(store, input.realmId);
  const client = await store.clients.get(realm.id, input.clientId);
  if (!client) throw new NotFound('Could not find client');
  if (input.providerId !== KEYCLOAK_JSON) throw new NotFound('Unknown Provider');
  const roles = await store.roles.list(realm.id, client.clientId);
  return {
    realm: realm.id,
    'auth-server-url': `${input.authUrl}/auth/`,
    'ssl-required': 'external',
    resource: client.clientId,
    ...(client.public ? { 'public-client': true } : {}),
    ...(roles.length > 0 ? { 'use-resource-role-mappings': true } : {}),
    'confidential-port': 0,
  };
}
