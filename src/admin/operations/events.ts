import type { Store } from '../../storage/store.js';
import type { AdminEvent, AdminEventFilter } from '../../storage/repos/admin-events.js';
import type { EventFilter, StoredEvent } from '../../storage/repos/events.js';
import { requireRealm } from './common.js';
import { checkPage } from '../validation.js';

/** What the doors (CLI, admin API, console) name and show: the event types and a stored event's shape. */
export { EVENT_TYPES } from '../../storage/repos/events.js';
export type { StoredEvent };

/** The most events one listing returns (the CLI's --limit; the admin API and console ask for fewer). */
const MAX_EVENTS = 10_000;

/**
 * The two audit logs, read by the CLI, the admin API and the console. `checkRealm`: refuse a realm that
 * does not exist (NotFound) instead of listing nothing; a caller that has loaded the realm already skips it.
 */
export async function listLoginEvents(store: Store, input: { realmId: string; filter?: EventFilter; checkRealm?: boolean }): Promise<StoredEvent[]> {
  if (input.checkRealm) await requireRealm(store, input.realmId);
  checkPage({ first: input.filter?.offset, max: input.filter?.limit }, MAX_EVENTS);
  return store.events.list(input.realmId, input.filter ?? {});
}

export async function listAdminEvents(store: Store, input: { realmId: string; filter?: AdminEventFilter; checkRealm?: boolean }): Promise<AdminEvent[]> {
  if (input.checkRealm) await requireRealm(store, input.realmId);
  checkPage({ first: input.filter?.first, max: input.filter?.max }, MAX_EVENTS);
  return store.adminEvents.list(input.realmId, input.filter ?? {});
}

/** The events filter of a user named by username (the CLI's --user): its events by name, and by id when it still exists. */
export async function userEventFilter(store: Store, realmId: string, username: string): Promise<Pick<EventFilter, 'userId' | 'username'>> {
  const name = username.toLowerCase();
  const user = await store.users.findByUsername(realmId, name);
  return { username: name, ...(user ? { userId: user.id } : {}) };
}
