import { ValidationError } from '../validation.js';
import { EVENT_TYPES } from '../../storage/repos/events.js';
import { DEFAULT_STORED_EVENT_TYPES, OPTIONAL_EVENT_TYPES, isOptionalEventType, type OptionalEventType } from '../../events/stored-types.js';

/**
 * Event type names between Realmgate and Keycloak's admin API. Four events the admin API names as
 * Keycloak does (its EventType), so that a tool written against Keycloak finds them; Realmgate's own name
 * elsewhere (the CLI, metrics, the stored rows). The other types are Keycloak's own names already (the
 * client registration events CLIENT_REGISTER, CLIENT_INFO, CLIENT_UPDATE, CLIENT_DELETE and their _ERROR
 * forms among them), or have no Keycloak counterpart (LOCKOUT, CODE_ISSUED, TOKEN_REUSE, CONSENT_DENIED, CLIENT_AUTH_ERROR) and keep
 * Realmgate's.
 */
export const KEYCLOAK_EVENT_TYPE: Partial<Record<string, string>> = {
  CONSENT: 'GRANT_CONSENT',
  REVOKE: 'REVOKE_GRANT',
  DEVICE_APPROVED: 'OAUTH2_DEVICE_VERIFY_USER_CODE',
  DEVICE_TO_TOKEN: 'OAUTH2_DEVICE_CODE_TO_TOKEN',
};

const STORED_EVENT_TYPE = new Map(Object.entries(KEYCLOAK_EVENT_TYPE).map(([ours, theirs]) => [theirs!, ours]));

/** Realmgate's type as the admin API names it. */
export const keycloakEventType = (ours: string): string => KEYCLOAK_EVENT_TYPE[ours] ?? ours;

/** A name from the admin API (Keycloak's or Realmgate's) as Realmgate stores it. */
export const storedEventType = (name: string): string => STORED_EVENT_TYPE.get(name) ?? name;

/**
 * Every name of Keycloak's EventType (server-spi-private, org.keycloak.events.EventType), success and
 * _ERROR. A Keycloak configuration (Terraform's keycloak_realm_events, an export) lists many Realmgate
 * never emits: they are accepted and have no effect.
 */
const KEYCLOAK_BASE_TYPES = [
  'LOGIN', 'REGISTER', 'LOGOUT', 'CODE_TO_TOKEN', 'CLIENT_LOGIN', 'REFRESH_TOKEN', 'VALIDATE_ACCESS_TOKEN', 'INTROSPECT_TOKEN',
  'FEDERATED_IDENTITY_LINK', 'REMOVE_FEDERATED_IDENTITY', 'UPDATE_EMAIL', 'UPDATE_PROFILE', 'UPDATE_PASSWORD', 'UPDATE_TOTP',
  'VERIFY_EMAIL', 'VERIFY_PROFILE', 'REMOVE_TOTP', 'GRANT_CONSENT', 'UPDATE_CONSENT', 'REVOKE_GRANT', 'SEND_VERIFY_EMAIL',
  'SEND_RESET_PASSWORD', 'SEND_IDENTITY_PROVIDER_LINK', 'RESET_PASSWORD', 'RESTART_AUTHENTICATION', 'INVALID_SIGNATURE',
  'REGISTER_NODE', 'UNREGISTER_NODE', 'USER_INFO_REQUEST', 'IDENTITY_PROVIDER_LINK_ACCOUNT', 'IDENTITY_PROVIDER_LOGIN',
  'IDENTITY_PROVIDER_FIRST_LOGIN', 'IDENTITY_PROVIDER_POST_LOGIN', 'IDENTITY_PROVIDER_RESPONSE', 'IDENTITY_PROVIDER_RETRIEVE_TOKEN',
  'IMPERSONATE', 'CUSTOM_REQUIRED_ACTION', 'EXECUTE_ACTIONS', 'EXECUTE_ACTION_TOKEN', 'CLIENT_INFO', 'CLIENT_REGISTER', 'CLIENT_UPDATE',
  'CLIENT_DELETE', 'CLIENT_INITIATED_ACCOUNT_LINKING', 'TOKEN_EXCHANGE', 'OAUTH2_DEVICE_AUTH', 'OAUTH2_DEVICE_VERIFY_USER_CODE',
  'OAUTH2_DEVICE_CODE_TO_TOKEN', 'AUTHREQID_TO_TOKEN', 'PERMISSION_TOKEN', 'DELETE_ACCOUNT', 'PUSHED_AUTHORIZATION_REQUEST',
  'UPDATE_CREDENTIAL', 'REMOVE_CREDENTIAL', 'USER_DISABLED_BY_PERMANENT_LOCKOUT', 'USER_DISABLED_BY_TEMPORARY_LOCKOUT', 'OAUTH2_EXTENSION_GRANT', 'JWT_BEARER',
] as const;

