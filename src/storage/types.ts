/** Domain records as the protocol core sees them (JSON columns parsed, 0/1 as booleans). */
export interface Realm {
  id: string;
  displayName: string | null;
  codeLifetime: number;
  accessTokenLifetime: number;
  refreshIdleLifetime: number;
  refreshMaxLifetime: number;
  ssoSessionLifetime: number;
  accessTokenAudience: string;
  signingAlg: string;
  notBefore: number;
  createdAt: number;
  /** Brute-force protection: failures before a lockout, its first length, its longest. */
  maxLoginFailures: number;
  lockoutSeconds: number;
  maxLockoutSeconds: number;
  /** A disabled realm answers no protocol request (its admin API stays reachable). */
  enabled: boolean;
  /** The optional event types this realm stores; the others are only counted (src/events/stored-types.ts). */
  storedEventTypes: string[];
  /**
   * Refresh concurrency grace: a token presented again within this many seconds of its rotation gets a
   * successor instead of revoking its chain (0: off), at most refreshGraceMax times per rotation.
   */
  refreshGraceSeconds: number;
  refreshGraceMax: number;
  /** `jwt` (Keycloak's typ Bearer tokens) or `rfc9068` (typ at+jwt, client_id). */
  accessTokenFormat: 'jwt' | 'rfc9068';
  /** A user of no organization gets no code (on); or signs in without the organization claim (off). */
  organizationRequired: boolean;
  /**
   * How long the collector keeps this realm's events and its admin events, in seconds (Keycloak's
   * eventsExpiration and adminEventsExpiration); null: the server's retention
   * (REALMGATE_EVENTS_RETENTION_DAYS, REALMGATE_ADMIN_EVENTS_RETENTION_DAYS).
   */
  eventsRetention: number | null;
  adminEventsRetention: number | null;
  /**
   * Keycloak's smtpServer map (host, port, from, fromDisplayName, replyTo, auth, user, ssl, starttls,
   * ...: strings, as Keycloak writes them), without the password; {} when the realm sends no mail.
   */
  smtpServer: Record<string, string>;
  /** The SMTP password, sealed (src/crypto/smtp-secret.ts); null: none. Never shown. */
  smtpPassword: string | null;
  /** The login page offers "Forgot password?" (Keycloak's resetPasswordAllowed; needs smtpServer). */
  resetPasswordAllowed: boolean;
  /** How long a mailed link lives, in seconds: asked for by the user (a reset), or by an administrator (Keycloak's actionTokenGeneratedBy*Lifespan). */
  actionTokenUserLifespan: number;
  actionTokenAdminLifespan: number;
  /** Keycloak's passwordPolicy as Realmgate keeps it ('' when none; src/admin/password-policy.ts). */
  passwordPolicy: string;
  /** Keycloak's loginWithEmailAllowed: the sign-in forms and the password grant take a user's email too (a unique one). */
  loginWithEmailAllowed: boolean;
  /** Keycloak's duplicateEmailsAllowed: off, no two users of the realm may have the same email (ignoring case). */
  duplicateEmailsAllowed: boolean;
  /** Keycloak's rememberMe: the login page offers "Remember me" (a cookie that outlives the browser). */
  rememberMe: boolean;
  /** Keycloak's ssoSessionIdleTimeoutRememberMe / ssoSessionMaxLifespanRememberMe, seconds; 0: the usual lifetimes. */
  ssoIdleRememberMe: number;
  ssoMaxRememberMe: number;
  /** The login page offers "Register" (Keycloak's registrationAllowed). */
  registrationAllowed: boolean;
  /** The registration form asks no username: the email is the username (Keycloak's registrationEmailAsUsername). */
  registrationEmailAsUsername: boolean;
  /** Users may change their username (account page, account REST API), administrators too (Keycloak's editUsernameAllowed). */
  editUsernameAllowed: boolean;
  /** Keycloak's first broker login Review Profile mode (update.profile.on.first.login): missing, on or off. */
  brokerReviewProfile: BrokerReviewProfile;
  /** A user whose email is not verified verifies it (a mailed link) before signing in (Keycloak's verifyEmail). */
  verifyEmail: boolean;
  /** RFC 9126 2.2: seconds a pushed request's request_uri is valid (Keycloak's parRequestUriLifespan, default 60). */
  parRequestUriLifespan: number;
  /** Keycloak's webAuthnPolicy* settings (security keys as a second factor). */
  webAuthnPolicy: WebAuthnPolicy;
  /** Keycloak's webAuthnPolicyPasswordless* settings (passwordless keys; user verification is always required). */
  webAuthnPasswordlessPolicy: WebAuthnPolicy;
  /** Keycloak's requiredActions settings of the realm, the configured ones (src/admin/required-actions.ts gives the defaults of the others). */
  requiredActionSettings: Partial<Record<RequiredAction, RequiredActionSetting>>;
  /**
   * Keycloak's defaultDefaultClientScopes and defaultOptionalClientScopes: the scopes a new client gets,
   * by name (openid is never listed: every new client gets it). null: Realmgate's built-in scopes, all default.
   */
  clientScopeDefaults: ClientScopeDefaults | null;
  /** Keycloak's defaultRole: the id of the role (normally the composite default-roles-<realm>) every new user is mapped to; null: none. */
  defaultRoleId: string | null;
  /** Keycloak's internationalizationEnabled: the pages may be shown in another language than English. */
  internationalizationEnabled: boolean;
  /** Keycloak's supportedLocales: the BCP 47 tags (de, de-CH) the pages may be shown in, in the order given, no duplicates. */
  supportedLocales: string[];
  /** Keycloak's defaultLocale: the locale when none of the user's matches (null: English); need not be a supported one, as Keycloak allows. */
  defaultLocale: string | null;
}

