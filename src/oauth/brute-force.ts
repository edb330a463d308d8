import { nowSeconds } from '../clock.js';
import type { Services } from '../services.js';
import type { Realm, User } from '../storage/types.js';
import type { FailureState } from '../storage/repos/login-failures.js';
import { authenticateUser, findLoginUser } from './authorize/interaction.js';
import { PasswordHashingBusy } from '../crypto/passwords.js';
import { LdapUnavailable } from './ldap/directory.js';
import { issueDeviceCookie, verifyDeviceCookie } from './device-cookie.js';
import { metrics } from '../metrics.js';
import { verifyUserOtp } from '../admin/operations/otp.js';
import { looksLikeRecoveryCode, useRecoveryCode } from '../admin/operations/recovery-codes.js';
import { msg, type Msg, type Text } from '../i18n/translator.js';

/** Failures from one address tolerated per failure of one username: a shared office is not an attacker. */
const IP_FACTOR = 4;
/** Failures of a username after which each further attempt must wait a little (slow-down before the lockout). */
const SLOW_AFTER = 3;
/** Failures are forgotten after this long without another one. */
const FORGET_AFTER = 3600;

/**
 * A refusal names the user the name typed found (for the events only: the page says the same either way).
 * `error`: the words for the page, a message put in the page's language when it is rendered (in
 * English, as text: String(error)).
 */
export type LoginOutcome = { user: User; deviceCookie: string } | { error: Msg; retryAfter?: number; subject?: { id: string; username: string }; unavailable?: string };

interface Subject {
  key: string;
  threshold: number;
  slowDown: boolean;
}


/**
 * Who an attempt counts against. From a browser holding a valid device cookie for this name (OWASP:
 * the user signed in there before), only that device: a lock set by guesses from elsewhere does not
 * apply to it. From anywhere else, the name and the address. The name is the user's own username when
 * the name typed found a user (their username or their email: guesses by either count together), else
 * the name typed.
 */
async function subjectsOf(services: Services, realm: Realm, input: { username: string; ip: string; deviceCookie?: string | undefined }): Promise<Subject[]> {
  const device = await verifyDeviceCookie(services.store, realm.id, input.username, input.deviceCookie);
  if (device) return [{ key: `dev:${device}`, threshold: realm.maxLoginFailures, slowDown: true }];
  return [
    { key: `user:${input.username.trim().toLowerCase().slice(0, 255)}`, threshold: realm.maxLoginFailures, slowDown: true },
    { key: `ip:${input.ip}`, threshold: realm.maxLoginFailures * IP_FACTOR, slowDown: false },
  ];
}

/**
 * RFC 6819 4.4.3.6 / 5.1.4.2.3: online guessing of passwords. Failed logins of a username, and from an
 * address, first slow down (each further attempt waits a few seconds), then lock for the realm's
 * lockout time, doubling at every lockout up to its maximum. The lock is keyed by the name that was
 * typed, so a locked name says the same whether or not such a user exists.
 *
 * Each attempt is reserved in the database (counted as a failure) BEFORE its password is checked, in
 * one atomic statement: of N parallel guesses at most the threshold are ever checked, and an attempt
 * beyond it, the right password included, is refused without hashing anything.
 */
export async function attemptLogin(
  services: Services,
  realm: Realm,
  input: { username: string; password: string; ip: string; clientId: string; deviceCookie?: string | undefined },
): Promise<LoginOutcome> {
  const now = nowSeconds(services.clock);
  // Looked up before anything is reserved: whichever name was typed, the attempt counts against the user found.
  const found = await findLoginUser(services, realm, input.username);
  const name = found?.username ?? input.username;
  const subject = found ? { id: found.id, username: found.username } : undefined;
  const subjects = await subjectsOf(services, realm, { ...input, username: name });
  const reserved: Subject[] = [];
  let refused: { subject: Subject; state: FailureState } | undefined;
  for (const subject of subjects) {
    const state = await services.store.loginFailures.reserve(realm.id, subject.key, now, FORGET_AFTER);
    if (state.blockedUntil > now || state.failures > subject.threshold) {
      if (state.blockedUntil <= now) reserved.push(subject);
      refused = { subject, state };
      break;
    }
    reserved.push(subject);
  }
  if (refused) {
    await releaseAll(services, realm, reserved);
    return { ...refusal(refused.state, now), ...(subject ? { subject } : {}) };
  }

  let user: User | undefined;
  try {
    user = input.username && input.password && input.password.length <= 1024 ? await authenticateUser(services, realm, found, input.password, input.username) : undefined;
  } catch (err) {
    await releaseAll(services, realm, reserved);
    if (err instanceof PasswordHashingBusy) return { error: msg('loginBusyMessage'), retryAfter: 2 };
    // The user directory (LDAP) cannot answer: nothing was checked, so nothing is counted against the name.
    if (err instanceof LdapUnavailable) return { error: msg('userDirectoryUnavailableMessage'), retryAfter: 30, unavailable: err.message, ...(subject ? { subject } : {}) };
    throw err;
  }
  if (user) {
    // The name's (or device's) count starts over; the address only gets this attempt back.
    for (const s of subjects) {
      if (s.key.startsWith('ip:')) await services.store.loginFailures.release(realm.id, s.key);
      else await services.store.loginFailures.clear(realm.id, s.key);
    }
    return { user, deviceCookie: await issueDeviceCookie(services.store, realm.id, user.username) };
  }
  for (const s of subjects) await failed(services, realm, s, now, { ...input, username: name });
  return { error: msg('invalidUserMessage'), ...(subject ? { subject } : {}) };
}

