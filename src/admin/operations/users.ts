import type { Store } from '../../storage/store.js';
import { endClientAccess, sessionsToEnd, tellSessionsEnded } from './session-ends.js';
import { writeFederatedPassword } from '../../oauth/ldap/federation.js';
import { LdapPasswordRefused, LdapUnavailable } from '../../oauth/ldap/directory.js';
import { EMPTY_POLICY, historyFailure, PasswordPolicyError, policyFailures, storedPolicy, type PolicyFailure } from '../password-policy.js';
import { groupsForNewUser, joinGroup, type MappingGuard } from './groups.js';
import { hashPassword, NO_PASSWORD_HASH, verifyPassword } from '../../crypto/passwords.js';
import { randomId, sortableId } from '../../crypto/random.js';
import { checkUserAttributes, checkEmail, checkPage, ConflictError, LIMITS, NotFound, USERNAME_RE, ValidationError } from '../validation.js';
import { defaultActions } from '../required-actions.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { REQUIRED_ACTIONS, type Realm, type RequiredAction, type User, type UserAttributes } from '../../storage/types.js';
import type { UserQuery } from '../../storage/repos/user-admin.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import type { SessionSummary } from '../../storage/repos/session-admin.js';
import { grantDefaultRole } from './default-role.js';
import { NO_PASSWORD } from './service-accounts.js';
import { isUniqueViolation } from '../../storage/dialects/errors.js';

/** Realmgate's own rule alone (8 to 1024 characters): a password refused before anything is looked up. */
function checkPasswordFloor(password: string): void {
  const failures = policyFailures(EMPTY_POLICY, { password });
  if (failures.length > 0) throw new PasswordPolicyError(failures);
}

/**
 * The rules a new password fails: Realmgate's floor, the realm's policy (src/admin/password-policy.ts)
 * and, with `user` and `history`, passwordHistory(N): the current password and the N-1 before it,
 * each verified (argon2id: N is at most 24). [] when it may be set.
 */
export async function newPasswordFailures(
  store: Store,
  input: { realm: Realm; password: string; username: string; email?: string | null; user?: User; history?: boolean },
): Promise<PolicyFailure[]> {
  const policy = storedPolicy(input.realm.passwordPolicy);
  const failures = policyFailures(policy, { password: input.password, username: input.username, email: input.email ?? null });
  const n = policy.passwordHistory;
  if (failures.length > 0 || !n || !input.user || input.history === false) return failures;
  const earlier = [input.user.passwordHash, ...(await store.users.passwordHistory(input.user.id, n - 1))];
  for (const hash of earlier) {
    // One at a time: most changes match none, and each verification holds a hashing slot.
    if (!hash.startsWith('!') && (await verifyPassword(hash, input.password))) return [historyFailure(n)];
  }
  return [];
}

/**
 * The one password check of every door that sets a password (admin API, CLI, console, the update-password
 * and account pages, the import; a new door such as a forgot-password page calls it too, or goes through
 * setUserPassword / completePasswordUpdate, which call it): Realmgate's 8 to 1024 characters, the realm's
 * policy and, with `user`, its password history. Throws a PasswordPolicyError (a ValidationError) whose
 * message names every rule failed; newPasswordFailures gives the same as a list.
 */
export async function checkPassword(store: Store, input: { realm: Realm; password: string; username: string; email?: string | null; user?: User }): Promise<void> {
  const failures = await newPasswordFailures(store, input);
  if (failures.length > 0) throw new PasswordPolicyError(failures);
}

/**
 * Keycloak's required action names as Realmgate keeps them (REQUIRED_ACTIONS); any other (delete_account,
 * update_user_locale, ...) is refused rather than kept and ignored, which would let the user in without
 * doing what the administrator asked.
 */
export function checkRequiredActions(names: readonly string[]): RequiredAction[] {
  for (const name of names) {
    if (!(REQUIRED_ACTIONS as readonly string[]).includes(name)) {
      const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
      throw new ValidationError(`required action ${JSON.stringify(shown)} is not supported: Realmgate supports ${REQUIRED_ACTIONS.join(', ')} only`);
    }
  }
  return REQUIRED_ACTIONS.filter((a) => names.includes(a));
}

