import type { Store } from '../../storage/store.js';
import type { Client } from '../../storage/types.js';
import { DEFAULT_SCOPES } from '../../storage/repos/realms.js';
import { generateClientSecret, hashClientSecret } from '../../crypto/client-secrets.js';
import { checkRedirectUri, NotFound, parseScopeList, ValidationError } from '../validation.js';
import { REALM_MANAGEMENT } from '../authorization.js';
import { now, recordAdminEvent, requireRealm, cliActor, type Actor } from './common.js';
import { ensureServiceAccount, findServiceAccount } from './service-accounts.js';

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
    /** 'S256' requires PKCE of a confidential client too. */
    pkceMethod?: '' | 'S256';
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
    pkceMethod: input.pkceMethod ?? '',
  };
  await store.clients.create({ ...client, now: client.createdAt });
  if (client.serviceAccountsEnabled) {
    // A client deleted earlier under the same id left its service account disabled.
    const sa = await ensureServiceAccount(store, client);
    if (!sa.enabled) await store.users.update(sa.id, { enabled: true });
  }
  await recordAdminEvent(store, actor, { realmId: client.realmId, operation: 'CREATE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}`, representation: { ...client, secretHash: undefined } });
  return { client, secret, generated };
}

/** What an operator may change on a client (the admin API's PUT, the console's form). */
export interface ClientChanges {
  name?: string | null;
  enabled?: boolean;
  public?: boolean;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  scopes?: string[];
  standardFlowEnabled?: boolean;
  directAccessGrantsEnabled?: boolean;
  serviceAccountsEnabled?: boolean;
  pkceMethod?: '' | 'S256';
}

async function requireClient(store: Store, realmId: string, clientId: string): Promise<Client> {
  await requireRealm(store, realmId);
  const client = await store.clients.get(realmId, clientId);
  if (!client) throw new NotFound(`client ${clientId} does not exist in realm ${realmId}`);
  return client;
}

/**
 * Applies admin changes to a client, checked as at creation. Turning a confidential client public drops
 * its secret; turning a public client confidential generates one (returned, shown once).
 * (kc-protocol's updateClient is the CLI's door to the same change; the two merge into one.)
 */
export async function changeClient(store: Store, input: { realmId: string; clientId: string; changes: ClientChanges }, actor: Actor = cliActor()): Promise<{ client: Client; secret?: string }> {
  const before = await requireClient(store, input.realmId, input.clientId);
  if (before.clientId === REALM_MANAGEMENT) throw new ValidationError(`${REALM_MANAGEMENT} holds the admin roles and cannot be changed`);
  const c = input.changes;
  const after = { ...before, ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) } as Client;
  if (c.redirectUris) for (const uri of c.redirectUris) checkRedirectUri(uri);
  if (c.postLogoutRedirectUris) for (const uri of c.postLogoutRedirectUris) checkRedirectUri(uri);
  if (after.standardFlowEnabled && after.redirectUris.length === 0) throw new ValidationError('the authorization code flow needs at least one redirect URI');
  if (after.public && after.serviceAccountsEnabled) throw new ValidationError('a public client cannot have a service account: it has no secret to authenticate with');
  if (c.scopes) {
    const realmScopes = new Set((await store.realms.scopes(input.realmId)).map((s) => s.name));
    for (const s of c.scopes) if (!realmScopes.has(s)) throw new ValidationError(`scope ${s} is not defined in realm ${input.realmId}`);
  }
  if (c.name != null && c.name.length > 255) throw new ValidationError('the client name must have at most 255 characters');
  let secret: string | undefined;
  let secretHash: string | null | undefined;
  let authMethod: Client['authMethod'] | undefined;
  if (c.public === true && !before.public) {
    secretHash = null;
    authMethod = 'none';
  } else if (c.public === false && before.public) {
    secret = generateClientSecret();
    secretHash = await hashClientSecret(secret, { generated: true });
    authMethod = 'client_secret_basic';
  }
  await store.clients.update(input.realmId, input.clientId, {
    ...c,
    ...(c.redirectUris ? { redirectUris: [...new Set(c.redirectUris)] } : {}),
    ...(secretHash !== undefined ? { secretHash } : {}),
    ...(authMethod ? { authMethod } : {}),
  });
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.serviceAccountsEnabled) await ensureServiceAccount(store, client);
  await recordAdminEvent(store, actor, { realmId: client.realmId, operation: 'UPDATE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}`, representation: { ...client, secretHash: undefined } });
  return secret !== undefined ? { client, secret } : { client };
}

export async function setClientEnabled(store: Store, input: { realmId: string; clientId: string; enabled: boolean }, actor: Actor = cliActor()): Promise<Client> {
  return (await changeClient(store, { realmId: input.realmId, clientId: input.clientId, changes: { enabled: input.enabled } }, actor)).client;
}

/**
 * Replaces a confidential client's secret with a new generated one: the old secret is refused from the
 * next request on (by this process at once, by others within the cache window). Returns the new secret.
 */
export async function rotateClientSecret(store: Store, input: { realmId: string; clientId: string }, actor: Actor = cliActor()): Promise<string> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.public || client.clientId === REALM_MANAGEMENT) throw new ValidationError(`client ${client.clientId} has no secret`);
  const secret = generateClientSecret();
  await store.clients.update(input.realmId, input.clientId, { secretHash: await hashClientSecret(secret, { generated: true }) });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}/client-secret` });
  return secret;
}

/** Deletes a client, its roles and its service account; its refresh chains are revoked. */
export async function deleteClient(store: Store, input: { realmId: string; clientId: string }, actor: Actor = cliActor()): Promise<void> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.clientId === REALM_MANAGEMENT) throw new ValidationError(`${REALM_MANAGEMENT} holds the admin roles and cannot be deleted`);
  await store.clients.delete(input.realmId, input.clientId, now());
  await store.roles.deleteForClient(input.realmId, input.clientId);
  const sa = await findServiceAccount(store, client);
  if (sa) await store.users.update(sa.id, { enabled: false });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}` });
}
