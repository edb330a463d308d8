import type { Store } from '../../storage/store.js';
import type { Realm, SigningKey } from '../../storage/types.js';
import { BROKER_REVIEW_PROFILE_MODES } from '../../storage/types.js';
import { REALM_DEFAULTS, CODE_LIFETIME_RANGE } from '../../config/defaults.js';
import type { RealmSettings } from '../../storage/repos/realms.js';
import { generateSigningKey, isSigningAlg, type SigningAlg } from '../../crypto/keystore.js';
import { MASTER_REALM } from '../authorization.js';
import { generateHmacKey } from '../../crypto/refresh-jwt.js';
import { LIMITS, NotFound, ValidationError, checkName, checkText } from '../validation.js';
import { DEFAULT_STORED_EVENT_TYPES, OPTIONAL_EVENT_TYPES, isOptionalEventType } from '../../events/stored-types.js';
import { MAX_EVENTS_RETENTION_S, retentionsFromKeycloak, storedTypesFromKeycloak } from '../keycloak/event-types.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { ensureRealmManagement } from './roles.js';
import { sealSmtpPassword } from '../../crypto/smtp-secret.js';
import { sameMailServer } from '../../mail/mailer.js';
import { parsePasswordPolicy } from '../password-policy.js';
import { checkLocaleSettings, uniqueLocales } from '../locales.js';

export function checkRealmSettings(s: Partial<RealmSettings>): void {
  const positive = (name: string, v: number | undefined, max: number, unit = ' of seconds'): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > max)) throw new ValidationError(`${name} must be a whole number${unit} from 1 to ${max}`);
  };
  if (s.codeLifetime !== undefined && (!Number.isInteger(s.codeLifetime) || s.codeLifetime < CODE_LIFETIME_RANGE.min || s.codeLifetime > CODE_LIFETIME_RANGE.max)) {
    throw new ValidationError(`the code lifetime must be from ${CODE_LIFETIME_RANGE.min} to ${CODE_LIFETIME_RANGE.max} seconds`);
  }
  positive('the access token lifetime', s.accessTokenLifetime, 366 * 86_400);
  positive('the refresh idle lifetime', s.refreshIdleLifetime, 5 * 366 * 86_400);
  positive('the refresh chain maximum', s.refreshMaxLifetime, 10 * 366 * 86_400);
  positive('the SSO session lifetime', s.ssoSessionLifetime, 366 * 86_400);
  positive('the number of login failures', s.maxLoginFailures, 1000, '');
  positive('the lockout time', s.lockoutSeconds, 86_400);
  positive('the longest lockout time', s.maxLockoutSeconds, 30 * 86_400);
  if (s.accessTokenAudience !== undefined && (s.accessTokenAudience.length === 0 || s.accessTokenAudience.length > 255 || /[\x00-\x1f\x7f]/.test(s.accessTokenAudience))) {
    throw new ValidationError('the access token audience must have 1 to 255 characters, no control characters');
  }
  if (s.signingAlg !== undefined && !isSigningAlg(s.signingAlg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  if (s.refreshGraceSeconds !== undefined && (!Number.isInteger(s.refreshGraceSeconds) || s.refreshGraceSeconds < 0 || s.refreshGraceSeconds > 300)) {
    throw new ValidationError('the refresh grace window must be a whole number of seconds from 0 (off) to 300');
  }
  if (s.refreshGraceMax !== undefined && (!Number.isInteger(s.refreshGraceMax) || s.refreshGraceMax < 1 || s.refreshGraceMax > 100)) {
    throw new ValidationError('the refresh grace maximum must be a whole number from 1 to 100');
  }
  const badType = s.storedEventTypes?.find((t) => !isOptionalEventType(t));
  if (badType !== undefined) throw new ValidationError(`${JSON.stringify(badType)} is not an optional event type: choose from ${OPTIONAL_EVENT_TYPES.join(', ')} (failures, logins, consents, reuse and revocations are always stored)`);
  for (const [name, v] of [['the events retention', s.eventsRetention], ['the admin events retention', s.adminEventsRetention]] as const) {
    if (v != null && (!Number.isInteger(v) || v < 1 || v > MAX_EVENTS_RETENTION_S)) throw new ValidationError(`${name} must be a whole number of seconds from 1 to ${MAX_EVENTS_RETENTION_S} (20 years)`);
  }
  if (s.accessTokenFormat !== undefined && s.accessTokenFormat !== 'jwt' && s.accessTokenFormat !== 'rfc9068') throw new ValidationError('the access token format must be jwt or rfc9068');
  positive('the action token lifespan of a reset', s.actionTokenUserLifespan, 30 * 86_400);
  positive('the action token lifespan of an administrator\'s link', s.actionTokenAdminLifespan, 366 * 86_400);
  // RFC 9126 2.2: a request_uri is short-lived (the RFC's example: 60 s); an hour is far more than a login needs.
  positive('the lifespan of a pushed request_uri (parRequestUriLifespan)', s.parRequestUriLifespan, 3600);
  if (s.smtpServer !== undefined) checkSmtpServer(s.smtpServer);
  for (const [name, v] of [['the remember-me idle timeout', s.ssoIdleRememberMe], ['the remember-me session lifetime', s.ssoMaxRememberMe]] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 366 * 86_400)) throw new ValidationError(`${name} must be a whole number of seconds from 0 (the usual one) to ${366 * 86_400}`);
  }
  if (s.brokerReviewProfile !== undefined && !(BROKER_REVIEW_PROFILE_MODES as readonly string[]).includes(s.brokerReviewProfile)) {
    throw new ValidationError(`the review of a provider's account (update.profile.on.first.login) must be one of ${BROKER_REVIEW_PROFILE_MODES.join(', ')}`);
  }
  checkLocaleSettings(s);
}