/** The required actions with `action` added (`on`) or removed, the others kept; in the order checkRequiredActions gives. */
export function withRequiredAction(current: readonly RequiredAction[], action: RequiredAction, on: boolean): RequiredAction[] {
  return REQUIRED_ACTIONS.filter((a) => (a === action ? on : current.includes(a)));
}

/** The list after a password was set: `temporary` true adds UPDATE_PASSWORD, false removes it, undefined keeps the list. */
function afterPassword(current: RequiredAction[], temporary: boolean | undefined): RequiredAction[] | undefined {
  return temporary === undefined ? undefined : withRequiredAction(current, 'UPDATE_PASSWORD', temporary);
}

/** Keycloak's answer (409 in the admin API) to an email another user of the realm has. */
export const EMAIL_TAKEN = 'User exists with same email';

/**
 * Keycloak's duplicateEmailsAllowed off (the default): no two users of a realm have the same email,
 * ignoring case; `userId`, the user whose email it is to be, does not count. Every door that gives a
 * user an email calls this (create, update, the account page, identity brokering, import). Emails shared
 * already (data from before, or duplicates allowed then) stay until changed; a sign-in by such an email
 * names nobody (findLoginUser).
 */
export async function checkEmailFree(store: Store, realm: Pick<Realm, 'id' | 'duplicateEmailsAllowed'>, email: string | null | undefined, userId?: string): Promise<void> {
  if (realm.duplicateEmailsAllowed || !email) return;
  const holders = await store.users.findByEmail(realm.id, email, 2);
  if (holders.some((u) => u.id !== userId)) throw new ConflictError(EMAIL_TAKEN);
}

