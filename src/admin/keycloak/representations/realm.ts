import type { Realm } from '../../../storage/types.js';
import type { RealmSettings } from '../../../storage/repos/realms.js';
import { ValidationError } from '../../validation.js';
import { PASSWORDLESS_PREFIX, readWebAuthnPolicy, WEBAUTHN_POLICY_DEFAULTS, webAuthnPolicyRepresentation } from '../../webauthn-policy.js';
import { keycloakEnabledEventTypes, retentionsFromKeycloak, storedTypesFromKeycloak } from '../event-types.js';
import { FLOW_BINDINGS } from './authentication-flows.js';

/** Keycloak's RealmRepresentation, the fields Realmgate has. */
export interface RealmRepresentation {
  id: string;
  browserFlow: string;
  directGrantFlow: string;
  registrationFlow: string;
  resetCredentialsFlow: string;
  clientAuthenticationFlow: string;
  firstBrokerLoginFlow: string;
  realm: string;
  displayName?: string;
  enabled: boolean;
  notBefore: number;
  accessCodeLifespan: number;
  accessTokenLifespan: number;
  ssoSessionIdleTimeout: number;
  ssoSessionMaxLifespan: number;
  offlineSessionIdleTimeout: number;
  offlineSessionMaxLifespanEnabled: boolean;
  offlineSessionMaxLifespan: number;
  bruteForceProtected: boolean;
  failureFactor: number;
  waitIncrementSeconds: number;
  maxFailureWaitSeconds: number;
  defaultSignatureAlgorithm: string;
  organizationsEnabled: boolean;
  eventsEnabled: boolean;
  enabledEventTypes: string[];
  /** The realm's own retention of its events, in seconds (absent: the server's). */
  eventsExpiration?: number;
  attributes: Record<string, string>;
  /** Keycloak's SMTP settings; the password as MASKED_SMTP_PASSWORD when set. */
  smtpServer: Record<string, string>;
  resetPasswordAllowed: boolean;
  actionTokenGeneratedByUserLifespan: number;
  actionTokenGeneratedByAdminLifespan: number;
  /** Keycloak's password policy (absent: none), the rules Realmgate enforces (src/admin/password-policy.ts). */
  passwordPolicy?: string;
  loginWithEmailAllowed: boolean;
  duplicateEmailsAllowed: boolean;
  rememberMe: boolean;
  ssoSessionIdleTimeoutRememberMe: number;
  ssoSessionMaxLifespanRememberMe: number;
  /** Self-registration and email verification (Keycloak's names; docs/registration.md). */
  registrationAllowed: boolean;
  registrationEmailAsUsername: boolean;
  editUsernameAllowed: boolean;
  verifyEmail: boolean;
  /** Keycloak's webAuthnPolicy* fields (security keys as a second factor: src/admin/webauthn-policy.ts). */
  [webAuthnPolicyField: `webAuthnPolicy${string}`]: unknown;
  /** Keycloak's default role (a brief RoleRepresentation), when the realm has one: every new user gets it. */
  defaultRole?: DefaultRoleRepresentation;
  /** Keycloak's internationalization settings (the texts have their own resource, localization/). */
  internationalizationEnabled: boolean;
  supportedLocales: string[];
  /** Absent when the realm has none, as Keycloak leaves a null out. */
  defaultLocale?: string;
}

/** Keycloak's brief RoleRepresentation of a realm's default role (RealmRepresentation.defaultRole). */
export interface DefaultRoleRepresentation {
  id: string;
  name: string;
  description?: string;
  composite: boolean;
  clientRole: false;
  containerId: string;
}

/** The realm's default role as Keycloak writes it (ModelToRepresentation.toBriefRepresentation). */
export function defaultRoleRepresentation(role: { id: string; realmId: string; name: string; description: string | null }, composite: boolean): DefaultRoleRepresentation {
  return { id: role.id, name: role.name, ...(role.description !== null ? { description: role.description } : {}), composite, clientRole: false, containerId: role.realmId };
}

/** What Keycloak shows for a secret it keeps; sent back, it means "unchanged". */
export const MASKED_SMTP_PASSWORD = '**********';

/** The keys of Keycloak's smtpServer map Realmgate uses; others are left out (the import reports them). */
export const SMTP_KEYS = ['host', 'port', 'from', 'fromDisplayName', 'replyTo', 'replyToDisplayName', 'envelopeFrom', 'auth', 'user', 'password', 'ssl', 'starttls'] as const;

