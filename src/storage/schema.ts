import type { Generated } from 'kysely';

/**
 * Table types. Timestamps are integer seconds since the epoch; lists are JSON text; booleans are 0/1,
 * so that one set of queries serves SQLite and PostgreSQL alike.
 */
export interface RealmTable {
  id: string;
  display_name: string | null;
  code_lifetime: number;
  access_token_lifetime: number;
  refresh_idle_lifetime: number;
  refresh_max_lifetime: number;
  sso_session_lifetime: number;
  access_token_audience: string;
  signing_alg: string;
  not_before: number;
  created_at: number;
  max_login_failures: Generated<number>;
  lockout_seconds: Generated<number>;
  max_lockout_seconds: Generated<number>;
  enabled: Generated<number>;
  /** JSON list of the optional event types the realm stores (src/events/stored-types.ts). */
  stored_event_types: Generated<string>;
  /** Refresh concurrency grace: the window in seconds (0: off) and the most successors it gives. */
  refresh_grace_seconds: Generated<number>;
  refresh_grace_max: Generated<number>;
  access_token_format: Generated<string>;
  organization_required: Generated<number>;
  /** The realm's retention of its events and admin events in seconds; NULL: the server's. */
  events_retention: number | null;
  admin_events_retention: number | null;
  /** Keycloak's smtpServer map as JSON, without the password; '{}': no mail. */
  smtp_server: Generated<string>;
  /** The SMTP password, sealed (src/crypto/smtp-secret.ts); NULL: none. */
  smtp_password: string | null;
  reset_password_allowed: Generated<number>;
  action_token_user_lifespan: Generated<number>;
  action_token_admin_lifespan: Generated<number>;
  /** Keycloak's password policy as Realmgate keeps it ('' when none; src/admin/password-policy.ts). */
  password_policy: Generated<string>;
  /** Keycloak's login options (1/0; the remember-me lifetimes in seconds, 0: the usual ones). */
  login_with_email_allowed: Generated<number>;
  duplicate_emails_allowed: Generated<number>;
  remember_me: Generated<number>;
  sso_idle_remember_me: Generated<number>;
  sso_max_remember_me: Generated<number>;
  registration_allowed: Generated<number>;
  registration_email_as_username: Generated<number>;
  /** Keycloak's editUsernameAllowed: 1 when users (and administrators) may change usernames. */
  edit_username_allowed: Generated<number>;
  /** Keycloak's first broker login Review Profile mode: 'missing', 'on' or 'off'. */
  broker_review_profile: Generated<string>;
  verify_email: Generated<number>;
  /** Keycloak's parRequestUriLifespan: seconds a pushed authorization request's request_uri is valid (RFC 9126). */
  par_request_uri_lifespan: Generated<number>;
  /** Keycloak's webAuthnPolicy* settings as JSON ('{}': its defaults; src/admin/operations/webauthn-policy.ts). */
  webauthn_policy: Generated<string>;
  /** Keycloak's webAuthnPolicyPasswordless* settings as JSON ('{}': its defaults). */
  webauthn_passwordless_policy: Generated<string>;
  /** Keycloak's requiredActions settings as JSON, the configured actions only ('{}': the defaults; src/admin/required-actions.ts). */
  required_actions: Generated<string>;
  /** Keycloak's defaultDefaultClientScopes and defaultOptionalClientScopes as JSON {"default": [...], "optional": [...]}; NULL: the built-in scopes. */
  client_scope_defaults: string | null;
  /** Keycloak's defaultRole: the id of the role every new user gets; NULL: none. */
  default_role_id: string | null;
  /** Keycloak's internationalization settings: the switch (1/0), the supported locales as a JSON list, the default locale (NULL: none). */
  internationalization_enabled: Generated<number>;
  supported_locales: Generated<string>;
  default_locale: string | null;
}

/** Keycloak's realm localization texts (its REALM_LOCALIZATIONS), one row per realm, locale and key. */
export interface RealmLocalizationTable {
  realm_id: string;
  locale: string;
  key: string;
  value: string;
}