export async function createUser(
  store: Store,
  input: {
    realmId: string;
    username: string;
    /** Undefined: a user without a password (Keycloak's user created without credentials), who cannot sign in with one until it is set. */
    password: string | undefined;
    email?: string;
    orgAliases?: string[];
    firstName?: string;
    lastName?: string;
    emailVerified?: boolean;
    enabled?: boolean;
    /** Keycloak's requiredActions (REQUIRED_ACTIONS); the realm's default actions are added. */
    requiredActions?: readonly string[];
    /** A temporary password: the user must choose a new one at the next sign-in (adds UPDATE_PASSWORD). */
    temporary?: boolean;
    /** Paths of groups the user joins, besides the realm's default groups (Keycloak's UserRepresentation.groups). */
    groups?: string[];
    /** Keycloak's user attributes (checkUserAttributes). */
    attributes?: UserAttributes;
    /** The user registered themselves (the registration page): recorded as the event REGISTER by the caller, not as an admin event. */
    selfRegistration?: boolean;
  },
  actor: Actor = cliActor(),
  guard: MappingGuard = {},
): Promise<{ id: string }> {
  const realm = await requireRealm(store, input.realmId);
  if (!USERNAME_RE.test(input.username)) {
    throw new ValidationError(`username must be 1-${LIMITS.username} letters, digits, '.', '_', '@', '+' or '-'`);
  }
  if (input.password !== undefined) await checkPassword(store, { realm, password: input.password, username: input.username.toLowerCase(), email: input.email ?? null });
  // Keycloak's defaultAction: every new user of the realm gets them, whichever door made it.
  const requiredActions = checkRequiredActions([...(input.requiredActions ?? []), ...(input.temporary ? ['UPDATE_PASSWORD'] : []), ...defaultActions(realm)]);
  // One rule for create and update: the email column is varchar(320) on PostgreSQL.
  if (input.email !== undefined) checkEmail(input.email);
  await checkEmailFree(store, realm, input.email);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) {
    if (v !== undefined && (v.trim() === '' || v.length > LIMITS.personName || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have 1 to ${LIMITS.personName} characters, no control characters`);
  }
  const attributes = input.attributes !== undefined ? checkUserAttributes(input.attributes) : {};
  const orgIds: string[] = [];
  for (const alias of input.orgAliases ?? []) {
    const org = await store.organizations.findByAlias(input.realmId, alias);
    if (!org) throw new ValidationError(`organization ${alias} does not exist in realm ${input.realmId}`);
    orgIds.push(org.id);
  }
  // The realm's default groups and those asked for, checked (and the roles they bring authorized) before the user exists.
  const groups = await groupsForNewUser(store, input.realmId, input.groups ?? [], guard);
  const id = randomId();
  await store.users.create({
    id,
    realmId: input.realmId,
    username: input.username.toLowerCase(),
    email: input.email ?? null,
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    emailVerified: input.emailVerified ?? false,
    passwordHash: input.password === undefined ? NO_PASSWORD_HASH : await hashPassword(input.password),
    now: now(),
    organizationIds: [...new Set(orgIds)],
    requiredActions,
    attributes,
  });
  if (input.enabled === false) await store.users.update(id, { enabled: false });
  await grantDefaultRole(store, realm, id);
  if (input.selfRegistration) {
    // The realm's default groups all the same (Keycloak's registration joins them too), as no admin's change.
    for (const g of groups) await store.groups.addMember(g.id, id);
    return { id };
  }
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'USER', resourcePath: `users/${id}`, representation: { username: input.username.toLowerCase(), email: input.email, firstName: input.firstName, lastName: input.lastName, emailVerified: input.emailVerified, enabled: input.enabled ?? true, organizations: input.orgAliases, requiredActions, ...(Object.keys(attributes).length > 0 ? { attributes } : {}) } });
  for (const g of groups) await joinGroup(store, { realmId: input.realmId, userId: id, groupId: g.id }, actor);
  return { id };
}

/**
 * Changes or resets a user's password. Whoever knew the old one may hold sessions and tokens, so by
 * default every browser session and every refresh chain of the user ends (and with them their access
 * tokens, which are checked against their chain). keepOfflineSessions keeps chains granted
 * offline_access, as Keycloak's password update does with "sign out other sessions". Audited as
 * UPDATE_PASSWORD (Keycloak's event name). `temporary` true makes the user choose a new password at the
 * next sign-in (UPDATE_PASSWORD), false ends that requirement (Keycloak's reset-password does both),
 * undefined leaves it as it is.
 */
/** What every door says when asked to set the password of a user whose password lives in LDAP. */
export const FEDERATED_PASSWORD_MESSAGE = 'This account\'s password is managed by the organization\'s user directory (LDAP) and cannot be changed here. Change it there.';

/** Whether a federated user's provider takes a new password into the directory (editMode WRITABLE, enabled). */
async function federatedPasswordWritable(store: Store, user: User): Promise<boolean> {
  const p = user.federationLink ? await store.userStorage.get(user.realmId, user.federationLink) : undefined;
  return p !== undefined && p.config.enabled?.[0] !== 'false' && p.config.editMode?.[0] === 'WRITABLE' && Boolean(user.attributes.LDAP_ENTRY_DN?.[0]);
}

export async function setUserPassword(
  store: Store,
  input: {
    realmId: string;
    userId?: string;
    username?: string;
    password: string;
    keepOfflineSessions?: boolean;
    ip?: string;
    temporary?: boolean;
    clientId?: string;
    reason?: string;
    /** The server's time (seconds), which also decides when the password expires (forceExpiredPasswordChange). */
    nowSeconds?: number;
    /** The realm's policy was checked by the caller already (completePasswordUpdate). */
    checked?: boolean;
  },
): Promise<{ userId: string; username: string; sessionsEnded: number; chainsRevoked: number }> {
  const realm = await requireRealm(store, input.realmId);
  const user =
    input.userId !== undefined ? await store.users.get(input.userId) : input.username !== undefined ? await store.users.findByUsername(input.realmId, input.username.toLowerCase()) : undefined;
  if (!user || user.realmId !== input.realmId) {
    checkPasswordFloor(input.password);
    throw new ValidationError(`user ${input.username ?? input.userId ?? ''} does not exist in realm ${input.realmId}`);
  }
  // User federation (read-only): the password of a user from an LDAP directory lives there, and every
  // sign-in checks it there; a local one would never be used. Every door that sets a password comes here.
  // A WRITABLE provider takes the new password into the directory (below), after the realm's policy.
  if (user.federationLink && !(await federatedPasswordWritable(store, user))) throw new ValidationError(FEDERATED_PASSWORD_MESSAGE);
  if (!input.checked) await checkPassword(store, { realm, password: input.password, username: user.username, email: user.email, user });
  const requiredActions = afterPassword(user.requiredActions, input.temporary);
  const t = input.nowSeconds ?? now();
  const history = storedPolicy(realm.passwordPolicy).passwordHistory ?? 0;
  if (user.federationLink) {
    try {
      await writeFederatedPassword(store, user, input.password);
    } catch (err) {
      if (err instanceof LdapPasswordRefused) throw new ValidationError('The user directory (LDAP) refused the new password: it may not meet its password policy.');
      if (err instanceof LdapUnavailable) throw new ValidationError('The user directory (LDAP) cannot be reached right now: the password was not changed. Try again later.');
      throw err;
    }
    if (requiredActions) await store.users.update(user.id, { requiredActions });
  } else await store.users.setPassword(user, { passwordHash: await hashPassword(input.password), now: t, keepHistory: Math.max(0, history - 1), ...(requiredActions ? { requiredActions } : {}) });
  const ending = await sessionsToEnd(store, input.realmId, { userId: user.id });
  const sessionsEnded = await store.sessions.endAllOfUser(input.realmId, user.id, t);
  tellSessionsEnded(store, input.realmId, ending);
  const keepOffline = Boolean(input.keepOfflineSessions);
  const chainsRevoked = await store.refresh.revokeUserChains(input.realmId, user.id, t, { keepOffline, reason: 'password changed' });
  await store.events.record({
    id: sortableId(),
    time: t,
    realmId: input.realmId,
    type: 'UPDATE_PASSWORD',
    outcome: 'success',
    userId: user.id,
    username: user.username,
    clientId: input.clientId ?? null,
    ip: input.ip ?? null,
    reason: `${input.reason ? `${input.reason}; ` : ''}${input.temporary ? 'temporary; ' : ''}${sessionsEnded} browser session(s) ended, ${chainsRevoked} refresh chain(s) revoked${keepOffline ? ', offline chains kept' : ''}`,
  });
  return { userId: user.id, username: user.username, sessionsEnded, chainsRevoked };
}

/** The words of a page for a refused password: "The password must ... ." */
function sentence(failures: PolicyFailure[]): string {
  const message = new PasswordPolicyError(failures).message;
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
}

/** Why a password the user chose themselves is refused, in words for the page; undefined when it is accepted. */
async function ownPasswordProblem(store: Store, realm: Realm, user: User, password: string, confirmation: string): Promise<string | undefined> {
  if (password === '') return 'Enter a new password.';
  const base = { realm, password, username: user.username, email: user.email, user };
  const failures = await newPasswordFailures(store, { ...base, history: false });
  if (failures.length > 0) return sentence(failures);
  if (password !== confirmation) return 'The two passwords do not match.';
  // Keycloak refuses the temporary password as the new one: it is known to whoever set it.
  if (await verifyPassword(user.passwordHash, password)) return 'Choose a password different from your current one.';
  const history = await newPasswordFailures(store, base);
  if (history.length > 0) return sentence(history);
  return undefined;
}

/**
 * The UPDATE_PASSWORD required action, completed by the user at sign-in: the new password (8 to 1024
 * characters, typed twice alike, not the current one; else the returned words say why) replaces the temporary one and the requirement ends, in one statement. Like
 * every password change it ends the user's sessions and chains (the new session is made afterwards) and
 * is audited as UPDATE_PASSWORD.
 */
export async function completePasswordUpdate(
  store: Store,
  input: { realmId: string; user: User; password: string; confirmation: string; ip?: string; clientId?: string; reason?: string; nowSeconds?: number },
): Promise<string | undefined> {
  const realm = await requireRealm(store, input.realmId);
  if (input.user.federationLink && !(await federatedPasswordWritable(store, input.user))) return FEDERATED_PASSWORD_MESSAGE;
  const problem = await ownPasswordProblem(store, realm, input.user, input.password, input.confirmation);
  if (problem) return problem;
  await setUserPassword(store, {
    realmId: input.realmId,
    userId: input.user.id,
    password: input.password,
    temporary: false,
    checked: true,
    ...(input.nowSeconds !== undefined ? { nowSeconds: input.nowSeconds } : {}),
    ...(input.ip !== undefined ? { ip: input.ip } : {}),
    ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
    reason: input.reason ?? 'required action UPDATE_PASSWORD completed',
  });
  return undefined;
}

/** A user of the realm, by id or (case-insensitively) by username. */
export async function requireUser(store: Store, realmId: string, idOrUsername: string): Promise<User> {
  await requireRealm(store, realmId);
  const byId = await store.users.get(idOrUsername);
  const user = byId?.realmId === realmId ? byId : await store.users.findByUsername(realmId, idOrUsername.toLowerCase());
  if (!user) throw new NotFound(`user ${idOrUsername} does not exist in realm ${realmId}`);
  return user;
}

async function organizationIds(store: Store, realmId: string, refs: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of refs) {
    const byId = await store.organizations.get(ref);
    const org = byId?.realmId === realmId ? byId : await store.organizations.findByAlias(realmId, ref);
    if (!org) throw new ValidationError(`organization ${ref} does not exist in realm ${realmId}`);
    ids.push(org.id);
  }
  return [...new Set(ids)];
}

export interface UserUpdate {
  realmId: string;
  /** The user's id or username. */
  user: string;
  /** A new email, or null to remove it. */
  email?: string | null;
  /** New names, or null to remove them. */
  firstName?: string | null;
  lastName?: string | null;
  emailVerified?: boolean;
  enabled?: boolean;
  /** The complete list of organizations (ids or aliases) the user belongs to after the update. */
  organizations?: string[];
  /** Keycloak's requiredActions, the complete list after the update ([] clears it); REQUIRED_ACTIONS. */
  requiredActions?: readonly string[];
  /** Adds (true) or removes (false) CONFIGURE_TOTP: the user sets up an authenticator app at the next sign-in. */
  requireOtpSetup?: boolean;
  /** Adds (true) or removes (false) webauthn-register: the user registers a security key at the next sign-in. */
  requireWebAuthnSetup?: boolean;
  /** Adds (true) or removes (false) VERIFY_EMAIL: the user verifies their email (a mailed link) at the next sign-in. */
  requireEmailVerification?: boolean;
  /** Adds (true) or removes (false) UPDATE_PROFILE: the user reviews their email and names at the next sign-in. */
  requireProfileUpdate?: boolean;
  /** Adds (true) or removes (false) TERMS_AND_CONDITIONS: the user accepts the realm's terms at the next sign-in. */
  requireTerms?: boolean;
  /** Adds (true) or removes (false) delete_account: the user confirms the deletion of their account at the next sign-in. */
  requireAccountDeletion?: boolean;
  /** The complete set of attributes after the update ({} clears them; Keycloak's PUT with attributes). */
  attributes?: UserAttributes;
  /** Names given these values, replacing theirs (the others kept). */
  setAttributes?: UserAttributes;
  /** Names removed. */
  removeAttributes?: readonly string[];
}

/** The attributes after an update, checked; undefined when the update leaves them. */
function attributesAfter(user: User, input: UserUpdate): UserAttributes | undefined {
  if (input.attributes === undefined && input.setAttributes === undefined && input.removeAttributes === undefined) return undefined;
  const set = Object.entries(input.setAttributes ?? {});
  const dropped = new Set([...(input.removeAttributes ?? []), ...set.map(([name]) => name)]);
  const kept = Object.entries(input.attributes ?? user.attributes).filter(([name]) => !dropped.has(name));
  return checkUserAttributes(Object.fromEntries([...kept, ...set]));
}

/**
 * Changes a user's email, names, enabled flag, required actions, attributes or organizations. Disabling ends the user's browser sessions
 * and revokes their refresh chains at once, so that no token issued before stays usable (the checks
 * of userinfo, introspection and refresh refuse a disabled user's tokens in any case).
 */
/** The rule of a first or last name (admin API, CLI, console, the UPDATE_PROFILE page): at most 255 characters, no control characters. */
export function checkPersonName(label: string, v: string | null | undefined): void {
  if (typeof v === 'string' && (v.length > LIMITS.personName || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have at most ${LIMITS.personName} characters, no control characters`);
}

export async function updateUser(store: Store, input: UserUpdate, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  if (typeof input.email === 'string') checkEmail(input.email);
  // Only a new email is checked (ignoring case): a user who shares theirs from before keeps it through other changes.
  if (typeof input.email === 'string' && input.email.toLowerCase() !== (user.email ?? '').toLowerCase()) await checkEmailFree(store, await requireRealm(store, input.realmId), input.email, user.id);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) checkPersonName(label, v);
  const listed = input.requiredActions !== undefined ? checkRequiredActions(input.requiredActions) : undefined;
  // The switches of one action each (CLI, console), applied to the list given or the user's.
  const toggles: [RequiredAction, boolean | undefined][] = [
    ['CONFIGURE_TOTP', input.requireOtpSetup],
    ['webauthn-register', input.requireWebAuthnSetup],
    ['VERIFY_EMAIL', input.requireEmailVerification],
    ['UPDATE_PROFILE', input.requireProfileUpdate],
    ['TERMS_AND_CONDITIONS', input.requireTerms],
    ['delete_account', input.requireAccountDeletion],
  ];
  let requiredActions = listed;
  for (const [action, on] of toggles) if (on !== undefined) requiredActions = withRequiredAction(requiredActions ?? user.requiredActions, action, on);
  const attributes = attributesAfter(user, input);
  const orgIds = input.organizations !== undefined ? await organizationIds(store, input.realmId, input.organizations) : undefined;
  const t = now();
  await store.users.update(user.id, {
    ...(input.email !== undefined ? { email: input.email === '' ? null : input.email } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(input.firstName !== undefined ? { firstName: input.firstName === '' ? null : input.firstName } : {}),
    ...(input.lastName !== undefined ? { lastName: input.lastName === '' ? null : input.lastName } : {}),
    ...(input.emailVerified !== undefined ? { emailVerified: input.emailVerified } : {}),
    ...(requiredActions !== undefined ? { requiredActions } : {}),
    ...(attributes !== undefined ? { attributes } : {}),
  });
  if (orgIds !== undefined) await store.userAdmin.setOrganizations(user.id, orgIds, t);
  if (input.enabled === false && user.enabled) {
    const ending = await sessionsToEnd(store, input.realmId, { userId: user.id });
    await store.sessionAdmin.endAllForUser(input.realmId, user.id, t, { chains: true, reason: 'user disabled' });
    tellSessionsEnded(store, input.realmId, ending);
  }
  const { realmId: _r, user: _u, setAttributes: _s, removeAttributes: _d, requireOtpSetup: _o, requireWebAuthnSetup: _w, requireEmailVerification: _v, requireProfileUpdate: _p, requireTerms: _t, requireAccountDeletion: _a, ...changes } = input;
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${user.id}`, representation: { ...changes, ...(requiredActions !== undefined ? { requiredActions } : {}), ...(attributes !== undefined ? { attributes } : {}) } });
  return (await store.users.get(user.id)) ?? user;
}

export function disableUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  return updateUser(store, { ...input, enabled: false }, actor);
}

export function enableUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  return updateUser(store, { ...input, enabled: true }, actor);
}


/**
 * Replaces the user's password (Keycloak's reset-password). Whoever knew the old one may hold sessions
 * and tokens: they end with it. `temporary`: as setUserPassword's (true: the user chooses a new one at
 * the next sign-in; false: no longer; undefined: unchanged).
 */
export async function resetPassword(store: Store, input: { realmId: string; user: string; password: string; temporary?: boolean; nowSeconds?: number }, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  // One rule for every password change: it ends the user's sessions and chains, and is audited.
  await setUserPassword(store, { realmId: input.realmId, userId: user.id, password: input.password, ...(input.temporary !== undefined ? { temporary: input.temporary } : {}), ...(input.nowSeconds !== undefined ? { nowSeconds: input.nowSeconds } : {}) });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/reset-password`, ...(input.temporary !== undefined ? { representation: { temporary: input.temporary } } : {}) });
  return (await store.users.get(user.id)) ?? user;
}

