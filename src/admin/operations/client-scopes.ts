import type { Store } from '../../storage/store.js';
import type { Scope } from '../../storage/types.js';
import { ConflictError } from '../../storage/types.js';
import { NotFound, ValidationError, checkPathSegment } from '../validation.js';
import { forgetRealmDefaultScope } from './client-scope-links.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';

// RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ); bounded for the table.
const SCOPE_NAME = /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/;

/** The words of a consent page for a scope: every door (admin API, console, CLI, import) applies this rule. */
export function checkConsentText(text: string): string {
  const t = text.trim();
  if (t.length === 0 || t.length > 500 || /[\x00-\x1f\x7f]/.test(t)) throw new ValidationError('the consent text must have 1 to 500 characters, no control characters');
  return t;
}

/** A custom scope with the words the consent page shows for it. */
export async function createClientScope(store: Store, input: { realmId: string; name: string; consentText?: string }, actor: Actor = cliActor()): Promise<Scope> {
  await requireRealm(store, input.realmId);
  if (!SCOPE_NAME.test(input.name)) throw new ValidationError(`scope name ${JSON.stringify(input.name)} has characters RFC 6749 3.3 does not allow`);
  // The name is the {id} of the admin API's client scope paths.
  checkPathSegment('the scope name', input.name);
  if ((await store.realms.scopes(input.realmId)).some((s) => s.name === input.name)) throw new ConflictError(`client scope ${input.name} already exists in realm ${input.realmId}`);
  const scope = { name: input.name, consentText: checkConsentText(input.consentText ?? input.name) };
  await store.realms.upsertScope(input.realmId, scope, now());
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'CLIENT_SCOPE', resourcePath: `client-scopes/${scope.name}`, representation: scope });
  return scope;
}

export async function updateClientScope(store: Store, input: { realmId: string; name: string; consentText: string }, actor: Actor = cliActor()): Promise<Scope> {
  await requireRealm(store, input.realmId);
  if (!(await store.realms.scopes(input.realmId)).some((s) => s.name === input.name)) throw new NotFound(`client scope ${input.name} does not exist in realm ${input.realmId}`);
  const scope = { name: input.name, consentText: checkConsentText(input.consentText) };
  await store.realms.upsertScope(input.realmId, scope, now());
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'CLIENT_SCOPE', resourcePath: `client-scopes/${scope.name}`, representation: scope });
  return scope;
}

/** Deletes a scope no client uses any more (openid stays: OpenID Connect needs it). */
export async function deleteClientScope(store: Store, input: { realmId: string; name: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  if (input.name === 'openid') throw new ValidationError('the openid scope cannot be deleted');
  if (!(await store.realms.scopes(input.realmId)).some((s) => s.name === input.name)) throw new NotFound(`client scope ${input.name} does not exist in realm ${input.realmId}`);
  const users = (await store.clients.list(input.realmId)).filter((c) => c.scopes.includes(input.name)).map((c) => c.clientId);
  if (users.length > 0) throw new ValidationError(`client scope ${input.name} is still used by ${users.join(', ')}: remove it from those clients first`);
  await store.realms.deleteScope(input.realmId, input.name);
  // New clients no longer get it either (Keycloak drops it from the realm's default scopes too).
  await forgetRealmDefaultScope(store, input.realmId, input.name);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'CLIENT_SCOPE', resourcePath: `client-scopes/${input.name}` });
}