export interface ClientTable {
  realm_id: string;
  client_id: string;
  name: string | null;
  secret_hash: string | null;
  public: number;
  enabled: number;
  redirect_uris: string;
  scopes: string;
  created_at: number;
  auth_method: Generated<string>;
  post_logout_redirect_uris: Generated<string>;
  standard_flow_enabled: Generated<number>;
  direct_access_grants_enabled: Generated<number>;
  service_accounts_enabled: Generated<number>;
  pkce_method: Generated<string>;
  /** JSON list of the token endpoint authentication methods the client accepts. */
  auth_methods: Generated<string>;
  id_token_alg: Generated<string>;
  /** JSON list of the audiences (RFC 8707 resources) the client's access tokens may name. */
  audiences: Generated<string>;
  web_origins: Generated<string>;
  /** Back-Channel Logout 1.0: where logout tokens are POSTed (NULL: none), sid in them, offline chains revoked at logout. */
  backchannel_logout_url: string | null;
  backchannel_logout_session_required: Generated<number>;
  backchannel_logout_revoke_offline: Generated<number>;
  /** Keycloak's require.pushed.authorization.requests (RFC 9126 6): 1 when the client must push its requests. */
  require_pushed_authorization_requests: Generated<number>;
  /** Keycloak's standard.token.exchange.enabled (RFC 8693): 1 when the client may exchange tokens. */
  standard_token_exchange: Generated<number>;
  /** Keycloak's standard.token.exchange.enableRefreshRequestedTokenType: 'NO' or 'SAME_SESSION'. */
  token_exchange_refresh: Generated<string>;
  /** Keycloak's request.object.required (RFC 9101): 'not required', 'request or request_uri', 'request only' or 'request_uri only'. */
  request_object_required: Generated<string>;
  /** Keycloak's request.object.signature.alg: the one algorithm its request objects use; NULL: any asymmetric one. */
  request_object_alg: string | null;
  /** Front-Channel Logout 1.0: Keycloak's frontchannelLogout switch, the URL framed at logout (NULL: none), iss and sid added to it. */
  frontchannel_logout: Generated<number>;
  frontchannel_logout_url: string | null;
  frontchannel_logout_session_required: Generated<number>;
  /** JSON ClientJwtKeys (private_key_jwt: the client's keys, Keycloak's attributes); NULL: none. */
  jwt_keys: string | null;
  /** Keycloak's dpop.bound.access.tokens (RFC 9449): 1 when the token endpoint requires a DPoP proof of the client. */
  dpop_bound_access_tokens: Generated<number>;
  /** JSON list of the client's optional scopes (Keycloak's optionalClientScopes), a subset of scopes. */
  optional_scopes: Generated<string>;
  /** Keycloak's fullScopeAllowed: 1 (default) when its tokens carry every role of their user; 0: only the roles in its scope (role_scope_mappings). */
  full_scope_allowed: Generated<number>;
  /** The previous secret's hash, still accepted until rotated_secret_expires_at (epoch seconds); NULL: none. */
  rotated_secret_hash: Generated<string | null>;
  rotated_secret_expires_at: Generated<number | null>;
  /** Keycloak's client notBefore: tokens issued to the client before it (epoch seconds) are refused; 0: none. */
  not_before: Generated<number>;
  /** SHA-256 of the client's current RFC 7592 registration access token; null: none (not registered dynamically). */
  registration_token_hash: string | null;
}

/** Keycloak's client initial access tokens (RFC 7591 3: the registration endpoint's initial access token). */
export interface ClientInitialAccessTable {
  id: string;
  realm_id: string;
  /** SHA-256 of the token, base64url; the token itself is shown once, when it is made. */
  token_hash: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds; 0: it never expires. */
  expires_at: number;
  /** How many clients it may register in all, and how many more. */
  count: number;
  remaining: number;
}

/** Keycloak's composite roles: the parent role contains the child role (both of realm_id). */
export interface RoleCompositeTable {
  realm_id: string;
  parent_id: string;
  child_id: string;
}

/** Keycloak's role scope mappings: a role in the scope of a client ('client', its client id) or of a client scope ('scope', its name). */
export interface RoleScopeMappingTable {
  realm_id: string;
  owner_kind: 'client' | 'scope';
  owner: string;
  role_id: string;
}