export interface ClientScopeDefaults {
  default: string[];
  optional: string[];
}

/** Keycloak's request.object.required values (OIDCConfigAttributes), exactly as it stores them. */
export const REQUEST_OBJECT_REQUIRED = ['not required', 'request or request_uri', 'request only', 'request_uri only'] as const;
export type RequestObjectRequired = (typeof REQUEST_OBJECT_REQUIRED)[number];

/** A client's previous secret, kept by a rotation for a while: its hash and until when it is accepted. */
export interface RotatedSecret {
  hash: string;
  expiresAt: number;
}

export interface Client {
  realmId: string;
  clientId: string;
  name: string | null;
  secretHash: string | null;
  public: boolean;
  enabled: boolean;
  redirectUris: string[];
  /** The scopes the client may be granted: its default ones and its optional ones. */
  scopes: string[];
  /**
   * Keycloak's optional client scopes, a subset of `scopes`: granted only when asked for. The others are
   * default ones: granted by a password or client_credentials grant that asks for none, and implied by
   * openid (profile and email claims, src/oauth/scopes.ts).
   */
  optionalScopes: string[];
  createdAt: number;
  /** The first of authMethods (kept for callers that show one method). */
  authMethod: ClientAuthMethod;
  /** How the client may authenticate at the token endpoint: ['none'] for a public client. */
  authMethods: ClientAuthMethod[];
  postLogoutRedirectUris: string[];
  /** The authorization code flow (Keycloak's standardFlowEnabled). */
  standardFlowEnabled: boolean;
  /** The resource owner password grant (RFC 6749 4.3; Keycloak's directAccessGrantsEnabled). */
  directAccessGrantsEnabled: boolean;
  /** client_credentials (RFC 6749 4.4) for the client's service-account user. */
  serviceAccountsEnabled: boolean;
  /** Keycloak's pkce.code.challenge.method: 'S256' requires PKCE of this client; '' leaves it optional (public clients always need it). */
  pkceMethod: '' | 'S256';
  /** OIDC Registration id_token_signed_response_alg: RS256 (default), ES256 or EdDSA. */
  idTokenAlg: string;
  /** Audiences (absolute URIs or names) its access tokens may carry; RFC 8707 resources must be among them. */
  audiences: string[];
  /** Browser origins allowed to call the JSON endpoints (CORS) and frame the status iframe; "+" = those of the redirect URIs. */
  webOrigins: string[];
  /** OpenID Connect Back-Channel Logout 1.0 (Keycloak's backchannel.logout.* attributes). */
  backchannelLogout: BackchannelLogoutSettings;
  /** RFC 9126 6 (Keycloak's require.pushed.authorization.requests): the authorization endpoint takes only pushed requests. */
  requirePushedAuthorizationRequests: boolean;
  /** RFC 8693 (Keycloak's standard.token.exchange.enabled): the client may exchange tokens meant for it; default off. */
  standardTokenExchange: boolean;
  /** Keycloak's standard.token.exchange.enableRefreshRequestedTokenType: NO, or SAME_SESSION (a refresh token of the subject token's session). */
  tokenExchangeRefresh: TokenExchangeRefresh;
  /** RFC 9101 (Keycloak's request.object.required): whether its authorization requests must be request objects. */
  requestObjectRequired: RequestObjectRequired;
  /** Keycloak's request.object.signature.alg: the one algorithm its request objects may use; null: any asymmetric one. */
  requestObjectSignatureAlg: string | null;
  /** OpenID Connect Front-Channel Logout 1.0 (Keycloak's frontchannelLogout and frontchannel.logout.* attributes). */
  frontchannelLogout: FrontchannelLogoutSettings;
  /** private_key_jwt: where the client's public keys are (Keycloak's client-jwt attributes); null: none set. */
  jwtKeys: ClientJwtKeys | null;
  /** RFC 9449 (Keycloak's dpop.bound.access.tokens): the token endpoint refuses this client's requests without a DPoP proof. */
  dpopBoundAccessTokens: boolean;
  /**
   * Keycloak's fullScopeAllowed (default true): its access tokens carry every role of their user. false:
   * only the roles in its scope (its own client roles, and those mapped to its scope or to the scope of one
   * of the token's client scopes), src/oauth/role-scope.ts.
   */
  fullScopeAllowed: boolean;
  /**
   * The previous secret, still accepted until `expiresAt` (epoch seconds) after a rotation that kept it
   * (Keycloak's rotated secret); null: none.
   */
  rotatedSecret: RotatedSecret | null;
  /** Keycloak's client notBefore: every token issued to the client before it (epoch seconds) is refused; 0: none. */
  notBefore: number;
}

