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