/**
 * Our realm in Keycloak's words. A refresh token's lifetime maps to both idle timeouts (Keycloak's
 * session idle and offline session idle), the chain maximum to offlineSessionMaxLifespan, the browser
 * session to ssoSessionMaxLifespan; the access token audience is an attribute.
 */
export function toRealmRepresentation(r: Realm, defaultRole?: DefaultRoleRepresentation): RealmRepresentation {
  return {
    id: r.id,
    realm: r.id,
    ...(r.displayName !== null ? { displayName: r.displayName } : {}),
    enabled: r.enabled,
    notBefore: r.notBefore,
    accessCodeLifespan: r.codeLifetime,
    accessTokenLifespan: r.accessTokenLifetime,
    ssoSessionIdleTimeout: r.refreshIdleLifetime,
    ssoSessionMaxLifespan: r.ssoSessionLifetime,
    offlineSessionIdleTimeout: r.refreshIdleLifetime,
    offlineSessionMaxLifespanEnabled: true,
    offlineSessionMaxLifespan: r.refreshMaxLifetime,
    bruteForceProtected: true,
    failureFactor: r.maxLoginFailures,
    waitIncrementSeconds: r.lockoutSeconds,
    maxFailureWaitSeconds: r.maxLockoutSeconds,
    defaultSignatureAlgorithm: r.signingAlg,
    organizationsEnabled: true,
    // As GET events/config: security events are always stored; the list is the types stored, Keycloak's names.
    eventsEnabled: true,
    enabledEventTypes: keycloakEnabledEventTypes(r.storedEventTypes),
    ...(r.eventsRetention !== null ? { eventsExpiration: r.eventsRetention } : {}),
    ...(r.passwordPolicy !== '' ? { passwordPolicy: r.passwordPolicy } : {}),
    // Realmgate's own settings travel as attributes, which Keycloak keeps and ignores; adminEventsExpiration is Keycloak's.
    attributes: {
      accessTokenAudience: r.accessTokenAudience,
      'realmgate.organizationRequired': String(r.organizationRequired),
      // Keycloak keeps it as a realm attribute (seconds, as a string).
      parRequestUriLifespan: String(r.parRequestUriLifespan),
      ...(r.adminEventsRetention !== null ? { adminEventsExpiration: String(r.adminEventsRetention) } : {}),
    },
    smtpServer: { ...r.smtpServer, ...(r.smtpPassword !== null ? { password: MASKED_SMTP_PASSWORD } : {}) },
    resetPasswordAllowed: r.resetPasswordAllowed,
    actionTokenGeneratedByUserLifespan: r.actionTokenUserLifespan,
    actionTokenGeneratedByAdminLifespan: r.actionTokenAdminLifespan,
    loginWithEmailAllowed: r.loginWithEmailAllowed,
    duplicateEmailsAllowed: r.duplicateEmailsAllowed,
    rememberMe: r.rememberMe,
    ssoSessionIdleTimeoutRememberMe: r.ssoIdleRememberMe,
    ssoSessionMaxLifespanRememberMe: r.ssoMaxRememberMe,
    registrationAllowed: r.registrationAllowed,
    registrationEmailAsUsername: r.registrationEmailAsUsername,
    editUsernameAllowed: r.editUsernameAllowed,
    verifyEmail: r.verifyEmail,
    ...webAuthnPolicyRepresentation(r.webAuthnPolicy),
    ...webAuthnPolicyRepresentation(r.webAuthnPasswordlessPolicy, PASSWORDLESS_PREFIX),
    ...(defaultRole ? { defaultRole } : {}),
    internationalizationEnabled: r.internationalizationEnabled,
    supportedLocales: [...r.supportedLocales],
    ...(r.defaultLocale !== null ? { defaultLocale: r.defaultLocale } : {}),
    // The fixed sign-in steps, bound as Keycloak's built-in flows (GET authentication/flows describes them).
    ...FLOW_BINDINGS,
  };
}

/** What a realm create or update body asks to change; fields we do not have are ignored, as Keycloak ignores unknown ones. */
export interface RealmChanges {
  id?: string;
  displayName?: string | null;
  enabled?: boolean;
  notBefore?: number;
  settings: Partial<RealmSettings>;
  /** The SMTP password in clear, to seal; null: none; undefined: unchanged (absent smtpServer, or the mask). */
  smtpPassword?: string | null;
  /** Keycloak's defaultRole: the realm role, by id (first) or name, new users get; undefined (absent or null): unchanged. */
  defaultRole?: { id?: string; name?: string };
}