/** Keycloak's TokenExchangeRefreshTokenEnabled: whether a token exchange may issue a refresh token. */
export const TOKEN_EXCHANGE_REFRESH = ['NO', 'SAME_SESSION'] as const;
export type TokenExchangeRefresh = (typeof TOKEN_EXCHANGE_REFRESH)[number];

/** A client without front-channel logout (Keycloak's default for session required: true). */
export const NO_FRONTCHANNEL_LOGOUT: FrontchannelLogoutSettings = Object.freeze({ enabled: false, url: null, sessionRequired: true });

export interface FrontchannelLogoutSettings {
  /** Keycloak's frontchannelLogout: the client takes part in front-channel logout (only with a url does anything happen). */
  enabled: boolean;
  /** The URL the logout page frames when a browser session the client was used in ends; null: none. */
  url: string | null;
  /** iss and sid are added to the URL (frontchannel.logout.session.required, default true). */
  sessionRequired: boolean;
}

/**
 * A client's keys for signed-JWT authentication, as Keycloak's client attributes hold them. Keycloak's
 * order decides which is used: the JWKS URL when useJwksUrl, else the inline JWKS when useJwksString,
 * else the certificate.
 */
export interface ClientJwtKeys {
  /** use.jwks.url / jwks.url */
  useJwksUrl: boolean;
  jwksUrl: string | null;
  /** use.jwks.string / jwks.string: a JWKS document (JSON text). */
  useJwksString: boolean;
  jwksString: string | null;
  /** jwt.credential.certificate: base64 DER X.509 certificate (the console's "Keys" tab). */
  certificate: string | null;
  /** jwt.credential.public.key: base64 DER SubjectPublicKeyInfo (Keycloak's "Public key PEM" import), used without a certificate. */
  publicKey?: string | null;
  /** token.endpoint.auth.signing.alg: the only algorithm accepted when set. */
  signingAlg: string | null;
  /** token.endpoint.auth.signing.max.exp: seconds an assertion may be used after iat (default 60). */
  maxExp: number | null;
}

