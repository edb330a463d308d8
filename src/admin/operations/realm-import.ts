import consentMessages from '../../i18n/messages/consent.js';
import { importRequiredActionSettings } from '../required-actions.js';
import type { Store } from '../../storage/store.js';
import { randomUUID } from 'node:crypto';
import { importableIds, readFileUserStorage, storeFileUserStorage, type FileUserStorage } from '../keycloak/import-user-storage.js';
import { BROKER_REVIEW_PROFILE_MODES, ConflictError, REQUIRED_ACTIONS, type BrokerReviewProfile, type Realm, type RequiredAction, type SigningKey, type UserAttributes } from '../../storage/types.js';
import { DEFAULT_SCOPES, type RealmSettings } from '../../storage/repos/realms.js';
import { CODE_LIFETIME_RANGE, REALM_DEFAULTS } from '../../config/defaults.js';
import { hashPassword, MAX_RUNNING, NO_PASSWORD_HASH } from '../../crypto/passwords.js';
import { hashClientSecret } from '../../crypto/client-secrets.js';
import { generateSigningKey, isSigningAlg } from '../../crypto/keystore.js';
import { chooseSigningKeys, readSigningKeys, type FileSigningKey } from '../keycloak/signing-keys.js';
import { MASKED_SMTP_PASSWORD, fromRealmRepresentation, readSmtpServer } from '../keycloak/representations/realm.js';
import { importCredential, type KeycloakCredential } from '../keycloak/credentials.js';
import { importOtpCredential, type ImportedOtp } from '../keycloak/otp-credentials.js';
import { sealOtpKey } from '../../crypto/otp-secret.js';
import { MAX_OTP_PER_USER } from './otp.js';
import { MAX_WEBAUTHN_PER_USER } from './webauthn.js';
import { importWebAuthnCredential, type ImportedWebAuthn } from '../keycloak/webauthn-credentials.js';
import { readFileMappers, storeFileMappers, type FileMappers } from '../keycloak/import-mappers.js';
import { readFileScopeMappings, storeFileScopeMappings, type FileScopeMapping, type RefusedScopeMapping, type ScopedRole } from '../keycloak/import-role-scopes.js';
import { readFileLinks, readFileProviders, storeFileProviderMappers, storeFileLinks, storeFileProviders, type FileLink, type FileProvider, type ProviderOrganization, type ProviderOutcomes } from '../keycloak/import-identity-providers.js';
import { importWebAuthnPolicy, withoutWebAuthnPolicy } from '../keycloak/webauthn-import.js';
import { importLocaleSettings, readFileTexts, reportLocaleSettings, storeFileTexts, type FileTexts } from '../keycloak/import-localization.js';
import { PASSWORDLESS_PREFIX } from '../webauthn-policy.js';
import { RealmReportBuilder, type ImportReport, type RealmReport, type ReportLine } from '../keycloak/import-report.js';
import { REVIEW_CONFIG_KEY, REVIEW_PROFILE } from '../keycloak/representations/authentication-flows.js';
import { MASTER_REALM, MASTER_ROLES, REALM_MANAGEMENT } from '../authorization.js';
import { checkUserAttributes, checkChosenClientSecret, checkEmail, checkName, checkPathSegment, checkRedirectUri, checkWebOrigin, LIMITS, USERNAME_RE, ValidationError } from '../validation.js';
import { now, recordAdminEvent, type Actor } from './common.js';
import { checkRealmDisplayName, checkSmtpServer, checkRefreshLifetimes, createRealm, realmSigningAlg, updateRealm } from './realms.js';
import { MAX_KEEP_PREVIOUS_SECONDS, applyJwtKeys, checkBackchannelLogoutUrl, checkFrontchannelLogoutUrl, checkNewClient, createClient, deleteClient, type BackchannelLogoutChange, type ClientJwtKeysChange, type FrontchannelLogoutChange, type NewClient } from './clients.js';
import { keySource } from '../../oauth/client-keys.js';
import { deleteUser } from './users.js';
import { EMPTY_POLICY, PasswordPolicyError, policyFailures, readPasswordPolicy, storedPolicy, type LeftOut, type PasswordPolicy } from '../password-policy.js';
import { checkDomains, checkOrganizationTexts, checkRedirectUrl, createOrganization } from './organizations.js';
import { checkConsentText } from './client-scopes.js';
import { checkRoleDescription, checkRoleName, isAdminRole } from './roles.js';
import { findServiceAccount } from './service-accounts.js';
import { checkAttributes, checkGroupDescription, checkGroupName, createGroup } from './groups.js';
import { MAX_GROUP_DEPTH } from '../../storage/repos/groups.js';
import { randomId } from '../../crypto/random.js';
import type { Role } from '../../storage/repos/roles.js';
import { SECRET_HASH_ATTRIBUTE } from '../keycloak/export.js';
import { AUTH_METHODS_ATTRIBUTE, BACKCHANNEL_ATTRIBUTES, FRONTCHANNEL_ATTRIBUTES, JWT_ATTRIBUTES, backchannelFromAttributes, frontchannelFromRepresentation, jwtKeysFromAttributes, requireParFromAttributes, dpopBoundFromAttributes, requestObjectFromAttributes, tokenExchangeFromAttributes } from '../keycloak/representations/client.js';
import { FLOW_BINDINGS } from '../keycloak/representations/authentication-flows.js';

export type IfExists = 'fail' | 'skip' | 'overwrite';

export interface ImportOptions {
  ifExists: IfExists;
  /** Keycloak's `master` realm is skipped unless asked for: Realmgate has its own. */
  includeMaster?: boolean;
  /** Keycloak's built-in clients (account, admin-cli, ...) are skipped unless asked for. */
  includeBuiltinClients?: boolean;
  /**
   * Called with an error that is not a refusal of ours (a database failure, say): the report then
   * says only that the realm failed, since a database's own message is no reason to show a client.
   */
  onUnexpectedError?: (realm: string, err: unknown) => void;
}

/** Keycloak creates these in every realm; they serve Keycloak's own consoles. */
export const BUILTIN_CLIENTS = new Set(['account', 'account-console', 'admin-cli', 'broker', 'realm-management', 'security-admin-console']);

const MASKED = '**********';

/**
 * The English words of Keycloak's message keys for the consent texts of its built-in scopes
 * (profileScopeConsentText, ...): Realmgate's consent messages of the same keys (src/i18n/messages/consent.ts),
 * whose other languages the consent page shows for these words (src/views/scope-text.ts).
 */
const CONSENT_MESSAGES: Record<string, string> = Object.fromEntries(Object.entries(consentMessages.en).filter(([k]) => k.endsWith('ScopeConsentText')));

type Json = Record<string, unknown>;

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The typed reading of a file's fields. A field of the wrong type is never read as something else (a
 * string of users as no users, `"enabled": 0` as enabled, a string of redirect URIs as none): it throws
 * a ValidationError naming the field and the type expected, and the caller skips the entry it belongs
 * to (or, for the realm's own lists, fails the realm, as a realm setting of the wrong type does). A
 * string with a NUL (which PostgreSQL cannot store, and SQLite would) is refused the same way, while
 * the entry is read: before the transaction, alike on both databases. Absent and null are both absent,
 * except for a switch (true or false), where null is no answer.
 */
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v === 'string' ? `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)})` : `a ${typeof v} (${JSON.stringify(v)})`);
function wrongType(field: string, expected: string, v: unknown): never {
  throw new ValidationError(`${field} must be ${expected}, not ${kindOf(v)}`);
}
function optString(o: Json, key: string, at = ''): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') wrongType(`${at}${key}`, 'a string', v);
  if (v.includes('\u0000')) throw new ValidationError(`${at}${key} contains a NUL character`);
  return v;
}
/** A string shown or stored as a name: no control characters either (the admin API's rule for names). */
function optText(o: Json, key: string, at = ''): string | undefined {
  const v = optString(o, key, at);
  if (v !== undefined && /[\x00-\x1f\x7f]/.test(v)) throw new ValidationError(`${at}${key} must not contain control characters`);
  return v;
}
function optBool(o: Json, key: string, at = ''): boolean | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') wrongType(`${at}${key}`, 'true or false', v);
  return v;
}
function optNumber(o: Json, key: string, at = ''): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) wrongType(`${at}${key}`, 'a number', v);
  return v;
}
function optList(o: Json, key: string, at = ''): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) wrongType(`${at}${key}`, 'a list', v);
  return v;
}
function optObject(o: Json, key: string, at = ''): Json {
  const v = o[key];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) wrongType(`${at}${key}`, 'an object', v);
  return v as Json;
}
function optObjects(o: Json, key: string, at = ''): Json[] {
  return optList(o, key, at).map((x, i) => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) wrongType(`${at}${key}[${i}]`, 'an object', x);
    return x as Json;
  });
}
function optStrings(o: Json, key: string, at = ''): string[] {
  return optList(o, key, at).map((x, i) => {
    if (typeof x !== 'string') wrongType(`${at}${key}[${i}]`, 'a string', x);
    if (x.includes('\u0000')) throw new ValidationError(`${at}${key}[${i}] contains a NUL character`);
    return x;
  });
}

/** The realm's lists: one of the wrong type fails the realm (nothing of it is guessed, nothing stored). */
const REALM_LISTS = ['clients', 'users', 'clientScopes', 'organizations', 'federatedUsers', 'identityProviders', 'identityProviderMappers', 'requiredActions', 'groups', 'authenticationFlows'] as const;
function checkRealmLists(rep: Json, keys: readonly string[] = REALM_LISTS): void {
  for (const key of keys) optList(rep, key);
  optStrings(rep, 'defaultDefaultClientScopes');
  optStrings(rep, 'defaultOptionalClientScopes');
  optObject(rep, 'attributes');
}

/**
 * The name of an entry for its report line: its name as the file has it (the CLI shows control
 * characters escaped, JSON escapes them), or, when it has none of type string, its place in the list.
 */
const entryName = (kind: string, raw: unknown, key: string, i: number): string => {
  const v = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Json)[key] : undefined;
  return typeof v === 'string' && v !== '' ? v : `#${i + 1} of ${kind}`;
};
function entryObject(raw: unknown, what: string): Json {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) wrongType(what, 'an object', raw);
  return raw as Json;
}

/**
 * Imports Keycloak realms (issue 10): each in one transaction, so a realm that fails leaves the
 * database as it was; what cannot move is reported element by element, never guessed.
 */
export async function importKeycloakRealms(store: Store, realms: Json[], opts: ImportOptions, actor: Actor): Promise<ImportReport> {
  const out: RealmReport[] = [];
  for (const rep of realms) {
    const name = String(rep.realm);
    const report = new RealmReportBuilder(name);
    if (name === MASTER_REALM && !opts.includeMaster) {
      out.push(report.build('skipped', "Keycloak's master realm (its administrators); use --include-master to import it"));
      continue;
    }
    const existing = await store.realms.get(name);
    if (existing && opts.ifExists === 'skip') {
      out.push(report.build('unchanged', 'the realm exists already (--if-exists skip)'));
      continue;
    }
    if (existing && opts.ifExists !== 'overwrite') {
      out.push(report.build('failed', 'the realm exists already: use --if-exists skip or overwrite'));
      continue;
    }
    try {
      // Read, checked and hashed first; the transaction then only writes (and, overwriting, deletes the
      // realm it replaces: the file is the whole realm).
      const ready = await prepareRealm(rep, opts, report);
      const { masterAdmins } = await store.transaction(async (tx) => {
        if (existing) await tx.realms.delete(name);
        return importRealm(tx, rep, ready, report, actor);
      });
      // The master realm replaced keeps no administrator of Realmgate's: only those the file makes.
      if (existing && name === MASTER_REALM) {
        report.mapped(
          'realm master',
          masterAdmins.length > 0
            ? `replaced whole: Realmgate's administrators and admin-cli are gone; the file's holders of master's admin role administer now: ${masterAdmins.join(', ')}`
            : "replaced whole: Realmgate's administrators and admin-cli are gone (the file grants no one master's admin role); run realmgate bootstrap-admin to administer again",
        );
      }
      out.push(report.build(existing ? 'overwritten' : 'imported'));
    } catch (err) {
      const known = err instanceof ValidationError || err instanceof ConflictError;
      if (!known) opts.onUnexpectedError?.(name, err);
      out.push(report.build('failed', `nothing of this realm was stored: ${known ? message(err) : 'an unexpected error (logged)'}`));
    }
  }
  return { realms: out, failed: out.some((r) => r.status === 'failed') };
}

/** A realm read, checked and with its slow work done (its signing key, password hashes), ready to be written. */
interface PreparedRealm {
  /** The file's LDAP providers (user federation), checked. */
  userStorage: FileUserStorage[];
  changes: ReturnType<typeof fromRealmRepresentation>;
  settings: Partial<RealmSettings>;
  /** The SMTP password in clear, sealed when the realm is created; undefined: none. */
  smtpPassword?: string;
  signingKey: SigningKey;
  /** The file's signing keys Realmgate can use (the one that signs for the realm's algorithm is signingKey). */
  fileKeys: FileSigningKey[];
  /** The report's lines of the file's key providers left out. */
  keyLines: ReportLine[];
  scopes: Array<ScopeEntry | Refused>;
  clients: Array<ClientEntry | Refused>;
  users: Array<UserEntry | Refused>;
  organizations: Array<OrganizationEntry | Refused>;
  roles: PreparedRoles;
  groups: Array<GroupEntry | RefusedGroup>;
  /** The identity providers (OpenID Connect ones ready to check and store, the others refused). */
  providers: FileProvider[];
  /** The organization each provider belongs to, by the file's organizations[].identityProviders. */
  providerOrganizations: Map<string, { organization: string; others: string[] }>;
  /** Keycloak's scopeMappings and clientScopeMappings: stored once the clients, scopes and roles are. */
  scopeMappings: Array<FileScopeMapping | RefusedScopeMapping>;
  /** Keycloak's localizationTexts, checked (those left out are reported). */
  texts: FileTexts;
}

async function prepareRealm(rep: Json, opts: ImportOptions, report: RealmReportBuilder): Promise<PreparedRealm> {
  checkRealmLists(rep);
  const changes = fromRealmRepresentation({ ...withoutWebAuthnPolicy(rep), smtpServer: undefined });
  changes.settings.webAuthnPolicy = importWebAuthnPolicy(rep, report);
  changes.settings.webAuthnPasswordlessPolicy = importWebAuthnPolicy(rep, report, PASSWORDLESS_PREFIX);
  const actionSettings = importRequiredActionSettings(rep.requiredActions, { deleteAccountRoleForAll: defaultRolesGiveDeleteAccount(rep), deleteAccountRoleImported: opts.includeBuiltinClients === true });
  changes.settings.requiredActionSettings = actionSettings.settings;
  if (actionSettings.notes.length > 0) report.imported('required action settings', actionSettings.notes.join('; '));
  const smtp = readFileSmtp(rep, report);
  if (smtp) changes.settings.smtpServer = smtp.server;
  importLocaleSettings(changes.settings, report);
  const review = importReviewProfile(rep, report);
  if (review !== undefined) changes.settings.brokerReviewProfile = review;
  const texts = readFileTexts(rep, report);
  if (changes.displayName) {
    try {
      // The rule of every other door (length, no control characters); the realm comes without it.
      checkRealmDisplayName(changes.displayName);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      report.mapped('realm setting displayName', `${message(err)}: left out`);
      changes.displayName = undefined;
    }
  }
  const settings = clampSettings(changes.settings, report);
  const policy = importedPolicy(rep).policy;
  settings.passwordPolicy = policy.text;
  const organizations = readOrganizations(rep);
  settings.organizationRequired = organizationRequired(rep, organizations, report);
  const t = now();
  const file = readSigningKeys(rep, String(rep.realm), t);
  const alg = realmSigningAlg(settings);
  const signingKey = chooseSigningKeys(file.keys, t).get(alg)?.key ?? (await generateSigningKey(String(rep.realm), alg, t));
  const scopes = readScopes(rep);
  const clients = readClients(rep, opts);
  const userStorage = readFileUserStorage(rep);
  const users = readUsers(rep, policy, importableIds(userStorage));
  const roles = readRoles(rep);
  const groups = readGroups(rep);
  const providers = readFileProviders(optList(rep, 'identityProviders'));
  const scopeMappings = readFileScopeMappings(rep);
  await hashBeforehand(clients, users);
  return { texts, scopeMappings, changes, settings, ...(smtp?.password ? { smtpPassword: smtp.password } : {}), signingKey, fileKeys: file.keys, keyLines: file.lines, scopes, clients, users, userStorage, organizations, roles, groups, providers, providerOrganizations: providerOrganizations(rep) };
}

