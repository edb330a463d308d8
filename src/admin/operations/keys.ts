import type { Store } from '../../storage/store.js';
import { generateSigningKey, isSigningAlg } from '../../crypto/keystore.js';
import { ValidationError } from '../validation.js';
import { now, requireRealm } from './common.js';

/** Adds a new active signing key; the previous one stays published until its tokens have expired. */
export async function rotateKeys(store: Store, input: { realmId: string; alg?: string }): Promise<{ kid: string; alg: string }> {
  const realm = await requireRealm(store, input.realmId);
  const alg = input.alg ?? realm.signingAlg;
  if (!isSigningAlg(alg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  const t = now();
  const key = await generateSigningKey(realm.id, alg, t);
  await store.keys.rotate(key, t);
  if (alg !== realm.signingAlg) await store.realms.update(realm.id, { signingAlg: alg });
  return { kid: key.kid, alg };
}

/**
 * Makes sure the realm has an active key of `alg` (for the ID tokens of a client that chose it), so that
 * the JWKS publishes it before the first such token is signed.
 */
export async function ensureSigningKey(store: Store, input: { realmId: string; alg: string }): Promise<void> {
  if (!isSigningAlg(input.alg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  const keys = await store.keys.list(input.realmId);
  if (keys.some((k) => k.status === 'active' && k.alg === input.alg)) return;
  await store.keys.insert(await generateSigningKey(input.realmId, input.alg, now()));
}