/** A client without back-channel logout (Keycloak's defaults for the other two settings). */
export const NO_BACKCHANNEL_LOGOUT: BackchannelLogoutSettings = Object.freeze({ url: null, sessionRequired: true, revokeOfflineTokens: false });

export interface BackchannelLogoutSettings {
  /** Where logout tokens are POSTed when a session the client was used in ends; null: none. */
  url: string | null;
  /** The logout token carries sid (backchannel.logout.session.required, default true). */
  sessionRequired: boolean;
  /** A logout also revokes the user's offline chains of the client (backchannel.logout.revoke.offline.tokens). */
  revokeOfflineTokens: boolean;
}

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

export interface User {
  id: string;
  realmId: string;
  username: string;
  email: string | null;
  passwordHash: string;
  enabled: boolean;
  createdAt: number;
  firstName: string | null;
  lastName: string | null;
  emailVerified: boolean;
  /** Keycloak's required actions the user must complete at the next sign-in. */
  requiredActions: RequiredAction[];
  /** Keycloak's user attributes: name -> values (admin/validation.ts checkUserAttributes says what is kept). */
  attributes: UserAttributes;
  /** When the current password was set (seconds; the user's creation when unknown): forceExpiredPasswordChange. */
  passwordChangedAt: number;
  /** The user storage provider (LDAP) holding the user's password (Keycloak's federationLink); absent/null: local. */
  federationLink?: string | null;
}

/** An LDAPStorageMapper subcomponent of a user storage provider (Keycloak's ComponentRepresentation). */
export interface UserStorageMapper {
  id: string;
  name: string;
  providerId: string;
  config: Record<string, string[]>;
}

/** A user storage provider (Keycloak's UserStorageProvider component, providerId "ldap"). */
export interface UserStorageProvider {
  id: string;
  realmId: string;
  name: string;
  providerId: 'ldap';
  /** Keycloak's config, as it names it (each value a list of strings), without bindCredential. */
  config: Record<string, string[]>;
  /** bindCredential, sealed; null: none. */
  sealedBindCredential: string | null;
  mappers: UserStorageMapper[];
  createdAt: number;
}

/** Keycloak's user attributes, as UserRepresentation.attributes: each name has a list of string values. */
export type UserAttributes = Record<string, string[]>;

/**
 * The required actions Realmgate acts on: UPDATE_PASSWORD, a temporary password to replace at the next
 * sign-in; CONFIGURE_TOTP, an authenticator app to set up at the next sign-in; webauthn-register (Keycloak's
 * alias, in its case), a security key to register at the next sign-in; TERMS_AND_CONDITIONS, the realm's
 * terms to accept; UPDATE_PROFILE, the email and names to review; VERIFY_EMAIL, a mailed link to follow;
 * delete_account (Keycloak's alias), the user's confirmation that their account be deleted (off in a realm
 * until an administrator enables it, as in Keycloak); idp_link, an application's request that the user
 * link an account at one of the realm's identity providers (kc_action=idp_link:<alias> only: set on a
 * user, as in Keycloak, it names no provider and asks nothing); delete_credential, an application's request
that the user delete one of their credentials (kc_action=delete_credential:<credential id> only; likewise
nothing when set on a user). A user's list is kept in this order; the order they are asked in is the realm's priorities
 * (src/admin/required-actions.ts).
 */
export const REQUIRED_ACTIONS = ['UPDATE_PASSWORD', 'CONFIGURE_TOTP', 'webauthn-register', 'webauthn-register-passwordless', 'TERMS_AND_CONDITIONS', 'UPDATE_PROFILE', 'VERIFY_EMAIL', 'delete_account', 'idp_link', 'delete_credential'] as const;
export type RequiredAction = (typeof REQUIRED_ACTIONS)[number];

