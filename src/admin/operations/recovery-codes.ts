import crypto from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { User } from '../../storage/types.js';
import { recoveryCodeHash } from '../../crypto/otp-secret.js';
import { sortableId } from '../../crypto/random.js';
import { now } from './common.js';

/**
 * Recovery codes (Keycloak's recovery-authn-codes): ten single-use codes a user with an authenticator app
 * keeps on paper, accepted where the app's code is (the sign-in's code page, the password grant's `otp`)
 * when the phone is lost. Shown once when created; stored only as keyed hashes. Each has 12 characters of
 * an alphabet without look-alikes (about 59 bits), written xxxx-xxxx-xxxx; case, spaces and dashes are
 * ignored when typed.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

const normalize = (code: string): string => code.toLowerCase().replace(/[\s-]/g, '');

/** Whether what was typed has the shape of a recovery code (an app's code is 6 or 8 digits). */
export function looksLikeRecoveryCode(code: string): boolean {
  return /^[a-z2-9]{12}$/.test(normalize(code)) && /[a-z]/.test(normalize(code));
}

function newCode(): string {
  let s = '';
  for (let i = 0; i < 12; i++) s += ALPHABET[crypto.randomInt(ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8)}`;
}

/** New codes for the user (the earlier ones, used or not, stop working); returns them, to show once. */
export async function createRecoveryCodes(store: Store, user: User, o: { ip?: string; clientId?: string } = {}): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  const hashes = await Promise.all(codes.map((c) => recoveryCodeHash(store, user.id, normalize(c))));
  await store.recoveryCodes.replace(user.realmId, user.id, hashes, now());
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type: 'UPDATE_TOTP', outcome: 'success', userId: user.id, username: user.username, clientId: o.clientId ?? null, ip: o.ip ?? null, reason: `${RECOVERY_CODE_COUNT} recovery codes created (earlier ones no longer work)` });
  return codes;
}

/** Uses one of the user's recovery codes: true once per code (one conditional update). */
export async function useRecoveryCode(store: Store, user: Pick<User, 'id' | 'realmId' | 'username'>, code: string, nowSeconds = now()): Promise<boolean> {
  if (!looksLikeRecoveryCode(code)) return false;
  if (!(await store.recoveryCodes.consume(user.id, await recoveryCodeHash(store, user.id, normalize(code)), nowSeconds))) return false;
  const left = await store.recoveryCodes.remaining(user.id);
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type: 'UPDATE_TOTP', outcome: 'success', userId: user.id, username: user.username, reason: `a recovery code used to sign in (${left} left)` });
  return true;
}
