import type { Store } from '../../storage/store.js';
import { hashPassword } from '../../crypto/passwords.js';
import { randomId, sortableId } from '../../crypto/random.js';
import { ValidationError } from '../validation.js';
import { now, requireRealm } from './common.js';

function checkPassword(password: string): void {
  if (password.length < 8) throw new ValidationError('the password must have at least 8 characters');
  if (password.length > 1024) throw new ValidationError('the password must have at most 1024 characters');
}

export async function createUser(
  store: Store,
  input: { realmId: string; username: string; password: string; email?: string; orgAliases?: string[]; firstName?: string; lastName?: string; emailVerified?: boolean },
): Promise<{ id: string }> {
  await requireRealm(store, input.realmId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,254}$/.test(input.username)) {
    throw new ValidationError("username must be 1-255 letters, digits, '.', '_', '@', '+' or '-'");
  }
  checkPassword(input.password);
  if (input.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new ValidationError(`${JSON.stringify(input.email)} is not an email address`);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) {
    if (v !== undefined && (v.trim() === '' || v.length > 255 || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have 1 to 255 characters, no control characters`);
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
