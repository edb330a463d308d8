import type { Store } from '../../storage/store.js';
import type { Client } from '../../storage/types.js';
import { DEFAULT_SCOPES } from '../../storage/repos/realms.js';
import { generateClientSecret, hashClientSecret } from '../../crypto/client-secrets.js';
import { checkRedirectUri, parseScopeList, ValidationError } from '../validation.js';
import { now, recordAdminEvent, requireRealm, cliActor, type Actor } from './common.js';
import { ensureServiceAccount } from './service-accounts.js';

export async function createClient(
  store: Store,
  input: {
    realmId: string;
    clientId: string;
    redirectUris: string[];
    secret?: string;
    scopes?: string;
    public?: boolean;
    name?: string;
    authMethod?: string;
    postLogoutRedirectUris?: string[];
    /** Authorization code flow; on by default. */
    standardFlowEnabled?: boolean;
    /** Password grant (RFC 6749 4.3); off by default. */
    directAccessGrantsEnabled?: boolean;
    /** client_credentials for a service-account user (RFC 6749 4.4); off by default. */
    serviceAccountsEnabled?: boolean;
  },
  actor: Actor = cliActor(),
): Promise<{ client: Client; secret: string | undefined; generated: boolean }> {
  await requireRealm(store, input.realmId);
  // RFC 6749 A.1: client-id = *VSCHAR (%x20-7E).
  if (!/^[\x20-\x7E]{1,255}$/.test(input.clientId) || input.clientId.trim() !== input.clientId) {
    throw new ValidationError('client id must be 1-255 printable ASCII characters, without leading or trailing spaces');
  }
  const standardFlow = input.standardFlowEnabled ?? true;
  if (standardFlow && input.redirectUris.length === 0) throw new ValidationError('a client needs at least one --redirect-uri');
  for (const uri of input.redirectUris) checkRedirectUri(uri);
  const realmScopes = new Set((await store.realms.scopes(input.realmId)).map((s) => s.name));
  const scopes = input.scopes !== undefined ? parseScopeList(input.scopes) : DEFAULT_SCOPES.map((s) => s.name);
  for (const s of scopes) if (!realmScopes.has(s)) throw new ValidationError(`scope ${s} is not defined in realm ${input.realmId}`);
  if (input.public && input.secret !== undefined) throw new ValidationError('a public client has no secret: leave out --secret');
  for (const uri of input.postLogoutRedirectUris ?? []) checkRedirectUri(uri);
  const authMethod = input.public ? 'none' : (input.authMethod ?? 'client_secret_basic');
  if (authMethod !== 'none' && authMethod !== 'client_secret_basic' && authMethod !== 'client_secret_post') {
    throw new ValidationError('the authentication method must be client_secret_basic or client_secret_post');
  }
  if (input.public && input.serviceAccountsEnabled) throw new ValidationError('a public client cannot have a service account: it has no secret to authenticate with');
  if (input.public && input.authMethod !== undefined && input.authMethod !== 'none') throw new ValidationError('a public client does not authenticate: leave out --auth-method');
  let secret: string | undefined;
  let generated = false;
  let secretHash: string | null = null;
  if (!input.public) {
    if (input.secret !== undefined) {
      if (input.secret.length === 0 || input.secret.length > 512) throw new ValidationError('the client secret must have 1 to 512 characters');
      secret = input.secret;
    } else {
      secret = generateClientSecret();
      generated = true;
    }
    secretHash = await hashClientSecret(secret, { generated });
  }
  const client: Client = {
    realmId: input.realmId,
    clientId: input.clientId,
    name: input.name ?? null,
    secretHash,
    public: Boolean(input.public),
    enabled: true,
    redirectUris: [...new Set(input.redirectUris)],
    scopes,
    createdAt: now(),
    authMethod,
    postLogoutRedirectUris: [...new Set(input.postLogoutRedirectUris ?? [])],
    standardFlowEnabled: standardFlow,
    directAccessGrantsEnabled: Boolean(input.directAccessGrantsEnabled),
    serviceAccountsEnabled: Boolean(input.serviceAccountsEnabled),
  };
  await store.clients.create({ ...client, now: client.createdAt });
  if (client.serviceAccountsEnabled) await ensureServiceAccount(store, client);
  await recordAdminEvent(store, actor, { realmId: client.realmId, operation: 'CREATE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}`, representation: { ...client, secretHash: undefined } });
  return { client, secret, generated };
}
