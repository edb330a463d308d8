import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Store } from '../../storage/store.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';

/**
 * Keycloak's realm housekeeping calls (RealmAdminResource, AttackDetectionResource): clearing the stored
 * events, the admin events and the brute-force counters. Each deletes in bounded slices, as the
 * collector does (src/collector.ts), so a large table is never held by one long statement; requests of
 * this node go between two slices.
 */

/** Rows per slice (the collector's). */
const SLICE = 500;

async function inSlices(slice: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await slice(SLICE);
    total += n;
    if (n < SLICE) return total;
    await yieldToEventLoop();
  }
}

/**
 * Deletes the realm's login and token events recorded up to `until` (seconds, the clock they are
 * recorded with: events that come during the clearing stay). Realmgate stores these for audit; Keycloak
 * lets an administrator with manage-events clear them, and so does Realmgate, but the clearing itself is
 * then recorded as an admin event (DELETE of `events`, with how many went), which this does not delete.
 */
export async function clearLoginEvents(store: Store, input: { realmId: string; until: number }, actor: Actor = cliActor()): Promise<number> {
  await requireRealm(store, input.realmId);
  const deleted = await inSlices((n) => store.events.deleteSlice(input.realmId, input.until, n));
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'REALM', resourcePath: 'events', representation: { deletedEvents: deleted } });
  return deleted;
}

/**
 * Deletes the realm's admin events recorded up to now, then records the clearing itself as a new admin
 * event (DELETE of `admin-events`, who and from where, how many went): the trail starts again with who
 * emptied it.
 */
export async function clearAdminEvents(store: Store, input: { realmId: string }, actor: Actor = cliActor()): Promise<number> {
  await requireRealm(store, input.realmId);
  const untilMs = Date.now();
  const deleted = await inSlices((n) => store.adminEvents.deleteSlice(input.realmId, untilMs, n));
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'REALM', resourcePath: 'admin-events', representation: { deletedAdminEvents: deleted } });
  return deleted;
}

/**
 * Clears every brute-force counter of the realm (Keycloak's "clear any user login failures for all
 * users"): every username's failures and lock, and also the counters of addresses, devices and
 * one-time codes (src/oauth/brute-force.ts), so that every locked account can sign in again at once.
 */
export async function unlockAllUsers(store: Store, input: { realmId: string }, actor: Actor = cliActor()): Promise<number> {
  await requireRealm(store, input.realmId);
  const cleared = await inSlices((n) => store.loginFailures.clearSlice(input.realmId, n));
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER_LOGIN_FAILURE', resourcePath: 'attack-detection/brute-force/users' });
  return cleared;
}

/** Which of Keycloak's caches a clear-*-cache call names. */
export type CacheName = 'realm' | 'user' | 'keys' | 'crl';

/** Records a cache clearing as Keycloak does: ACTION on the realm, the call's path. */
export async function recordCacheCleared(store: Store, input: { realmId: string; cache: CacheName }, actor: Actor = cliActor()): Promise<void> {
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'REALM', resourcePath: `clear-${input.cache}-cache` });
}
