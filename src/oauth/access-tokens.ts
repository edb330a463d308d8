import type { JWTPayload } from 'jose';
import { nowSeconds } from '../clock.js';
import { realmBase, type Services } from '../services.js';
import type { Realm } from '../storage/types.js';

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  azp: string;
  scope: string;
  sid?: string;
  jti: string;
  exp: number;
  iat: number;
  organization?: string[];
  /** RFC 9449 6.1: the thumbprint of the DPoP key the token is bound to. */
  cnf?: { jkt?: string };
}

/** The refresh chain an access token came from: its jti is `<chain id>.<random>`. */
export function chainIdOf(jti: string): string | undefined {
  const dot = jti.indexOf('.');
  return dot > 0 ? jti.slice(0, dot) : undefined;
}

/**
 * Checks an access token as a resource server would, plus what only the issuer knows: signature by a
 * realm key, issuer, expiry, the realm's not-before time, RFC 7009 revocation of the token itself, and
 * revocation of the chain it came from. Undefined when any check fails.
 */
export async function verifyAccessToken(services: Services, realm: Realm, token: string, opts: { allowExpired?: boolean } = {}): Promise<AccessTokenClaims | undefined> {
  if (token.length > 8192) return undefined;
  const now = nowSeconds(services.clock);
  // allowExpired lets revocation find the token's jti; the expiry is checked here instead of by jose.
  const payload = await services.keys.verify(realm.id, token, { issuer: realmBase(services.config, realm.id), nowSeconds: opts.allowExpired ? 0 : now });
  if (!payload || payload.typ !== 'Bearer') return undefined;
  const { sub, azp, scope, jti, exp, iat } = payload;
  if (typeof sub !== 'string' || typeof azp !== 'string' || typeof scope !== 'string' || typeof jti !== 'string') return undefined;
  if (typeof exp !== 'number' || typeof iat !== 'number') return undefined;
  // A cnf this server did not write (it signs only { jkt: string }) cannot be: refused rather than ignored.
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string')) return undefined;
  if (!opts.allowExpired && exp <= now) return undefined;
  if (iat < realm.notBefore) return undefined;
  // The client's own not-before (Keycloak's client notBefore), read through the configuration cache.
  const client = await services.cache.client(realm.id, azp);
  if (client && iat < client.notBefore) return undefined;
  if (await services.store.tokenState.isAccessTokenRevoked(jti)) return undefined;
  const chainId = chainIdOf(jti);
  if (chainId) {
    const chain = await services.store.refresh.getChain(chainId);
    if (chain?.revokedAt != null) return undefined;
  }
  return payload as AccessTokenClaims;
}
