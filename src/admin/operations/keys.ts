import type { Store } from '../../storage/store.js';
import { canStoreKeys } from '../../crypto/key-encryption.js';
import { generateSigningKey, isSigningAlg } from '../../crypto/keystore.js';
import { ValidationError } from '../validation.js';
import { now, requireRealm } from './common.js';
import { nowSeconds, systemClock, type Clock } from '../../clock.js';

/**
 * Adds a new active signing key; the previous one stays published until its tokens have expired.
 * The retirement time comes from the server's clock (the injected one), the same clock that later
 * decides when the retired key leaves the JWKS: two clocks would disagree by however long passed between.
 */
export async function rotateKeys(store: Store, input: { realmId: string; alg?: string }, opts: { clock?: Clock } = {}): Promise<{ kid: string; alg: string }> {
  const realm = await requireRealm(store, input.realmId);
  const alg = input.alg ?? realm.signingAlg;
  if (!isSigningAlg(alg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  const t = nowSeconds(opts.clock ?? systemClock);
  const key = await generateSigningKey(realm.id, alg, t);
  await store.keys.rotate(key, t);
  if (alg !== realm.signingAlg) await store.realms.update(realm.id, { signingAlg: alg });
  return { kid: key.kid, alg };
}

/**
 * Makes sure the realm has an active key of `alg` (for the ID tokens of a client that chose it), so that
 * the JWKS publishes it before the first such token is signed. A CLI command that has not opened the key
 * secret (client create and update) leaves it to the server, which makes a missing key when it first
 * signs with it (src/crypto/keystore.ts, sign): never a key stored in clear, and no secret needed to
 * change a client.
 */
export async function ensureSigningKey(store: Store, input: { realmId: string; alg: string }): Promise<void> {
  if (!isSigningAlg(input.alg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  if (!canStoreKeys()) return;
  const keys = await store.keys.list(input.realmId);
  if (keys.some((k) => k.status === 'active' && k.alg === input.alg)) return;
  await store.keys.insert(await generateSigningKey(input.realmId, input.alg, now()));
}