/** Keycloak's RequiredActionProviderRepresentation settings of one action in a realm. */
export interface RequiredActionSetting {
  /** Off: the action is not asked (a user keeps it, as in Keycloak) and kc_action may not ask for it. */
  enabled: boolean;
  /** Every new user gets it (Keycloak's defaultAction). */
  defaultAction: boolean;
  /** Lower first: the order the pending actions are asked in. */
  priority: number;
  /** Keycloak's config map (strings); Realmgate reads TERMS_AND_CONDITIONS' terms_text. */
  config: Record<string, string>;
}

export interface Organization {
  id: string;
  realmId: string;
  alias: string;
  name: string;
}

export interface Scope {
  name: string;
  consentText: string;
}

export interface BrowserSession {
  id: string;
  realmId: string;
  userId: string;
  authTime: number;
  expiresAt: number;
  /** The user ticked "Remember me": the cookie outlives the browser (absent: false). */
  rememberMe?: boolean;
  /** Seconds unused after which the session ends; 0 or absent: none (a remembered session's ssoSessionIdleTimeoutRememberMe). */
  idleTimeout?: number;
  /** The administrator who started this session by impersonating the user (Keycloak's IMPERSONATOR_* notes); absent: the user did. */
  impersonator?: Impersonator;
  /** The address of the request that started the session (Keycloak's user session IP address); absent: not known. */
  ipAddress?: string;
  /** That request's User-Agent, at most 255 characters; absent: none sent, or not known. */
  userAgent?: string;
}

/**
 * When a first sign-in through an identity provider shows the review page of the account it gives
 * (Keycloak's IdpReviewProfileAuthenticator modes): only when something is missing, always, never.
 */
export const BROKER_REVIEW_PROFILE_MODES = ['missing', 'on', 'off'] as const;
export type BrokerReviewProfile = (typeof BROKER_REVIEW_PROFILE_MODES)[number];

/** Who impersonated: the administrator's user id, username and realm. */
export interface Impersonator {
  userId: string;
  username: string;
  realmId: string;
}

export interface AuthorizationParams {
  clientId: string;
  /** Set when the request comes from the device flow (RFC 8628): the hash of its device_code. */
  deviceCodeHash?: string;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: string | undefined;
  nonce: string | undefined;
  /** OIDC Core 3.1.2.1 */
  prompt?: string[];
  maxAge?: number;
  loginHint?: string;
  /** OIDC Core 3.1.2.1 ui_locales: the client's preferred languages, space-separated (src/http/i18n.ts). */
  uiLocales?: string;
  /** The language the user chose during this sign-in (Keycloak's kc_locale). */
  locale?: string;
  /** Multiple Response Types 2.1 / Form Post Response Mode; absent means query. */
  responseMode?: 'fragment' | 'form_post';
  /** RFC 8707 2.1: the resources named, already checked against the client's audiences. */
  resources?: string[];
  /** RFC 9449 10: dpop_jkt, the thumbprint of the key the code exchange must prove. */
  dpopJkt?: string;
  /** Keycloak's application-initiated action (kc_action): a required action the user is asked to do now. */
  kcAction?: AppInitiatedAction;
  /** The part of kc_action after its colon (Keycloak's kc_action parameter): idp_link's provider alias, delete_credential's credential id. */
  kcActionParameter?: string;
  /** How the action ended, told to the client in kc_action_status. */
  kcActionStatus?: 'success' | 'cancelled';
  /** Keycloak's kc_idp_hint: the alias of the identity provider to sign in with at once (keycloak-js idpHint). */
  idpHint?: string;
  /**
   * Identity brokering: the account at a provider that met an existing local user (same email or
   * username); it is linked to that user once they sign in to it here (src/oauth/broker.ts).
   */
  brokerLink?: { alias: string; id: string; username: string; userId: string; by: 'email' | 'username'; claims?: Record<string, unknown> };
  /**
   * A provider's account that cannot make a user as it is (no email, no names: Keycloak's first broker
   * login "Review Profile"), waiting for the user to complete it.
   */
  brokerReview?: { alias: string; id: string; username: string; email?: string; firstName?: string; lastName?: string; claims?: Record<string, unknown> };
  /** The user ticked "Remember me" on the login page (a realm with rememberMe): the session started is a remembered one. */
  rememberMe?: boolean;
  /** VERIFY_EMAIL: the address this sign-in mailed its link to already (a reload does not mail again). */
  verifyEmailSentTo?: string;
  /** A user with both an authenticator app and a security key chose this one ("Use another method"); absent: the key. */
  secondFactorMethod?: 'otp' | 'webauthn';
}

