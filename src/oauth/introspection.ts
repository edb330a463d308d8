import { nowSeconds } from '../clock.js';
import { tokenHash } from '../crypto/random.js';
import { realmBase, type Services } from '../services.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError } from './errors.js';
import { readParams, required, type RawParams } from './params.js';
import { verifyAccessToken } from './access-tokens.js';
import { isLegacyRefreshToken, verifyRefreshJwt } from '../crypto/refresh-jwt.js';
import { withoutIntrospectionHidden } from './mapper-claims.js';
import { claimScopes } from './scopes.js';

export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>);

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * RFC 7662: tells an authenticated confidential client of the realm about a token of the realm, whoever
 * it was issued to (a resource server checks tokens issued to its callers, as Keycloak allows); client_id
 * names the client the token was issued to. Refresh tokens are described to their own client only. Anything revoked, expired or unknown is {"active": false}
 * (2.2), which says nothing more.
 */
export async function handleIntrospection(
  services: Services,
  input: { realmId: string; authorization: string | undefined; body: RawParams; ip?: string },
): Promise<IntrospectionResponse> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
  const params = readParams(input.body, ['client_id', 'client_secret', 'client_assertion', 'token', 'token_type_hint']);
  const client = await authenticateClient(services, realm.id, input.authorization, params, input.ip ?? '', input.body);
  if (client.public) throw new OAuthError('invalid_client', 'introspection is for confidential clients');
  const token = required(params, 'token');
  const now = nowSeconds(services.clock);
  const iss = realmBase(services.config, realm.id);

  // RFC 7662 2.1: the hint only orders the lookups.
  const lookups = params.get('token_type_hint') === 'refresh_token' ? [refresh, access] : [access, refresh];
  for (const lookup of lookups) {
    const r = await lookup();
    if (r) return r;
  }
  return INACTIVE;

  async function access(): Promise<IntrospectionResponse | undefined> {
    if (!token.includes('.')) return undefined;
    const claims = await verifyAccessToken(services, realm!, token);
    if (!claims) return undefined;
    const user = await services.store.users.get(claims.sub);
    if (!user?.enabled) return undefined;
    // RFC 7662 2.2 allows more members than it names; as Keycloak does, every claim of the verified token
    // is in the answer (realm_access, resource_access, groups, the profile and email claims...), so that a
    // gateway that introspects authorizes by the same claims as one that reads the JWT.
    // RFC 9449 6.2: a bound token's cnf.jkt is in the answer (with its other claims), and its type is DPoP.
    return { ...(await introspected(claims)), active: true, token_type: claims.cnf?.jkt !== undefined ? 'DPoP' : 'Bearer', typ: 'Bearer', client_id: claims.azp, username: user.username, iss };
  }

  /**
   * The token's claims as issued, less those of mappers whose introspection.token.claim is "false" (the
   * mappers are not run again: a claim not in the token is not in the answer either).
   */
  async function introspected<C extends { scope: string; azp: string }>(claims: C): Promise<Record<string, unknown>> {
    const all = await services.cache.protocolMappers(realm!.id);
    if (all.none) return claims;
    const owner = await services.cache.client(realm!.id, claims.azp);
    return withoutIntrospectionHidden(claims, all.select(claims.azp, claimScopes(claims.scope.split(' '), owner)));
  }

  async function refresh(): Promise<IntrospectionResponse | undefined> {
    // Only a token signed by the realm's HMAC key, unexpired, is looked up.
    const verdict = verifyRefreshJwt(await services.keys.refreshKeys(realm!.id), token, { issuer: iss, now });
    if (!verdict.ok && !isLegacyRefreshToken(token)) return undefined;
    const claims = verdict.ok ? verdict.claims : undefined;
    const hash = tokenHash(token);
    // A token from before refresh tokens were JWTs: its row in the old per-token table names its chain.
    const old = claims ? undefined : await services.store.refresh.legacyToken(hash);
    const t = claims ? { expiresAt: claims.exp, createdAt: claims.iat } : old;
    const chainId = claims?.chain ?? old?.chainId;
    if (!t || !chainId) return undefined;
    const state = await services.store.tokenState.refreshToken(hash, chainId);
    if (!state) return undefined;
    const { chain } = state;
    // Whatever the refresh grant would refuse is inactive, a disabled user included; an earlier
    // generation of the chain is inactive (the grace window, when on, answers only the token endpoint).
    const dead =
      !state.current || t.expiresAt <= now || chain.revokedAt !== null || chain.maxExpiresAt <= now || chain.createdAt < realm!.notBefore || chain.createdAt < client.notBefore || !state.userEnabled;
    // Refresh tokens are for their own client only: no resource server has a reason to hold one.
    if (dead || chain.realmId !== realm!.id || (claims !== undefined && chain.id !== claims.chain) || chain.clientId !== client.clientId) return undefined;
    return {
      active: true,
      token_type: 'refresh_token',
      typ: claims?.typ ?? (chain.scopes.includes('offline_access') ? 'Offline' : 'Refresh'),
      scope: chain.scopes.join(' '),
      client_id: chain.clientId,
      azp: chain.clientId,
      aud: iss,
      ...(claims ? { jti: claims.jti } : {}),
      username: state.username ?? undefined,
      sub: chain.userId,
      iss,
      exp: t.expiresAt,
      iat: t.createdAt,
      sid: chain.sessionId,
    };
  }
}
