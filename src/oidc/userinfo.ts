import type { Services } from '../services.js';
import { verifyAccessToken } from '../oauth/access-tokens.js';
import { addProtocolMapperClaims, groupClaims, scopedClaims } from '../oauth/tokens.js';
import { claimScopes } from '../oauth/scopes.js';
import { subjectOfUser } from '../storage/repos/mappers.js';
import type { AccessTokenClaims } from '../oauth/access-tokens.js';
import { verifyDpopProof } from '../oauth/dpop.js';
import { OAuthError } from '../oauth/errors.js';
import type { Client, User } from '../storage/types.js';

/** RFC 6750 3.1 errors of a protected resource, sent in WWW-Authenticate (RFC 9449 7.1: in a DPoP challenge for DPoP). */
export class BearerError extends Error {
  constructor(
    readonly status: 400 | 401 | 403,
    readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof' | undefined,
    readonly description: string,
    readonly scheme: 'Bearer' | 'DPoP' = 'Bearer',
  ) {
    super(description);
  }
}

/** RFC 9449 7.1: the token of an `Authorization: DPoP <token>` header; undefined for any other scheme. */
export function dpopToken(authorization: string | undefined): string | undefined {
  if (!authorization || !/^DPoP\b/i.test(authorization)) return undefined;
  const token = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)?.[1];
  if (!token) throw new BearerError(401, 'invalid_token', 'malformed DPoP token', 'DPoP');
  return token;
}

/**
 * RFC 9449 7: a DPoP-bound token (cnf.jkt) is accepted only with the DPoP scheme and a proof of its key
 * for this request (htm, htu, ath, a fresh jti); one presented as a bearer token is refused (7.1). An
 * unbound token goes on as a bearer token, whichever scheme carried it (as Keycloak refuses it under DPoP:
 * its proof would prove nothing).
 */
export async function checkTokenBinding(
  services: Services,
  realmId: string,
  claims: AccessTokenClaims,
  presented: { token: string; scheme: 'Bearer' | 'DPoP'; proof: string | undefined; method: string },
): Promise<void> {
  const jkt = claims.cnf?.jkt;
  if (presented.scheme === 'Bearer') {
    if (jkt !== undefined) throw new BearerError(401, 'invalid_token', 'the access token is DPoP-bound: send it with the DPoP scheme and a proof', 'DPoP');
    return;
  }
  if (jkt === undefined) throw new BearerError(401, 'invalid_token', 'the access token is not DPoP-bound: send it as a bearer token', 'DPoP');
  if (presented.proof === undefined) throw new BearerError(401, 'invalid_dpop_proof', 'DPoP proof is missing', 'DPoP');
  let proof;
  try {
    proof = await verifyDpopProof(services, realmId, presented.proof, { method: presented.method, endpoint: 'userinfo', accessToken: presented.token });
  } catch (err) {
    if (err instanceof OAuthError) throw new BearerError(401, 'invalid_dpop_proof', err.description, 'DPoP');
    throw err;
  }
  if (proof.jkt !== jkt) throw new BearerError(401, 'invalid_dpop_proof', 'the DPoP proof\'s key is not the one the access token is bound to', 'DPoP');
}

/** RFC 6750 2.1 and 2.2: the token from the Authorization header or, for a form POST, the body; not both. */
export function bearerToken(authorization: string | undefined, body: unknown): string | undefined {
  const header = authorization && /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)?.[1];
  const form = body && typeof body === 'object' ? (body as Record<string, unknown>).access_token : undefined;
  if (header && form !== undefined) throw new BearerError(400, 'invalid_request', 'send the access token one way only');
  if (authorization && !header && /^Bearer\b/i.test(authorization)) throw new BearerError(401, 'invalid_token', 'malformed bearer token');
  if (header) return header;
  if (Array.isArray(form)) throw new BearerError(400, 'invalid_request', 'access_token is included more than once');
  return typeof form === 'string' && form !== '' ? form : undefined;
}

/** OIDC Core 5.3: the claims about the user that the token's scopes release. */
export async function userInfo(
  services: Services,
  realmId: string,
  token: string | undefined,
  dpop: { scheme: 'Bearer' | 'DPoP'; proof: string | undefined; method: string } = { scheme: 'Bearer', proof: undefined, method: 'GET' },
): Promise<Record<string, unknown>> {
  const realm = await services.cache.realm(realmId);
  if (!realm) throw new BearerError(401, 'invalid_token', 'realm not found');
  // RFC 6750 3.1: a request without a token gets the challenge with no error code.
  if (!token) throw new BearerError(401, undefined, 'an access token is required');
  const claims = await verifyAccessToken(services, realm, token);
  if (!claims) throw new BearerError(401, 'invalid_token', 'the access token is invalid, expired or revoked', dpop.scheme);
  await checkTokenBinding(services, realm.id, claims, { token, ...dpop });
  const scopes = claims.scope.split(' ');
  if (!scopes.includes('openid')) throw new BearerError(403, 'insufficient_scope', 'the access token was not granted the openid scope');
  const user = await services.store.users.get(claims.sub);
  if (!user || !user.enabled || user.realmId !== realm.id) throw new BearerError(401, 'invalid_token', 'the user no longer exists or is disabled');
  const client = await services.cache.client(realm.id, claims.azp);
  return userInfoClaims(services, { realmId: realm.id, user, client, clientId: claims.azp, scopes, organization: claims.organization, sessionId: claims.sid });
}

/**
 * The UserInfo answer for a user, from the scopes and organization of an access token of the client: the
 * UserInfo endpoint's, and the admin API's example (src/admin/operations/evaluate-scopes.ts).
 */
export async function userInfoClaims(
  services: Services,
  o: { realmId: string; user: User; client: Client | undefined; clientId: string; scopes: readonly string[]; organization: string[] | undefined; sessionId?: string | undefined },
): Promise<Record<string, unknown>> {
  const { user, scopes } = o;
  // With openid, the claims of Keycloak's default client scopes the client has (oauth/scopes.ts).
  const released = claimScopes(scopes, o.client);
  const subject = subjectOfUser(user);
  const info: Record<string, unknown> = {
    sub: user.id,
    ...scopedClaims(subject, released),
    ...(o.organization ? { organization: o.organization } : {}),
    ...(await groupClaims(services, user.id, scopes)),
  };
  // Mappers with userinfo.token.claim (from the user as they are now, like the other claims here).
  await addProtocolMapperClaims(services, info, { realmId: o.realmId, clientId: o.clientId, client: o.client, released, subject, target: 'userinfo', sessionId: o.sessionId });
  return info;
}