async function releaseAll(services: Services, realm: Realm, subjects: Subject[]): Promise<void> {
  for (const s of subjects) await services.store.loginFailures.release(realm.id, s.key);
}

function refusal(state: FailureState, now: number): { error: Msg; retryAfter: number } {
  // Refused inside a burst that is reaching the threshold: its lock is being set by a checked attempt.
  const wait = Math.max(state.blockedUntil - now, 1);
  const locked = state.lockouts > 0 || state.blockedUntil <= now;
  // In seconds under 90 of them, else in minutes (rounded up).
  const inSeconds = wait < 90;
  const amount = inSeconds ? wait : Math.ceil(wait / 60);
  return {
    error: locked ? msg(inSeconds ? 'accountTemporarilyDisabledSeconds' : 'accountTemporarilyDisabledMessage', amount) : msg(inSeconds ? 'loginWaitSeconds' : 'loginWaitMinutes', amount),
    retryAfter: wait,
  };
}

/** A checked attempt failed: it is already counted; lock when it reached the threshold, else maybe slow down. */
async function failed(services: Services, realm: Realm, s: Subject, now: number, who: { username: string; ip: string; clientId: string }): Promise<void> {
  const until = await services.store.loginFailures.lock(realm.id, s.key, { now, threshold: s.threshold, lockoutSeconds: realm.lockoutSeconds, maxLockoutSeconds: realm.maxLockoutSeconds });
  if (until !== undefined) {
    metrics.lockouts.inc({ subject: s.key.slice(0, s.key.indexOf(':')) });
    await services.audit.record({
      realmId: realm.id,
      type: 'LOCKOUT',
      outcome: 'failure',
      clientId: who.clientId,
      username: who.username,
      ip: who.ip,
      reason: `${s.key.startsWith('ip:') ? 'address' : s.key.startsWith('dev:') ? 'device' : s.key.startsWith('otp:') ? 'one-time codes of the user' : 'username'} locked for ${until - now} s`,
    });
    return;
  }
  if (!s.slowDown) return;
  const state = (await services.store.loginFailures.get(realm.id, [s.key])).get(s.key);
  if (state && state.failures >= SLOW_AFTER && state.failures < s.threshold) await services.store.loginFailures.delay(realm.id, s.key, now + 2 * (state.failures - SLOW_AFTER + 1));
}

export type OtpOutcome = { ok: true } | { error: Text; retryAfter?: number };

/**
 * Online guessing of one-time codes (RFC 4226 7.3, throttling; RFC 6238 5.2): counted against the user
 * (otp:<user id>), whoever guesses and from wherever, since whoever reaches this step knew the password;
 * a device cookie does not exempt it. The same atomic reservation as attemptLogin (a burst of parallel
 * guesses checks at most the threshold), the same slow-down and lockout; the right code clears it.
 */
export async function attemptOtp(services: Services, realm: Realm, input: { user: User; code: string; ip: string; clientId: string }): Promise<OtpOutcome> {
  // The app's current code, or one of the user's recovery codes (for a lost phone): the same throttle.
  return attemptSecondFactor(services, realm, input, async (now) =>
    input.code.length <= 32 && (looksLikeRecoveryCode(input.code) ? await useRecoveryCode(services.store, input.user, input.code, now) : await verifyUserOtp(services.store, input.user, input.code, now))
      ? undefined
      : msg('invalidTotpMessage'),
  );
}

/**
 * Any second factor (an authenticator's code, a security key's assertion): counted against the user
 * (otp:<user id>) as attemptOtp says, reserved before `check` runs. `check` answers undefined when
 * right, else the words for the page (a message, or words of its own).
 */
export async function attemptSecondFactor(services: Services, realm: Realm, input: { user: User; ip: string; clientId: string }, check: (now: number) => Promise<Text | undefined>): Promise<OtpOutcome> {
  const now = nowSeconds(services.clock);
  const subject: Subject = { key: `otp:${input.user.id}`, threshold: realm.maxLoginFailures, slowDown: true };
  const state = await services.store.loginFailures.reserve(realm.id, subject.key, now, FORGET_AFTER);
  if (state.blockedUntil > now || state.failures > subject.threshold) {
    if (state.blockedUntil <= now) await releaseAll(services, realm, [subject]);
    return refusal(state, now);
  }
  const problem = await check(now);
  if (problem === undefined) {
    await services.store.loginFailures.clear(realm.id, subject.key);
    return { ok: true };
  }
  await failed(services, realm, subject, now, { username: input.user.username, ip: input.ip, clientId: input.clientId });
  return { error: problem };
}