async function importRealm(store: Store, rep: Json, ready: PreparedRealm, report: RealmReportBuilder, actor: Actor): Promise<{ masterAdmins: string[] }> {
  const { changes, settings } = ready;
  const keys = await usableKeys(store, ready, report);
  const realm = await createRealm(store, { id: String(rep.realm), ...(changes.displayName ? { displayName: changes.displayName } : {}), settings, ...(changes.enabled === false ? { enabled: false } : {}), signingKey: keys.signing, ...(ready.smtpPassword !== undefined ? { smtpPassword: ready.smtpPassword } : {}) }, actor);
  report.imported('realm settings', 'lifetimes, brute-force limits, display name, enabled');
  if (realm.resetPasswordAllowed) {
    report.imported('realm setting resetPasswordAllowed', Object.keys(realm.smtpServer).length > 0 ? '"Forgot password?" on the login page, links valid ' + realm.actionTokenUserLifespan + ' s' : 'true, but the realm has no smtpServer: the login page offers no reset until one is set (realm update --smtp-host ...)');
  }
  reportLoginOptions(realm, report);
  reportLocaleSettings(realm, report);
  await storeFileTexts(store, realm.id, ready.texts, report);
  if (realm.registrationAllowed || realm.registrationEmailAsUsername) {
    const how = realm.registrationEmailAsUsername ? '; the email is the username (registrationEmailAsUsername)' : '';
    report.imported('realm setting registrationAllowed', realm.registrationAllowed ? `"Register" on the login page (docs/registration.md)${how}` : `false; registrationEmailAsUsername kept for when it is switched on`);
  }
  if (realm.editUsernameAllowed) {
    report.imported('realm setting editUsernameAllowed', realm.registrationEmailAsUsername ? 'true, but the email is the username (registrationEmailAsUsername): usernames stay as they are' : 'true: users may change their username on the account page and through the account REST API, administrators through the admin API');
  }
  if (realm.verifyEmail) {
    report.imported(
      'realm setting verifyEmail',
      Object.keys(realm.smtpServer).length > 0
        ? `a user whose email is not verified follows a mailed link before signing in (links valid ${realm.actionTokenUserLifespan} s)`
        : 'true, but the realm has no smtpServer: a user whose email is not verified cannot sign in until one is set (realm update --smtp-host ...)',
    );
  }
  for (const k of keys.others) await store.keys.insert(k);
  if (changes.notBefore) await updateRealm(store, { realmId: realm.id, notBefore: changes.notBefore }, actor);
  if (rep.bruteForceProtected === false) report.mapped('realm setting bruteForceProtected', 'false in Keycloak; Realmgate always limits failed logins');
  reportRealmLeftovers(rep, report);

  const scopes = await importScopes(store, realm.id, ready.scopes, report, await knownClients(store, realm.id, ready.clients));
  await importScopeDefaults(store, realm.id, rep, scopes, report);
  const clients = (await storeClients(store, realm.id, ready.clients, scopes, 'skip', report, actor)).stored;
  await storeFileUserStorage(store, realm.id, ready.userStorage, report, actor);
  const users = (await storeUsers(store, realm.id, rep, ready.users, 'skip', report, actor)).stored;
  const { memberships, created: organizations } = await importOrganizations(store, realm.id, ready.organizations, users, report, actor);
  await importConsents(store, realm.id, ready.users, users, clients, memberships, report);
  const providers = await importIdentityProviders(store, realm.id, ready, organizations, users, report, actor);
  const groups = await importGroups(store, realm.id, rep, ready.groups, ready.users, users, ready.roles.serviceAccounts, clients, report, actor);
  const roles = await importRoles(store, realm.id, rep, ready.roles, ready.users, users, clients, groups, report);
  const roleScopes = await importScopeMappings(store, realm.id, ready, scopes, clients, roles.scoped, report);
  // After the roles and groups they name.
  await storeFileProviderMappers(store, realm.id, list(rep.identityProviderMappers), report, actor);
  await recordAdminEvent(store, { ...actor, via: 'import' }, { realmId: realm.id, operation: 'CREATE', resourceType: 'REALM_IMPORT', resourcePath: '', representation: { clients: clients.size, users: users.size, roles: roles.created, groups: groups.stored.length, identityProviders: providers, roleScopeMappings: roleScopes } });
  return { masterAdmins: roles.masterAdmins };
}

/**
 * Keycloak's defaultDefaultClientScopes and defaultOptionalClientScopes: the scopes the realm gives a new
 * client. A name the realm does not have is left out and reported; openid is implied.
 */
async function importScopeDefaults(store: Store, realmId: string, rep: Json, scopes: Set<string>, report: RealmReportBuilder): Promise<void> {
  if (rep.defaultDefaultClientScopes === undefined && rep.defaultOptionalClientScopes === undefined) return;
  const wanted = (key: string): string[] => [...new Set(optStrings(rep, key))].filter((s) => s !== 'openid');
  const defaults = wanted('defaultDefaultClientScopes');
  const optional = wanted('defaultOptionalClientScopes').filter((s) => !defaults.includes(s));
  const missing = [...defaults, ...optional].filter((s) => !scopes.has(s));
  const set = { default: defaults.filter((s) => scopes.has(s)), optional: optional.filter((s) => scopes.has(s)) };
  await store.realms.update(realmId, { clientScopeDefaults: set });
  const what = `new clients get ${set.default.length > 0 ? set.default.join(' ') : 'no default scope'}${set.optional.length > 0 ? `, and may ask for ${set.optional.join(' ')}` : ''}`;
  if (missing.length > 0) report.mapped('realm setting defaultDefaultClientScopes', `${what}; scopes not in the realm left out: ${missing.join(' ')}`);
  else report.imported('realm setting defaultDefaultClientScopes', what);
}

/**
 * The file's signing keys as they are stored (src/admin/keycloak/signing-keys.ts), each reported. A kid
 * another realm holds already (the same export imported under two names) is left out: a kid names one
 * key of one issuer. Without a usable key for the realm's algorithm, the realm signs with a new one.
 */
async function usableKeys(store: Store, ready: PreparedRealm, report: RealmReportBuilder): Promise<{ signing: SigningKey; others: SigningKey[] }> {
  for (const line of ready.keyLines) report.add(line);
  const taken = await store.keys.existingKids(ready.fileKeys.map((k) => k.key.kid));
  let signing = ready.signingKey;
  const others: SigningKey[] = [];
  for (const k of ready.fileKeys) {
    const { kid, alg } = k.key;
    if (taken.has(kid)) {
      report.skipped(k.element, `kid ${kid} is a key of another realm already`);
      if (k.key === signing) signing = await generateSigningKey(signing.realmId, realmSigningAlg(ready.settings), signing.createdAt);
      continue;
    }
    const notes = k.notes && k.notes.length > 0 ? `; ${k.notes.join('; ')}` : '';
    if (k.key === signing) report.imported(k.element, `${alg}, kid ${kid}: signs the realm's tokens, as in Keycloak; tokens Keycloak signed with it verify against Realmgate's JWKS${notes}`);
    else if (k.key.status === 'active') report.imported(k.element, `${alg}, kid ${kid}: signs the ID tokens of clients that ask for ${alg}${notes}`);
    else report.imported(k.element, `${alg}, kid ${kid}: ${k.active ? 'not the active key of the highest priority' : 'passive in Keycloak'}: published, verifying the tokens it signed until they have expired; signs nothing${notes}`);
    if (k.key !== signing) others.push(k.key);
  }
  if (ready.fileKeys.length + ready.keyLines.length > 0 && !ready.fileKeys.some((k) => k.key === signing)) {
    report.mapped('signing keys', `no usable active ${signing.alg} key in the file: Realmgate signs with a new one (kid ${signing.kid}); relying parties fetch it from the JWKS`);
  }
  return { signing, others };
}

/**
 * Keycloak's smtpServer: kept (the password sealed when the realm is stored), its keys Realmgate does not
 * use reported; a map Realmgate refuses is left out with the reason (the realm then sends no mail).
 */
function readFileSmtp(rep: Json, report: RealmReportBuilder): { server: Record<string, string>; password: string | undefined } | undefined {
  if (rep.smtpServer === undefined || rep.smtpServer === null) return undefined;
  const left: string[] = [];
  try {
    const { server, password } = readSmtpServer(rep.smtpServer, left);
    if (Object.keys(server).length === 0) return undefined;
    checkSmtpServer(server);
    if (left.length > 0) report.skipped(`realm setting smtpServer ${left.length === 1 ? 'key' : 'keys'} ${left.slice(0, 10).join(', ')}`, 'not used by Realmgate');
    const masked = (rep.smtpServer as Record<string, unknown>).password === MASKED_SMTP_PASSWORD;
    const auth = server.auth === 'true' ? (password ? `, user ${server.user}, password sealed` : masked ? `, user ${server.user}; the password was masked in the file: set it with realm update --smtp-password-stdin` : `, user ${server.user}, no password`) : '';
    report.imported('realm setting smtpServer', `host ${server.host}${server.port ? `:${server.port}` : ''}, from ${server.from}${auth}`);
    return { server, password: password ?? undefined };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    report.skipped('realm setting smtpServer', `${message(err)}: left out; the realm sends no mail until one is set`);
    return undefined;
  }
}

/** Keycloak's limits differ from Realmgate's: a value out of our range is clamped, and reported. */
function clampSettings(s: Partial<RealmSettings>, report: RealmReportBuilder): Partial<RealmSettings> {
  const out: Partial<RealmSettings> = { ...s };
  const clamp = (key: keyof RealmSettings, kc: string, min: number, max: number): void => {
    const v = out[key];
    if (typeof v !== 'number') return;
    const c = Math.min(max, Math.max(min, v));
    if (c !== v) {
      (out as Record<string, unknown>)[key] = c;
      report.mapped(`realm setting ${kc}`, `${v} is outside Realmgate's range ${min}-${max}: set to ${c}`);
    }
  };
  // Specification, Limits: an authorization code lives 30 to 50 seconds (Keycloak's default is 60).
  clamp('codeLifetime', 'accessCodeLifespan', CODE_LIFETIME_RANGE.min, CODE_LIFETIME_RANGE.max);
  clamp('accessTokenLifetime', 'accessTokenLifespan', 1, 366 * 86_400);
  clamp('refreshIdleLifetime', 'offlineSessionIdleTimeout', 1, 5 * 366 * 86_400);
  clamp('refreshMaxLifetime', 'offlineSessionMaxLifespan', 1, 10 * 366 * 86_400);
  clamp('ssoSessionLifetime', 'ssoSessionMaxLifespan', 1, 366 * 86_400);
  clamp('maxLoginFailures', 'failureFactor', 1, 1000);
  clamp('lockoutSeconds', 'waitIncrementSeconds', 1, 86_400);
  clamp('maxLockoutSeconds', 'maxFailureWaitSeconds', 1, 30 * 86_400);
  clamp('actionTokenUserLifespan', 'actionTokenGeneratedByUserLifespan', 1, 30 * 86_400);
  clamp('actionTokenAdminLifespan', 'actionTokenGeneratedByAdminLifespan', 1, 366 * 86_400);
  clamp('ssoIdleRememberMe', 'ssoSessionIdleTimeoutRememberMe', 0, 366 * 86_400);
  clamp('ssoMaxRememberMe', 'ssoSessionMaxLifespanRememberMe', 0, 366 * 86_400);
  clamp('parRequestUriLifespan', 'attributes.parRequestUriLifespan', 1, 3600);
  // Keycloak lets an idle timeout exceed the maximum (the maximum wins, or is switched off); Realmgate
  // refuses it (checkRefreshLifetimes), and a refresh token never outlived its chain anyway: the idle
  // lifetime becomes the maximum, which is what it was in effect.
  const idle = out.refreshIdleLifetime ?? REALM_DEFAULTS.refreshIdleLifetime;
  const max = out.refreshMaxLifetime ?? REALM_DEFAULTS.refreshMaxLifetime;
  try {
    checkRefreshLifetimes(idle, max);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    out.refreshIdleLifetime = max;
    report.mapped('realm setting offlineSessionIdleTimeout', `${idle} is longer than the refresh chain maximum (offlineSessionMaxLifespan) ${max}: set to ${max}`);
  }
  if (out.signingAlg !== undefined && !isSigningAlg(out.signingAlg)) {
    report.mapped('realm setting defaultSignatureAlgorithm', `${out.signingAlg} is not one Realmgate signs with: RS256`);
    out.signingAlg = 'RS256';
  }
  return out;
}

/**
 * Keycloak never requires a user to belong to an organization. The realm requires it only when the
 * export enables organizations and every user who can sign in is a member of one: otherwise users of
 * no organization would be locked out (issue 10 item 3).
 */
function organizationRequired(rep: Json, organizations: Array<OrganizationEntry | Refused>, report: RealmReportBuilder): boolean {
  // A Realmgate export says what it was.
  const own = obj(rep.attributes)['realmgate.organizationRequired'];
  if (own === 'true' || own === 'false') return own === 'true';
  if (rep.organizationsEnabled !== true) {
    report.mapped('realm setting organizationsEnabled', 'false: organization not required, users of no organization sign in without the claim');
    return false;
  }
  const members = new Set<string>();
  // Members of the organizations that will be imported: one skipped makes no member.
  for (const o of organizations) if (!o.refused) for (const m of o.members) members.add(m);
  const people = list(rep.users).map(obj).filter((u) => !u.serviceAccountClientId);
  const outside = people.filter((u) => !members.has(String(u.username ?? '').toLowerCase())).length;
  if (outside > 0) {
    report.mapped('realm setting organizationsEnabled', `true, but ${outside} user(s) belong to no organization: organization not required (members still choose one)`);
    return false;
  }
  report.mapped('realm setting organizationsEnabled', 'true and every user is a member: organization required');
  return REALM_DEFAULTS.organizationRequired;
}

/**
 * The organization each identity provider of the file belongs to: the first organization whose
 * identityProviders name it (Keycloak links a provider to one), and the others that name it too. Read
 * from every organization of the file, imported or not, so that a provider whose organization was
 * skipped says so.
 */
function providerOrganizations(rep: Json): Map<string, { organization: string; others: string[] }> {
  const out = new Map<string, { organization: string; others: string[] }>();
  for (const raw of list(rep.organizations)) {
    const o = obj(raw);
    const alias = typeof o.alias === 'string' && o.alias !== '' ? o.alias : typeof o.name === 'string' ? o.name : undefined;
    if (alias === undefined) continue;
    for (const p of list(o.identityProviders)) {
      const provider = obj(p).alias;
      if (typeof provider !== 'string') continue;
      const e = out.get(provider);
      if (!e) out.set(provider, { organization: alias, others: [] });
      else if (e.organization !== alias && !e.others.includes(alias)) e.others.push(alias);
    }
  }
  return out;
}

/**
 * Stores the realm's identity providers (in the organizations that name them) and the links of the
 * users stored to their accounts at them. Returns how many providers were stored.
 */
async function importIdentityProviders(
  store: Store,
  realmId: string,
  ready: PreparedRealm,
  organizations: Map<string, { id: string; domains: string[] }>,
  users: Map<string, string>,
  report: RealmReportBuilder,
  actor: Actor,
): Promise<number> {
  const organizationOf = (alias: string): ProviderOrganization | undefined => {
    const o = ready.providerOrganizations.get(alias);
    if (!o) return undefined;
    const created = organizations.get(o.organization);
    return { alias: o.organization, others: o.others, ...(created ? { id: created.id, domains: created.domains } : {}) };
  };
  const { outcomes } = await storeFileProviders(store, realmId, ready.providers, { organizationOf }, report, actor);
  const inFile = new Set(ready.providers.map((p) => p.fields?.alias ?? p.name));
  const linked = storedUsers(ready.users, users).map(({ entry, userId }) => ({ name: entry.name, userId, links: entry.links }));
  await storeFileLinks(
    store,
    realmId,
    linked,
    (alias) => {
      const o = outcomes.get(alias);
      if (o && 'stored' in o) return { ok: true };
      return { reason: o ? `the identity provider was not imported (${o.reason})` : inFile.has(alias) ? 'the identity provider was not imported' : 'the file has no identity provider of this alias' };
    },
    report,
    now(),
  );
  return [...outcomes.values()].filter((o) => 'stored' in o).length;
}

/**
 * Whether the realm's default role (every user's) contains the account client's delete-account role,
 * directly or through composite realm roles: Keycloak's condition for a user to delete their account.
 */
function defaultRolesGiveDeleteAccount(rep: Json): boolean {
  const realmRoles = new Map(list(obj(rep.roles).realm).map(obj).map((r) => [String(r.name), r]));
  const d = obj(rep.defaultRole).name;
  const seen = new Set<string>();
  const gives = (name: string): boolean => {
    if (seen.has(name)) return false;
    seen.add(name);
    const composites = obj(realmRoles.get(name)?.composites);
    if (list(obj(composites.client).account).includes('delete-account')) return true;
    return list(composites.realm).some((n) => typeof n === 'string' && gives(n));
  };
  return gives(typeof d === 'string' ? d : `default-roles-${String(rep.realm).toLowerCase()}`);
}

function reportRealmLeftovers(rep: Json, report: RealmReportBuilder): void {
  const components = obj(rep.components);
  // User federation (LDAP) is imported by storeFileUserStorage; signing keys by the key import.
  reportRegistrationPolicies(list(components[REGISTRATION_POLICY_TYPE]).map(obj), report);
  const enabledOthers = list(rep.requiredActions).map(obj).filter((a) => a.enabled === true && !(REQUIRED_ACTIONS as readonly unknown[]).includes(a.alias)).map((a) => String(a.alias));
  // Keycloak's update_user_locale keeps the language chosen at sign-in in the user's locale attribute:
  // Realmgate always does (src/http/interaction/routes.ts keepChosenLocale).
  if (enabledOthers.includes('update_user_locale')) report.mapped('required action update_user_locale', "the language chosen at sign-in (the page's menu, kc_locale) is kept in the user's locale attribute at every sign-in, as Keycloak's update_user_locale does; there is nothing to enable");
  const otherActions = enabledOthers.filter((a) => a !== 'update_user_locale');
  if (otherActions.length > 0) report.skipped('required actions', `${otherActions.length} enabled in Keycloak that Realmgate does not act on (${otherActions.slice(0, 10).join(', ')}${otherActions.length > 10 ? ', ...' : ''}); it acts on ${REQUIRED_ACTIONS.join(', ')} only`);
  reportOtpPolicy(rep, report);
  if (list(rep.authenticationFlows).length > 0) report.mapped('authentication flows', "Realmgate's login is the password, then the security key or the code of an authenticator app for users who have one (Keycloak's browser and direct grant flows)");
  reportFlowBindings(rep, report);
  reportPasswordPolicy(rep, report);
}

