import type { EventType } from '../storage/repos/events.js';

/**
 * Which events a realm stores. Successful logins, consents, reuse detections, revocations, lockouts and
 * every failure are always stored: they are what an investigation needs. The routine successes below
 * are optional, per realm; successful refreshes are the bulk of the traffic (one per client every few
 * minutes), so by default they are only counted (src/events/counter.ts), as Keycloak stores no events
 * unless asked. A client's read of its own registration (CLIENT_INFO, RFC 7592 2.1) changes nothing and is
 * not stored by default either; its registration, update and deletion change who can obtain tokens and
 * are always stored. Admin events are recorded by the admin operations and never pass through here.
 */
export const OPTIONAL_EVENT_TYPES = ['REFRESH_TOKEN', 'CODE_ISSUED', 'CODE_TO_TOKEN', 'DEVICE_APPROVED', 'DEVICE_TO_TOKEN', 'LOGOUT', 'CLIENT_INFO'] as const satisfies readonly EventType[];

export type OptionalEventType = (typeof OPTIONAL_EVENT_TYPES)[number];

/** A new realm's list (the migration's column default says the same for existing realms). */
export const DEFAULT_STORED_EVENT_TYPES: readonly OptionalEventType[] = ['CODE_ISSUED', 'CODE_TO_TOKEN', 'DEVICE_APPROVED', 'DEVICE_TO_TOKEN', 'LOGOUT'];

export function isOptionalEventType(t: string): t is OptionalEventType {
  return (OPTIONAL_EVENT_TYPES as readonly string[]).includes(t);
}

/** True when an event of this type and outcome is written to the events table of a realm storing `stored`. */
export function isEventStored(stored: readonly string[] | undefined, type: EventType, outcome: 'success' | 'failure'): boolean {
  if (outcome === 'failure' || !isOptionalEventType(type)) return true;
  return (stored ?? DEFAULT_STORED_EVENT_TYPES).includes(type);
}
