import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { OtpAlgorithm, OtpCredential, User } from '../../storage/types.js';
import { matchTotp } from '../../crypto/totp.js';
import { openOtpKey, sealOtpKey } from '../../crypto/otp-secret.js';
import { sortableId } from '../../crypto/random.js';
import { now } from './common.js';

/**
 * TOTP authenticators (Keycloak's otp credentials): setting one up (the CONFIGURE_TOTP required action),
 * checking a code at sign-in, listing and removing them.
 */

/** Keycloak's default OTP policy: what a new authenticator is set up with. */
export const OTP_POLICY = { algorithm: 'HmacSHA1' as OtpAlgorithm, digits: 6, period: 30, window: 1 };

/** At most this many authenticators per user (Keycloak sets no number; a form cannot add without bound). */
export const MAX_OTP_PER_USER = 10;

async function event(store: Store, user: User, type: 'UPDATE_TOTP' | 'REMOVE_TOTP', reason: string, o: { ip?: string | undefined; clientId?: string | undefined }): Promise<void> {
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type, outcome: 'success', userId: user.id, username: user.username, clientId: o.clientId ?? null, ip: o.ip ?? null, reason });
}

/**
 * Sets up an authenticator with `key` once the user has typed a code it gives (proof that the app holds
 * the key), and ends the CONFIGURE_TOTP required action. The code cannot be used again to sign in. Returns
 * why it is refused, in words for the page.
 */
export async function enrollOtp(
  store: Store,
  input: { user: User; key: Buffer; code: string; label?: string; ip?: string; clientId?: string; nowSeconds?: number },
): Promise<string | undefined> {
  const code = input.code.replace(/\s/g, '');
  if (code === '') return 'Enter the code your authenticator app shows.';
  // One clock for the code and the record (the server's, which tests drive).
  const t = input.nowSeconds ?? now();
  const step = matchTotp(input.key, code, t, OTP_POLICY);
  if (step === undefined) return 'Invalid authenticator code. Check the time on your phone, then try the new code.';
  const label = (input.label ?? '').trim();
  if (label.length > 255 || /[\x00-\x1f\x7f]/.test(label)) return 'The device name must have at most 255 characters and no control characters.';
  const existing = await store.otp.list(input.user.id);
  if (existing.length >= MAX_OTP_PER_USER) return `You have ${MAX_OTP_PER_USER} authenticators already: remove one first.`;
  const id = randomUUID();
  const credential: OtpCredential = {
    id,
    realmId: input.user.realmId,
    userId: input.user.id,
    label: label === '' ? null : label,
    sealedSecret: await sealOtpKey(store, id, input.user.id, input.key),
    algorithm: OTP_POLICY.algorithm,
    digits: OTP_POLICY.digits,
    period: OTP_POLICY.period,
    createdAt: t,
  };
  await store.otp.create(credential);
  await store.otp.claimStep(id, step);
  if (input.user.requiredActions.includes('CONFIGURE_TOTP')) await store.users.update(input.user.id, { requiredActions: input.user.requiredActions.filter((a) => a !== 'CONFIGURE_TOTP') });
  await event(store, input.user, 'UPDATE_TOTP', `authenticator ${credential.label ?? id} set up`, input);
  return undefined;
}

/**
 * Whether `code` is a current code of one of the user's authenticators, accepted once: a code (or another
 * of the same time step) already used is refused (Keycloak's otpPolicyCodeReusable false).
 */
export async function verifyUserOtp(store: Store, user: Pick<User, 'id'>, code: string, nowSeconds = now()): Promise<boolean> {
  const clean = code.replace(/\s/g, '');
  if (!/^\d{6,8}$/.test(clean)) return false;
  for (const c of await store.otp.list(user.id)) {
    const key = await openOtpKey(store, c.id, user.id, c.sealedSecret);
    if (!key) continue;
    const step = matchTotp(key, clean, nowSeconds, { ...c, window: OTP_POLICY.window });
    if (step !== undefined && (await store.otp.claimStep(c.id, step))) return true;
  }
  return false;
}

/** Removes one authenticator (Keycloak's DELETE .../credentials/{id}); false when the user has no such one. */
export async function removeOtp(store: Store, user: User, credentialId: string, o: { ip?: string; clientId?: string; by?: string } = {}): Promise<boolean> {
  const gone = await store.otp.delete(user.id, credentialId);
  if (!gone) return false;
  // Recovery codes stand in for an authenticator: with the last one gone, they go too.
  const last = !(await store.otp.has(user.id));
  if (last) await store.recoveryCodes.deleteAll(user.id);
  await event(store, user, 'REMOVE_TOTP', `authenticator ${credentialId} removed${o.by ? ` by ${o.by}` : ''}${last ? ' (the last one: its recovery codes too)' : ''}`, o);
  return true;
}