/**
 * Keycloak's first broker login "Review Profile" mode: the config (update.profile.on.first.login) of the
 * idp-review-profile execution in the realm's first broker login flow (firstBrokerLoginFlow, the built-in
 * one unless bound to another), or off when that execution is DISABLED. undefined when the file does not
 * say (the default, missing, stays).
 */
function importReviewProfile(rep: Json, report: RealmReportBuilder): BrokerReviewProfile | undefined {
  const flowAlias = typeof rep.firstBrokerLoginFlow === 'string' && rep.firstBrokerLoginFlow !== '' ? rep.firstBrokerLoginFlow : 'first broker login';
  const flows = list(rep.authenticationFlows).map(obj);
  // The review may sit in the flow or in a flow nested in it (a copied flow keeps the built-in shape).
  const seen = new Set<string>();
  const find = (alias: string): Json | undefined => {
    if (seen.has(alias) || seen.size > 50) return undefined;
    seen.add(alias);
    for (const e of list(flows.find((f) => f.alias === alias)?.authenticationExecutions).map(obj)) {
      if (e.authenticator === REVIEW_PROFILE) return e;
      if (typeof e.flowAlias === 'string' && e.requirement !== 'DISABLED') {
        const inner = find(e.flowAlias);
        if (inner) return inner;
      }
    }
    return undefined;
  };
  const execution = find(flowAlias);
  if (!execution) return undefined;
  let mode: string | undefined;
  if (execution.requirement === 'DISABLED') mode = 'off';
  else {
    const config = list(rep.authenticatorConfig).map(obj).find((c) => c.alias === execution.authenticatorConfig);
    const value = config ? obj(config.config)[REVIEW_CONFIG_KEY] : undefined;
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !(BROKER_REVIEW_PROFILE_MODES as readonly string[]).includes(value)) {
      report.skipped('review profile config', `${REVIEW_CONFIG_KEY} ${JSON.stringify(value).slice(0, 40)} is none of ${BROKER_REVIEW_PROFILE_MODES.join(', ')}: the default (missing) applies`);
      return undefined;
    }
    mode = value;
  }
  if (mode !== 'missing') {
    const what = mode === 'on' ? 'the user reviews every account a provider gives at its first sign-in' : 'a provider\'s account makes a user as it is, never reviewed (Review Profile disabled or off)';
    report.imported('first broker login Review Profile', `${mode}: ${what}`);
  }
  return mode as BrokerReviewProfile;
}

/**
 * A realm or a client bound to another flow than Keycloak's built-in one: said, since Realmgate runs its
 * fixed steps whatever the binding (GET authentication/flows shows them as those built-in flows).
 */
function reportFlowBindings(rep: Json, report: RealmReportBuilder): void {
  for (const [setting, builtIn] of Object.entries(FLOW_BINDINGS)) {
    const bound = rep[setting];
    if (typeof bound === 'string' && bound !== '' && bound !== builtIn) {
      report.mapped(`realm setting ${setting}`, `${JSON.stringify(bound.slice(0, 100))} in Keycloak: Realmgate runs its own ${JSON.stringify(builtIn)} steps (the admin API's authentication/flows shows them)`);
    }
  }
  const overriding = list(rep.clients)
    .map(obj)
    .filter((c) => Object.values(obj(c.authenticationFlowBindingOverrides)).some((v) => typeof v === 'string' && v !== ''))
    .map((c) => String(c.clientId));
  if (overriding.length > 0) {
    report.mapped(
      'clients authenticationFlowBindingOverrides',
      `${overriding.length} client(s) bound to flows of their own in Keycloak (${overriding.slice(0, 10).join(', ')}${overriding.length > 10 ? ', ...' : ''}): they sign users in with the realm's fixed steps`,
    );
  }
}

const REGISTRATION_POLICY_TYPE = 'org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy';

/**
 * Keycloak's client registration policies (components of REGISTRATION_POLICY_TYPE, subType anonymous or
 * authenticated) are not moved: Realmgate's registration endpoint has fixed rules
 * (docs/client-registration.md), which the line says, next to the file's policies.
 */
function reportRegistrationPolicies(policies: Json[], report: RealmReportBuilder): void {
  if (policies.length === 0) return;
  const names = [...new Set(policies.map((p) => `${String(p.providerId ?? p.name ?? '?')} (${String(p.subType ?? '?')})`))].sort();
  report.mapped(
    'client registration policies',
    `${policies.length} in the file (${names.slice(0, 10).join(', ')}${names.length > 10 ? ', ...' : ''}); Realmgate's rules instead: no anonymous registration, an initial access token or an administrator's token with create-client; full scope off for clients registered with an initial access token (as Keycloak's "Full Scope Disabled"); scopes of the realm only`,
  );
}

/** Keycloak's login options as the realm has them now (the file's, or Keycloak's defaults where it has none). */
function reportLoginOptions(realm: Realm, report: RealmReportBuilder): void {
  report.imported(
    'realm setting loginWithEmailAllowed',
    realm.loginWithEmailAllowed ? 'true: users sign in with their username or their email (an email no other user of the realm has)' : 'false: users sign in with their username only',
  );
  report.imported(
    'realm setting duplicateEmailsAllowed',
    realm.duplicateEmailsAllowed ? 'true: several users may have one email (no sign-in by email)' : "false: a user's email must be unique in the realm (a user of the file with an email an earlier one has is imported without it)",
  );
  const rm = realm.rememberMe ? `true: the login page offers "Remember me" (session idle timeout ${realm.ssoIdleRememberMe ? `${realm.ssoIdleRememberMe} s` : 'none'}, lifetime ${realm.ssoMaxRememberMe || realm.ssoSessionLifetime} s)` : 'false: no "Remember me"; the sign-in cookie ends with the browser';
  report.imported('realm setting rememberMe', rm);
}

/**
 * The file's passwordPolicy as Realmgate keeps it: the rules it enforces; those it does not (hashAlgorithm,
 * hashIterations, passwordBlacklist, unknown ones) or whose value it refuses are left out, by name. A
 * policy that does not parse at all is left out whole (the realm is imported without one), said so.
 */
function importedPolicy(rep: Json): { policy: PasswordPolicy; leftOut: LeftOut[]; error?: string } {
  const text = rep.passwordPolicy;
  if (typeof text !== 'string' || text.trim() === '') return { policy: EMPTY_POLICY, leftOut: [] };
  try {
    return readPasswordPolicy(text, { strict: false });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { policy: EMPTY_POLICY, leftOut: [], error: message(err) };
  }
}

function reportPasswordPolicy(rep: Json, report: RealmReportBuilder): void {
  const { policy, leftOut, error } = importedPolicy(rep);
  if (error) report.skipped('password policy', `${JSON.stringify(String(rep.passwordPolicy).slice(0, 200))} is not a policy Realmgate can read (${error}): the realm has none but Realmgate's own 8 to 1024 characters`);
  if (policy.text !== '') report.imported('password policy', `${policy.text} (enforced at every password change; Realmgate's own 8 to 1024 characters stay underneath)`);
  for (const l of leftOut) report.skipped(`password policy ${l.id}`, `${l.reason}: not enforced`);
}

/** Keycloak's default OTP policy (RealmModel's otpPolicy*): what Realmgate sets every new authenticator up with. */
const KEYCLOAK_OTP_POLICY: Record<string, unknown> = { otpPolicyType: 'totp', otpPolicyAlgorithm: 'HmacSHA1', otpPolicyDigits: 6, otpPolicyPeriod: 30, otpPolicyLookAheadWindow: 1, otpPolicyCodeReusable: false };

/** A realm OTP policy other than Keycloak's defaults: one line, since Realmgate has no per-realm policy. */
function reportOtpPolicy(rep: Json, report: RealmReportBuilder): void {
  const differs = Object.entries(KEYCLOAK_OTP_POLICY).filter(([key, v]) => rep[key] !== undefined && rep[key] !== null && rep[key] !== v);
  if (differs.length === 0) return;
  const shown = differs.map(([key]) => `${key} ${JSON.stringify(rep[key]).slice(0, 40)}`).join(', ');
  report.mapped(
    'realm setting otpPolicy',
    `${shown}: Realmgate has one policy, Keycloak's defaults: new authenticators are set up with HmacSHA1, 6 digits, 30 s (a code is accepted one step early or late, once); imported authenticators keep their own algorithm, digits and period`,
  );
}

/** A client scope of the file, read and checked: its consent text is completed when it is stored. */
interface ScopeEntry {
  name: string;
  element: string;
  parts: ReportLine[];
  refused?: undefined;
  /** The consent text the entry gives (its consent.screen.text, or else its description), checked. */
  consentText?: string;
  /** The text to use only when the realm has none for the scope already. */
  fallback?: string;
  /** Its protocol mappers: those to move, and what the report says of the others. */
  mappers: FileMappers;
}