/**
 * Keycloak's coupling of the email options (its RealmAdapter): turning loginWithEmailAllowed on turns
 * duplicateEmailsAllowed off, and allowing duplicate emails turns loginWithEmailAllowed off (a login by an
 * email several users have could not say whose). Applied in Keycloak's order: the login option, then the
 * duplicates one, so a request asking for both ends with duplicates allowed and no login by email.
 */
export function coupleEmailOptions(s: Partial<RealmSettings>): Partial<RealmSettings> {
  const out = { ...s };
  if ((out.loginWithEmailAllowed === true || out.registrationEmailAsUsername === true) && out.duplicateEmailsAllowed === undefined) out.duplicateEmailsAllowed = false;
  if (out.duplicateEmailsAllowed === true) {
    out.loginWithEmailAllowed = false;
    // An email that is the username is unique as usernames are.
    out.registrationEmailAsUsername = false;
  }
  return out;
}

const EMAIL_RE = /^[^\s@<>()",;:\\]{1,64}@[A-Za-z0-9.-]{1,255}$/;

/**
 * Keycloak's smtpServer map (a realm without host sends no mail): a host and a from address, a port
 * 1-65535, the switches "true" or "false", addresses that are addresses, no control characters anywhere
 * (they would let a value add mail headers).
 */
export function checkSmtpServer(m: Record<string, string>): void {
  if (Object.keys(m).length === 0) return;
  for (const [k, v] of Object.entries(m)) {
    if (v.length > 320 || /[\x00-\x1f\x7f]/.test(v)) throw new ValidationError(`smtpServer.${k} must have at most 320 characters and no control characters`);
  }
  if (!m.host) throw new ValidationError('smtpServer.host is required (the SMTP server to send mail through)');
  if (!/^[A-Za-z0-9.:[\]-]{1,255}$/.test(m.host)) throw new ValidationError('smtpServer.host must be a host name or an IP address');
  if (!m.from || !EMAIL_RE.test(m.from)) throw new ValidationError('smtpServer.from must be an email address (the sender of the realm\'s mail)');
  for (const k of ['replyTo', 'envelopeFrom'] as const) if (m[k] !== undefined && !EMAIL_RE.test(m[k]!)) throw new ValidationError(`smtpServer.${k} must be an email address`);
  if (m.port !== undefined && (!/^\d{1,5}$/.test(m.port) || Number(m.port) < 1 || Number(m.port) > 65_535)) throw new ValidationError('smtpServer.port must be a port number from 1 to 65535');
  for (const k of ['auth', 'ssl', 'starttls'] as const) if (m[k] !== undefined && m[k] !== 'true' && m[k] !== 'false') throw new ValidationError(`smtpServer.${k} must be "true" or "false"`);
  if (m.auth === 'true' && !m.user) throw new ValidationError('smtpServer.user is required when auth is "true"');
}

/** The realm as admin events record it: never its SMTP password, even sealed. */
function recorded(realm: Realm): Omit<Realm, 'smtpPassword'> & { smtpPassword?: string } {
  const { smtpPassword, ...rest } = realm;
  return { ...rest, ...(smtpPassword !== null ? { smtpPassword: '**********' } : {}) };
}

/** The SMTP password to store: sealed; null clears it; undefined keeps it. */
async function sealedSmtpPassword(store: Store, realmId: string, password: string | null | undefined): Promise<string | null | undefined> {
  if (password === undefined || password === null) return password;
  if (password.length > 1024 || /[\x00-\x1f\x7f]/.test(password)) throw new ValidationError('the SMTP password must have at most 1024 characters and no control characters');
  return sealSmtpPassword(store, realmId, password);
}

/**
 * A refresh token lives at most its idle lifetime and never beyond its chain's maximum (README, token
 * table: refresh_expires_in is the smaller of the two). An idle lifetime longer than the maximum could
 * never be reached: it is refused, whatever door sets it (the import clamps it to the maximum, reported).
 */
export function checkRefreshLifetimes(idle: number, max: number): void {
  if (idle > max) throw new ValidationError(`the refresh idle lifetime (${idle} s) must not be longer than the refresh chain maximum (${max} s): a refresh token never outlives its chain`);
}

/** A realm's display name: the same rule for every door (at most LIMITS.realmDisplayName characters, no control characters). */
export function checkRealmDisplayName(displayName: string): void {
  checkText('the display name', displayName, LIMITS.realmDisplayName);
}

/** The last second Realmgate reads as a time (a not-before, a CLI time): 9999-12-31T23:59:59Z. */
export const LATEST_TIME = 253_402_300_799;
/** How far ahead of now a new not-before may be (clocks of other nodes; a push names the next second). */
export const NOT_BEFORE_MAX_AHEAD_S = 86_400;

/**
 * A realm's not-before (seconds since the epoch; 0: none). Refused: not a whole number, negative, and
 * more than a day ahead, which would refuse every token issued until then, the ones issued now included
 * (a realm locked for years by a typo). `current`, the value the realm has, is accepted as it is, so that
 * a representation read and written back (PUT realm) does not fail on it.
 */
export function checkNotBefore(at: number, opts: { current?: number; nowS?: number } = {}): void {
  if (at === opts.current) return;
  if (!Number.isSafeInteger(at) || at < 0 || at > LATEST_TIME) throw new ValidationError('the not-before time must be a whole number of seconds since the epoch, from 0 (none) to the year 9999');
  const limit = (opts.nowS ?? now()) + NOT_BEFORE_MAX_AHEAD_S;
  if (at > limit) {
    throw new ValidationError(
      `the not-before time ${new Date(at * 1000).toISOString()} is more than a day ahead: it would refuse every token issued until then, new ones too (use now, a past time, or 0 to clear)`,
    );
  }
}

/** The algorithm of a new realm's first signing key. */
export function realmSigningAlg(settings: Partial<RealmSettings> | undefined): SigningAlg {
  const alg = settings?.signingAlg ?? REALM_DEFAULTS.signingAlg;
  return isSigningAlg(alg) ? alg : 'RS256';
}

/**
 * Creates a realm with its keys. `signingKey` is its first signing key made beforehand (an import
 * generates it before its transaction: an RSA key takes a while); by default one is generated here.
 */
export async function createRealm(
  store: Store,
  input: { id: string; displayName?: string; settings?: Partial<RealmSettings>; enabled?: boolean; signingKey?: SigningKey; smtpPassword?: string | null },
  actor: Actor = cliActor(),
): Promise<Realm> {
  checkName('realm name', input.id);
  if (input.displayName != null) checkRealmDisplayName(input.displayName);
  // No mail until an administrator gives the realm an SMTP server (Keycloak's smtpServer).
  const settings: RealmSettings = { ...REALM_DEFAULTS, storedEventTypes: [...DEFAULT_STORED_EVENT_TYPES], smtpServer: {}, ...coupleEmailOptions(input.settings ?? {}), smtpPassword: null };
  settings.supportedLocales = uniqueLocales(settings.supportedLocales);
  settings.smtpPassword = (await sealedSmtpPassword(store, input.id, input.smtpPassword)) ?? null;
  checkRealmSettings(settings);
  settings.passwordPolicy = parsePasswordPolicy(settings.passwordPolicy).text;
  checkRefreshLifetimes(settings.refreshIdleLifetime, settings.refreshMaxLifetime);
  const t = now();
  const alg = realmSigningAlg(settings);
  if (input.signingKey && (input.signingKey.realmId !== input.id || input.signingKey.alg !== alg)) throw new Error(`the signing key given is not an ${alg} key of realm ${input.id}`);
  const realm = await store.realms.create({ id: input.id, displayName: input.displayName ?? null, settings, now: t });
  await store.keys.insert(input.signingKey ?? (await generateSigningKey(realm.id, alg, t)));
  await store.hmacKeys.insert(generateHmacKey(realm.id, t));
  await ensureRealmManagement(store, realm.id);
  if (input.enabled === false) await store.realms.update(realm.id, { enabled: false });
  const created = { ...realm, enabled: input.enabled !== false };
  await recordAdminEvent(store, actor, { realmId: realm.id, operation: 'CREATE', resourceType: 'REALM', resourcePath: '', representation: recorded(created) });
  return created;
}

/** Changes settings, display name, enabled and not-before of a realm; an empty patch changes nothing. */
export async function updateRealm(
  store: Store,
  input: { realmId: string; settings?: Partial<RealmSettings>; displayName?: string | null; enabled?: boolean; notBefore?: number; smtpPassword?: string | null; defaultRole?: { id?: string; name?: string } },
  actor: Actor = cliActor(),
): Promise<Realm> {
  const current = await requireRealm(store, input.realmId);
  const defaultRoleId = input.defaultRole ? await realmRoleId(store, input.realmId, input.defaultRole) : undefined;
  const { smtpPassword: _sealedOnlyHere, ...settings } = coupleEmailOptions(input.settings ?? {});
  if (settings.supportedLocales !== undefined) settings.supportedLocales = uniqueLocales(settings.supportedLocales);
  checkRealmSettings(settings);
  // Kept as Realmgate writes it back (Keycloak's syntax, its defaults made explicit): what GET answers.
  if (settings.passwordPolicy !== undefined) settings.passwordPolicy = parsePasswordPolicy(settings.passwordPolicy).text;
  if (settings.refreshIdleLifetime !== undefined || settings.refreshMaxLifetime !== undefined) {
    checkRefreshLifetimes(settings.refreshIdleLifetime ?? current.refreshIdleLifetime, settings.refreshMaxLifetime ?? current.refreshMaxLifetime);
  }
  if (input.displayName != null) checkRealmDisplayName(input.displayName);
  if (input.enabled === false && input.realmId === MASTER_REALM) throw new ValidationError('the master realm cannot be disabled: its administrators administer every realm');
  if (input.notBefore !== undefined) checkNotBefore(input.notBefore, { current: current.notBefore });
  // The stored SMTP password goes only to the server it was given for: a new host or port with the
  // password kept (left out of a CLI change, masked in Keycloak's representation) would let whoever may
  // change the realm read it off the next mail (as user-storage.ts's sameDirectory).
  if (input.smtpPassword === undefined && current.smtpPassword !== null && settings.smtpServer !== undefined && !sameMailServer(current.smtpServer, settings.smtpServer)) {
    throw new ValidationError('smtpServer.password must be given again (the CLI: --smtp-password-stdin) to change smtpServer.host or smtpServer.port: the stored one is sent only to the server it was given for');
  }
  const smtpPassword = await sealedSmtpPassword(store, input.realmId, input.smtpPassword);
  await store.realms.update(input.realmId, {
    ...settings,
    ...(smtpPassword !== undefined ? { smtpPassword } : {}),
    ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(input.notBefore !== undefined ? { notBefore: input.notBefore } : {}),
    ...(defaultRoleId !== undefined ? { defaultRoleId } : {}),
  });
  const realm = await requireRealm(store, input.realmId);
  await recordAdminEvent(store, actor, { realmId: realm.id, operation: 'UPDATE', resourceType: 'REALM', resourcePath: '', representation: recorded(realm) });
  return realm;
}

/**
 * The realm role a defaultRole names, by id (first) or name: Keycloak's default role is a realm role of
 * the realm. An unknown one is not found (404), as Keycloak's role lookups answer.
 */
async function realmRoleId(store: Store, realmId: string, ref: { id?: string; name?: string }): Promise<string> {
  const role = ref.id !== undefined ? await store.roles.get(ref.id) : await store.roles.find(realmId, '', ref.name!);
  if (!role || role.realmId !== realmId || role.clientId !== '') throw new NotFound(`Could not find the realm role ${ref.id ?? ref.name} for the default role`);
  return role.id;
}

/** Deletes a realm with all its users, clients, tokens and events. The event goes to the actor's realm (or master). */
export async function deleteRealm(store: Store, input: { realmId: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  if (input.realmId === MASTER_REALM) throw new ValidationError('the master realm cannot be deleted');
  await store.realms.delete(input.realmId);
  const eventRealm = actor.realmId && actor.realmId !== input.realmId ? actor.realmId : (await store.realms.get(MASTER_REALM)) ? MASTER_REALM : undefined;
  if (eventRealm) await recordAdminEvent(store, actor, { realmId: eventRealm, operation: 'DELETE', resourceType: 'REALM', resourcePath: `realms/${input.realmId}`, representation: { realm: input.realmId } });
}

/** Every token issued before `at` (seconds) is refused from now on; 0 clears the policy (checkNotBefore). */
export async function revokeBefore(store: Store, input: { realmId: string; at: number }, actor: Actor = cliActor()): Promise<void> {
  const realm = await requireRealm(store, input.realmId);
  checkNotBefore(input.at, { current: realm.notBefore });
  await store.realms.update(input.realmId, { notBefore: input.at });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'REALM', resourcePath: '', representation: { notBefore: input.at } });
}