/**
 * Keycloak's smtpServer map: string values (a number or boolean as Keycloak's older exports have is
 * taken as its string), the keys Realmgate uses; `left` gets the others. The password goes apart.
 */
export function readSmtpServer(v: unknown, left?: string[]): { server: Record<string, string>; password: string | null | undefined } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ValidationError('smtpServer must be an object of strings');
  const server: Record<string, string> = {};
  let password: string | null | undefined = null;
  for (const [k, raw] of Object.entries(v as Record<string, unknown>)) {
    if (raw === null || raw === undefined) continue;
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') throw new ValidationError(`smtpServer.${k.slice(0, 40)} must be a string`);
    const value = String(raw);
    if (!(SMTP_KEYS as readonly string[]).includes(k)) {
      left?.push(k);
      continue;
    }
    if (k === 'password') password = value === MASKED_SMTP_PASSWORD ? undefined : value === '' ? null : value;
    else if (value !== '') server[k] = value;
  }
  return { server, password };
}

function int(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new ValidationError(`${key} must be a whole number`);
  return v;
}

function bool(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ValidationError(`${key} must be true or false`);
  return v;
}

/** Keycloak's supportedLocales: a list of strings (null or absent: unchanged); the tags are checked by the operation. */
function locales(body: Record<string, unknown>): string[] | undefined {
  const v = body.supportedLocales;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ValidationError('supportedLocales must be a list of strings');
  return v as string[];
}