/** Reads and checks the client scopes (OpenID Connect ones) of the file: no database. */
function readScopes(rep: Json): Array<ScopeEntry | Refused> {
  const seen = new Set<string>();
  return optList(rep, 'clientScopes').map((raw, i) => {
    const name = entryName('clientScopes', raw, 'name', i);
    const element = `client scope ${name}`;
    try {
      const s = entryObject(raw, 'the entry');
      const scopeName = optString(s, 'name') ?? '';
      const protocol = optString(s, 'protocol');
      if (protocol !== undefined && protocol !== 'openid-connect') return refuse(name, element, 'skipped', `a ${protocol} scope`);
      const attrs = optObject(s, 'attributes');
      if (optString(attrs, 'is.dynamic.scope', 'attributes.') === 'true') return refuse(name, element, 'skipped', 'dynamic scopes are not supported');
      if (!/^[\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(scopeName)) return refuse(name, element, 'skipped', 'not a valid scope name (RFC 6749 3.3)');
      // As createClientScope: the name is a path segment of the admin API.
      try {
        checkPathSegment('the scope name', scopeName);
      } catch (err) {
        return refuse(name, element, 'skipped', (err as Error).message);
      }
      const text = optString(attrs, 'consent.screen.text', 'attributes.') ?? '';
      const description = optString(s, 'description');
      const mappers = readFileMappers(optList(s, 'protocolMappers'), scopeName);
      if (seen.has(scopeName)) return refuse(name, element, 'skipped', 'listed twice: the first entry was imported');
      seen.add(scopeName);
      const key = /^\$\{(\w+)\}$/.exec(text)?.[1];
      // Own keys only: `${constructor}` names no message (an inherited member is a function, not words).
      const own = key ? (Object.hasOwn(CONSENT_MESSAGES, key) ? CONSENT_MESSAGES[key] : undefined) : text;
      // The words of the consent page: the rule of the admin API's client scopes (1-500 characters, no control characters).
      const entry: ScopeEntry = { name: scopeName, element, parts: [], mappers };
      if (own) entry.consentText = checkConsentText(own);
      else if (description) entry.fallback = checkConsentText(description);
      return entry;
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return refuse(name, element, 'skipped', message(err));
    }
  });
}

/** Stores the scopes read by readScopes, with their consent text; returns the names the realm now has. */
async function importScopes(store: Store, realmId: string, entries: Array<ScopeEntry | Refused>, report: RealmReportBuilder, knownClient: (clientId: string) => boolean): Promise<Set<string>> {
  const existing = new Map((await store.realms.scopes(realmId)).map((s) => [s.name, s.consentText]));
  const t = now();
  for (const e of entries) {
    if (e.refused) {
      report.add(e.refused);
      continue;
    }
    const consentText = e.consentText ?? existing.get(e.name) ?? e.fallback ?? e.name;
    await store.realms.upsertScope(realmId, { name: e.name, consentText }, t);
    existing.set(e.name, consentText);
    report.imported(e.element, e.mappers.note);
    await storeFileMappers(store, { realmId, ownerType: 'scope', owner: e.name }, e.element, e.mappers, knownClient, report);
  }
  return new Set(existing.keys());
}

/**
 * A client or user entry of the file, read and checked completely before anything is written: either
 * refused (the line saying why) or ready to store. Nothing that can still refuse an entry runs after
 * an existing client or user has been deleted to make room for it (ifResourceExists OVERWRITE), and
 * the slow work (argon2id for plain-text passwords and chosen client secrets) runs before the
 * transaction, which then holds its database connection only for the writes.
 */
interface Refused {
  name: string;
  element: string;
  /** A user's id, when the entry has a usable one. */
  id?: string;
  /** Lines about parts of the entry left out (redirect URIs, origins), reported before its own. */
  parts: ReportLine[];
  refused: ReportLine;
}

interface ClientEntry {
  name: string;
  element: string;
  parts: ReportLine[];
  refused?: undefined;
  input: Omit<NewClient, 'realmId' | 'scopes' | 'optionalScopes'>;
  /** A chosen secret, hashed before the transaction into input.secretHash. */
  secret?: string;
  /**
   * Keycloak's rotated secret (client.secret.rotated, in plain text in its export) still valid until
   * expiresAt: hashed before the transaction into rotatedHash, kept as the client's previous secret.
   */
  rotated?: { secret: string; expiresAt: number };
  rotatedHash?: string;
  /** The default scopes the entry names; those the realm does not have are left out (and reported) when it is stored. */
  wantedScopes: string[];
  /** Its optional scopes (Keycloak's optionalClientScopes), likewise. */
  wantedOptional: string[];
  notes: string[];
  enabled: boolean;
  /** Its protocol mappers, stored with it. */
  mappers: FileMappers;
}

interface UserEntry {
  name: string;
  element: string;
  parts: ReportLine[];
  refused?: undefined;
  id: string;
  /** A plain-text password, hashed before the transaction into passwordHash. */
  plain?: string;
  passwordHash: string;
  /** When the password was set (its credential's createdDate); absent: now. */
  passwordChangedAt?: number;
  /** Keycloak's password-history credentials Realmgate can verify, the newest first (passwordHistory). */
  history: Array<{ passwordHash: string; createdAt: number }>;
  record: { email: string | null; firstName: string | null; lastName: string | null; emailVerified: boolean; requiredActions: RequiredAction[]; attributes: UserAttributes; federationLink?: string };
  enabled: boolean;
  notes: string[];
  /** Keycloak's clientConsents: imported once the user and the clients are stored. */
  consents: Array<{ clientId: string; scopes: string[] }>;
  /** realmRoles and clientRoles: granted once the roles are stored (importRoles). */
  roles: RoleMappings;
  /** The paths of the groups the user belongs to ("/parent/child"): joined once the groups are stored (importGroups). */
  groups: string[];
  /** Keycloak's otp credentials: sealed and stored with the user (their keys never leave the import). */
  otp: ImportedOtp[];
  /** Keycloak's webauthn credentials (security keys): stored with the user as they are. */
  webauthn: ImportedWebAuthn[];
  /** federatedIdentities: linked once the realm's identity providers are stored. */
  links: FileLink[];
}

/**
 * What became of an entry: Keycloak's PartialImportResult, with the reason of a skipped one (or what of
 * a user added or overwritten was left out: a link to an identity provider).
 */
export interface EntryResult {
  action: 'ADDED' | 'SKIPPED' | 'OVERWRITTEN';
  resourceType: 'CLIENT' | 'USER' | 'GROUP' | 'IDP';
  resourceName: string;
  id: string;
  reason?: string;
}

/** What the import does with a client or user that is already stored: leaves it (skipped) or replaces it. */
type OnExisting = 'skip' | 'overwrite';

const refuse = (name: string, element: string, outcome: 'skipped' | 'mapped', reason: string, parts: ReportLine[] = []): Refused => ({ name, element, parts, refused: { element, outcome, reason } });

/** The secret hash a Realmgate export carries (SECRET_HASH_ATTRIBUTE), when it is one of our formats. */
function restoredSecretHash(attrs: Json): string | undefined {
  const h = optString(attrs, SECRET_HASH_ATTRIBUTE, 'attributes.');
  return h && /^(sha256\$[A-Za-z0-9_-]{43}|\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+)$/.test(h) ? h : undefined;
}

/** Reads and checks the client entries (no database, no hashing). */
function readClients(rep: Json, opts: Pick<ImportOptions, 'includeBuiltinClients'>): Array<ClientEntry | Refused> {
  const builtin = (id: string): boolean => BUILTIN_CLIENTS.has(id) || (rep.realm === MASTER_REALM && id.endsWith('-realm'));
  return optList(rep, 'clients').map((raw, i) => {
    const name = entryName('clients', raw, 'clientId', i);
    const element = `client ${name}`;
    try {
      return readClient(rep, entryObject(raw, 'the entry'), element, builtin, opts);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return refuse(name, element, 'skipped', message(err));
    }
  });
}

/** One client entry (readClients); a field of the wrong type throws a ValidationError that names it. */
function readClient(rep: Json, c: Json, element: string, builtin: (id: string) => boolean, opts: Pick<ImportOptions, 'includeBuiltinClients'>): ClientEntry | Refused {
  const clientId = optString(c, 'clientId') ?? '';
  if (builtin(clientId) && !opts.includeBuiltinClients) return refuse(clientId, element, 'skipped', "Keycloak's built-in client (use --include-builtin-clients to import it)");
  if (clientId === REALM_MANAGEMENT) return refuse(clientId, element, 'mapped', 'Realmgate creates its own realm-management client');
  const protocol = optString(c, 'protocol') ?? 'openid-connect';
  if (protocol !== 'openid-connect') return refuse(clientId, element, 'skipped', `a ${protocol} client: Realmgate speaks OpenID Connect only`);
  if (optBool(c, 'bearerOnly') === true) return refuse(clientId, element, 'skipped', 'bearer-only: a resource server, which needs no client here (it validates tokens with the JWKS)');
  const isPublic = optBool(c, 'publicClient') === true;
  const secret = optString(c, 'secret');
  const attrs = optObject(c, 'attributes');
  const restored = isPublic ? undefined : restoredSecretHash(attrs);
  // Every field read now, so that one of the wrong type refuses the entry whatever else it says.
  const redirectEntries = optStrings(c, 'redirectUris');
  const postLogoutEntries = optString(attrs, 'post.logout.redirect.uris', 'attributes.') ?? '';
  const originEntries = optStrings(c, 'webOrigins');
  const flags = {
    enabled: optBool(c, 'enabled'),
    standardFlow: optBool(c, 'standardFlowEnabled'),
    implicitFlow: optBool(c, 'implicitFlowEnabled'),
    consentRequired: optBool(c, 'consentRequired'),
    directAccess: optBool(c, 'directAccessGrantsEnabled'),
    serviceAccounts: optBool(c, 'serviceAccountsEnabled'),
  };
  const pkce = optString(attrs, 'pkce.code.challenge.method', 'attributes.');
  // A Realmgate export names the secret methods a client allows (Keycloak's exports do not: both).
  const authMethods = isPublic ? undefined : optString(attrs, AUTH_METHODS_ATTRIBUTE, 'attributes.');
  // Keycloak's back-channel logout attributes ("true"/"false" strings; a wrong value refuses the entry).
  const backchannel = backchannelFromAttributes(attrs);
  // Keycloak's require.pushed.authorization.requests ("false" in its exports; a wrong value refuses the entry).
  const requirePar = requireParFromAttributes(attrs);
  // Keycloak's standard.token.exchange.* attributes (likewise).
  const tokenExchange = tokenExchangeFromAttributes(attrs);
  // Keycloak's dpop.bound.access.tokens (RFC 9449; likewise).
  const dpopBound = dpopBoundFromAttributes(attrs);
  // Keycloak's request.object.* attributes (RFC 9101; likewise).
  const requestObject = requestObjectFromAttributes(attrs);
  // Keycloak's frontchannelLogout switch and frontchannel.logout.* attributes (likewise).
  const frontchannel = frontchannelFromRepresentation(c.frontchannelLogout, attrs);
  const rootUrl = optString(c, 'rootUrl');
  // Keycloak's fullScopeAllowed (true when absent, as ClientRepresentation's default).
  const fullScope = optBool(c, 'fullScopeAllowed') !== false;
  const mappers = readFileMappers(optList(c, 'protocolMappers'), undefined);
  const ownScopes = c.defaultClientScopes !== undefined || c.optionalClientScopes !== undefined;
  const defaultEntries = optStrings(c, 'defaultClientScopes');
  const optionalEntries = optStrings(c, 'optionalClientScopes');
  const rawName = optString(c, 'name');
  const authType = isPublic ? 'none' : (optString(c, 'clientAuthenticatorType') ?? 'client-secret');
  // Keycloak's client-jwt (signed JWT, private_key_jwt): its keys are attributes; no secret is needed.
  const jwt = authType === 'client-jwt';
  // A client-secret client's keys are kept too when its request objects (RFC 9101) are verified with them.
  const requestObjectKeys = (requestObject.requestObjectRequired ?? 'not required') !== 'not required' || (requestObject.requestObjectSignatureAlg ?? null) !== null;
  const jwtAttributes = jwt || requestObjectKeys ? jwtKeysFromAttributes(attrs) : undefined;
  if (!isPublic && !jwt) {
    if (authMethods !== undefined && authMethods.includes('private_key_jwt')) return refuse(clientId, element, 'skipped', `attributes.${AUTH_METHODS_ATTRIBUTE} names the secret methods only: a signed JWT (private_key_jwt) is clientAuthenticatorType "client-jwt"`);
    if (authType !== 'client-secret') return refuse(clientId, element, 'skipped', `client authenticator ${authType} is not supported (client-secret and client-jwt only; client-secret-jwt would need the secret in clear, which Realmgate does not keep)`);
    if (restored && (secret === MASKED || !secret)) {
      // A Realmgate export with --with-secrets: the hash comes back, the client keeps its secret.
    } else if (secret === MASKED) {
      return refuse(clientId, element, 'skipped', 'its secret is masked (**********): export with kc.sh export (or realmgate realm export --with-secrets), which writes secrets, or create the client again');
    } else if (!secret) {
      return refuse(clientId, element, 'skipped', 'a confidential client without a secret in the export');
    } else {
      // A secret in clear is one someone chose (Keycloak generates 32 characters): the CLI's rule.
      checkChosenClientSecret(secret, 'give the client a generated secret in Keycloak and export again, or create it here');
    }
  }
  const parts: ReportLine[] = [];
  const leftOut = (what: string, err: unknown): void => {
    parts.push({ element: `${element} ${what}`, outcome: 'skipped', reason: message(err) });
  };
  const notes: string[] = [];
  const redirectUris: string[] = [];
  for (const uri of redirectEntries) {
    try {
      if (uri.includes('*')) throw new ValidationError('a wildcard: Realmgate matches redirect URIs exactly');
      if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(uri)) throw new ValidationError('a relative URI (resolved against rootUrl in Keycloak)');
      checkRedirectUri(uri);
      redirectUris.push(uri);
    } catch (err) {
      leftOut(`redirect URI ${uri}`, err);
    }
  }
  const postLogout: string[] = [];
  for (const uri of postLogoutEntries.split('##').filter((u) => u !== '')) {
    // "+" means: the same as the redirect URIs (Keycloak).
    if (uri === '+') {
      postLogout.push(...redirectUris);
      continue;
    }
    try {
      if (uri.includes('*')) throw new ValidationError('a wildcard');
      checkRedirectUri(uri);
      postLogout.push(uri);
    } catch (err) {
      leftOut(`post-logout redirect URI ${uri}`, err);
    }
  }
  const webOrigins: string[] = [];
  for (const o of originEntries) {
    try {
      webOrigins.push(checkWebOrigin(o));
    } catch (err) {
      leftOut(`web origin ${o}`, err);
    }
  }
  let backchannelLogout: BackchannelLogoutChange | undefined = backchannel ? { ...backchannel } : undefined;
  if (backchannelLogout?.url) {
    let url = backchannelLogout.url;
    // Keycloak resolves a URL starting with / against the client's rootUrl (ResolveRelative).
    if (url.startsWith('/') && rootUrl && /^https?:\/\//i.test(rootUrl)) url = `${rootUrl.replace(/\/+$/, '')}${url}`;
    try {
      backchannelLogout.url = checkBackchannelLogoutUrl(url);
      notes.push(`back-channel logout to ${backchannelLogout.url}${backchannelLogout.sessionRequired === false ? ' (without sid)' : ''}${backchannelLogout.revokeOfflineTokens ? ', revoking offline tokens' : ''}`);
    } catch (err) {
      backchannelLogout.url = null;
      leftOut(`${BACKCHANNEL_ATTRIBUTES.url} ${url}`, err);
    }
  }
  const frontchannelLogout: FrontchannelLogoutChange | undefined = frontchannel ? { ...frontchannel } : undefined;
  if (frontchannelLogout?.url) {
    let url = frontchannelLogout.url;
    if (url.startsWith('/') && rootUrl && /^https?:\/\//i.test(rootUrl)) url = `${rootUrl.replace(/\/+$/, '')}${url}`;
    try {
      frontchannelLogout.url = checkFrontchannelLogoutUrl(url);
      if (frontchannelLogout.enabled) notes.push(`front-channel logout to ${frontchannelLogout.url}${frontchannelLogout.sessionRequired === false ? ' (without iss and sid)' : ''}`);
    } catch (err) {
      frontchannelLogout.url = null;
      leftOut(`${FRONTCHANNEL_ATTRIBUTES.url} ${url}`, err);
    }
  }
  // Each key attribute of a client-jwt client on its own: a bad one is left out (reported), the others kept.
  let jwtKeys: ClientJwtKeysChange | undefined;
  if (jwt || requestObjectKeys) {
    let keys = applyJwtKeys(null, {});
    for (const [field, value] of Object.entries(jwtAttributes ?? {}) as Array<[keyof ClientJwtKeysChange, ClientJwtKeysChange[keyof ClientJwtKeysChange]]>) {
      try {
        keys = applyJwtKeys(keys, { [field]: value });
      } catch (err) {
        leftOut(`attribute ${JWT_ATTRIBUTES[field]}`, err);
      }
    }
    const source = keySource(keys);
    if (!jwt) notes.push(source ? `request objects verified with ${source.kind === 'url' ? `its JWKS URL ${source.url}` : `its ${source.kind === 'jwks' ? 'inline JWKS' : source.kind === 'certificate' ? 'certificate' : 'public key'}`}` : 'request objects configured but no key came with it: set jwks.url, jwks.string, a certificate or a public key');
    else notes.push(source ? `authenticates with a signed JWT (private_key_jwt), keys from ${source.kind === 'url' ? `its JWKS URL ${source.url}` : source.kind === 'jwks' ? 'its inline JWKS' : source.kind === 'certificate' ? 'its certificate' : 'its public key'}` : 'authenticates with a signed JWT (private_key_jwt) but no key came with it: set jwks.url, jwks.string, a certificate or a public key before it can authenticate');
    if (secret && jwt) notes.push('its secret is not kept: a client-jwt client authenticates with its keys');
    if (keys) jwtKeys = { ...keys };
  }
  let standardFlow = flags.standardFlow !== false;
  if (standardFlow && redirectUris.length === 0) {
    standardFlow = false;
    notes.push('no usable redirect URI: the code flow stays off until one is added');
  }
  if (flags.implicitFlow === true) notes.push('implicit flow not supported (RFC 9700 2.1.2)');
  if (flags.consentRequired !== true) notes.push('Realmgate asks each user to consent once');
  // Realmgate accepts S256 only (RFC 9700 2.1.1); "plain" becomes S256, which every client supports.
  if (pkce === 'plain') notes.push('PKCE plain is not accepted: S256 required instead');
  if (requirePar === true) notes.push('pushed authorization requests required (RFC 9126)');
  if (requestObject.requestObjectRequired !== undefined && requestObject.requestObjectRequired !== 'not required') notes.push(`request objects required (RFC 9101: ${requestObject.requestObjectRequired})`);
  if (requestObject.requestObjectSignatureAlg === 'none') notes.push('unsigned request objects (request.object.signature.alg "none") are refused: Realmgate verifies every request object');
  if (tokenExchange.standardTokenExchange === true) notes.push('standard token exchange enabled (RFC 8693)');
  if (dpopBound === true) notes.push('DPoP-bound access tokens required (RFC 9449)');
  if (!fullScope) notes.push('fullScopeAllowed false: its tokens carry only the roles in its scope (its own client roles and the scope mappings)');
  if (mappers.note !== undefined) notes.push(mappers.note);
  // Keycloak gives a client without scope lists the realm's default ones (defaultDefaultClientScopes
  // and defaultOptionalClientScopes); default and optional ones stay apart (src/oauth/scopes.ts).
  const realmDefaults = rep.defaultDefaultClientScopes !== undefined || rep.defaultOptionalClientScopes !== undefined;
  const [listed, listedOptional] = ownScopes
    ? [defaultEntries, optionalEntries]
    : realmDefaults
      ? [optStrings(rep, 'defaultDefaultClientScopes'), optStrings(rep, 'defaultOptionalClientScopes')]
      : [DEFAULT_SCOPES.map((s) => s.name), []];
  // A name over 255 characters is refused with the entry (checkNewClient), as the admin API refuses it.
  const clientName = rawName && !/^\$\{.*\}$/.test(rawName) ? rawName : undefined;
  const input: ClientEntry['input'] = {
    clientId,
    redirectUris,
    public: isPublic,
    ...(restored ? { secretHash: restored } : {}),
    ...(clientName ? { name: clientName } : {}),
    postLogoutRedirectUris: [...new Set(postLogout)],
    standardFlowEnabled: standardFlow,
    directAccessGrantsEnabled: flags.directAccess === true,
    serviceAccountsEnabled: flags.serviceAccounts === true && !isPublic,
    webOrigins,
    ...(pkce === 'S256' || pkce === 'plain' ? { pkceMethod: 'S256' as const } : {}),
    ...(jwt ? { authMethods: ['private_key_jwt'] } : authMethods !== undefined ? { authMethods: [authMethods] } : {}),
    ...(backchannelLogout ? { backchannelLogout } : {}),
    ...(requirePar !== undefined ? { requirePushedAuthorizationRequests: requirePar } : {}),
    ...tokenExchange,
    ...(dpopBound !== undefined ? { dpopBoundAccessTokens: dpopBound } : {}),
    ...requestObject,
    ...(frontchannelLogout ? { frontchannelLogout } : {}),
    ...(jwtKeys ? { jwtKeys } : {}),
    ...(fullScope ? {} : { fullScopeAllowed: false }),
  };
  const chosen = !isPublic && !restored && !jwt ? secret : undefined;
  const rotated = !isPublic && !jwt ? rotatedSecretOf(attrs, notes) : undefined;
  try {
    // The checks createClient makes, now: the entry is refused here, before anything is deleted.
    checkNewClient({ ...input, realmId: '', ...(chosen !== undefined ? { secret: chosen } : {}) });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return refuse(clientId, element, 'skipped', message(err), parts);
  }
  return { name: clientId, element, parts, input, ...(chosen !== undefined ? { secret: chosen } : {}), ...(rotated ? { rotated } : {}), wantedScopes: [...new Set(['openid', ...listed])], wantedOptional: [...new Set(listedOptional)].filter((s) => s !== 'openid' && !listed.includes(s)), notes, enabled: flags.enabled !== false, mappers };
}

/** The user's password-history credentials whose hashes Realmgate verifies, the newest `keep`. */
function passwordHistory(creds: KeycloakCredential[], keep: number): Array<{ passwordHash: string; createdAt: number }> {
  const out: Array<{ passwordHash: string; createdAt: number }> = [];
  for (const c of creds.filter((x) => x.type === 'password-history').sort((a, b) => (b.createdDate ?? 0) - (a.createdDate ?? 0))) {
    if (out.length >= keep) break;
    const imported = importCredential(c);
    if ('hash' in imported) out.push({ passwordHash: imported.hash, createdAt: Math.floor(Math.max(0, Math.min(c.createdDate ?? 0, 253_402_300_799_000)) / 1000) });
  }
  return out;
}

/** Reads and checks the user entries (no database, no hashing). */
function readUsers(rep: Json, policy: PasswordPolicy, ldapIds: Set<string>): Array<UserEntry | Refused> {
  return optList(rep, 'users').map((raw, i) => {
    const name = entryName('users', raw, 'username', i).toLowerCase();
    const element = `user ${name}`;
    try {
      return readUser(entryObject(raw, 'the entry'), element, policy, ldapIds);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return refuse(name, element, 'skipped', message(err));
    }
  });
}

/** The fields of a Keycloak credential Realmgate reads, each of its type (or the user is refused). */
function readCredential(c: Json, at: string): KeycloakCredential {
  const out: KeycloakCredential = {};
  for (const key of ['id', 'type', 'userLabel', 'secretData', 'credentialData', 'value', 'hashedSaltedValue', 'salt', 'algorithm'] as const) {
    const v = optString(c, key, at);
    if (v !== undefined) out[key] = v;
  }
  for (const key of ['createdDate', 'priority'] as const) {
    const v = optNumber(c, key, at);
    if (v !== undefined) out[key] = v;
  }
  const temporary = optBool(c, 'temporary', at);
  if (temporary !== undefined) out.temporary = temporary;
  // hashIterations is checked with the hash (importCredential): one of the wrong type leaves the user without a usable password, said so.
  if (c.hashIterations !== undefined) out.hashIterations = c.hashIterations as number;
  return out;
}

/** A user's attributes, with the rule of every door (checkUserAttributes); a set it refuses is left out, the note says why. */
function userAttributes(u: Json, notes: string[]): UserAttributes {
  if (u.attributes === undefined || u.attributes === null) return {};
  try {
    return checkUserAttributes(u.attributes);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    notes.push(`attributes left out: ${message(err)}`);
    return {};
  }
}

/** One user entry (readUsers); a field of the wrong type throws a ValidationError that names it. */
function readUser(u: Json, element: string, policy: PasswordPolicy, ldapIds: Set<string>): UserEntry | Refused {
  const username = (optString(u, 'username') ?? '').toLowerCase();
  const id = optString(u, 'id');
  const serviceAccountOf = optString(u, 'serviceAccountClientId');
  if (serviceAccountOf) {
    return refuse(username, element, 'mapped', `service account of ${serviceAccountOf}: made with its client, under a new id (the sub of its client_credentials tokens changes)`);
  }
  // A user of an LDAP provider the file brings: a federated user, whose password stays in the directory.
  const federationLink = optString(u, 'federationLink');
  if (federationLink && !ldapIds.has(federationLink)) return refuse(username, element, 'skipped', 'its password lives in a user federation provider (federationLink) that is not imported: Realmgate cannot check it');
  if (!USERNAME_RE.test(username)) return refuse(username, element, 'skipped', 'the username has characters Realmgate does not accept');
  if (!id || /[^\x21-\x7e]/.test(id)) return refuse(username, element, 'skipped', 'no usable id');
  if (id.length > LIMITS.userId) return refuse(username, element, 'skipped', `its id has more than ${LIMITS.userId} characters (Keycloak's ids are UUIDs)`);
  // Every field read (and its type checked) before anything is decided from it.
  const enabled = optBool(u, 'enabled');
  const emailVerified = optBool(u, 'emailVerified');
  const rawEmail = optText(u, 'email');
  const firstName = optText(u, 'firstName')?.trim();
  const lastName = optText(u, 'lastName')?.trim();
  const creds = optObjects(u, 'credentials').map((c, i) => readCredential(c, `credentials[${i}].`));
  const actions = optStrings(u, 'requiredActions');
  const totp = optBool(u, 'totp');
  const federated = optObjects(u, 'federatedIdentities').map((f, i) => ({
    identityProvider: optString(f, 'identityProvider', `federatedIdentities[${i}].`),
    userId: optString(f, 'userId', `federatedIdentities[${i}].`),
    userName: optString(f, 'userName', `federatedIdentities[${i}].`),
  }));
  const consents = optObjects(u, 'clientConsents').map((c, i) => ({
    clientId: optString(c, 'clientId', `clientConsents[${i}].`) ?? '',
    scopes: optStrings(c, 'grantedClientScopes', `clientConsents[${i}].`),
  }));
  const roles = readMappings(u);
  const groups = optStrings(u, 'groups');
  const notes: string[] = [];
  let passwordHash = NO_PASSWORD_HASH;
  let plain: string | undefined;
  let passwordChangedAt: number | undefined;
  const passwords = creds.filter((c) => (c.type ?? 'password') === 'password');
  for (const other of creds.filter((c) => c.type !== undefined && c.type !== 'password' && c.type !== 'otp' && c.type !== 'webauthn' && c.type !== 'webauthn-passwordless')) {
    if (other.type !== 'password-history') notes.push(`credential ${other.type} not moved`);
  }
  const { otp, parts } = readUserOtp(creds, element);
  const webauthn = readUserWebAuthn(creds, element, parts);
  const twoFactor = webauthn.filter((k) => !k.passwordless).length;
  if (twoFactor > 0) notes.push(`${twoFactor} security key(s) (webauthn) moved: they sign in while the RP ID is the same`);
  if (webauthn.length > twoFactor) notes.push(`${webauthn.length - twoFactor} passkey(s) (webauthn-passwordless) moved: they sign in while the RP ID is the same`);
  if (otp.length > 0) notes.push(`${otp.length} authenticator app(s) (TOTP) moved with their settings: the codes they show are accepted`);
  else if (totp === true && parts.length === 0) notes.push('totp true in Keycloak, but the file has no otp credential (an export without secrets?): no authenticator moved');
  const { links, parts: linkParts } = readFileLinks(federated, element);
  parts.push(...linkParts);
  // A user with links signs in through the provider (Keycloak's brokered users have no password).
  if (federationLink) notes.push('federated user (LDAP): signs in with the directory password, checked at each sign-in');
  else if (passwords.length === 0 && links.length === 0) notes.push('no password: the user cannot sign in until one is set');
  if (federationLink) {
    if (passwords.length > 0) notes.push('password credentials not moved: the password lives in LDAP');
    passwords.length = 0;
    links.length = 0;
  }
  const best = [...passwords].sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0) || (b.createdDate ?? 0) - (a.createdDate ?? 0))[0];
  if (best) {
    const c = importCredential(best);
    if ('hash' in c) passwordHash = c.hash;
    else if ('plain' in c) {
      // A password in clear is one an administrator chose: it meets the realm's policy as the admin API
      // and the CLI apply it to the same password, or the user is refused as they would refuse it.
      const failures = policyFailures(policy, { password: c.plain, username, email: rawEmail ?? null });
      if (failures.length > 0) return { ...refuse(username, element, 'skipped', new PasswordPolicyError(failures).message), id };
      plain = c.plain;
      notes.push('password given in clear: hashed with argon2id');
    } else notes.push(`password not usable (${c.unusable}): the user needs a new one`);
    // The password's date (forceExpiredPasswordChange counts from it): Keycloak's createdDate, in milliseconds.
    if ('hash' in c && best.createdDate !== undefined && best.createdDate > 0 && best.createdDate < 253_402_300_799_000) passwordChangedAt = Math.floor(best.createdDate / 1000);
    if (passwords.length > 1) notes.push(`${passwords.length - 1} other password credential(s) not moved (Realmgate keeps one password: the one of highest priority, then the newest)`);
  }
  // Keycloak keeps a temporary password as the UPDATE_PASSWORD required action (RepresentationToModel):
  // Realmgate does the same, and asks for a new password at the next sign-in. The other actions of
  // REQUIRED_ACTIONS are kept too (done at the next sign-in when the realm has them enabled); others are not.
  const requiredActions: RequiredAction[] = REQUIRED_ACTIONS.filter((a) => actions.includes(a) || (a === 'UPDATE_PASSWORD' && best?.temporary === true));
  const unsupported = [...new Set(actions.filter((a) => !(REQUIRED_ACTIONS as readonly string[]).includes(a)))];
  if (unsupported.length > 0) notes.push(`required actions not supported: ${unsupported.join(', ')}`);
  let email = rawEmail ?? null;
  if (email !== null) {
    try {
      checkEmail(email);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      notes.push(`email ${JSON.stringify(email.length > 80 ? `${email.slice(0, 80)}...` : email)} is not an address: left out`);
      email = null;
    }
  }
  const attributes = userAttributes(u, notes);
  const personName = (label: string, v: string | undefined): string | null => {
    if (!v) return null;
    if (v.length <= LIMITS.personName) return v;
    notes.push(`${label} longer than ${LIMITS.personName} characters: left out`);
    return null;
  };
  return {
    name: username,
    element,
    parts,
    id,
    ...(plain !== undefined ? { plain } : {}),
    passwordHash,
    ...(passwordChangedAt !== undefined ? { passwordChangedAt } : {}),
    history: policy.passwordHistory ? passwordHistory(creds, policy.passwordHistory - 1) : [],
    record: { email, firstName: personName('firstName', firstName), lastName: personName('lastName', lastName), emailVerified: emailVerified === true, requiredActions, attributes, ...(federationLink ? { federationLink } : {}) },
    enabled: enabled !== false,
    notes,
    consents,
    roles,
    groups,
    otp,
    webauthn,
    links,
  };
}

