import type { Store } from '../../storage/store.js';
import { hashPassword } from '../../crypto/passwords.js';
import { randomId, sortableId } from '../../crypto/random.js';
import { checkEmail, checkPage, LIMITS, NotFound, USERNAME_RE, ValidationError } from '../validation.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import type { User } from '../../storage/types.js';
import type { UserQuery } from '../../storage/repos/user-admin.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import type { SessionSummary } from '../../storage/repos/session-admin.js';

/** The password policy of every door that sets a password (CLI, admin API, console, import). */
export function checkPassword(password: string): void {
  if (password.length < 8) throw new ValidationError('the password must have at least 8 characters');
  if (password.length > 1024) throw new ValidationError('the password must have at most 1024 characters');
}

export async function createUser(
  store: Store,
  input: {
    realmId: string;
    username: string;
    password: string;
    email?: string;
    orgAliases?: string[];
    firstName?: string;
    lastName?: string;
    emailVerified?: boolean;
    enabled?: boolean;
  },
  actor: Actor = cliActor(),
): Promise<{ id: string }> {
  await requireRealm(store, input.realmId);
  if (!USERNAME_RE.test(input.username)) {
    throw new ValidationError(`username must be 1-${LIMITS.username} letters, digits, '.', '_', '@', '+' or '-'`);
  }
  checkPassword(input.password);
  // One rule for create and update: the email column is varchar(320) on PostgreSQL.
  if (input.email !== undefined) checkEmail(input.email);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) {
    if (v !== undefined && (v.trim() === '' || v.length > LIMITS.personName || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have 1 to ${LIMITS.personName} characters, no control characters`);
  }
  const orgIds: string[] = [];
  for (const alias of input.orgAliases ?? []) {
    const org = await store.organizations.findByAlias(input.realmId, alias);
    if (!org) throw new ValidationError(`organization ${alias} does not exist in realm ${input.realmId}`);
    orgIds.push(org.id);
  }
  const id = randomId();
  await store.users.create({
    id,
    realmId: input.realmId,
    username: input.username.toLowerCase(),
    email: input.email ?? null,
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    emailVerified: input.emailVerified ?? false,
    passwordHash: await hashPassword(input.password),
    now: now(),
    organizationIds: [...new Set(orgIds)],
  });
  if (input.enabled === false) await store.users.update(id, { enabled: false });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'USER', resourcePath: `users/${id}`, representation: { username: input.username.toLowerCase(), email: input.email, firstName: input.firstName, lastName: input.lastName, emailVerified: input.emailVerified, enabled: input.enabled ?? true, organizations: input.orgAliases } });
  return { id };
}

/**
 * Changes or resets a user's password. Whoever knew the old one may hold sessions and tokens, so by
 * default every browser session and every refresh chain of the user ends (and with them their access
 * tokens, which are checked against their chain). keepOfflineSessions keeps chains granted
 * offline_access, as Keycloak's password update does with "sign out other sessions". Audited as
 * UPDATE_PASSWORD (Keycloak's event name).
 */
export async function setUserPassword(
  store: Store,
  input: { realmId: string; userId?: string; username?: string; password: string; keepOfflineSessions?: boolean; ip?: string },
): Promise<{ userId: string; username: string; sessionsEnded: number; chainsRevoked: number }> {
  await requireRealm(store, input.realmId);
  checkPassword(input.password);
  const user =
    input.userId !== undefined ? await store.users.get(input.userId) : input.username !== undefined ? await store.users.findByUsername(input.realmId, input.username.toLowerCase()) : undefined;
  if (!user || user.realmId !== input.realmId) throw new ValidationError(`user ${input.username ?? input.userId ?? ''} does not exist in realm ${input.realmId}`);
  await store.users.update(user.id, { passwordHash: await hashPassword(input.password) });
  const t = now();
  const sessionsEnded = await store.sessions.endAllOfUser(input.realmId, user.id, t);
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
    ip: input.ip ?? null,
    reason: `${sessionsEnded} browser session(s) ended, ${chainsRevoked} refresh chain(s) revoked${keepOffline ? ', offline chains kept' : ''}`,
  });
  return { userId: user.id, username: user.username, sessionsEnded, chainsRevoked };
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
}

/**
 * Changes a user's email, enabled flag or organizations. Disabling ends the user's browser sessions
 * and revokes their refresh chains at once, so that no token issued before stays usable (the checks
 * of userinfo, introspection and refresh refuse a disabled user's tokens in any case).
 */
export async function updateUser(store: Store, input: UserUpdate, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  if (typeof input.email === 'string') checkEmail(input.email);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) {
    if (typeof v === 'string' && (v.length > LIMITS.personName || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have at most ${LIMITS.personName} characters, no control characters`);
  }
  const orgIds = input.organizations !== undefined ? await organizationIds(store, input.realmId, input.organizations) : undefined;
  const t = now();
  await store.users.update(user.id, {
    ...(input.email !== undefined ? { email: input.email === '' ? null : input.email } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(input.firstName !== undefined ? { firstName: input.firstName === '' ? null : input.firstName } : {}),
    ...(input.lastName !== undefined ? { lastName: input.lastName === '' ? null : input.lastName } : {}),
    ...(input.emailVerified !== undefined ? { emailVerified: input.emailVerified } : {}),
  });
  if (orgIds !== undefined) await store.userAdmin.setOrganizations(user.id, orgIds, t);
  if (input.enabled === false && user.enabled) {
    await store.sessionAdmin.endAllForUser(input.realmId, user.id, t, { chains: true, reason: 'user disabled' });
  }
  const { realmId: _r, user: _u, ...changes } = input;
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${user.id}`, representation: changes });
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
 * and tokens: they end with it.
 */
export async function resetPassword(store: Store, input: { realmId: string; user: string; password: string }, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  // One rule for every password change: it ends the user's sessions and chains, and is audited.
  await setUserPassword(store, { realmId: input.realmId, userId: user.id, password: input.password });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/reset-password` });
  return user;
}

/** Deletes the user and everything of theirs (chains, sessions, consents, memberships, codes). */
export async function deleteUser(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  const user = await requireUser(store, input.realmId, input.user);
  await store.userAdmin.delete(user);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER', resourcePath: `users/${user.id}` });
  return user;
}

export async function listUsers(store: Store, input: UserQuery & { realmId: string }): Promise<User[]> {
  await requireRealm(store, input.realmId);
  checkPage(input);
  const { realmId, ...q } = input;
  // No username or email is longer than 320 characters: a longer term matches nothing (and would be
  // a LIKE pattern SQLite calls too complex).
  if ([q.search, q.username, q.email].some((t) => t !== undefined && t.length > LIMITS.email)) return [];
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
  const r = await store.sessionAdmin.endAllForUser(input.realmId, user.id, now(), { chains: true, reason: 'logged out by an administrator' });
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
  await store.sessionAdmin.revokeUserClient(input.realmId, user.id, input.clientId, now(), 'consent revoked by an administrator');
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