/** Deletes the user and everything of theirs (chains, sessions, consents, memberships, codes). */
export async function deleteUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  const ending = await sessionsToEnd(store, input.realmId, { userId: user.id });
  await store.userAdmin.delete(user);
  tellSessionsEnded(store, input.realmId, ending);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER', resourcePath: `users/${user.id}` });
  return user;
}

export async function listUsers(store: Store, input: UserQuery & { realmId: string }): Promise<User[]> {
  await requireRealm(store, input.realmId);
  checkPage(input);
  const { realmId, ...q } = input;
  // No username or email is longer than 320 characters: a longer term matches nothing (and would be
  // a LIKE pattern SQLite calls too complex).
  if ([q.search, q.username, q.email, q.firstName, q.lastName].some((t) => t !== undefined && t.length > LIMITS.email)) return [];
  return store.userAdmin.search(realmId, q);
}

export async function countUsers(store: Store, input: UserQuery & { realmId: string }): Promise<number> {
  await requireRealm(store, input.realmId);
  const { realmId, first: _f, max: _m, ...q } = input;
  return store.userAdmin.count(realmId, q);
}

/** The organizations the user belongs to, disabled ones included. */
export async function userOrganizations(store: Store, input: { realmId: string; user: string }): Promise<OrganizationDetails[]> {
  const user = await requireUser(store, input.realmId, input.user);
  return store.organizationAdmin.ofUser(user.id);
}