/**
 * Keycloak's "push not-before": refuses every token issued until now. Token times (iat, created_at) are
 * whole seconds and the check is `issued < notBefore`, so a token issued earlier in this very second
 * would pass a notBefore of this second. The boundary is therefore the NEXT second, and the push
 * returns only once that second has begun: everything issued before the push started is refused,
 * everything issued after the push returned is accepted. Returns the new notBefore.
 */
export function pushNotBefore(store: Store, input: { realmId: string; nowMs: () => number; sleep?: (ms: number) => Promise<void> }, actor: Actor = cliActor()): Promise<number> {
  return atNextSecond(input, (at) => revokeBefore(store, { realmId: input.realmId, at }, actor));
}

/**
 * A not-before push's boundary (pushNotBefore says why the next second): `apply` sets it, and the promise
 * settles once that second has begun. Returns the boundary.
 */
export async function atNextSecond(clock: { nowMs: () => number; sleep?: (ms: number) => Promise<void> }, apply: (at: number) => Promise<unknown>): Promise<number> {
  const at = Math.floor(clock.nowMs() / 1000) + 1;
  await apply(at);
  const wait = at * 1000 - clock.nowMs();
  if (wait > 0) await (clock.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))))(wait);
  return at;
}

/**
 * Keycloak's PUT events/config: sets which optional event types the realm stores (storedTypesFromKeycloak)
 * and how long its events are kept (eventsExpiration, retentionsFromKeycloak); listeners and the admin
 * events flags are ignored (there are no listeners; admin events are always recorded). Nothing changes
 * unless every field given is valid.
 */
export async function updateEventsConfig(store: Store, input: { realmId: string; config: Record<string, unknown> }, actor: Actor = cliActor()): Promise<Realm> {
  await requireRealm(store, input.realmId);
  const stored = storedTypesFromKeycloak(input.config);
  const { eventsRetention } = retentionsFromKeycloak({ eventsExpiration: input.config.eventsExpiration });
  await store.realms.update(input.realmId, { ...(stored !== undefined ? { storedEventTypes: stored } : {}), ...(eventsRetention !== undefined ? { eventsRetention } : {}) });
  const realm = await requireRealm(store, input.realmId);
  await recordAdminEvent(store, actor, {
    realmId: realm.id,
    operation: 'UPDATE',
    resourceType: 'REALM',
    resourcePath: 'events/config',
    representation: { ...input.config, storedEventTypes: realm.storedEventTypes, eventsRetention: realm.eventsRetention },
  });
  return realm;
}
