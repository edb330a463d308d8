import type { Store } from '../../storage/store.js';

/**
 * Whether the user has a second factor (an authenticator app or a security key): every door that signs
 * in with a password asks for it then, or refuses the user when it cannot ask.
 */
export async function hasSecondFactor(store: Store, userId: string): Promise<boolean> {
  const [otp, key] = await Promise.all([store.otp.has(userId), store.webauthn.has(userId)]);
  return otp || key;
}
