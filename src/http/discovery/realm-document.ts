import { createPublicKey } from 'node:crypto';
import type { Services } from '../../services.js';
import { realmBase } from '../../services.js';
import type { Realm } from '../../storage/types.js';

/**
 * Keycloak's published realm representation (`GET /auth/realms/<realm>`), which keycloak-js and older
 * adapters read: public_key is the base64 DER SubjectPublicKeyInfo of the realm's RS256 key (the active
 * one when it is RS256, else the newest published), or absent when the realm publishes none.
 */
export async function realmDocument(services: Services, realm: Realm): Promise<Record<string, unknown>> {
  const base = realmBase(services.config, realm.id);
  const { keys } = await services.keys.jwks(realm.id);
  const active = await services.keys.activeKid(realm.id);
  const rsa = keys.filter((k) => k.kty === 'RSA' && (k.alg === undefined || k.alg === 'RS256'));
  const key = rsa.find((k) => k.kid === active) ?? rsa[0];
  const publicKey = key ? createPublicKey({ key: { kty: 'RSA', n: key.n!, e: key.e! }, format: 'jwk' }).export({ type: 'spki', format: 'der' }).toString('base64') : undefined;
  return {
    realm: realm.id,
    ...(publicKey ? { public_key: publicKey } : {}),
    'token-service': `${base}/protocol/openid-connect`,
    'account-service': `${base}/account`,
    'tokens-not-before': realm.notBefore,
  };
}