export async function userSessions(store: Store, input: { realmId: string; user: string }): Promise<SessionSummary[]> {
  const user = await requireUser(store, input.realmId, input.user);
  return store.sessionAdmin.listForUser(input.realmId, user.id, now());
}

/** Ends every browser session of the user and revokes every refresh chain (Keycloak's "logout user"). */
export async function logoutUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<{ sessions: number; chains: number }> {
  const user = await requireUser(store, input.realmId, input.user);
  const ending = await sessionsToEnd(store, input.realmId, { userId: user.id });
  const r = await store.sessionAdmin.endAllForUser(input.realmId, user.id, now(), { chains: true, reason: 'logged out by an administrator' });
  tellSessionsEnded(store, input.realmId, ending);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/logout`, representation: r });
  return r;
}

export interface ConsentSummary {
  clientId: string;
  scopes: string[];
  createdAt: number;
  lastUpdatedAt: number;
}

/** What the user granted, per client (merged over organizations, as Keycloak shows one consent per client). */
export async function userConsents(store: Store, input: { realmId: string; user: string }): Promise<ConsentSummary[]> {
  const user = await requireUser(store, input.realmId, input.user);
  const byClient = new Map<string, ConsentSummary>();
  for (const c of await store.consents.listForUser(input.realmId, user.id)) {
    const prev = byClient.get(c.clientId);
    byClient.set(c.clientId, {
      clientId: c.clientId,
      scopes: [...new Set([...(prev?.scopes ?? []), ...c.scopes])].sort(),
      createdAt: Math.min(prev?.createdAt ?? c.createdAt, c.createdAt),
      lastUpdatedAt: Math.max(prev?.lastUpdatedAt ?? c.createdAt, c.createdAt),
    });
  }
  return [...byClient.values()];
}

/** Withdraws the user's consent to a client and revokes that client's chains for the user. */
export async function revokeConsent(store: Store, input: { realmId: string; user: string; clientId: string }, actor: Actor = cliActor()): Promise<void> {
  const user = await requireUser(store, input.realmId, input.user);
  const consents = await store.consents.listForUser(input.realmId, user.id);
  const chains = await store.refresh.lastUsedByUser(input.realmId, user.id, now());
  if (!consents.some((c) => c.clientId === input.clientId) && !chains.some((c) => c.clientId === input.clientId)) {
    throw new NotFound(`user ${user.username} has no consent for client ${input.clientId}`);
  }
  await endClientAccess(store, { realmId: input.realmId, userId: user.id, clientId: input.clientId, now: now(), reason: 'consent revoked by an administrator', consent: true });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER', resourcePath: `users/${user.id}/consents/${input.clientId}` });
}

export interface BruteForceStatus {
  numFailures: number;
  disabled: boolean;
  /** Seconds since the epoch; 0 when none. */
  lastFailure: number;
  /** Seconds until the lock ends; 0 when not locked. */
  lockedFor: number;
}

/** The brute-force counters of the user's name (src/oauth/brute-force.ts keys them "user:<name>"). */
export async function bruteForceStatus(store: Store, input: { realmId: string; user: string }): Promise<BruteForceStatus> {
  const user = await requireUser(store, input.realmId, input.user);
  const subject = `user:${user.username}`;
  const s = (await store.loginFailures.get(input.realmId, [subject])).get(subject);
  const t = now();
  const lockedFor = s && s.blockedUntil > t ? s.blockedUntil - t : 0;
  return { numFailures: s?.failures ?? 0, disabled: lockedFor > 0, lastFailure: s?.lastFailure ?? 0, lockedFor };
}

/** Clears the user's failure counters: a locked account can log in again at once. */
export async function unlockUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  await store.loginFailures.clear(input.realmId, `user:${user.username}`);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER_LOGIN_FAILURE', resourcePath: `attack-detection/brute-force/users/${user.id}` });
  return user;
}

/**
 * A new username for `user`, where the realm lets usernames change (Keycloak's editUsernameAllowed; never
 * when the email is the username, registrationEmailAsUsername): checked as a new user's (USERNAME_RE,
 * lower case), free in the realm (ConflictError otherwise, also when another change takes it meanwhile).
 * Not for a user of an LDAP directory (the directory names them) nor a service account (its client does).
 * Sessions, tokens and everything else of the user stay: they name the user by id. Returns the username
 * as stored (unchanged when only its case differs).
 */
export async function changeUsername(store: Store, input: { realm: Realm; user: User; username: string }): Promise<string> {
  const username = await checkUsernameChange(store, input);
  if (username === input.user.username) return username;
  try {
    await store.users.update(input.user.id, { username });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`username ${username} is taken`);
    throw err;
  }
  return username;
}

/** changeUsername's checks alone: the username it would store, or why not (a change yet to be made). */
export async function checkUsernameChange(store: Store, input: { realm: Realm; user: User; username: string }): Promise<string> {
  const { realm, user } = input;
  const username = input.username.toLowerCase();
  if (username === user.username) return user.username;
  if (!realm.editUsernameAllowed || realm.registrationEmailAsUsername) {
    throw new ValidationError(realm.registrationEmailAsUsername ? 'the username is the email in this realm (registrationEmailAsUsername)' : 'usernames cannot be changed in this realm (editUsernameAllowed is off)');
  }
  if (user.federationLink) throw new ValidationError('the username comes from the user directory (LDAP): change it there');
  if (user.passwordHash === NO_PASSWORD) throw new ValidationError("a service account's username follows its client");
  if (!USERNAME_RE.test(input.username)) throw new ValidationError(`username must be 1-${LIMITS.username} letters, digits, '.', '_', '@', '+' or '-'`);
  if (await store.users.findByUsername(realm.id, username)) throw new ConflictError(`username ${username} is taken`);
  return username;
}
