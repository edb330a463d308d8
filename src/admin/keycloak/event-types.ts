/**
 * Event type names between Realmgate and Keycloak's admin API. Four events the admin API names as
 * Keycloak does (its EventType), so that a tool written against Keycloak finds them; Realmgate's own name
 * elsewhere (the CLI, metrics, the stored rows). The other types are Keycloak's own names already, or have
 * no Keycloak counterpart (LOCKOUT, CODE_ISSUED, TOKEN_REUSE, CONSENT_DENIED, CLIENT_AUTH_ERROR) and keep
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
  'USER_DISABLED_BY_PERMANENT_LOCKOUT', 'USER_DISABLED_BY_TEMPORARY_LOCKOUT', 'OAUTH2_EXTENSION_GRANT', 'JWT_BEARER',
] as const;

export const KEYCLOAK_EVENT_TYPES: ReadonlySet<string> = new Set(KEYCLOAK_BASE_TYPES.flatMap((t) => [t, `${t}_ERROR`]));