/** RFC 9126: a pushed authorization request, keyed by the SHA-256 of its request_uri's random part. */
export interface PushedAuthorizationRequestTable {
  hash: string;
  realm_id: string;
  client_id: string;
  /** The authorization request's parameters as pushed (JSON object of strings; resource may be a list). */
  params: string;
  ip: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface UserTable {
  id: string;
  realm_id: string;
  username: string;
  email: string | null;
  password_hash: string;
  enabled: number;
  created_at: number;
  first_name: Generated<string | null>;
  last_name: Generated<string | null>;
  email_verified: Generated<number>;
  /** A JSON list of Keycloak required action names, e.g. '["UPDATE_PASSWORD"]'. */
  required_actions: Generated<string>;
  /** A JSON object of Keycloak user attributes, name -> list of values ('{}' when none). */
  attributes: Generated<string>;
  /** When the current password was set (forceExpiredPasswordChange); NULL: counted from created_at. */
  password_changed_at: number | null;
  /** The user storage provider (LDAP) the user came from (Keycloak's federationLink); NULL: a local user. */
  federation_link: Generated<string | null>;
}

/** An earlier password of a user, for passwordHistory (src/storage/repos/users.ts setPassword). */
export interface PasswordHistoryTable {
  id: string;
  user_id: string;
  realm_id: string;
  password_hash: string;
  created_at: number;
}

export interface OrganizationTable {
  id: string;
  realm_id: string;
  alias: string;
  name: string;
  created_at: number;
  description: Generated<string>;
  enabled: Generated<number>;
  redirect_url: string | null;
}

export interface OrganizationDomainTable {
  organization_id: string;
  realm_id: string;
  domain: string;
  verified: Generated<number>;
}

export interface MembershipTable {
  organization_id: string;
  user_id: string;
}

export interface ScopeTable {
  realm_id: string;
  name: string;
  consent_text: string;
  created_at: number;
}

export interface ConsentTable {
  realm_id: string;
  user_id: string;
  client_id: string;
  organization_id: string;
  scopes: string;
  created_at: number;
  updated_at: number;
}

export interface BrowserSessionTable {
  id: string;
  secret_hash: string;
  realm_id: string;
  user_id: string;
  auth_time: number;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  /** The user ticked "Remember me" (1): the cookie outlives the browser, the realm's remember-me lifetimes apply. */
  remember_me: Generated<number>;
  /** Seconds without use after which the session ends (0: none; a remember-me session's idle timeout). */
  idle_timeout: Generated<number>;
  /** When the session was last used (NULL: not since it began); read with idle_timeout. */
  used_at: number | null;
  /** Set when an administrator started the session by impersonation: who (id, username, realm); NULL otherwise. */
  impersonator_id: Generated<string | null>;
  impersonator_username: Generated<string | null>;
  impersonator_realm: Generated<string | null>;
  /** The address and User-Agent of the request that started the session (NULL: before they were kept). */
  ip_address: Generated<string | null>;
  user_agent: Generated<string | null>;
}

export interface InteractionTable {
  id: string;
  realm_id: string;
  client_id: string;
  browser_hash: string;
  csrf_token: string;
  params: string;
  user_id: string | null;
  session_id: string | null;
  consented: number;
  organization_id: string | null;
  created_at: number;
  expires_at: number;
  ip: Generated<string | null>;
  /** 1: the user passed their one-time password in this request (no session yet when an action is pending). */
  second_factor: Generated<number>;
}

export interface AuthorizationCodeTable {
  hash: string;
  realm_id: string;
  client_id: string;
  redirect_uri: string;
  user_id: string;
  session_id: string;
  organization_id: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  nonce: string | null;
  auth_time: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  chain_id: string | null;
  /** RFC 8707 resources of the authorization request, a JSON list. */
  resources: string;
  /** RFC 9449 10: the dpop_jkt of the authorization request (NULL: none); the exchange must prove that key. */
  dpop_jkt: string | null;
}

export interface RefreshChainTable {
  id: string;
  realm_id: string;
  client_id: string;
  user_id: string;
  organization_id: string;
  scopes: string;
  session_id: string;
  auth_time: number;
  created_at: number;
  max_expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
  /** SHA-256 of the chain's current refresh token (the only one that rotates it). */
  current_hash: string | null;
  /** The current token's generation; 0 when not known (a chain from before per-chain storage). */
  generation: Generated<number>;
  /** The last normal rotation: the grace window runs from here. */
  rotated_at: number | null;
  /** The earliest generation the grace window still answers, and how many grace answers it gave. */
  grace_from_gen: Generated<number>;
  grace_used: Generated<number>;
  /** RFC 9449 5: the JWK thumbprint a public client's chain is bound to (NULL: not bound). */
  dpop_jkt: string | null;
}

export interface RefreshTokenTable {
  hash: string;
  chain_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface SigningKeyTable {
  kid: string;
  realm_id: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  status: string;
  created_at: number;
  retired_at: number | null;
}

/** A realm's HMAC key for refresh tokens (HS512); secret_jwk is sealed like a private signing key. */
export interface HmacKeyTable {
  kid: string;
  realm_id: string;
  alg: string;
  secret_jwk: string;
  status: Generated<string>;
  created_at: number;
}

export interface DeviceCodeTable {
  hash: string;
  user_code_hash: string;
  realm_id: string;
  client_id: string;
  scopes: string;
  status: string;
  interval: number;
  last_polled_at: number | null;
  user_id: string | null;
  session_id: string | null;
  organization_id: string | null;
  auth_time: number | null;
  chain_id: string | null;
  created_at: number;
  expires_at: number;
  /** RFC 8707 resources of the device authorization request, a JSON list. */
  resources: string;
  /** The client address of the device authorization request; null for rows older than the column. */
  ip: string | null;
}

export interface RevokedAccessTokenTable {
  jti: string;
  realm_id: string;
  expires_at: number;
}

export interface EventTable {
  id: string;
  realm_id: string;
  time: number;
  type: string;
  outcome: string;
  client_id: string | null;
  user_id: string | null;
  username: string | null;
  ip: string | null;
  reason: string | null;
}

export interface LoginFailureTable {
  realm_id: string;
  subject: string;
  failures: number;
  lockouts: number;
  last_failure: number;
  blocked_until: number;
}

export interface RoleTable {
  id: string;
  realm_id: string;
  /** '' for a realm role. */
  client_id: Generated<string>;
  name: string;
  description: string | null;
  created_at: number;
}

export interface UserRoleTable {
  user_id: string;
  role_id: string;
}

export interface GroupTable {
  id: string;
  realm_id: string;
  /** '' for a top-level group. */
  parent_id: Generated<string>;
  name: string;
  description: string | null;
  /** JSON object of string lists. */
  attributes: Generated<string>;
  /** 1: every user created in the realm joins it. */
  realm_default: Generated<number>;
  created_at: number;
}

/** A user's TOTP authenticator (src/storage/repos/otp.ts). */
export interface OtpCredentialTable {
  id: string;
  realm_id: string;
  user_id: string;
  label: string | null;
  /** The key, sealed (src/crypto/otp-secret.ts). */
  secret: string;
  algorithm: string;
  digits: number;
  period: number;
  /** The last time step a code was accepted for (-1: none yet). */
  last_step: Generated<number>;
  created_at: number;
}

/** A WebAuthn security key of a user (src/storage/repos/webauthn.ts). */
export interface WebAuthnCredentialTable {
  id: string;
  realm_id: string;
  user_id: string;
  label: string | null;
  /** The raw credential id, base64url; unique per user. */
  credential_id: string;
  /** The COSE public key as the authenticator gave it, base64. */
  public_key: string;
  alg: number;
  aaguid: string;
  /** The last signature counter seen (W3C WebAuthn 6.1.1). */
  sign_count: Generated<number>;
  attestation_format: string;
  /** JSON list of the transports the browser reported (usb, nfc, ble, internal, hybrid). */
  transports: Generated<string>;
  created_at: number;
  /** 1: a passwordless key (Keycloak's webauthn-passwordless: a discoverable credential, the only factor). */
  passwordless: Generated<number>;
}

/** A WebAuthn challenge given out: its SHA-256, what it is bound to, for what, until when. */
export interface WebAuthnChallengeTable {
  hash: string;
  realm_id: string;
  bound_to: string;
  purpose: string;
  expires_at: number;
}

/** A recovery code of a user (src/storage/repos/recovery-codes.ts): its keyed hash, and when it was used. */
export interface RecoveryCodeTable {
  user_id: string;
  code_hash: string;
  realm_id: string;
  created_at: number;
  used_at: number | null;
}

/** An invitation into an organization (src/storage/repos/invitations.ts): the hash of its link's secret, never the secret. */
export interface OrganizationInvitationTable {
  id: string;
  realm_id: string;
  organization_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  user_id: string | null;
  secret_hash: string;
  created_at: number;
  expires_at: number;
}

/** An identity provider of a realm (src/storage/repos/identity-providers.ts). */
export interface IdentityProviderTable {
  id: string;
  realm_id: string;
  alias: string;
  provider_id: string;
  display_name: string | null;
  enabled: number;
  hide_on_login: number;
  trust_email: number;
  link_only: number;
  organization_id: string | null;
  /** Keycloak's config map (JSON), without the client secret. */
  config: string;
  /** The client secret at the provider, sealed (src/crypto/broker-secrets.ts). */
  client_secret: string | null;
  created_at: number;
}

/** A realm's user storage provider, an LDAP directory (src/storage/repos/user-storage.ts). */
/** The groups and roles an LDAP group or role mapper made or matched (migration 2026-11-29T1130). */
export interface LdapMapperLinkTable {
  mapper_id: string;
  kind: 'group' | 'role';
  target_id: string;
  /** The directory group's name. */
  name: string;
}

export interface UserStorageProviderTable {
  id: string;
  realm_id: string;
  name: string;
  provider_id: string;
  /** Keycloak's component config (JSON map of string lists), without bindCredential. */
  config: string;
  /** The bind password, sealed (src/crypto/broker-secrets.ts). */
  bind_credential: string | null;
  /** The LDAPStorageMapper subcomponents (JSON list of {id, name, providerId, config}). */
  mappers: string;
  created_at: number;
}

/** A user's account at an identity provider (Keycloak's federated identity). */
export interface FederatedIdentityTable {
  realm_id: string;
  identity_provider: string;
  federated_user_id: string;
  federated_username: string | null;
  user_id: string;
  created_at: number;
}

/** A mapper of an identity provider (Keycloak's identity provider mapper; src/storage/repos/identity-providers.ts). */
export interface IdentityProviderMapperTable {
  id: string;
  realm_id: string;
  /** The provider's alias. */
  identity_provider: string;
  name: string;
  /** Keycloak's identityProviderMapper, e.g. oidc-role-idp-mapper. */
  mapper_type: string;
  /** Keycloak's config map (JSON). */
  config: string;
  created_at: number;
}

/** The index of user attribute values (src/storage/attribute-index.ts): one row per user, name and value key. */
export interface UserAttributeValueTable {
  realm_id: string;
  name: string;
  value_key: string;
  user_id: string;
}

export interface GroupMemberTable {
  group_id: string;
  user_id: string;
}

export interface GroupRoleTable {
  group_id: string;
  role_id: string;
}

export interface AdminEventTable {
  id: string;
  realm_id: string;
  time_ms: number;
  operation_type: string;
  resource_type: string;
  resource_path: string;
  auth_realm_id: string | null;
  auth_client_id: string | null;
  auth_user_id: string | null;
  auth_username: string | null;
  ip: string | null;
  via: string;
  representation: string | null;
}

export interface LeaseTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface ProtocolMapperTable {
  id: string;
  realm_id: string;
  /** 'client' (owner: the client id) or 'scope' (owner: the client scope's name). */
  owner_type: string;
  owner: string;
  name: string;
  type: string;
  /** A JSON object of string values (Keycloak's config map). */
  config: string;
  created_at: number;
}

export interface MetaTable {
  key: string;
  value: string;
}

/** Used client assertion ids (RFC 7523 3 item 7): SHA-256 hex of realm, client and jti; until when it could be replayed. */
export interface ClientAssertionJtiTable {
  id: string;
  expires_at: number;
}

export interface Database {
  realms: RealmTable;
  clients: ClientTable;
  users: UserTable;
  organizations: OrganizationTable;
  memberships: MembershipTable;
  organization_domains: OrganizationDomainTable;
  scopes: ScopeTable;
  consents: ConsentTable;
  browser_sessions: BrowserSessionTable;
  interactions: InteractionTable;
  authorization_codes: AuthorizationCodeTable;
  refresh_chains: RefreshChainTable;
  refresh_tokens: RefreshTokenTable;
  signing_keys: SigningKeyTable;
  hmac_keys: HmacKeyTable;
  device_codes: DeviceCodeTable;
  pushed_authorization_requests: PushedAuthorizationRequestTable;
  revoked_access_tokens: RevokedAccessTokenTable;
  client_assertion_jtis: ClientAssertionJtiTable;
  /** Used DPoP proof ids (RFC 9449 11.1): SHA-256 hex of realm, htu and jti; same shape. */
  dpop_proof_jtis: ClientAssertionJtiTable;
  events: EventTable;
  login_failures: LoginFailureTable;
  meta: MetaTable;
  roles: RoleTable;
  user_roles: UserRoleTable;
  groups: GroupTable;
  group_members: GroupMemberTable;
  group_roles: GroupRoleTable;
  admin_events: AdminEventTable;
  leases: LeaseTable;
  protocol_mappers: ProtocolMapperTable;
  user_attribute_values: UserAttributeValueTable;
  otp_credentials: OtpCredentialTable;
  recovery_codes: RecoveryCodeTable;
  webauthn_credentials: WebAuthnCredentialTable;
  webauthn_challenges: WebAuthnChallengeTable;
  password_history: PasswordHistoryTable;
  identity_providers: IdentityProviderTable;
  federated_identities: FederatedIdentityTable;
  identity_provider_mappers: IdentityProviderMapperTable;
  user_storage_providers: UserStorageProviderTable;
  ldap_mapper_links: LdapMapperLinkTable;
  organization_invitations: OrganizationInvitationTable;
  role_scope_mappings: RoleScopeMappingTable;
  role_composites: RoleCompositeTable;
  client_initial_access: ClientInitialAccessTable;
  realm_localization: RealmLocalizationTable;
}

// Kysely's Generated marker is unused for now: every key is generated in the application.
export type { Generated };