/** A user's webauthn credentials (security keys), read; one that cannot move is a line of its own saying why. */
function readUserWebAuthn(creds: KeycloakCredential[], element: string, parts: ReportLine[]): ImportedWebAuthn[] {
  const out: ImportedWebAuthn[] = [];
  creds.forEach((c, i) => {
    if (c.type !== 'webauthn' && c.type !== 'webauthn-passwordless') return;
    const label = c.userLabel ? ` ${JSON.stringify(c.userLabel.length > 64 ? `${c.userLabel.slice(0, 64)}...` : c.userLabel)}` : '';
    const at = `${element} ${c.type} credential ${i}${label}`;
    const r = importWebAuthnCredential(c);
    if ('skipped' in r) parts.push({ element: at, outcome: 'skipped', reason: r.skipped });
    else if (out.length >= MAX_WEBAUTHN_PER_USER) parts.push({ element: at, outcome: 'skipped', reason: `a user has at most ${MAX_WEBAUTHN_PER_USER} security keys` });
    else if (out.some((k) => k.credentialId.equals(r.key.credentialId))) parts.push({ element: at, outcome: 'skipped', reason: 'the same credential id as an earlier key of the user' });
    else {
      out.push(r.key);
      if (r.note) parts.push({ element: at, outcome: 'mapped', reason: r.note });
    }
  });
  return out;
}

/**
 * A user's otp credentials (Keycloak's TOTP authenticators), read; one that cannot move (HOTP, an
 * unknown algorithm, bad JSON, one too many) is a line of its own saying why, and the user moves without it.
 */
function readUserOtp(creds: KeycloakCredential[], element: string): { otp: ImportedOtp[]; parts: ReportLine[] } {
  const otp: ImportedOtp[] = [];
  const parts: ReportLine[] = [];
  creds.forEach((c, i) => {
    if (c.type !== 'otp') return;
    const label = c.userLabel ? ` ${JSON.stringify(c.userLabel.length > 64 ? `${c.userLabel.slice(0, 64)}...` : c.userLabel)}` : '';
    const at = `${element} otp credential ${i}${label}`;
    const r = importOtpCredential(c);
    if ('skipped' in r) parts.push({ element: at, outcome: 'skipped', reason: r.skipped });
    else if (otp.length >= MAX_OTP_PER_USER) parts.push({ element: at, outcome: 'skipped', reason: `a user has at most ${MAX_OTP_PER_USER} authenticators` });
    else {
      otp.push(r.otp);
      if (r.note) parts.push({ element: at, outcome: 'mapped', reason: r.note });
    }
  });
  return { otp, parts };
}

/** Seals and stores the authenticators of a user just stored, each under a new id (bound to it and to the user). */
async function storeUserOtp(store: Store, realmId: string, userId: string, otp: ImportedOtp[], t: number): Promise<void> {
  for (const o of otp) {
    const id = randomUUID();
    const sealedSecret = await sealOtpKey(store, id, userId, o.key);
    await store.otp.create({ id, realmId, userId, label: o.label, sealedSecret, algorithm: o.algorithm, digits: o.digits, period: o.period, createdAt: o.createdAt ?? t });
  }
}

/**
 * Keycloak's rotated secret of a client (attributes client.secret.rotated, the previous secret in plain
 * text, and client.secret.rotated.expiration.time, epoch seconds): kept as the client's previous secret
 * while it is still valid, so that applications still on it keep working after the move (at most 30
 * days more, Realmgate's longest). Expired or without a time: left out, with a note.
 */
function rotatedSecretOf(attrs: Record<string, unknown> | undefined, notes: string[]): { secret: string; expiresAt: number } | undefined {
  const secret = attrs?.['client.secret.rotated'];
  if (typeof secret !== 'string' || secret === '') return undefined;
  const raw = attrs?.['client.secret.rotated.expiration.time'];
  const expiresAt = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,12}$/.test(raw) ? Number(raw) : NaN;
  const t = now();
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= t) {
    notes.push('its rotated secret (client.secret.rotated) has expired or has no expiration time: not kept');
    return undefined;
  }
  const until = Math.min(expiresAt, t + MAX_KEEP_PREVIOUS_SECONDS);
  notes.push(`its rotated secret is still accepted until ${new Date(until * 1000).toISOString()} (client.secret.rotated)`);
  return { secret, expiresAt: until };
}

/**
 * Hashes the plain-text passwords and chosen client secrets of the entries, before any transaction:
 * at most as many at once as the hashing limiter runs (each argon2id holds a libuv thread and 19 MiB;
 * more would only wait in the limiter's queue, which is meant for logins), so logins and token
 * signatures keep their share of the thread pool while a large import hashes.
 */
async function hashBeforehand(clients: Array<ClientEntry | Refused>, users: Array<UserEntry | Refused>): Promise<void> {
  const jobs: Array<() => Promise<void>> = [];
  for (const c of clients) {
    if (c.refused) continue;
    const { secret, rotated } = c;
    if (secret !== undefined) {
      jobs.push(async () => {
        c.input.secretHash = await hashClientSecret(secret, { generated: false });
        delete c.secret;
      });
    }
    if (rotated !== undefined) {
      jobs.push(async () => {
        c.rotatedHash = await hashClientSecret(rotated.secret, { generated: false });
      });
    }
  }
  for (const u of users) {
    if (u.refused || u.plain === undefined) continue;
    const plain = u.plain;
    jobs.push(async () => {
      u.passwordHash = await hashPassword(plain);
      delete u.plain;
    });
  }
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < jobs.length) {
      const job = jobs[next++]!;
      try {
        await job();
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_RUNNING, jobs.length) }, worker));
}

/** Reports an entry that is not stored, and returns its result. */
function skip(report: RealmReportBuilder, e: { element: string; name: string }, type: EntryResult['resourceType'], id: string, line: ReportLine | string): EntryResult {
  const l = typeof line === 'string' ? { element: e.element, outcome: 'skipped' as const, reason: line } : line;
  report.add(l);
  return { action: 'SKIPPED', resourceType: type, resourceName: e.name, id, reason: l.reason ?? l.outcome };
}

/** The clients an audience mapper of the file may name: the realm's, and those the file brings. */
async function knownClients(store: Store, realmId: string, entries: Array<ClientEntry | Refused>): Promise<(clientId: string) => boolean> {
  const ids = new Set((await store.clients.list(realmId)).map((c) => c.clientId));
  for (const e of entries) if (!e.refused) ids.add(e.name);
  return (id) => ids.has(id);
}

/**
 * Stores the clients read by readClients (their secrets hashed); a client already stored is left as it
 * is or replaced (deleted, then created again) as onExisting says. Returns the results and the ids of
 * the clients stored.
 */
async function storeClients(store: Store, realmId: string, entries: Array<ClientEntry | Refused>, scopes: Set<string>, onExisting: OnExisting, report: RealmReportBuilder, actor: Actor): Promise<{ results: EntryResult[]; stored: Set<string> }> {
  const results: EntryResult[] = [];
  const stored = new Set<string>();
  const knownClient = await knownClients(store, realmId, entries);
  for (const e of entries) {
    for (const l of e.parts) report.add(l);
    if (e.refused) {
      results.push(skip(report, e, 'CLIENT', e.name, e.refused));
      continue;
    }
    if (e.secret !== undefined) throw new Error(`${e.element}: its secret was not hashed beforehand`);
    if (stored.has(e.name)) {
      results.push(skip(report, e, 'CLIENT', e.name, 'listed twice: the first entry was imported'));
      continue;
    }
    const clientScopes = e.wantedScopes.filter((s) => scopes.has(s));
    const optionalScopes = e.wantedOptional.filter((s) => scopes.has(s));
    const missing = [...e.wantedScopes, ...e.wantedOptional].filter((s) => !scopes.has(s));
    const notes = missing.length > 0 ? [...e.notes, `scopes not in the realm left out: ${missing.join(' ')}`] : e.notes;
    let replaced = false;
    if (await store.clients.get(realmId, e.name)) {
      if (onExisting !== 'overwrite') {
        results.push(skip(report, e, 'CLIENT', e.name, 'a client with this id exists already'));
        continue;
      }
      await deleteClient(store, { realmId, clientId: e.name }, { ...actor, via: 'import' });
      replaced = true;
    }
    try {
      await createClient(store, { ...e.input, realmId, scopes: clientScopes.join(' '), optionalScopes: optionalScopes.join(' ') }, { ...actor, via: 'import' });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      // readClients made the same checks: should one still fail once the stored client is deleted, the
      // whole import fails, and its transaction brings the client back.
      if (replaced) throw new ValidationError(`${e.element}: ${message(err)}`);
      results.push(skip(report, e, 'CLIENT', e.name, message(err)));
      continue;
    }
    if (!e.enabled) await store.clients.update(realmId, e.name, { enabled: false });
    if (e.rotated && e.rotatedHash) await store.clients.update(realmId, e.name, { rotatedSecret: { hash: e.rotatedHash, expiresAt: e.rotated.expiresAt } });
    stored.add(e.name);
    if (notes.length > 0) report.mapped(e.element, notes.join('; '));
    else report.imported(e.element);
    await storeFileMappers(store, { realmId, ownerType: 'client', owner: e.name }, e.element, e.mappers, knownClient, report);
    results.push({ action: replaced ? 'OVERWRITTEN' : 'ADDED', resourceType: 'CLIENT', resourceName: e.name, id: e.name });
  }
  return { results, stored };
}

/**
 * Stores the users read by readUsers (their passwords hashed) with their Keycloak ids (the `sub`
 * relying parties stored); a user already stored (by username or id) is left as it is or replaced as
 * onExisting says. Returns the results and username -> id of the users stored.
 */
