import { nowSeconds } from '../clock.js';
import type { Services } from '../services.js';
import type { Realm, User } from '../storage/types.js';
import type { FailureState } from '../storage/repos/login-failures.js';
import { authenticateUser } from './authorize/interaction.js';
import { PasswordHashingBusy } from '../crypto/passwords.js';

/** Failures from one address tolerated per failure of one username: a shared office is not an attacker. */
const IP_FACTOR = 4;
/** Failures of a username after which each further attempt must wait a little (slow-down before the lockout). */
const SLOW_AFTER = 3;
/** Failures are forgotten after this long without another one. */
const FORGET_AFTER = 3600;

export type LoginOutcome = { user: User } | { error: string; retryAfter?: number };

function subjects(username: string, ip: string): { user: string; ip: string } {
  return { user: `user:${username.trim().toLowerCase().slice(0, 255)}`, ip: `ip:${ip}` };
}

function minutes(seconds: number): string {
  return seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * RFC 6819 4.4.3.6 / 5.1.4.2.3: online guessing of passwords. Failed logins of a username, and from an
 * address, first slow down (each further attempt waits a few seconds), then lock for the realm's
 * lockout time, doubling at every lockout up to its maximum. The lock is keyed by the name that was
 * typed, so a locked name says the same whether or not such a user exists. Locked attempts are refused
 * before any password is hashed, so they cost the server nothing.
 */
export async function attemptLogin(services: Services, realm: Realm, input: { username: string; password: string; ip: string; clientId: string }): Promise<LoginOutcome> {
  const now = nowSeconds(services.clock);
  const keys = subjects(input.username, input.ip);
  const state = await services.store.loginFailures.get(realm.id, [keys.user, keys.ip]);
  const blockedUntil = Math.max(state.get(keys.user)?.blockedUntil ?? 0, state.get(keys.ip)?.blockedUntil ?? 0);
  if (blockedUntil > now) {
    const wait = blockedUntil - now;
    const locked = (state.get(keys.user)?.lockouts ?? 0) > 0 || (state.get(keys.ip)?.lockouts ?? 0) > 0;
    return {
      error: locked
        ? `Too many failed sign-in attempts: this account is locked for ${minutes(wait)}. Try again later.`
        : `Too many failed sign-in attempts. Wait ${minutes(wait)} and try again.`,
      retryAfter: wait,
    };
  }
  let user: User | undefined;
  try {
    user = input.username && input.password && input.password.length <= 1024 ? await authenticateUser(services, realm, input.username, input.password) : undefined;
  } catch (err) {
    if (err instanceof PasswordHashingBusy) return { error: 'The server is busy. Please try again in a moment.', retryAfter: 2 };
    throw err;
  }
  if (user) {
    await services.store.loginFailures.clear(realm.id, keys.user);
    return { user };
  }
  await fail(services, realm, keys.user, state.get(keys.user), realm.maxLoginFailures, now, input);
  await fail(services, realm, keys.ip, state.get(keys.ip), realm.maxLoginFailures * IP_FACTOR, now, input);
  return { error: 'Invalid username or password.' };
}

async function fail(services: Services, realm: Realm, subject: string, prev: FailureState | undefined, threshold: number, now: number, who: { username: string; ip: string; clientId: string }): Promise<void> {
  const fresh = !prev || now - prev.lastFailure > FORGET_AFTER;
  const s: FailureState = fresh ? { failures: 0, lockouts: prev?.lockouts ?? 0, lastFailure: now, blockedUntil: 0 } : { ...prev };
  s.failures += 1;
  s.lastFailure = now;
  if (s.failures >= threshold) {
    s.lockouts += 1;
    s.blockedUntil = now + Math.min(realm.lockoutSeconds * 2 ** (s.lockouts - 1), realm.maxLockoutSeconds);
    s.failures = 0;
    await services.audit.record({
      realmId: realm.id,
      type: 'LOCKOUT',
      outcome: 'failure',
      clientId: who.clientId,
      username: who.username,
      ip: who.ip,
      reason: `${subject.startsWith('ip:') ? 'address' : 'username'} locked for ${s.blockedUntil - now} s`,
    });
  } else if (s.failures >= SLOW_AFTER && subject.startsWith('user:')) {
    s.blockedUntil = now + 2 * (s.failures - SLOW_AFTER + 1);
  }
  await services.store.loginFailures.put(realm.id, subject, s);
}
