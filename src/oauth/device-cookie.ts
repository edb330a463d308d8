import crypto from 'node:crypto';
import type { Store } from '../storage/store.js';
import { randomToken, safeEqual } from '../crypto/random.js';
import { storedSecret } from '../crypto/key-encryption.js';

/**
 * OWASP device cookies: a browser in which a user signed in successfully gets a cookie naming that user,
 * signed with a deployment-wide secret. A login attempt that carries a valid one for the name typed is
 * counted against that device only, so an attacker who locks the name out from elsewhere does not lock
 * out the user's own browser. The value is `<device id>.<MAC>`; the name is bound by the MAC, not shown.
 */
export const DEVICE_COOKIE = 'RG_DEVICE';
/** How long a browser stays known after its last successful sign-in. */
export const DEVICE_COOKIE_MAX_AGE = 365 * 86_400;

// Stored like a private key (sealed when REALMGATE_KEY_SECRET is set), shared by every node.
const secret = (store: Store): Promise<Buffer> => storedSecret(store, 'device_cookie_secret', () => randomToken(32));

function mac(key: Buffer, realmId: string, username: string, deviceId: string): string {
  return crypto.createHmac('sha256', key).update(`${realmId}\0${username.trim().toLowerCase()}\0${deviceId}`).digest('base64url');
}

export async function issueDeviceCookie(store: Store, realmId: string, username: string): Promise<string> {
  const deviceId = randomToken(16);
  return `${deviceId}.${mac(await secret(store), realmId, username, deviceId)}`;
}

/** The device id when `value` is a valid device cookie for this user of this realm, else undefined. */
export async function verifyDeviceCookie(store: Store, realmId: string, username: string, value: string | undefined): Promise<string | undefined> {
  const m = value ? /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!m) return undefined;
  const expected = mac(await secret(store), realmId, username, m[1]!);
  return safeEqual(expected, m[2]!) ? m[1] : undefined;
}