async function storeUsers(store: Store, realmId: string, rep: Json, entries: Array<UserEntry | Refused>, onExisting: OnExisting, report: RealmReportBuilder, actor: Actor): Promise<{ results: EntryResult[]; stored: Map<string, string> }> {
  const results: EntryResult[] = [];
  const stored = new Map<string, string>();
  const storedIds = new Set<string>();
  const t = now();
  const realm = await store.realms.get(realmId);
  if (list(rep.federatedUsers).length > 0) report.skipped(`${list(rep.federatedUsers).length} federated user(s)`, 'they live in a user storage provider (LDAP); only their ids are in the export');
  for (const e of entries) {
    if (e.refused) {
      results.push(skip(report, e, 'USER', e.id ?? e.name, e.refused));
      continue;
    }
    if (e.plain !== undefined) throw new Error(`${e.element}: its password was not hashed beforehand`);
    if (stored.has(e.name) || storedIds.has(e.id)) {
      results.push(skip(report, e, 'USER', e.id, 'listed twice (username or id): the first entry was imported'));
      continue;
    }
    const byName = await store.users.findByUsername(realmId, e.name);
    const byId = await store.users.get(e.id);
    if (byId && byId.realmId !== realmId) {
      results.push(skip(report, e, 'USER', e.id, 'the id is the id of a user of another realm'));
      continue;
    }
    const existing = byName ?? byId;
    if (existing && onExisting !== 'overwrite') {
      results.push(skip(report, e, 'USER', e.id, 'a user with this id or username exists already'));
      continue;
    }
    if (byName && byId && byName.id !== byId.id) {
      results.push(skip(report, e, 'USER', e.id, `the username and the id belong to two different users (${byName.id} and ${byId.username}): neither is replaced`));
      continue;
    }
    if (existing) await deleteUser(store, { realmId, user: existing.id }, { ...actor, via: 'import' });
    // duplicateEmailsAllowed off (checkEmailFree's rule): an email another user of the realm has (one of the
    // file imported before this one) is left out, so that a sign-in by email names one user only.
    if (realm && !realm.duplicateEmailsAllowed && e.record.email !== null && (await store.users.findByEmail(realmId, e.record.email, 1)).length > 0) {
      e.notes.push(`email ${JSON.stringify(e.record.email.length > 80 ? `${e.record.email.slice(0, 80)}...` : e.record.email)} left out: another user of the realm has it (duplicateEmailsAllowed is false)`);
      e.record = { ...e.record, email: null, emailVerified: false };
    }
    await store.users.create({ id: e.id, realmId, username: e.name, ...e.record, passwordHash: e.passwordHash, now: t, organizationIds: [], ...(e.passwordChangedAt !== undefined ? { passwordChangedAt: e.passwordChangedAt } : {}) });
    await store.users.addPasswordHistory({ id: e.id, realmId }, e.history);
    if (!e.enabled) await store.users.update(e.id, { enabled: false });
    await storeUserOtp(store, realmId, e.id, e.otp, t);
    for (const k of e.webauthn) await store.webauthn.create({ id: randomUUID(), realmId, userId: e.id, ...k, createdAt: k.createdAt ?? t });
    stored.set(e.name, e.id);
    storedIds.add(e.id);
    // Required actions are kept as Keycloak kept them: imported, with a word in the report.
    const pending = [
      ...(e.record.requiredActions.includes('UPDATE_PASSWORD') ? ['UPDATE_PASSWORD kept: a new password is asked for at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('CONFIGURE_TOTP') ? ['CONFIGURE_TOTP kept: an authenticator app is set up at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('webauthn-register') ? ['webauthn-register kept: a security key is registered at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('webauthn-register-passwordless') ? ['webauthn-register-passwordless kept: a passkey is registered at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('VERIFY_EMAIL') ? ['VERIFY_EMAIL kept: the email is verified through a mailed link at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('TERMS_AND_CONDITIONS') ? ['TERMS_AND_CONDITIONS kept: the realm\'s terms are accepted at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('UPDATE_PROFILE') ? ['UPDATE_PROFILE kept: the email and names are reviewed at the next sign-in'] : []),
      ...(e.record.requiredActions.includes('delete_account') ? ['delete_account kept: the user is asked to confirm the deletion of their account at the next sign-in (when the realm enables the action)'] : []),
    ];
    for (const l of e.parts) report.add(l);
    if (e.notes.length > 0) report.mapped(e.element, [...e.notes, ...pending].join('; '));
    else report.imported(e.element, pending.join('; ') || undefined);
    results.push({ action: existing ? 'OVERWRITTEN' : 'ADDED', resourceType: 'USER', resourceName: e.name, id: e.id });
  }
  return { results, stored };
}

/** An organization of the file, read and checked (no database): its domains and members' usernames. */
interface OrganizationEntry {
  name: string;
  element: string;
  parts: ReportLine[];
  refused?: undefined;
  alias: string;
  displayName?: string;
  description?: string;
  enabled: boolean;
  redirectUrl?: string;
  domains: Array<{ name: string; verified: boolean }>;
  /** Usernames (lower-cased), each once. */
  members: string[];
  notes: string[];
}

/** Reads and checks the organizations with the rules of the admin operations (alias, name, description, domains). */
function readOrganizations(rep: Json): Array<OrganizationEntry | Refused> {
  const taken = new Set<string>();
  const aliases = new Set<string>();
  const providersInFile = new Set(list(rep.identityProviders).map((p) => obj(p).alias));
  return optList(rep, 'organizations').map((raw, i) => {
    const byAlias = entryName('organizations', raw, 'alias', i);
    const name = byAlias.startsWith('#') ? entryName('organizations', raw, 'name', i) : byAlias;
    const element = `organization ${name}`;
    try {
      const o = entryObject(raw, 'the entry');
      const displayName = optString(o, 'name');
      const alias = optString(o, 'alias') ?? displayName ?? '';
      const description = optString(o, 'description');
      const enabled = optBool(o, 'enabled');
      const domainEntries = optObjects(o, 'domains').map((d, j) => ({ name: optString(d, 'name', `domains[${j}].`) ?? '', verified: optBool(d, 'verified', `domains[${j}].`) === true }));
      const memberNames = optObjects(o, 'members').map((m, j) => (optString(m, 'username', `members[${j}].`) ?? '').toLowerCase());
      // Its identity providers (by alias) are put in it when they are stored (providerOrganizations).
      const idps = optObjects(o, 'identityProviders').map((p, j) => optString(p, 'alias', `identityProviders[${j}].`) ?? '');
      // The checks createOrganization makes, now: the entry is refused before the transaction.
      checkName('organization alias', alias);
      checkOrganizationTexts({ ...(displayName ? { name: displayName } : {}), ...(description ? { description } : {}) });
      if (aliases.has(alias)) return refuse(alias, element, 'skipped', 'listed twice: the first entry was imported');
      aliases.add(alias);
      const notes: string[] = [];
      let redirectUrl: string | undefined;
      try {
        redirectUrl = checkRedirectUrl(optString(o, 'redirectUrl')) ?? undefined;
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        notes.push(`redirectUrl left out (${message(err)})`);
      }
      const domains: Array<{ name: string; verified: boolean }> = [];
      for (const d of domainEntries) {
        try {
          if (d.name.startsWith('*.')) throw new ValidationError('a wildcard domain');
          const [checked] = checkDomains([d]);
          if (taken.has(checked!.name)) throw new ValidationError('claimed by another organization');
          taken.add(checked!.name);
          domains.push(checked!);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          notes.push(`domain ${d.name} left out (${message(err)})`);
        }
      }
      for (const idp of idps) if (!providersInFile.has(idp)) notes.push(`identity provider ${idp} left out: the file has no identity provider of this alias`);
      const members = [...new Set(memberNames)];
      if (members.length < memberNames.length) notes.push(`${memberNames.length - members.length} member(s) listed twice, imported once`);
      return { name: alias, element, parts: [], alias, ...(displayName ? { displayName } : {}), ...(description ? { description } : {}), ...(redirectUrl ? { redirectUrl } : {}), enabled: enabled !== false, domains, members, notes };
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return refuse(name, element, 'skipped', message(err));
    }
  });
}

/**
 * Stores the organizations read by readOrganizations with their domains and members; returns user id ->
 * organization ids, and alias -> the organization stored (its id and domains).
 */
async function importOrganizations(
  store: Store,
  realmId: string,
  entries: Array<OrganizationEntry | Refused>,
  users: Map<string, string>,
  report: RealmReportBuilder,
  actor: Actor,
): Promise<{ memberships: Map<string, string[]>; created: Map<string, { id: string; domains: string[] }> }> {
  const memberships = new Map<string, string[]>();
  const created = new Map<string, { id: string; domains: string[] }>();
  for (const e of entries) {
    if (e.refused) {
      report.add(e.refused);
      continue;
    }
    const notes = [...e.notes];
    try {
      if (await store.organizations.findByAlias(realmId, e.alias)) throw new ValidationError('exists already');
      const org = await createOrganization(
        store,
        { realmId, alias: e.alias, ...(e.displayName ? { name: e.displayName } : {}), ...(e.description ? { description: e.description } : {}), ...(e.redirectUrl ? { redirectUrl: e.redirectUrl } : {}), enabled: e.enabled, domains: e.domains },
        { ...actor, via: 'import' },
      );
      created.set(e.alias, { id: org.id, domains: e.domains.map((d) => d.name) });
      let members = 0;
      for (const username of e.members) {
        const userId = users.get(username);
        if (!userId) {
          notes.push(`member ${username} not imported`);
          continue;
        }
        await store.users.addMembership(userId, org.id);
        memberships.set(userId, [...(memberships.get(userId) ?? []), org.id]);
        members++;
      }
      if (members > 0) notes.unshift(`${members} member(s)`);
      if (notes.length > 0 && notes.some((n) => !/member\(s\)$/.test(n))) report.mapped(e.element, notes.join('; '));
      else report.imported(e.element, notes.join('; ') || undefined);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      report.skipped(e.element, message(err));
    }
  }
  return { memberships, created };
}

// RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * The users of the file that were stored, each once, with their ids: an entry refused, listed twice or
 * whose id was taken is not the stored user, and its consents, groups and mappings are not that user's.
 */
function storedUsers(entries: Array<UserEntry | Refused>, users: Map<string, string>): Array<{ entry: UserEntry; userId: string }> {
  const out: Array<{ entry: UserEntry; userId: string }> = [];
  const done = new Set<string>();
  for (const e of entries) {
    if (e.refused) continue;
    const userId = users.get(e.name);
    if (userId !== e.id || done.has(e.id)) continue;
    done.add(e.id);
    out.push({ entry: e, userId });
  }
  return out;
}

/**
 * Consents already given (Keycloak's clientConsents, read with their user): Keycloak's consent is not
 * per organization, so it is recorded for no organization and for each of the user's organizations.
 */
async function importConsents(store: Store, realmId: string, entries: Array<UserEntry | Refused>, users: Map<string, string>, clients: Set<string>, memberships: Map<string, string[]>, report: RealmReportBuilder): Promise<void> {
  const t = now();
  for (const { entry: e, userId } of storedUsers(entries, users)) {
    for (const c of e.consents) {
      const element = `consent of ${e.name} to ${c.clientId}`;
      if (!clients.has(c.clientId)) {
        report.skipped(element, 'the client was not imported');
        continue;
      }
      const bad = c.scopes.find((s) => !SCOPE_TOKEN.test(s));
      if (bad !== undefined) {
        report.skipped(element, `grantedClientScopes has ${JSON.stringify(bad)}, not a scope name (RFC 6749 3.3)`);
        continue;
      }
      // The openid scope is implied in Keycloak and never listed.
      const scopes = [...new Set(['openid', ...c.scopes])];
      for (const organizationId of ['', ...(memberships.get(userId) ?? [])]) {
        await store.consents.grant({ realmId, userId, clientId: c.clientId, organizationId, scopes, now: t });
      }
      report.imported(element, scopes.join(' '));
    }
  }
}

/** A group of the file (groups[] and, recursively, their subGroups), read and checked: no database. */
interface GroupEntry {
  element: string;
  /** "/parent/child": the names from the top-level group down. */
  path: string;
  /** '' for a top-level group. */
  parentPath: string;
  name: string;
  /** Keycloak's id, when it can be kept. */
  id?: string;
  description: string | null;
  attributes: Record<string, string[]>;
  /** realmRoles and clientRoles: granted to the group once the roles are stored (importRoles). */
  roles: RoleMappings;
  notes: string[];
  refused?: undefined;
}

/** A group skipped with its subgroups, and the paths by which a user's `groups` may name it. */
interface RefusedGroup {
  refused: ReportLine;
  paths: string[];
}

/** A group the import stored: importRoles grants it its mappings. */
interface StoredGroup {
  id: string;
  path: string;
  roles: RoleMappings;
  /** The usernames of its members and of its subgroups' members, who hold what is mapped to it. */
  membersWithin: string[];
}

interface StoredGroups {
  /** Parents before their subgroups. */
  stored: StoredGroup[];
}

// Keycloak's group ids are UUIDs; an id goes into the admin API's paths (groups/{id}), so only
// URL-safe characters are kept, as many as the column holds.
const GROUP_ID = /^[A-Za-z0-9._~-]{1,36}$/;

/** How many groups hang below an entry, at any depth (a skipped group's line says how many go with it). */
function subgroupCount(raw: unknown): number {
  let n = 0;
  const stack: unknown[] = [raw];
  while (stack.length > 0) {
    const subs = obj(stack.pop()).subGroups;
    if (!Array.isArray(subs)) continue;
    n += subs.length;
    stack.push(...subs);
  }
  return n;
}

/**
 * Reads and checks the groups, parents before their subgroups: no database. A group of the wrong type,
 * with a name the admin operations refuse (checkGroupName: no '/', no spaces at either end, ...), listed
 * twice among its siblings or nested deeper than MAX_GROUP_DEPTH is skipped with its subgroups; a
 * description or attributes the operations refuse are left out, reported.
 */
function readGroups(rep: Json): Array<GroupEntry | RefusedGroup> {
  const out: Array<GroupEntry | RefusedGroup> = [];
  const ids = new Set<string>();
  const walk = (raws: unknown[], parentPath: string, depth: number): void => {
    const siblings = new Set<string>();
    raws.forEach((raw, i) => {
      const g = obj(raw);
      const rawName = typeof g.name === 'string' && g.name !== '' ? g.name : undefined;
      // Keycloak writes a '/' of a name as '~/' in paths (KeycloakModelUtils.buildGroupPath).
      const path = rawName === undefined ? undefined : `${parentPath}/${rawName.replaceAll('/', '~/')}`;
      const element = path === undefined ? `group #${i + 1} of ${parentPath === '' ? 'groups' : `the subGroups of ${parentPath}`}` : `group ${path}`;
      // A duplicate keeps no path: a membership by its path goes to the first entry's group.
      const skip = (reason: string, opts: { duplicate?: boolean } = {}): void => {
        const n = subgroupCount(raw);
        const paths = opts.duplicate ? [] : [path, typeof g.path === 'string' ? g.path : undefined].filter((p): p is string => p !== undefined && p !== '');
        out.push({ refused: { element, outcome: 'skipped', reason: n > 0 ? `${reason}; its ${n} subgroup(s) with it` : reason }, paths });
      };
      let entry: GroupEntry;
      let subs: unknown[];
      try {
        const e = entryObject(raw, 'the entry');
        // Every field read (and its type checked) before anything is decided from it.
        const name = optString(e, 'name');
        const id = optString(e, 'id');
        const description = optString(e, 'description');
        const roles = readMappings(e);
        subs = optList(e, 'subGroups');
        checkGroupName(name);
        if (depth > MAX_GROUP_DEPTH) return skip(`nested deeper than ${MAX_GROUP_DEPTH} groups, the most Realmgate keeps`);
        if (siblings.has(name!)) return skip('listed twice among its siblings: the first entry was imported', { duplicate: true });
        siblings.add(name!);
        const notes: string[] = [];
        let keptId: string | undefined;
        if (id !== undefined && !GROUP_ID.test(id)) notes.push("its id is not one Realmgate keeps (more than 36 characters, or characters other than letters, digits and '-._~'): a new id");
        else if (id !== undefined && ids.has(id)) notes.push("its id is another group's in the file: a new id");
        else if (id !== undefined) ids.add((keptId = id));
        let checkedDescription: string | null = null;
        try {
          checkedDescription = checkGroupDescription(description);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          notes.push(`description left out (${message(err)})`);
        }
        let attributes: Record<string, string[]> = {};
        try {
          attributes = checkAttributes(e.attributes);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          notes.push(`attributes left out (${message(err)})`);
        }
        entry = { element, path: path!, parentPath, name: name!, ...(keptId !== undefined ? { id: keptId } : {}), description: checkedDescription, attributes, roles, notes };
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        return skip(message(err));
      }
      out.push(entry);
      walk(subs, entry.path, depth + 1);
    });
  };
  walk(optList(rep, 'groups'), '', 1);
  return out;
}

/** A path as a user's `groups` names it: Keycloak finds "a/b" and "/a/b/" as "/a/b". */
const groupPath = (p: string): string => `/${p.replace(/^\//, '').replace(/\/$/, '')}`;

/**
 * Stores the groups read by readGroups (Keycloak's ids kept) and makes their members: the users of the
 * file, and service accounts made with their clients, joining the groups their `groups` name. A path of
 * no group, or of a group skipped, is reported, not an error. Role mappings are granted by importRoles.
 */
async function importGroups(
  store: Store,
  realmId: string,
  rep: Json,
  entries: Array<GroupEntry | RefusedGroup>,
  userEntries: Array<UserEntry | Refused>,
  users: Map<string, string>,
  serviceAccounts: ServiceAccountEntry[],
  clients: Set<string>,
  report: RealmReportBuilder,
  actor: Actor,
): Promise<StoredGroups> {
  const byPath = new Map<string, { id: string; entry: GroupEntry; members: Set<string> }>();
  const skipped: Array<[string, string]> = [];
  for (const e of entries) {
    if (e.refused) {
      for (const p of e.paths) skipped.push([p, e.refused.reason!]);
      continue;
    }
    // Not the id of another realm's group (ids are unique across realms).
    let id = e.id;
    if (id !== undefined && (await store.groups.get(id))) {
      id = undefined;
      e.notes.push("its id is a group's of another realm: a new id");
    }
    // readGroups made createGroup's checks, and a parent skipped takes its subgroups with it: nothing here refuses.
    const parentId = e.parentPath === '' ? '' : byPath.get(e.parentPath)!.id;
    const { group } = await createGroup(
      store,
      { realmId, parentId, name: e.name, description: e.description, attributes: e.attributes, ...(id !== undefined ? { id } : {}) },
      { ...actor, via: 'import' },
    );
    byPath.set(e.path, { id: group.id, entry: e, members: new Set() });
  }

  const notJoined = new Map<string, { reason: string; who: string[] }>();
  const join = async (userId: string, who: string, paths: string[]): Promise<void> => {
    for (const path of new Set(paths.map(groupPath))) {
      const g = byPath.get(path);
      if (g) {
        await store.groups.addMember(g.id, userId);
        g.members.add(who);
        continue;
      }
      const below = skipped.find(([p]) => path === p || path.startsWith(`${p}/`));
      const n = notJoined.get(path) ?? { reason: below ? `the group was skipped (${below[1]})` : 'the file has no group of this path', who: [] };
      n.who.push(who);
      notJoined.set(path, n);
    }
  };
  for (const { entry, userId } of storedUsers(userEntries, users)) await join(userId, entry.name, entry.groups);
  for (const sa of serviceAccounts) {
    // A refused entry is reported with its roles (importRoles).
    if (sa.refused !== undefined || !sa.groups || sa.groups.length === 0) continue;
    const client = clients.has(sa.clientId) ? await store.clients.get(realmId, sa.clientId) : undefined;
    const user = client?.serviceAccountsEnabled ? await findServiceAccount(store, client) : undefined;
    if (!user) {
      report.skipped(`groups of the service account of ${sa.clientId}`, client ? 'the client has no service account here (serviceAccountsEnabled is off)' : 'the client was not imported');
      continue;
    }
    await join(user.id, user.username, sa.groups);
  }

  // A member of a group holds the roles of the groups above it: each group's membersWithin.
  const within = new Map<string, Set<string>>([...byPath.keys()].map((p) => [p, new Set<string>()]));
  for (const g of byPath.values()) {
    for (let p: string = g.entry.path; p !== ''; p = byPath.get(p)!.entry.parentPath) for (const who of g.members) within.get(p)!.add(who);
  }
  for (const e of entries) {
    if (e.refused) {
      report.add(e.refused);
      continue;
    }
    const members = byPath.get(e.path)!.members.size;
    const counted = members > 0 ? `${members} member(s)` : undefined;
    if (e.notes.length > 0) report.mapped(e.element, [...(counted ? [counted] : []), ...e.notes].join('; '));
    else report.imported(e.element, counted);
  }
  for (const [path, n] of notJoined) {
    const names = n.who.length > 5 ? `${n.who.slice(0, 5).join(', ')}, ...` : n.who.join(', ');
    report.skipped(`memberships of group ${path}`, `${n.who.length} user(s) (${names}): ${n.reason}`);
  }
  // Keycloak's defaultGroups: paths of the groups every user created from now on joins.
  for (const raw of new Set(optStrings(rep, 'defaultGroups') ?? [])) {
    const path = groupPath(raw);
    const g = byPath.get(path);
    if (g) {
      await store.groups.setDefault(g.id, true);
      report.imported(`default group ${path}`, 'every user created from now on joins it');
    } else {
      report.skipped(`default group ${path}`, skipped.some(([p]) => path === p || path.startsWith(`${p}/`)) ? 'the group was skipped' : 'the file has no group of this path');
    }
  }
  return { stored: [...byPath.values()].map((g) => ({ id: g.id, path: g.entry.path, roles: g.entry.roles, membersWithin: [...within.get(g.entry.path)!].sort() })) };
}

/** Keycloak's message keys for the descriptions of its built-in roles (themes/messages_en.properties). */
const ROLE_MESSAGES: Record<string, string> = {
  'role_offline-access': 'Offline access',
  role_uma_authorization: 'Obtain permissions',
  'role_default-roles': 'Default roles',
};

/** A role of the file (roles.realm[], roles.client.<clientId>[]), read and checked: no database. */
interface RoleEntry {
  /** '' for a realm role, else the clientId of its client. */
  client: string;
  name: string;
  element: string;
  description: string | null;
  /** The roles a composite contains (its composites, as the file names them), as roleKey()s. */
  members: string[];
  notes: string[];
  refused?: ReportLine;
}

/** A user's role mappings as the file gives them (realmRoles, clientRoles), each of its type. */
interface RoleMappings {
  realm: string[];
  clients: Array<[string, string[]]>;
}

/** A service account's entry: made with its client, its role mappings and groups applied then. */
interface ServiceAccountEntry {
  clientId: string;
  element: string;
  roles?: RoleMappings;
  groups?: string[];
  refused?: string;
}

interface PreparedRoles {
  entries: RoleEntry[];
  /** Each role of the file (its first entry), by roleKey(): what a composite or a mapping names. */
  byKey: Map<string, RoleEntry>;
  /** The mappings of service accounts, whose users are made with their clients. */
  serviceAccounts: ServiceAccountEntry[];
  /** Keycloak's default role (defaultRole, else default-roles-<realm>). */
  defaultRole: string;
}

const roleKey = (client: string, name: string): string => JSON.stringify([client, name]);
const keyParts = (key: string): [string, string] => JSON.parse(key) as [string, string];
const roleElement = (client: string, name: string): string => (client === '' ? `realm role ${name}` : `client role ${name} of ${client}`);

function readMappings(u: Json): RoleMappings {
  const realm = optStrings(u, 'realmRoles');
  const byClient = optObject(u, 'clientRoles');
  return { realm, clients: Object.keys(byClient).map((c): [string, string[]] => [c, optStrings(byClient, c, 'clientRoles.')]) };
}

/** A role's description: Keycloak's message keys of its own roles become their English text; an unknown key, nothing. */
function roleDescription(d: string | undefined, notes: string[]): string | null {
  if (d === undefined || d === '') return null;
  const key = /^\$\{([\w.-]+)\}$/.exec(d)?.[1];
  const text = key === undefined ? d : Object.hasOwn(ROLE_MESSAGES, key) ? ROLE_MESSAGES[key] : undefined;
  if (text === undefined) return null;
  try {
    return checkRoleDescription(text);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    notes.push(`description left out (${message(err)})`);
    return null;
  }
}

/**
 * Reads and checks the realm's roles (roles.realm, roles.client) and the mappings of service accounts:
 * no database. A roles list of the wrong type fails the realm; a role entry of the wrong type, or with a
 * name the admin API refuses (checkRoleName), is skipped with the reason.
 */
function readRoles(rep: Json): PreparedRoles {
  const roles = optObject(rep, 'roles');
  const byClient = optObject(roles, 'client', 'roles.');
  const lists: Array<[string, unknown[]]> = [['', optList(roles, 'realm', 'roles.')], ...Object.keys(byClient).map((c): [string, unknown[]] => [c, optList(byClient, c, 'roles.client.')])];
  const entries: RoleEntry[] = [];
  const byKey = new Map<string, RoleEntry>();
  for (const [client, raws] of lists) {
    raws.forEach((raw, i) => {
      const name = entryName(client === '' ? 'roles.realm' : `roles.client.${client}`, raw, 'name', i);
      const entry: RoleEntry = { client, name, element: roleElement(client, name), description: null, members: [], notes: [] };
      entries.push(entry);
      try {
        const r = entryObject(raw, 'the entry');
        const rawName = optString(r, 'name');
        if (rawName !== undefined) {
          if (byKey.has(roleKey(client, rawName))) throw new ValidationError('listed twice: the first entry was imported');
          byKey.set(roleKey(client, rawName), entry);
        }
        const description = optString(r, 'description');
        const composites = optObject(r, 'composites');
        const memberClients = optObject(composites, 'client', 'composites.');
        // '' would read the names as realm roles (Keycloak finds no client of that id and fails the import).
        if (Object.hasOwn(memberClients, '')) throw new ValidationError('composites.client has a key naming no client ("")');
        entry.members = [
          ...optStrings(composites, 'realm', 'composites.').map((n) => roleKey('', n)),
          ...Object.keys(memberClients).flatMap((c) => optStrings(memberClients, c, 'composites.client.').map((n) => roleKey(c, n))),
        ];
        checkRoleName(rawName);
        entry.description = roleDescription(description, entry.notes);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        entry.refused = { element: entry.element, outcome: 'skipped', reason: message(err) };
      }
    });
  }
  const serviceAccounts: PreparedRoles['serviceAccounts'] = [];
  for (const raw of optList(rep, 'users')) {
    const u = obj(raw);
    const clientId = u.serviceAccountClientId;
    if (typeof clientId !== 'string' || clientId === '') continue;
    const element = `roles of the service account of ${clientId}`;
    try {
      serviceAccounts.push({ clientId, element, roles: readMappings(u), groups: optStrings(u, 'groups') });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      serviceAccounts.push({ clientId, element, refused: message(err) });
    }
  }
  const d = obj(rep.defaultRole).name;
  return { entries, byKey, serviceAccounts, defaultRole: typeof d === 'string' ? d : `default-roles-${String(rep.realm).toLowerCase()}` };
}

/** The users and the groups (ids) granted a role, or mapped to one that did not move. */
interface Holders {
  users: Set<string>;
  groups: Set<string>;
}
const newHolders = (): Holders => ({ users: new Set(), groups: new Set() });
/** "2 user(s)", "1 group(s)", "2 user(s) and 1 group(s)": groups named only when there are some. */
const holderCount = (h: Holders): string =>
  h.groups.size === 0 ? `${h.users.size} user(s)` : h.users.size === 0 ? `${h.groups.size} group(s)` : `${h.users.size} user(s) and ${h.groups.size} group(s)`;

/** Where a role of the file goes: the realm or an imported client, Realmgate's own admin roles, or nowhere (why). */
type RoleContainer = { kind: 'own'; clientId: string } | { kind: 'admin' } | { kind: 'skip'; reason: string };

/** A role a mapping names, found: Realmgate's (an admin role) or one the import stored; or why it is not there. */
type ResolvedRole = { id: string; name: string; admin?: 'realm-management' | 'master' } | { group: string; name: string; reason: string };

/**
 * Stores the realm's roles (realm roles, and client roles of the clients imported) with their composites
 * (the roles each contains, those that moved), and grants the users, groups and service accounts of the
 * file the roles they are mapped to: a mapping to a composite is a mapping to the composite, whose users'
 * tokens carry what it contains, recursively, as Keycloak's do. Mappings to realm-management's roles
 * (and a composite's) are Realmgate's admin roles of the same names (and, in master, `master-realm`'s and
 * the realm roles admin and create-realm).
 */
async function importRoles(
  store: Store,
  realmId: string,
  rep: Json,
  roles: PreparedRoles,
  userEntries: Array<UserEntry | Refused>,
  users: Map<string, string>,
  clients: Set<string>,
  groups: StoredGroups,
  report: RealmReportBuilder,
): Promise<{ created: number; masterAdmins: string[]; scoped: (client: string, name: string) => ScopedRole }> {
  const master = realmId === MASTER_REALM;
  const inFile = new Set(list(rep.clients).map((c) => obj(c).clientId).filter((c): c is string => typeof c === 'string'));
  const container = (client: string): RoleContainer => {
    if (client === '') return { kind: 'own', clientId: '' };
    // In master, Keycloak's master-realm client holds the roles that administer master itself.
    if (client === REALM_MANAGEMENT || (master && client === `${MASTER_REALM}-realm`)) return { kind: 'admin' };
    if (clients.has(client)) return { kind: 'own', clientId: client };
    if (master && client.endsWith('-realm') && inFile.has(client)) {
      return { kind: 'skip', reason: `master's roles for administering realm ${client.slice(0, -'-realm'.length)} one by one, which Realmgate does not have (master's admin role administers every realm)` };
    }
    if (!inFile.has(client)) return { kind: 'skip', reason: `the file has no client ${client}` };
    return { kind: 'skip', reason: `the client was not imported${BUILTIN_CLIENTS.has(client) ? " (Keycloak's built-in client)" : ''}` };
  };
  const realmManagement = new Map((await store.roles.list(realmId, REALM_MANAGEMENT)).map((r) => [r.name, r]));
  const masterRoles = new Map(master ? (await store.roles.list(realmId, '')).filter((r) => isAdminRole(r)).map((r) => [r.name, r]) : []);
  const isMasterRole = (client: string, name: string): boolean => master && client === '' && Object.hasOwn(MASTER_ROLES, name);

  // The roles, with new ids (Keycloak's ids are not kept: roles are found by name).
  const created = new Map<string, Role>();
  const t = now();
  for (const e of roles.entries) {
    if (e.refused || isMasterRole(e.client, e.name)) continue;
    const c = container(e.client);
    if (c.kind !== 'own') continue;
    const role: Role = { id: randomId(), realmId, clientId: c.clientId, name: e.name, description: e.description };
    await store.roles.create(role, t);
    created.set(roleKey(e.client, e.name), role);
  }
  // Keycloak's default role (defaultRole, normally default-roles-<realm>): the realm's, given to every new user from now on.
  const defaultRole = created.get(roleKey('', roles.defaultRole));
  if (defaultRole) await store.realms.update(realmId, { defaultRoleId: defaultRole.id });

  const resolve = (key: string): ResolvedRole => {
    const [client, name] = keyParts(key);
    const c = container(client);
    if (c.kind === 'skip') return { group: `role mappings to client ${client}`, name, reason: c.reason };
    if (c.kind === 'admin') {
      const role = realmManagement.get(name);
      return role ? { id: role.id, name, admin: 'realm-management' } : { group: `role mappings to ${roleElement(client, name)}`, name, reason: `not one of Realmgate's admin roles (${REALM_MANAGEMENT} holds only those)` };
    }
    if (isMasterRole(client, name)) return { id: masterRoles.get(name)!.id, name, admin: 'master' };
    const role = created.get(key);
    if (role) return { id: role.id, name };
    const entry = roles.byKey.get(key);
    return { group: `role mappings to ${roleElement(client, name)}`, name, reason: entry ? `the role was skipped${entry.refused?.reason ? ` (${entry.refused.reason})` : ''}` : 'the file does not define the role' };
  };

  // The composites, once every role is stored (Keycloak's importRoles too: roles first, then
  // addComposites, whatever the `composite` flag says). Only the roles this import created: the admin
  // roles of realm-management (and master's admin and create-realm) are Realmgate's own, and what
  // they imply is Realmgate's rule (authorization.ts), not the file's. A role the file names that did
  // not move is left out and reported; Keycloak would fail the whole import ("Unable to find composite
  // realm role").
  const contains = new Map<string, string[]>();
  const leftOut = new Map<string, Array<{ key: string; reason: string }>>();
  for (const e of roles.entries) {
    const self = roleKey(e.client, e.name);
    const parent = created.get(self);
    if (e.refused || e.members.length === 0 || !parent || roles.byKey.get(self) !== e) continue;
    const kept: string[] = [];
    const missing: Array<{ key: string; reason: string }> = [];
    for (const key of new Set(e.members)) {
      if (key === self) {
        missing.push({ key, reason: 'the role itself (a role does not contain itself)' });
        continue;
      }
      const r = resolve(key);
      if ('group' in r) missing.push({ key, reason: r.reason });
      else kept.push(key);
    }
    await store.roles.addComposites(realmId, parent.id, kept.map((k) => (resolve(k) as { id: string }).id));
    contains.set(self, kept);
    if (missing.length > 0) leftOut.set(self, missing);
  }
  // The roles given and every role they contain through the composites stored, recursively (a cycle ends where it began).
  const reach = (start: string[]): Set<string> => {
    const seen = new Set<string>();
    const stack = [...start].reverse();
    while (stack.length > 0) {
      const key = stack.pop()!;
      if (seen.has(key)) continue;
      seen.add(key);
      stack.push(...[...(contains.get(key) ?? [])].reverse());
    }
    return seen;
  };

  // Who is mapped to each role (the role itself: a composite brings what it contains when a token is
  // made, as in Keycloak), and who is mapped to each role that did not move: users and groups apart.
  const holders = new Map<string, Holders>();
  const notGranted = new Map<string, { reason: string; holders: Holders; names: Set<string> }>();
  const adminLines: Array<[string, string]> = [];
  const masterAdmins = new Set<string>();
  const grant = async (to: { group?: StoredGroup; userId?: string }, who: string, m: RoleMappings): Promise<void> => {
    const id = to.group?.id ?? to.userId!;
    const kind = to.group ? 'groups' : 'users';
    const direct = [...new Set([...m.realm.map((n) => roleKey('', n)), ...m.clients.flatMap(([c, names]) => names.map((n) => roleKey(c, n)))])];
    const ids = new Set<string>();
    const granted: string[] = [];
    for (const key of direct) {
      const r = resolve(key);
      if ('group' in r) {
        const g = notGranted.get(r.group) ?? { reason: r.reason, holders: newHolders(), names: new Set<string>() };
        g.holders[kind].add(id);
        g.names.add(r.name);
        notGranted.set(r.group, g);
        continue;
      }
      ids.add(r.id);
      granted.push(key);
      if (!holders.has(key)) holders.set(key, newHolders());
      holders.get(key)![kind].add(id);
    }
    if (to.group) await store.groups.grantRoles(id, [...ids]);
    else await store.roles.grant(id, [...ids]);
    // The admin roles held, mapped or contained in a composite mapped: who administers is reported.
    const directSet = new Set(granted);
    const admin = { 'realm-management': { direct: [] as string[], all: [] as string[] }, master: { direct: [] as string[], all: [] as string[] } };
    for (const key of reach(granted)) {
      const r = resolve(key);
      if ('group' in r || !r.admin) continue;
      admin[r.admin].all.push(r.name);
      if (directSet.has(key)) admin[r.admin].direct.push(r.name);
    }
    const said: string[] = [];
    for (const [container, a] of Object.entries(admin)) {
      if (a.all.length === 0) continue;
      const through = a.all.filter((n) => !a.direct.includes(n));
      // [a user does, the members of a group do]
      const [one, many] = container === 'master' ? (a.all.includes('admin') ? ['administers', 'administer'].map((v) => `${v} every realm`) : ['creates realms', 'create realms']) : ['administers', 'administer'].map((v) => `${v} this realm`);
      const named = a.direct.length === 0 ? `${through.join(', ')} through composite roles` : `${a.direct.join(', ')}${through.length > 0 ? ` and, through composite roles, ${through.join(', ')}` : ''}`;
      // A group's members, and those of its subgroups (which inherit its roles), hold them.
      said.push(`granted ${container} roles ${named}: ${to.group ? `its members and those of its subgroups (${to.group.membersWithin.length} user(s) now) ${many}` : one}`);
    }
    if (said.length > 0) adminLines.push([`admin roles of ${who}`, said.join('; ')]);
    if (admin.master.all.includes('admin')) for (const name of to.group ? to.group.membersWithin : [who.replace(/^user /, '')]) masterAdmins.add(name);
  };

  for (const { entry, userId } of storedUsers(userEntries, users)) await grant({ userId }, `user ${entry.name}`, entry.roles);
  for (const g of groups.stored) await grant({ group: g }, `group ${g.path}`, g.roles);
  for (const sa of roles.serviceAccounts) {
    if (sa.refused !== undefined) {
      report.skipped(sa.element, sa.refused);
      continue;
    }
    if (sa.roles!.realm.length === 0 && sa.roles!.clients.every(([, names]) => names.length === 0)) continue;
    const client = clients.has(sa.clientId) ? await store.clients.get(realmId, sa.clientId) : undefined;
    const user = client?.serviceAccountsEnabled ? await findServiceAccount(store, client) : undefined;
    if (!user) {
      report.skipped(sa.element, client ? 'the client has no service account here (serviceAccountsEnabled is off)' : 'the client was not imported');
      continue;
    }
    await grant({ userId: user.id }, `the service account of ${sa.clientId}`, sa.roles!);
  }

  // The report: each role of the file, in its order; then the mappings not granted, and who administers.
  const adminInFile: Record<string, { names: string[]; composites: number }> = {};
  const notImported = new Map<string, { reason: string; names: string[] }>();
  const keyText = (key: string): string => roleElement(...keyParts(key));
  for (const e of roles.entries) {
    if (e.refused) {
      report.add(e.refused);
      continue;
    }
    const c = container(e.client);
    if (c.kind === 'skip') {
      const g = notImported.get(e.client) ?? { reason: c.reason, names: [] };
      g.names.push(e.name);
      notImported.set(e.client, g);
      continue;
    }
    if (c.kind === 'admin') {
      if (realmManagement.has(e.name)) {
        const a = (adminInFile[e.client] ??= { names: [], composites: 0 });
        a.names.push(e.name);
        if (e.members.length > 0) a.composites++;
      } else report.skipped(e.element, `not one of Realmgate's admin roles (${REALM_MANAGEMENT} holds only those): not moved`);
      continue;
    }
    const key = roleKey(e.client, e.name);
    const h = holders.get(key) ?? newHolders();
    const n = h.users.size + h.groups.size;
    const kept = contains.get(key) ?? [];
    const notes: string[] = [];
    let mapped = e.notes.length > 0;
    if (isMasterRole(e.client, e.name)) {
      notes.push(`one of Realmgate's own admin roles: the file's mappings to it are granted${e.members.length > 0 ? `; what it contains in the file is not kept (Realmgate's ${e.name === 'admin' ? 'admin administers every realm and creates realms' : 'own rules say what it allows'})` : ''}`);
      mapped = true;
    } else if (e.client === '' && e.name === 'offline_access') {
      notes.push("Keycloak's built-in role, kept as a plain role so that tokens carry it as Keycloak's do; Realmgate does not require it for the offline_access scope");
      mapped = true;
    } else if (e.client === '' && e.name === 'uma_authorization') {
      notes.push("Keycloak's built-in role, kept as a plain role so that tokens carry it as Keycloak's do; Realmgate has no UMA");
      mapped = true;
    } else if (e.client === '' && e.name === roles.defaultRole) {
      notes.push(`the realm's default role${e.members.length > 0 ? ', a composite' : ''}, kept with the users the file maps to it: every new user gets it, as in Keycloak`);
      mapped = true;
    }
    if (kept.length > 0) {
      const shown = kept.slice(0, 10).map(keyText).join(', ');
      notes.push(`composite: contains ${shown}${kept.length > 10 ? `, and ${kept.length - 10} more` : ''}`);
      // Keycloak keeps a cycle (its tokens end it): kept too, each role of it holding the others.
      const cycle = [...reach(kept)].filter((k) => k !== key && reach(contains.get(k) ?? []).has(key));
      if (reach(kept).has(key)) notes.push(`in a cycle of composites with ${cycle.map(keyText).join(', ')}: kept, as in Keycloak (each holds the others)`);
    } else if (!isMasterRole(e.client, e.name) && e.members.length > 0 && roles.byKey.get(key) === e) notes.push('composite in the file, but none of the roles it contains moved');
    if (n > 0) notes.push(`granted to ${holderCount(h)}`);
    notes.push(...e.notes);
    if (mapped) report.mapped(e.element, notes.join('; '));
    else report.imported(e.element, notes.join('; ') || undefined);
    // The roles it contains that did not move, by reason.
    const missing = leftOut.get(key);
    if (missing && roles.byKey.get(key) === e) {
      const byReason = new Map<string, string[]>();
      for (const m of missing) byReason.set(m.reason, [...(byReason.get(m.reason) ?? []), keyText(m.key)]);
      report.skipped(`composites of ${e.element}`, [...byReason].map(([reason, names]) => `${names.join(', ')}: ${reason}`).join('; '));
    }
  }
  for (const [client, a] of Object.entries(adminInFile)) {
    report.mapped(
      `roles of client ${client}`,
      `Realmgate's own admin roles (${a.names.length} in the file${client === REALM_MANAGEMENT ? '' : `, Realmgate's ${REALM_MANAGEMENT} roles of master`}): the file's mappings to them are granted` +
        (a.composites > 0 ? `; what they contain in the file is not kept: Realmgate's own rules say what each implies (realm-admin every other, a manage- role its view- and query- roles, a view- role its query- roles)` : ''),
    );
  }
  for (const [client, g] of notImported) report.skipped(`roles of client ${client}`, `${g.reason}: ${g.names.join(', ')}`);
  for (const [element, g] of notGranted) report.skipped(element, `${holderCount(g.holders)}, ${[...g.names].join(', ')}: ${g.reason}`);
  for (const [element, reason] of adminLines) report.mapped(element, reason);
  // A scope mapping to a role puts the role in the scope; a composite brings what it contains when a
  // token is made (TokenManager.getAccess expands the scope's composites, as roleScopes does here).
  const scoped = (client: string, name: string): ScopedRole => {
    const r = resolve(roleKey(client, name));
    return 'group' in r ? { reason: r.reason } : { id: r.id, composite: (contains.get(roleKey(client, name)) ?? []).length > 0 };
  };
  return { created: created.size, masterAdmins: [...masterAdmins], scoped };
}

/**
 * Keycloak's scopeMappings and clientScopeMappings (import-role-scopes.ts): stored for the clients this
 * import stored and the client scopes the realm has; the mappings of a client or scope left out are
 * reported with its reason (a built-in client, a saml scope, ...).
 */
async function importScopeMappings(store: Store, realmId: string, ready: PreparedRealm, scopes: Set<string>, clients: Set<string>, scoped: (client: string, name: string) => ScopedRole, report: RealmReportBuilder): Promise<number> {
  const clientEntries = new Map<string, ClientEntry | Refused>();
  for (const c of ready.clients) if (!clientEntries.has(c.name)) clientEntries.set(c.name, c);
  const scopeEntries = new Map<string, ScopeEntry | Refused>();
  for (const s of ready.scopes) if (!scopeEntries.has(s.name)) scopeEntries.set(s.name, s);
  return storeFileScopeMappings(
    store,
    realmId,
    ready.scopeMappings,
    {
      owner: (o) => {
        if (o.kind === 'client') {
          const e = clientEntries.get(o.id);
          if (clients.has(o.id) && e && !e.refused) return { ok: true, fullScopeAllowed: e.input.fullScopeAllowed !== false };
          if (!e) return { reason: `the file has no client ${o.id}` };
          return { reason: `the client was not imported${e.refused ? ` (${e.refused.reason})` : ''}` };
        }
        if (scopes.has(o.id)) return { ok: true };
        const e = scopeEntries.get(o.id);
        return { reason: e?.refused ? `the client scope was not imported (${e.refused.reason})` : `the realm has no client scope ${o.id}` };
      },
      roles: scoped,
    },
    report,
  );
}

/**
 * Keycloak's POST /admin/realms with a full RealmRepresentation (clients, users, ...): the same import
 * as the CLI's, for a realm that does not exist yet. Returns the report; a failure is a 400 or a 409.
 */
export async function importRealmRepresentation(store: Store, rep: Json, actor: Actor, onUnexpectedError?: ImportOptions['onUnexpectedError']): Promise<RealmReport> {
  if (typeof rep.realm !== 'string' || rep.realm === '') throw new ValidationError('realm is required');
  if (await store.realms.get(rep.realm)) throw new ConflictError(`realm ${rep.realm} already exists`);
  const report = await importKeycloakRealms(store, [rep], { ifExists: 'fail', includeMaster: true, includeBuiltinClients: false, ...(onUnexpectedError ? { onUnexpectedError } : {}) }, actor);
  const r = report.realms[0]!;
  if (r.status === 'failed') throw new ValidationError(r.reason ?? 'the realm could not be imported');
  return r;
}

/** Keycloak's PartialImportResults; a skipped entry says why (`reason`, Realmgate's addition; a user stored may say what of it was left out). */
export interface PartialImportResults {
  overwritten: number;
  added: number;
  skipped: number;
  results: EntryResult[];
}

/**
 * Keycloak's partial import (POST /admin/realms/{realm}/partialImport): clients, identity providers and
 * users (with their consents and links to identity providers) into an existing realm, in one
 * transaction; `ifResourceExists` FAIL (409, nothing stored), SKIP or OVERWRITE (a provider replaced
 * keeps its users' links, its organization and, when the body's secret is masked, its secret). Roles,
 * role mappings and groups are not moved here (the realm import moves them): each top-level group of the
 * body is SKIPPED, saying so.
 *
 * Every entry is read and checked, and its password or secret hashed, before the transaction: an entry
 * that cannot be imported is SKIPPED and leaves the client or user already stored as it was (OVERWRITE
 * deletes only what a usable entry replaces), and the transaction holds its connection (SQLite's only
 * one) for the writes alone, not for seconds of argon2id.
 */
export async function partialImport(store: Store, realmId: string, body: Json, actor: Actor): Promise<PartialImportResults> {
  const policy = body.ifResourceExists ?? 'FAIL';
  if (policy !== 'FAIL' && policy !== 'SKIP' && policy !== 'OVERWRITE') throw new ValidationError('ifResourceExists must be FAIL, SKIP or OVERWRITE');
  const rep: Json = { ...body, realm: realmId };
  // A list of the wrong type is a 400, as a wrong-typed realm setting fails a realm's import.
  checkRealmLists(rep, ['clients', 'users', 'federatedUsers', 'groups', 'identityProviders']);
  const clientEntries = readClients(rep, { includeBuiltinClients: true });
  // A partial import brings no components: users may link to the realm's providers.
  const userEntries = readUsers(rep, storedPolicy((await store.realms.get(realmId))?.passwordPolicy ?? ''), new Set((await store.userStorage.list(realmId)).map((p) => p.id)));
  const providerEntries = readFileProviders(optList(rep, 'identityProviders'));
  const refuseExisting = async (s: Store): Promise<void> => {
    const taken = await alreadyStored(s, realmId, clientEntries, userEntries, providerEntries);
    if (taken.length > 0) throw new ConflictError(`already in realm ${realmId}: ${taken.join(', ')}`);
  };
  // FAIL: refused before any hashing, and again in the transaction (something may have come meanwhile).
  if (policy === 'FAIL') await refuseExisting(store);
  await hashBeforehand(clientEntries, userEntries);
  return store.transaction(async (tx) => {
    if (policy === 'FAIL') await refuseExisting(tx);
    const onExisting: OnExisting = policy === 'OVERWRITE' ? 'overwrite' : 'skip';
    const report = new RealmReportBuilder(realmId);
    const scopes = new Set((await tx.realms.scopes(realmId)).map((s) => s.name));
    const clients = await storeClients(tx, realmId, clientEntries, scopes, onExisting, report, actor);
    const providers = await storeFileProviders(tx, realmId, providerEntries, { existing: onExisting }, report, actor);
    const users = await storeUsers(tx, realmId, rep, userEntries, onExisting, report, actor);
    await importConsents(tx, realmId, userEntries, users.stored, clients.stored, new Map(), report);
    await linkPartialImport(tx, realmId, userEntries, users, providers.outcomes, report);
    // Groups would bring role mappings, which this import does not make (nor check the caller may make).
    const groups = optList(rep, 'groups').map((raw, i): EntryResult => {
      const name = entryName('groups', raw, 'name', i);
      const id = obj(raw).id;
      return { action: 'SKIPPED', resourceType: 'GROUP', resourceName: name, id: typeof id === 'string' && id !== '' ? id : name, reason: 'partialImport does not move groups (nor their subgroups, role mappings and members): the realm import does' };
    });
    const idps = providers.results.map((r): EntryResult => ({
      action: r.action,
      resourceType: 'IDP',
      resourceName: r.entry.name,
      id: r.id ?? r.entry.name,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    }));
    const results = [...clients.results, ...users.results, ...groups, ...idps];
    await recordAdminEvent(tx, { ...actor, via: actor.via }, { realmId, operation: 'CREATE', resourceType: 'PARTIAL_IMPORT', resourcePath: '', representation: { results: results.length } });
    return {
      overwritten: results.filter((r) => r.action === 'OVERWRITTEN').length,
      added: results.filter((r) => r.action === 'ADDED').length,
      skipped: results.filter((r) => r.action === 'SKIPPED').length,
      results,
    };
  });
}

/**
 * The clients and users of a partial import that the realm has already (users by username or id),
 * refused entries included (FAIL fails on anything the realm has). A name with control characters (a
 * NUL, which PostgreSQL cannot even compare) can be no stored name, and is not looked up.
 */
async function alreadyStored(store: Store, realmId: string, clients: Array<ClientEntry | Refused>, users: Array<UserEntry | Refused>, providers: FileProvider[]): Promise<string[]> {
  const taken: string[] = [];
  const lookable = (v: string | undefined): v is string => v !== undefined && v !== '' && !/[\x00-\x1f\x7f]/.test(v);
  for (const c of clients) {
    if (lookable(c.name) && (await store.clients.get(realmId, c.name))) taken.push(`client ${c.name}`);
  }
  for (const u of users) {
    const byId = lookable(u.id) ? await store.users.get(u.id) : undefined;
    const byName = lookable(u.name) ? await store.users.findByUsername(realmId, u.name) : undefined;
    if (byName || byId?.realmId === realmId) taken.push(`user ${u.name}`);
  }
  for (const p of providers) {
    const alias = p.fields?.alias ?? p.name;
    if (lookable(alias) && (await store.identityProviders.get(realmId, alias))) taken.push(`identity provider ${alias}`);
  }
  return taken;
}

/**
 * The links of the users a partial import stored to the realm's identity providers (stored before, or
 * by this import). A link left out is said in the user's result (`reason`), as Keycloak's results have
 * no report.
 */
async function linkPartialImport(
  store: Store,
  realmId: string,
  entries: Array<UserEntry | Refused>,
  users: { results: EntryResult[]; stored: Map<string, string> },
  outcomes: ProviderOutcomes,
  report: RealmReportBuilder,
): Promise<void> {
  const aliases = new Set((await store.identityProviders.list(realmId)).map((p) => p.alias));
  const stored = storedUsers(entries, users.stored);
  const leftOut = await storeFileLinks(
    store,
    realmId,
    stored.map(({ entry, userId }) => ({ name: entry.name, userId, links: entry.links })),
    (alias) => {
      if (aliases.has(alias)) return { ok: true };
      const o = outcomes.get(alias);
      return { reason: o && 'reason' in o ? `the identity provider was not imported (${o.reason})` : 'the realm has no identity provider of this alias' };
    },
    report,
    now(),
  );
  for (const { entry, userId } of stored) {
    const left = [...(leftOut.get(userId) ?? []), ...entry.parts.filter((l) => l.element.startsWith(`${entry.element} identity provider link`)).map((l) => `${l.element.slice(entry.element.length + 1)} (${l.reason})`)];
    const r = users.results.find((x) => x.resourceType === 'USER' && x.id === userId && x.action !== 'SKIPPED');
    if (r && left.length > 0) r.reason = `left out: ${left.join('; ')}`;
  }
}