export function fromRealmRepresentation(body: Record<string, unknown>, current?: Realm): RealmChanges {
  const s: Partial<RealmSettings> = {};
  const set = <K extends keyof RealmSettings>(k: K, v: RealmSettings[K] | undefined): void => {
    if (v !== undefined) s[k] = v;
  };
  set('codeLifetime', int(body, 'accessCodeLifespan'));
  set('accessTokenLifetime', int(body, 'accessTokenLifespan'));
  // Either idle timeout sets the refresh token lifetime. A client that sends back the whole
  // representation with one of them changed means the changed one.
  const offlineIdle = int(body, 'offlineSessionIdleTimeout');
  const ssoIdle = int(body, 'ssoSessionIdleTimeout');
  set('refreshIdleLifetime', offlineIdle !== undefined && offlineIdle !== current?.refreshIdleLifetime ? offlineIdle : (ssoIdle ?? offlineIdle));
  set('refreshMaxLifetime', int(body, 'offlineSessionMaxLifespan'));
  set('ssoSessionLifetime', int(body, 'ssoSessionMaxLifespan'));
  set('maxLoginFailures', int(body, 'failureFactor'));
  set('lockoutSeconds', int(body, 'waitIncrementSeconds'));
  set('maxLockoutSeconds', int(body, 'maxFailureWaitSeconds'));
  const alg = body.defaultSignatureAlgorithm;
  if (alg !== undefined && alg !== null) {
    if (typeof alg !== 'string') throw new ValidationError('defaultSignatureAlgorithm must be a string');
    s.signingAlg = alg;
  }
  const attrs = body.attributes;
  if (attrs && typeof attrs === 'object' && typeof (attrs as Record<string, unknown>).accessTokenAudience === 'string') {
    s.accessTokenAudience = (attrs as Record<string, string>).accessTokenAudience;
  }
  const orgRequired = attrs && typeof attrs === 'object' ? (attrs as Record<string, unknown>)['realmgate.organizationRequired'] : undefined;
  if (orgRequired === 'true' || orgRequired === 'false') s.organizationRequired = orgRequired === 'true';
  const parLifespan = attrs && typeof attrs === 'object' ? (attrs as Record<string, unknown>).parRequestUriLifespan : undefined;
  if (parLifespan !== undefined && parLifespan !== null && parLifespan !== '') {
    // Keycloak's attribute values are strings; a number is taken too.
    const n = typeof parLifespan === 'number' ? parLifespan : typeof parLifespan === 'string' && /^\d{1,9}$/.test(parLifespan) ? Number(parLifespan) : NaN;
    if (!Number.isSafeInteger(n)) throw new ValidationError('attributes.parRequestUriLifespan must be a whole number of seconds');
    s.parRequestUriLifespan = n;
  }
  // Keycloak's eventsEnabled and enabledEventTypes, read as PUT events/config reads them.
  set('storedEventTypes', storedTypesFromKeycloak(body));
  const retentions = retentionsFromKeycloak(body);
  set('eventsRetention', retentions.eventsRetention);
  set('adminEventsRetention', retentions.adminEventsRetention);
  set('resetPasswordAllowed', bool(body, 'resetPasswordAllowed'));
  set('actionTokenUserLifespan', int(body, 'actionTokenGeneratedByUserLifespan'));
  set('actionTokenAdminLifespan', int(body, 'actionTokenGeneratedByAdminLifespan'));
  set('loginWithEmailAllowed', bool(body, 'loginWithEmailAllowed'));
  set('duplicateEmailsAllowed', bool(body, 'duplicateEmailsAllowed'));
  set('rememberMe', bool(body, 'rememberMe'));
  set('ssoIdleRememberMe', int(body, 'ssoSessionIdleTimeoutRememberMe'));
  set('ssoMaxRememberMe', int(body, 'ssoSessionMaxLifespanRememberMe'));
  set('registrationAllowed', bool(body, 'registrationAllowed'));
  set('registrationEmailAsUsername', bool(body, 'registrationEmailAsUsername'));
  set('editUsernameAllowed', bool(body, 'editUsernameAllowed'));
  set('verifyEmail', bool(body, 'verifyEmail'));
  set('internationalizationEnabled', bool(body, 'internationalizationEnabled'));
  set('supportedLocales', locales(body));
  // Keycloak: null or absent leaves the default locale; "" removes it here (Keycloak would store "" and
  // treat it as none).
  if (body.defaultLocale !== undefined && body.defaultLocale !== null) {
    if (typeof body.defaultLocale !== 'string') throw new ValidationError('defaultLocale must be a string');
    s.defaultLocale = body.defaultLocale === '' ? null : body.defaultLocale;
  }
  // Keycloak's webAuthnPolicy* fields: those given change the realm's (or the defaults'), the others stay.
  const webAuthn = readWebAuthnPolicy(body);
  if (Object.keys(webAuthn).length > 0) s.webAuthnPolicy = { ...(current?.webAuthnPolicy ?? WEBAUTHN_POLICY_DEFAULTS), ...webAuthn };
  const passwordless = readWebAuthnPolicy(body, PASSWORDLESS_PREFIX);
  if (Object.keys(passwordless).length > 0) s.webAuthnPasswordlessPolicy = { ...(current?.webAuthnPasswordlessPolicy ?? WEBAUTHN_POLICY_DEFAULTS), ...passwordless };
  // Keycloak: null or absent leaves the policy; "" removes it; a policy is checked by the operation.
  if (body.passwordPolicy !== undefined && body.passwordPolicy !== null) {
    if (typeof body.passwordPolicy !== 'string') throw new ValidationError('passwordPolicy must be a string');
    s.passwordPolicy = body.passwordPolicy;
  }
  const out: RealmChanges = { settings: s };
  if (body.smtpServer !== undefined && body.smtpServer !== null) {
    const smtp = readSmtpServer(body.smtpServer);
    s.smtpServer = smtp.server;
    if (smtp.password !== undefined) out.smtpPassword = smtp.password;
  }
  const name = body.realm ?? body.id;
  if (name !== undefined && name !== null) {
    if (typeof name !== 'string') throw new ValidationError('realm must be a string');
    out.id = name;
  }
  if (body.displayName !== undefined) {
    if (body.displayName !== null && typeof body.displayName !== 'string') throw new ValidationError('displayName must be a string');
    out.displayName = body.displayName === '' ? null : (body.displayName as string | null);
  }
  const enabled = bool(body, 'enabled');
  if (enabled !== undefined) out.enabled = enabled;
  const notBefore = int(body, 'notBefore');
  if (notBefore !== undefined) out.notBefore = notBefore;
  // Keycloak ignores a null defaultRole; a role is named by its id or its name.
  const dr = body.defaultRole;
  if (dr !== undefined && dr !== null) {
    if (typeof dr !== 'object' || Array.isArray(dr)) throw new ValidationError('defaultRole must be a role representation');
    const { id, name } = dr as Record<string, unknown>;
    if ((id !== undefined && id !== null && typeof id !== 'string') || (name !== undefined && name !== null && typeof name !== 'string')) throw new ValidationError('defaultRole.id and defaultRole.name must be strings');
    if (!id && !name) throw new ValidationError('defaultRole needs the id or the name of a realm role');
    out.defaultRole = { ...(id ? { id: id as string } : {}), ...(name ? { name: name as string } : {}) };
  }
  return out;
}
