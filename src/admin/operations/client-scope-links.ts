import type { Store } from '../../storage/store.js';
import type { Client, ClientScopeDefaults } from '../../storage/types.js';
import { defaultScopesOf } from '../../oauth/scopes.js';
import { NotFound, ValidationError } from '../validation.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { changeClient, realmScopeDefaults } from './clients.js';

/**
 * Keycloak's default and optional client scopes (ClientResource's default-client-scopes and
 * optional-client-scopes, RealmAdminResource's default-default-client-scopes and
 * default-optional-client-scopes). A client's default scopes are granted to a password or
 * client_credentials grant that asks for none and implied by openid; its optional ones only when asked
 * for (src/oauth/scopes.ts). openid is never listed: Keycloak has no such client scope, Realmgate implies
 * it as its exports do.
 */
export type ScopeKind = 'default' | 'optional';

/** The client's scopes of one kind, without openid (as Keycloak lists them). */
export function clientScopesOfKind(client: Client, kind: ScopeKind): string[] {
  return (kind === 'default' ? defaultScopesOf(client) : client.optionalScopes).filter((s) => s !== 'openid');
}

async function scopeNamed(store: Store, realmId: string, name: string): Promise<void> {
  if (!(await store.realms.scopes(realmId)).some((s) => s.name === name)) throw new NotFound('Client scope not found');
}

/**
 * Links a scope to a client as a default or an optional one (Keycloak's PUT
 * .../default-client-scopes/{id}); a scope linked as the other kind moves. openid may only be a default one.
 */
export async function linkClientScope(store: Store, input: { realmId: string; clientId: string; scope: string; kind: ScopeKind }, actor: Actor = cliActor()): Promise<Client> {
  await scopeNamed(store, input.realmId, input.scope);
  if (input.scope === 'openid' && input.kind === 'optional') throw new ValidationError('openid cannot be an optional scope: it is how a client asks for OpenID Connect');
  const client = await requireClientOf(store, input.realmId, input.clientId);
  const defaults = defaultScopesOf(client).filter((s) => s !== input.scope);
  const optional = client.optionalScopes.filter((s) => s !== input.scope);
  (input.kind === 'default' ? defaults : optional).push(input.scope);
  return changeLinks(store, client, defaults, optional, actor, `${input.kind}-client-scopes/${input.scope}`);
}

/** Unlinks a scope linked to the client as `kind` (Keycloak's DELETE); one not linked so changes nothing. */
export async function unlinkClientScope(store: Store, input: { realmId: string; clientId: string; scope: string; kind: ScopeKind }, actor: Actor = cliActor()): Promise<Client> {
  await scopeNamed(store, input.realmId, input.scope);
  const client = await requireClientOf(store, input.realmId, input.clientId);
  const defaults = defaultScopesOf(client);
  const linked = input.kind === 'default' ? defaults.includes(input.scope) : client.optionalScopes.includes(input.scope);
  if (!linked) return client;
  return changeLinks(
    store,
    client,
    defaults.filter((s) => s !== input.scope),
    client.optionalScopes.filter((s) => s !== input.scope),
    actor,
    `${input.kind}-client-scopes/${input.scope}`,
  );
}

async function requireClientOf(store: Store, realmId: string, clientId: string): Promise<Client> {
  await requireRealm(store, realmId);
  const client = await store.clients.get(realmId, clientId);
  if (!client) throw new NotFound('Could not find client');
  return client;
}

async function changeLinks(store: Store, client: Client, defaults: string[], optional: string[], actor: Actor, what: string): Promise<Client> {
  // The client's one change path (checks, the write, its admin event), then the link's own event.
  const { client: updated } = await changeClient(store, { realmId: client.realmId, clientId: client.clientId, changes: { scopes: defaults, optionalScopes: optional } }, actor);
  await recordAdminEvent(store, actor, { realmId: client.realmId, operation: 'UPDATE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}/${what}` });
  return updated;
}

/** The realm's scopes for new clients of one kind (Keycloak's default-default-client-scopes, ...). */
export async function realmDefaultScopes(store: Store, realmId: string, kind: ScopeKind): Promise<string[]> {
  const realm = await requireRealm(store, realmId);
  const names = (await store.realms.scopes(realmId)).map((s) => s.name);
  return realmScopeDefaults(realm, names)[kind];
}

/** Adds a scope to what new clients get, as a default or an optional one (it moves from the other kind). */
export async function linkRealmDefaultScope(store: Store, input: { realmId: string; scope: string; kind: ScopeKind }, actor: Actor = cliActor()): Promise<void> {
  await setRealmDefaultScope(store, input, true, actor);
}

/** Removes a scope from what new clients get as `kind`; one not there changes nothing. */
export async function unlinkRealmDefaultScope(store: Store, input: { realmId: string; scope: string; kind: ScopeKind }, actor: Actor = cliActor()): Promise<void> {
  await setRealmDefaultScope(store, input, false, actor);
}

async function setRealmDefaultScope(store: Store, input: { realmId: string; scope: string; kind: ScopeKind }, link: boolean, actor: Actor): Promise<void> {
  const realm = await requireRealm(store, input.realmId);
  const names = (await store.realms.scopes(input.realmId)).map((s) => s.name);
  if (!names.includes(input.scope)) throw new NotFound('Client scope not found');
  if (input.scope === 'openid') {
    // Every new client gets openid: it is not one of the realm's listed defaults.
    if (link && input.kind === 'optional') throw new ValidationError('openid cannot be an optional scope: it is how a client asks for OpenID Connect');
    return;
  }
  const current = realmScopeDefaults(realm, names);
  const other: ScopeKind = input.kind === 'default' ? 'optional' : 'default';
  const next: ClientScopeDefaults = { default: [...current.default], optional: [...current.optional] };
  if (link) {
    if (next[input.kind].includes(input.scope)) return;
    next[other] = next[other].filter((s) => s !== input.scope);
    next[input.kind].push(input.scope);
  } else {
    if (!next[input.kind].includes(input.scope)) return;
    next[input.kind] = next[input.kind].filter((s) => s !== input.scope);
  }
  await store.realms.update(input.realmId, { clientScopeDefaults: next });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: link ? 'CREATE' : 'DELETE', resourceType: 'REALM', resourcePath: `default-${input.kind === 'default' ? 'default' : 'optional'}-client-scopes/${input.scope}`, representation: next });
}

/** Drops a deleted scope from the realm's lists for new clients (deleteClientScope). */
export async function forgetRealmDefaultScope(store: Store, realmId: string, scope: string): Promise<void> {
  const realm = await requireRealm(store, realmId);
  const set = realm.clientScopeDefaults;
  if (!set || (!set.default.includes(scope) && !set.optional.includes(scope))) return;
  await store.realms.update(realmId, { clientScopeDefaults: { default: set.default.filter((s) => s !== scope), optional: set.optional.filter((s) => s !== scope) } });
}