export const KEYCLOAK_EVENT_TYPES: ReadonlySet<string> = new Set(KEYCLOAK_BASE_TYPES.flatMap((t) => [t, `${t}_ERROR`]));

/**
 * Types stored whatever a realm chooses: logins, consents, failures, reuse, revocations, client
 * registrations, updates and deletions (REFRESH_TOKEN_GRACE is only counted).
 */
const ALWAYS_STORED: readonly string[] = EVENT_TYPES.filter((t) => !isOptionalEventType(t) && t !== 'REFRESH_TOKEN_GRACE');

/** Keycloak's enabledEventTypes of a realm storing `stored`: the always-stored types and its chosen optional ones, in Keycloak's names. */
export function keycloakEnabledEventTypes(stored: readonly string[]): string[] {
  return EVENT_TYPES.filter((t) => ALWAYS_STORED.includes(t) || stored.includes(t)).map(keycloakEventType);
}

/**
 * Keycloak's eventsEnabled and enabledEventTypes (its events config, a realm representation) as the
 * optional types a realm stores; undefined: no change. eventsEnabled false stores none of them (the
 * always-stored ones stay stored); an empty list means Keycloak's stored-by-default types, which are
 * Realmgate's defaults. Names are Keycloak's or Realmgate's: an always-stored type changes nothing, a
 * Keycloak type Realmgate never emits is accepted and ignored, anything else is refused.
 */
export function storedTypesFromKeycloak(input: { eventsEnabled?: unknown; enabledEventTypes?: unknown }): OptionalEventType[] | undefined {
  const { eventsEnabled, enabledEventTypes } = input;
  if (eventsEnabled !== undefined && eventsEnabled !== null && typeof eventsEnabled !== 'boolean') throw new ValidationError('eventsEnabled must be true or false');
  if (enabledEventTypes !== undefined && enabledEventTypes !== null && (!Array.isArray(enabledEventTypes) || enabledEventTypes.some((t) => typeof t !== 'string'))) {
    throw new ValidationError('enabledEventTypes must be a list of event type names');
  }
  const names = (enabledEventTypes ?? undefined) as string[] | undefined;
  const bad = names?.find((n) => !(EVENT_TYPES as readonly string[]).includes(storedEventType(n)) && !KEYCLOAK_EVENT_TYPES.has(n));
  if (bad !== undefined) throw new ValidationError(`${JSON.stringify(bad.slice(0, 100))} is not an event type (neither Keycloak's nor Realmgate's)`);
  if (eventsEnabled === false) return [];
  if (names === undefined) return undefined;
  if (names.length === 0) return [...DEFAULT_STORED_EVENT_TYPES];
  return OPTIONAL_EVENT_TYPES.filter((t) => names.some((n) => storedEventType(n) === t));
}

/** The longest retention a realm may set for its events or admin events: 20 years, in seconds. */
export const MAX_EVENTS_RETENTION_S = 7305 * 86_400;

/**
 * A realm's own retention of its events (Keycloak's eventsExpiration, a number of seconds, in the events
 * config and the realm representation) and of its admin events (Keycloak's realm attribute
 * adminEventsExpiration, seconds as a string). undefined: no change; null: the server's retention, which
 * 0 and an empty attribute ask for. Keycloak reads 0 or nothing as "kept for ever"; Realmgate always
 * deletes past a retention, so that storage stays bounded, and 0 falls back to the server's setting.
 */
export function retentionsFromKeycloak(input: { eventsExpiration?: unknown; attributes?: unknown }): { eventsRetention?: number | null; adminEventsRetention?: number | null } {
  const out: { eventsRetention?: number | null; adminEventsRetention?: number | null } = {};
  const events = retentionValue('eventsExpiration', input.eventsExpiration, false);
  if (events !== undefined) out.eventsRetention = events;
  const attrs = input.attributes;
  if (attrs !== null && typeof attrs === 'object' && !Array.isArray(attrs) && Object.hasOwn(attrs, 'adminEventsExpiration')) {
    const admin = retentionValue('adminEventsExpiration', (attrs as Record<string, unknown>).adminEventsExpiration, true);
    if (admin !== undefined) out.adminEventsRetention = admin;
  }
  return out;
}

function retentionValue(name: string, v: unknown, asAttribute: boolean): number | null | undefined {
  if (v === undefined || v === null) return undefined;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (asAttribute && typeof v === 'string' && /^\s*\d{0,15}\s*$/.test(v)) n = v.trim() === '' ? 0 : Number(v);
  else throw new ValidationError(`${name} must be a whole number of seconds`);
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_EVENTS_RETENTION_S) {
    throw new ValidationError(`${name} must be a whole number of seconds from 1 to ${MAX_EVENTS_RETENTION_S} (20 years), or 0 for the server's retention`);
  }
  return n === 0 ? null : n;
}
