import crypto from 'node:crypto';
import type { Store } from '../storage/store.js';
import { storedSecret } from './key-encryption.js';
import { randomToken } from './random.js';
import { openValue, sealValue } from './sealed-values.js';

/**
 * The keys of TOTP authenticators at rest. Unlike a password, the server must be able to compute the
 * codes, so the key cannot be hashed: it is encrypted (AES-256-GCM, a random IV each) under one data key,
 * bound to its credential and user (the additional data), so that a row copied onto another user's does
 * not open (src/crypto/sealed-values.ts). The data key is stored once like a private key (sealed under REALMGATE_KEY_SECRET or the key
 * file) and shared by every node: one key derivation per process, not one per user. Stored as
 * otp:v1:<iv>:<tag>:<ciphertext>, each base64url.
 */
const PREFIX = 'otp:v1:';
const dataKey = (store: Store): Promise<Buffer> => storedSecret(store, 'otp_data_key', () => randomToken(32));

const aad = (credentialId: string, userId: string): string => `realmgate otp\0${credentialId}\0${userId}`;

export async function sealOtpKey(store: Store, credentialId: string, userId: string, key: Buffer): Promise<string> {
  return sealValue(await dataKey(store), PREFIX, aad(credentialId, userId), key);
}

/** The key of a stored credential; undefined when the row does not open (altered, or another user's). */
export async function openOtpKey(store: Store, credentialId: string, userId: string, sealed: string): Promise<Buffer | undefined> {
  return openValue(await dataKey(store), PREFIX, aad(credentialId, userId), sealed);
}

/**
 * The key an authenticator being set up gets: derived from the data key and the sign-in it is set up in
 * (the pending request, or the account page's proof), so that the page showing it and the form sending
 * the first code agree without storing anything, and no one without the data key can compute it. 160
 * bits, as RFC 4226 4 recommends.
 */
export async function setupKey(store: Store, context: string): Promise<Buffer> {
  return crypto.createHmac('sha256', await dataKey(store)).update(`realmgate otp setup\0${context}`).digest().subarray(0, 20);
}

/**
 * A keyed hash (HMAC-SHA-256 under the data key) of a recovery code: what is stored of it, so that a copy
 * of the database alone cannot even test guesses offline.
 */
export async function recoveryCodeHash(store: Store, userId: string, normalizedCode: string): Promise<string> {
  return crypto.createHmac('sha256', await dataKey(store)).update(`realmgate recovery code\0${userId}\0${normalizedCode}`).digest('hex');
}
