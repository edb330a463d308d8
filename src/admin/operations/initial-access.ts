import type { Store } from '../../storage/store.js';
import type { InitialAccess } from '../../storage/repos/client-registration.js';
import { randomId, randomToken, tokenHash } from '../../crypto/random.js';
import { NotFound, ValidationError } from '../validation.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';

/** The longest an initial access token may live: ten years, in seconds. */
export const MAX_INITIAL_ACCESS_EXPIRATION = 10 * 365 * 24 * 3600;
/** The most clients one initial access token may register. */
export const MAX_INITIAL_ACCESS_COUNT = 1_000_000;

export interface NewInitialAccess {
  realmId: string;
  /** Seconds from now until it expires; 0 or absent: never (Keycloak's default). */
  expiration?: number;
  /** How many clients it may register; absent: 1 (Keycloak's default). */
  count?: number;
}

/**
 * Makes a client initial access token (Keycloak's clients-initial-access; RFC 7591 3's "initial access
 * token"): the bearer of it may register up to `count` clients at the realm's registration endpoint until
 * it expires. The token is returned once; only its SHA-256 is stored.
 */
export async function createInitialAccess(store: Store, input: NewInitialAccess, actor: Actor = cliActor()): Promise<{ access: InitialAccess; token: string }> {
  await requireRealm(store, input.realmId);
  const expiration = input.expiration ?? 0;
  const count = input.count ?? 1;
  if (!Number.isSafeInteger(expiration) || expiration < 0 || expiration > MAX_INITIAL_ACCESS_EXPIRATION) {
    throw new ValidationError(`expiration must be a whole number of seconds from 0 (never) to ${MAX_INITIAL_ACCESS_EXPIRATION}`);
  }
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_INITIAL_ACCESS_COUNT) {
    throw new ValidationError(`count must be a whole number of clients from 1 to ${MAX_INITIAL_ACCESS_COUNT}`);
  }
  const createdAt = now();
  const access: InitialAccess = { id: randomId(), realmId: input.realmId, createdAt, expiresAt: expiration === 0 ? 0 : createdAt + expiration, count, remaining: count };
  const token = randomToken();
  await store.clientRegistration.createInitialAccess({ ...access, tokenHash: tokenHash(token) });
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: 'CREATE',
    resourceType: 'CLIENT_INITIAL_ACCESS_MODEL',
    resourcePath: `clients-initial-access/${access.id}`,
    representation: initialAccessRepresentation(access),
  });
  return { access, token };
}

/** The realm's initial access tokens that can still register a client, newest first. */
export async function listInitialAccess(store: Store, realmId: string): Promise<InitialAccess[]> {
  await requireRealm(store, realmId);
  return store.clientRegistration.listInitialAccess(realmId, now());
}

export async function deleteInitialAccess(store: Store, input: { realmId: string; id: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  if (!(await store.clientRegistration.deleteInitialAccess(input.realmId, input.id))) throw new NotFound(`realm ${input.realmId} has no initial access token ${input.id}`);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'CLIENT_INITIAL_ACCESS_MODEL', resourcePath: `clients-initial-access/${input.id}` });
}

/**
 * Keycloak's ClientInitialAccessPresentation: `timestamp` and `expiration` in seconds (the expiration
 * relative to the timestamp, 0 for never), `count` and `remainingCount`.
 */
export function initialAccessRepresentation(a: InitialAccess): { id: string; timestamp: number; expiration: number; count: number; remainingCount: number } {
  return { id: a.id, timestamp: a.createdAt, expiration: a.expiresAt === 0 ? 0 : a.expiresAt - a.createdAt, count: a.count, remainingCount: a.remaining };
}

/**
 * Keycloak's POST clients/{id}/registration-access-token: a new RFC 7592 registration access token for the
 * client (any client, registered dynamically or not), which its configuration endpoint then takes; the
 * one it had, if any, is refused from now on. Returned once; only its SHA-256 is stored.
 */
export async function regenerateRegistrationToken(store: Store, input: { realmId: string; clientId: string }, actor: Actor = cliActor()): Promise<string> {
  await requireRealm(store, input.realmId);
  const token = randomToken();
  if (!(await store.clientRegistration.setRegistrationToken(input.realmId, input.clientId, tokenHash(token)))) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'CLIENT', resourcePath: `clients/${input.clientId}/registration-access-token` });
  return token;
}