/** The actions a client may ask for with kc_action (keycloak-js login({ action })). */
export const APP_INITIATED_ACTIONS = ['CONFIGURE_TOTP', 'UPDATE_PASSWORD', 'UPDATE_PROFILE', 'delete_account', 'idp_link', 'delete_credential'] as const;
export type AppInitiatedAction = (typeof APP_INITIATED_ACTIONS)[number];

export interface Interaction {
  id: string;
  realmId: string;
  clientId: string;
  browserHash: string;
  csrfToken: string;
  params: AuthorizationParams;
  userId: string | null;
  sessionId: string | null;
  consented: boolean;
  organizationId: string | null;
  expiresAt: number;
  /** The user passed their one-time password in this request (src/oauth/otp.ts). */
  secondFactor: boolean;
}

/** The identity provider types Realmgate brokers to (Keycloak's providerId): OpenID Connect providers and Keycloak's social ones (src/oauth/social-providers.ts). */
export const IDENTITY_PROVIDER_TYPES = ['oidc', 'keycloak-oidc', 'google', 'github', 'gitlab', 'microsoft', 'facebook', 'linkedin-openid-connect', 'bitbucket'] as const;
export type IdentityProviderType = (typeof IDENTITY_PROVIDER_TYPES)[number];

/**
 * An OpenID Connect provider the realm's users may sign in with (Keycloak's identity provider). `config`
 * is Keycloak's config map (authorizationUrl, tokenUrl, clientId, ...: strings), kept as given so that
 * it exports as it came; the client secret is not in it but sealed apart.
 */
export interface IdentityProvider {
  id: string;
  realmId: string;
  alias: string;
  providerId: IdentityProviderType;
  displayName: string | null;
  enabled: boolean;
  hideOnLogin: boolean;
  trustEmail: boolean;
  linkOnly: boolean;
  /** The organization the provider belongs to (Keycloak 26 organizations), if any. */
  organizationId: string | null;
  config: Record<string, string>;
  sealedClientSecret: string | null;
  createdAt: number;
}

/**
 * A mapper of an identity provider (Keycloak's IdentityProviderMapperRepresentation): what a sign-in
 * through the provider sets on the local user (src/admin/operations/identity-provider-mappers.ts).
 */
export interface IdentityProviderMapper {
  id: string;
  realmId: string;
  /** The provider's alias. */
  identityProvider: string;
  name: string;
  /** Keycloak's mapper type id (identityProviderMapper). */
  type: string;
  /** Keycloak's config map (syncMode and the type's settings). */
  config: Record<string, string>;
  createdAt: number;
}

/** A local user's account at an identity provider (Keycloak's federated identity). */
export interface FederatedIdentity {
  realmId: string;
  identityProvider: string;
  federatedUserId: string;
  federatedUsername: string | null;
  userId: string;
  createdAt: number;
}

/** TOTP algorithms (Keycloak's names). */
export const OTP_ALGORITHMS = ['HmacSHA1', 'HmacSHA256', 'HmacSHA512'] as const;
export type OtpAlgorithm = (typeof OTP_ALGORITHMS)[number];

/** A user's TOTP authenticator (Keycloak's otp credential), its key still sealed. */
export interface OtpCredential {
  id: string;
  realmId: string;
  userId: string;
  label: string | null;
  sealedSecret: string;
  algorithm: OtpAlgorithm;
  digits: number;
  period: number;
  createdAt: number;
}

