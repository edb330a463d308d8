import { storedWebAuthnPolicy } from '../../admin/webauthn-policy.js';
import { storedRequiredActionSettings } from '../../admin/required-actions.js';
import type { Selectable } from 'kysely';
import type * as T from '../schema.js';
import type * as D from '../types.js';
import { BROKER_REVIEW_PROFILE_MODES, REQUEST_OBJECT_REQUIRED, REQUIRED_ACTIONS } from '../types.js';

export function parseList(json: string): string[] {
  const v: unknown = JSON.parse(json);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function parseSmtp(json: string): Record<string, string> {
  try {
    const v: unknown = JSON.parse(json);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

export function toRealm(r: Selectable<T.RealmTable>): D.Realm {
  return {
    id: r.id,
    displayName: r.display_name,
    codeLifetime: r.code_lifetime,
    accessTokenLifetime: r.access_token_lifetime,
    refreshIdleLifetime: r.refresh_idle_lifetime,
    refreshMaxLifetime: r.refresh_max_lifetime,
    ssoSessionLifetime: r.sso_session_lifetime,
    accessTokenAudience: r.access_token_audience,
    signingAlg: r.signing_alg,
    notBefore: Number(r.not_before),
    createdAt: Number(r.created_at),
    maxLoginFailures: r.max_login_failures,
    lockoutSeconds: r.lockout_seconds,
    maxLockoutSeconds: r.max_lockout_seconds,
    enabled: r.enabled !== 0,
    storedEventTypes: parseList(r.stored_event_types),
    refreshGraceSeconds: r.refresh_grace_seconds,
    refreshGraceMax: r.refresh_grace_max,
    accessTokenFormat: r.access_token_format === 'rfc9068' ? 'rfc9068' : 'jwt',
    organizationRequired: r.organization_required !== 0,
    eventsRetention: r.events_retention === null ? null : Number(r.events_retention),
    adminEventsRetention: r.admin_events_retention === null ? null : Number(r.admin_events_retention),
    smtpServer: parseSmtp(r.smtp_server),
    smtpPassword: r.smtp_password,
    resetPasswordAllowed: r.reset_password_allowed !== 0,
    actionTokenUserLifespan: Number(r.action_token_user_lifespan),
    actionTokenAdminLifespan: Number(r.action_token_admin_lifespan),
    passwordPolicy: r.password_policy ?? '',
    loginWithEmailAllowed: r.login_with_email_allowed !== 0,
    duplicateEmailsAllowed: r.duplicate_emails_allowed !== 0,
    rememberMe: r.remember_me !== 0,
    ssoIdleRememberMe: Number(r.sso_idle_remember_me),
    ssoMaxRememberMe: Number(r.sso_max_remember_me),
    registrationAllowed: r.registration_allowed !== 0,
    registrationEmailAsUsername: r.registration_email_as_username !== 0,
    editUsernameAllowed: r.edit_username_allowed === 1,
    brokerReviewProfile: (BROKER_REVIEW_PROFILE_MODES as readonly string[]).includes(r.broker_review_profile) ? (r.broker_review_profile as D.BrokerReviewProfile) : 'missing',
    verifyEmail: r.verify_email !== 0,
    parRequestUriLifespan: Number(r.par_request_uri_lifespan ?? 60),
    webAuthnPolicy: storedWebAuthnPolicy(r.webauthn_policy),
    webAuthnPasswordlessPolicy: storedWebAuthnPolicy(r.webauthn_passwordless_policy),
    requiredActionSettings: storedRequiredActionSettings(r.required_actions),
    clientScopeDefaults: storedClientScopeDefaults(r.client_scope_defaults),
    defaultRoleId: r.default_role_id ?? null,
    internationalizationEnabled: r.internationalization_enabled === 1,
    supportedLocales: parseList(r.supported_locales ?? '[]'),
    defaultLocale: r.default_locale ?? null,
  };
}

function storedClientScopeDefaults(text: string | null | undefined): D.ClientScopeDefaults | null {
  if (!text) return null;
  try {
    const o = JSON.parse(text) as Partial<D.ClientScopeDefaults>;
    const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    return { default: names(o.default), optional: names(o.optional) };
  } catch {
    return null;
  }
}

export function toClient(r: Selectable<T.ClientTable>): D.Client {
  return {
    realmId: r.realm_id,
    clientId: r.client_id,
    name: r.name,
    secretHash: r.secret_hash,
    public: r.public === 1,
    enabled: r.enabled === 1,
    redirectUris: parseList(r.redirect_uris),
    scopes: parseList(r.scopes),
    optionalScopes: parseList(r.optional_scopes),
    createdAt: Number(r.created_at),
    authMethod: authMethods(r)[0]!,
    authMethods: authMethods(r),
    postLogoutRedirectUris: parseList(r.post_logout_redirect_uris),
    standardFlowEnabled: r.standard_flow_enabled !== 0,
    directAccessGrantsEnabled: r.direct_access_grants_enabled === 1,
    serviceAccountsEnabled: r.service_accounts_enabled === 1,
    idTokenAlg: r.id_token_alg,
    audiences: parseList(r.audiences),
    webOrigins: parseList(r.web_origins),
    pkceMethod: r.pkce_method === 'S256' ? 'S256' : '',
    backchannelLogout: {
      url: r.backchannel_logout_url ?? null,
      sessionRequired: r.backchannel_logout_session_required !== 0,
      revokeOfflineTokens: r.backchannel_logout_revoke_offline === 1,
    },
    requirePushedAuthorizationRequests: r.require_pushed_authorization_requests === 1,
    standardTokenExchange: r.standard_token_exchange === 1,
    tokenExchangeRefresh: r.token_exchange_refresh === 'SAME_SESSION' ? 'SAME_SESSION' : 'NO',
    requestObjectRequired: (REQUEST_OBJECT_REQUIRED as readonly string[]).includes(r.request_object_required) ? (r.request_object_required as D.RequestObjectRequired) : 'not required',
    requestObjectSignatureAlg: r.request_object_alg ?? null,
    frontchannelLogout: {
      enabled: r.frontchannel_logout === 1,
      url: r.frontchannel_logout_url ?? null,
      sessionRequired: r.frontchannel_logout_session_required !== 0,
    },
    jwtKeys: parseJwtKeys(r.jwt_keys),
    dpopBoundAccessTokens: r.dpop_bound_access_tokens === 1,
    fullScopeAllowed: r.full_scope_allowed !== 0,
    notBefore: Number(r.not_before ?? 0),
    rotatedSecret: r.rotated_secret_hash && r.rotated_secret_expires_at !== null ? { hash: r.rotated_secret_hash, expiresAt: Number(r.rotated_secret_expires_at) } : null,
  };
}

function parseJwtKeys(text: string | null | undefined): D.ClientJwtKeys | null {
  if (!text) return null;
  try {
    const o = JSON.parse(text) as Partial<D.ClientJwtKeys>;
    return {
      useJwksUrl: o.useJwksUrl === true,
      jwksUrl: typeof o.jwksUrl === 'string' ? o.jwksUrl : null,
      useJwksString: o.useJwksString === true,
      jwksString: typeof o.jwksString === 'string' ? o.jwksString : null,
      certificate: typeof o.certificate === 'string' ? o.certificate : null,
      publicKey: typeof o.publicKey === 'string' ? o.publicKey : null,
      signingAlg: typeof o.signingAlg === 'string' ? o.signingAlg : null,
      maxExp: typeof o.maxExp === 'number' ? o.maxExp : null,
    };
  } catch {
    return null;
  }
}

const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
const CONFIDENTIAL_METHODS = [...SECRET_METHODS, 'private_key_jwt'] as const;

function authMethods(r: Selectable<T.ClientTable>): D.ClientAuthMethod[] {
  if (r.public === 1) return ['none'];
  const list = parseList(r.auth_methods).filter((m): m is D.ClientAuthMethod => (CONFIDENTIAL_METHODS as readonly string[]).includes(m));
  return list.length > 0 ? list : [...SECRET_METHODS];
}

export function toUser(r: Selectable<T.UserTable>): D.User {
  return {
    id: r.id,
    realmId: r.realm_id,
    username: r.username,
    email: r.email,
    passwordHash: r.password_hash,
    enabled: r.enabled === 1,
    createdAt: Number(r.created_at),
    firstName: r.first_name,
    lastName: r.last_name,
    emailVerified: r.email_verified === 1,
    requiredActions: requiredActionsOf(r.required_actions),
    attributes: attributesOf(r.attributes),
    passwordChangedAt: r.password_changed_at === null || r.password_changed_at === undefined ? Number(r.created_at) : Number(r.password_changed_at),
    federationLink: r.federation_link ?? null,
  };
}

/**
 * The stored attributes, keeping only names with a list of strings (a row written by hand may hold
 * anything). Most users have none: '{}' is answered without parsing.
 */
export function attributesOf(json: string | null | undefined): D.UserAttributes {
  if (!json || json === '{}') return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return {};
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  // fromEntries defines own properties: a stored name "__proto__" stays a name, not the prototype.
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).flatMap(([name, values]) => (Array.isArray(values) ? [[name, values.filter((x): x is string => typeof x === 'string')]] : [])),
  );
}

/** The stored list, keeping only the names Realmgate acts on (a row written by hand may hold others). */
export function requiredActionsOf(json: string | undefined): D.RequiredAction[] {
  let names: string[] = [];
  try {
    names = json ? parseList(json) : [];
  } catch {
    names = [];
  }
  return REQUIRED_ACTIONS.filter((a) => names.includes(a));
}

export interface SubjectRow {
  user_id: string;
  username: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  email_verified: number | null;
  user_enabled: number | null;
  org_alias: string | null;
  user_attributes: string | null;
}

/** The subject of a token for a user already read (no organization: the grants that have none). */
export function subjectOfUser(u: D.User): D.Subject {
  return { userId: u.id, username: u.username, email: u.email, firstName: u.firstName, lastName: u.lastName, emailVerified: u.emailVerified, enabled: u.enabled, organizationAlias: null, attributes: u.attributes };
}

export function toSubject(r: SubjectRow): D.Subject {
  return {
    userId: r.user_id,
    username: r.username ?? '',
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    emailVerified: r.email_verified === 1,
    enabled: r.user_enabled === 1,
    organizationAlias: r.org_alias,
    attributes: attributesOf(r.user_attributes),
  };
}

export function toCode(r: Selectable<T.AuthorizationCodeTable>): D.AuthorizationCode {
  return {
    hash: r.hash,
    realmId: r.realm_id,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    userId: r.user_id,
    sessionId: r.session_id,
    organizationId: r.organization_id,
    scopes: parseList(r.scopes),
    codeChallenge: r.code_challenge,
    codeChallengeMethod: r.code_challenge_method,
    nonce: r.nonce,
    authTime: Number(r.auth_time),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    usedAt: r.used_at === null ? null : Number(r.used_at),
    chainId: r.chain_id,
    resources: parseList(r.resources),
    dpopJkt: r.dpop_jkt ?? null,
  };
}

export function toChain(r: Selectable<T.RefreshChainTable>): D.RefreshChain {
  return {
    id: r.id,
    realmId: r.realm_id,
    clientId: r.client_id,
    userId: r.user_id,
    organizationId: r.organization_id,
    scopes: parseList(r.scopes),
    sessionId: r.session_id,
    authTime: Number(r.auth_time),
    createdAt: Number(r.created_at),
    maxExpiresAt: Number(r.max_expires_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    dpopJkt: r.dpop_jkt ?? null,
  };
}