/** A WebAuthn security key (Keycloak's webauthn credential). */
export interface WebAuthnCredential {
  id: string;
  realmId: string;
  userId: string;
  label: string | null;
  /** The raw credential id. */
  credentialId: Buffer;
  /** The COSE public key as the authenticator gave it. */
  publicKey: Buffer;
  alg: number;
  aaguid: string;
  signCount: number;
  attestationFormat: string;
  transports: string[];
  createdAt: number;
  /** Keycloak's webauthn-passwordless (a discoverable credential that signs in alone), else webauthn (a second factor). */
  passwordless: boolean;
}

/**
 * Keycloak's webAuthnPolicy* realm settings (two-factor keys), with its names and values. Realmgate
 * acts on all but requireResidentKey's and authenticatorAttachment's effect on sign-in (they shape the
 * browser's registration only) and avoidSameAuthenticatorRegister (excludeCredentials is always sent).
 */
export interface WebAuthnPolicy {
  rpEntityName: string;
  signatureAlgorithms: string[];
  /** '' : the host of AUTH_URL. */
  rpId: string;
  attestationConveyancePreference: 'not specified' | 'none' | 'indirect' | 'direct' | 'enterprise';
  authenticatorAttachment: 'not specified' | 'platform' | 'cross-platform';
  requireResidentKey: 'not specified' | 'Yes' | 'No';
  userVerificationRequirement: 'not specified' | 'required' | 'preferred' | 'discouraged';
  /** Seconds the browser waits for the key (0: the browser's default). */
  createTimeout: number;
  avoidSameAuthenticatorRegister: boolean;
  acceptableAaguids: string[];
  extraOrigins: string[];
}

export interface AuthorizationCode {
  hash: string;
  realmId: string;
  clientId: string;
  redirectUri: string;
  userId: string;
  sessionId: string;
  organizationId: string;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  nonce: string | null;
  authTime: number;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  chainId: string | null;
  /** RFC 8707 2.1: the resources the authorization request named, bound to the grant (empty: none). */
  resources: string[];
  /** RFC 9449 10: the dpop_jkt of the authorization request; the exchange must prove that key (absent or null: none). */
  dpopJkt?: string | null;
}

export interface RefreshChain {
  id: string;
  realmId: string;
  clientId: string;
  userId: string;
  organizationId: string;
  scopes: string[];
  sessionId: string;
  authTime: number;
  createdAt: number;
  maxExpiresAt: number;
  revokedAt: number | null;
  /** RFC 9449 5: the JWK thumbprint a public client's chain is bound to; each refresh proves it (absent or null: not bound). */
  dpopJkt?: string | null;
}

export interface RefreshToken {
  hash: string;
  chainId: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export interface SigningKey {
  kid: string;
  realmId: string;
  alg: string;
  publicJwk: string;
  privateJwk: string;
  status: 'active' | 'retired';
  createdAt: number;
  retiredAt?: number | null;
}

export class ConflictError extends Error {}

/** What a protocol mapper belongs to: a client (by client id) or a client scope (by name) of its realm. */
export type MapperOwnerType = 'client' | 'scope';

/** Keycloak's ProtocolMapperRepresentation of OpenID Connect, as stored: config is Keycloak's map of strings. */
export interface ProtocolMapper {
  id: string;
  realmId: string;
  ownerType: MapperOwnerType;
  owner: string;
  name: string;
  type: string;
  config: Record<string, string>;
  createdAt: number;
}
export class NotFoundError extends Error {}

/** The user behind a code or a refresh chain, read in the same query. */
export interface Subject {
  userId: string;
  username: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  emailVerified: boolean;
  enabled: boolean;
  organizationAlias: string | null;
  /** The user's attributes (claims of attribute mappers and of the standard profile, phone and address scopes). */
  attributes: UserAttributes;
}

export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface DeviceCode {
  hash: string;
  realmId: string;
  clientId: string;
  scopes: string[];
  status: DeviceCodeStatus;
  interval: number;
  lastPolledAt: number | null;
  userId: string | null;
  sessionId: string | null;
  organizationId: string | null;
  authTime: number | null;
  chainId: string | null;
  createdAt: number;
  expiresAt: number;
  /** RFC 8707 2.1: the resources the device authorization request named, bound to the grant. */
  resources: string[];
}
