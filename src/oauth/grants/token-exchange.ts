import { tokenRoles } from '../role-scope.js';
import { nowSeconds } from '../../clock.js';
import { randomId } from '../../crypto/random.js';
import { realmBase } from '../../services.js';
import { subjectOfUser } from '../../storage/repos/mappers.js';
import type { Client, RefreshChain } from '../../storage/types.js';
import { chainIdOf, verifyAccessToken, type AccessTokenClaims } from '../access-tokens.js';
import { OAuthError } from '../errors.js';
import { MAX_PARAM_LENGTH, type RawParams } from '../params.js';
import { parseScope } from '../scopes.js';
import { buildTokenResponse, mintRefreshToken, type MintedRefreshToken, type TokenResponse } from '../tokens.js';
import type { Grant, GrantContext } from './types.js';

/** RFC 8693 2.1 and 3: the grant type and the token type identifiers this server reads and issues. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const REFRESH_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:refresh_token';

/** RFC 8693 2.2.1: the token response says which kind of token access_token holds. */
export type TokenExchangeResponse = (TokenResponse | Omit<TokenResponse, 'refresh_token'>) & { issued_token_type: string };

/** Parameters that select Keycloak's other token exchanges (V1: impersonation, external tokens). */
const OTHER_EXCHANGES = ['requested_subject', 'requested_issuer', 'subject_issuer'] as const;

/** Keycloak's answers are invalid_request with its own words, 400. */
const invalid = (description: string, detail?: string): OAuthError => new OAuthError('invalid_request', description, detail ? { detail } : {});

/**
 * RFC 8693 token exchange as Keycloak's "standard token exchange" (V2, StandardTokenExchangeProvider):
 * a confidential client with standard.token.exchange.enabled trades an access token of this realm that was
 * meant for it (it is in its aud, or it is its azp) for a new access token for the same user and session,
 * for the audiences it asks for and the same or fewer scopes; a refresh token of the same session only when
 * its standard.token.exchange.enableRefreshRequestedTokenType is SAME_SESSION. The checks run in
 * Keycloak's order, with its error codes and words.
 */
export const tokenExchangeGrant: Grant = {
  grantType: TOKEN_EXCHANGE_GRANT,
  parameters: ['subject_token', 'subject_token_type', 'requested_token_type', 'scope', 'actor_token', 'actor_token_type', ...OTHER_EXCHANGES],
  async handle({ services, realm, client, params, resources: requestedResources, raw, ip, dpopJkt }: GrantContext): Promise<TokenExchangeResponse> {
    for (const p of OTHER_EXCHANGES) if (params.has(p)) throw invalid(`Parameter '${p}' is not supported for standard token exchange`);
    if (!client.standardTokenExchange) throw invalid('Standard token exchange is not enabled for the requested client');
    // RFC 8693 2.1 delegation (actor_token, the subject's may_act): Keycloak's standard exchange of 26.2 to
    // 26.4 has none; Realmgate neither (docs/migrating-from-keycloak.md).
    if (params.has('actor_token') || params.has('actor_token_type')) throw invalid("Parameter 'actor_token' is not supported for standard token exchange");
    const subjectToken = params.get('subject_token');
    if (subjectToken === undefined) throw invalid("Parameter 'subject_token' required for standard token exchange");
    const subjectTokenType = params.get('subject_token_type');
    if (subjectTokenType === undefined) throw invalid("Parameter 'subject_token_type' required for standard token exchange");
    if (subjectTokenType !== ACCESS_TOKEN_TYPE) throw invalid("Parameter 'subject_token' supports access tokens only");

    // The same checks as introspection and userinfo: signature by a key of this realm, issuer, expiry, the
    // realm's not-before time, the token's own revocation and its chain's (a logout, a revoked grant).
    const claims = await verifyAccessToken(services, realm, subjectToken);
    const user = claims ? await services.store.users.get(claims.sub) : undefined;
    if (!claims || !user?.enabled || user.realmId !== realm.id) throw invalid('Invalid token', 'subject_token validation failure');
    const userId = user.id;
    const fail = (error: OAuthError['error'], description: string, status?: number): OAuthError => new OAuthError(error, description, { userId, ...(status ? { status } : {}) });

    const requestedType = requestedTokenType(params.get('requested_token_type'), client, userId);
    const audiences = await targetAudiences(services, realm.id, raw, userId);
    // Keycloak's order: the requester, the audiences' state, then the subject token's audience.
    if (client.public) throw fail('invalid_client', 'Public client is not allowed to exchange token', 400);
    if (audiences.some((a) => !a.enabled)) throw fail('invalid_client', 'Client disabled', 400);
    // RFC 8693 5 (and Keycloak): only the party a token was issued to, or meant for, may exchange it.
    if (claims.azp !== client.clientId && !audienceOf(claims).includes(client.clientId)) throw fail('access_denied', 'Client is not within the token audience', 403);

    const scopes = await exchangedScopes(services, realm.id, client, claims, params.get('scope'), userId);
    // A token of client_credentials has no session nor chain: there is nothing for the new one to follow.
    const subjectChainId = chainIdOf(claims.jti);
    const subjectChain = subjectChainId && claims.sid ? await services.store.refresh.getChain(subjectChainId) : undefined;
    if (!subjectChain || subjectChain.realmId !== realm.id || subjectChain.revokedAt !== null) throw fail('invalid_request', 'Invalid token: the subject token has no user session');
    // Keycloak: an offline session cannot give a refresh token of the same session. (Its other refusal,
    // offline_access asked for with a refresh token, cannot arise: the scopes are within the subject
    // token's, and a token with offline_access comes from an offline chain.)
    if (requestedType === REFRESH_TOKEN_TYPE && subjectChain.scopes.includes('offline_access')) {
      throw fail('invalid_request', 'Refresh token not valid as requested_token_type because creating a new session is needed');
    }
    const available = await availableAudiences(services, realm.id, client, userId, scopes);
    const missing = audiences.filter((a) => !available.has(a.clientId)).map((a) => a.clientId);
    if (missing.length > 0) throw fail('invalid_request', `Requested audience not available: ${missing.join(', ')}`);

    const now = nowSeconds(services.clock);
    const subject = { ...subjectOfUser(user), organizationAlias: claims.organization?.[0] ?? null };
    // RFC 8693 2.1: resource (RFC 8707, already checked against the requester's audiences) and audience
    // may both name targets; the new token's aud is all of them.
    const resources = [...audiences.map((a) => a.clientId), ...requestedResources.filter((r) => !audiences.some((a) => a.clientId === r))];
    const keys = await services.keys.refreshKeys(realm.id);
    const issuer = realmBase(services.config, realm.id);
    let chain: RefreshChain;
    let refresh: MintedRefreshToken;
    if (requestedType === REFRESH_TOKEN_TYPE) {
      // SAME_SESSION: a chain of its own for the requester, in the subject token's session, for the same
      // user and organization, ending no later than the subject's chain: a logout of the session ends it.
      chain = {
        id: randomId(),
        realmId: realm.id,
        clientId: client.clientId,
        userId,
        organizationId: subjectChain.organizationId,
        scopes,
        sessionId: subjectChain.sessionId,
        authTime: subjectChain.authTime,
        createdAt: now,
        maxExpiresAt: Math.min(subjectChain.maxExpiresAt, now + realm.refreshMaxLifetime),
        revokedAt: null,
      };
      refresh = mintRefreshToken({
        realm,
        keys,
        issuer,
        chain: { chainId: chain.id, clientId: client.clientId, userId, sessionId: chain.sessionId, scopes, chainMaxExpiresAt: chain.maxExpiresAt },
        gen: 1,
        now,
      });
      await services.store.refresh.create(chain, refresh.hash, null);
    } else {
      // An access token alone rides on the subject's chain: its jti carries that chain's id, so that the
      // subject's logout or revoked grant revokes it too (verifyAccessToken), with azp the requester.
      chain = { ...subjectChain, clientId: client.clientId, scopes, dpopJkt: null };
      refresh = { value: '', hash: '', expiresAt: now };
    }
    // RFC 9449 5: a proof sent with the exchange binds the new access token to its key, as at every grant.
    const response = await buildTokenResponse(services, { realm, client, chain, subject, scopes, refresh, now, resources, dpopJkt });
    await services.audit.record({
      realmId: realm.id,
      type: 'TOKEN_EXCHANGE',
      outcome: 'success',
      clientId: client.clientId,
      userId,
      username: user.username,
      ip,
      reason: `subject token of ${claims.azp}; requested ${requestedType === REFRESH_TOKEN_TYPE ? 'refresh_token' : 'access_token'}${resources.length > 0 ? `; audience ${resources.join(' ')}` : ''}`,
    });
    if (requestedType === REFRESH_TOKEN_TYPE) return { ...response, issued_token_type: ACCESS_TOKEN_TYPE };
    // RFC 8693 2.2.1: issued_token_type is the type of access_token; no refresh token was asked for.
    const { refresh_token: _none, ...rest } = response;
    return { ...rest, refresh_expires_in: 0, issued_token_type: ACCESS_TOKEN_TYPE };
  },
};

/**
 * RFC 8693 2.1 requested_token_type, as Keycloak answers it: access_token by default; refresh_token only
 * when the client allows it; its other types (id_token, saml2) and anything else are refused.
 */
function requestedTokenType(v: string | undefined, client: Client, userId: string): string {
  if (v === undefined || v === ACCESS_TOKEN_TYPE) return ACCESS_TOKEN_TYPE;
  if (v === REFRESH_TOKEN_TYPE && client.tokenExchangeRefresh === 'SAME_SESSION') return REFRESH_TOKEN_TYPE;
  throw new OAuthError('invalid_request', 'requested_token_type unsupported', { userId });
}

/** The subject token's aud as a list. */
function audienceOf(claims: AccessTokenClaims): string[] {
  const aud = claims.aud;
  return typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

/**
 * RFC 8693 2.1 audience (repeatable, like resource): each the client id of a client of this realm, else
 * Keycloak's invalid_client "Audience not found" (400).
 */
async function targetAudiences(services: GrantContext['services'], realmId: string, raw: RawParams, userId: string): Promise<Client[]> {
  if (!raw || typeof raw !== 'object' || !Object.hasOwn(raw, 'audience')) return [];
  const v = raw.audience;
  const list = Array.isArray(v) ? v : [v];
  if (list.length > 20) throw new OAuthError('invalid_request', 'too many audience parameters', { userId });
  const out: Client[] = [];
  for (const a of list) {
    if (typeof a !== 'string' || a.length > MAX_PARAM_LENGTH) throw new OAuthError('invalid_request', 'parameter audience is malformed', { userId });
    if (a === '' || out.some((c) => c.clientId === a)) continue;
    const target = await services.cache.client(realmId, a);
    if (!target) throw new OAuthError('invalid_client', 'Audience not found', { status: 400, userId });
    out.push(target);
  }
  return out;
}

/**
 * The scopes of the new token: those asked for, or by default those of the subject token (less
 * offline_access), each granted to the subject token and available to the requester (RFC 8693 5: an
 * exchange narrows, it never widens). Keycloak's answer to anything else: invalid_scope "Invalid scopes".
 */
async function exchangedScopes(services: GrantContext['services'], realmId: string, client: Client, claims: AccessTokenClaims, scope: string | undefined, userId: string): Promise<string[]> {
  const granted = claims.scope === '' ? [] : claims.scope.split(' ');
  const realmScopes = (await services.cache.realmScopes(realmId)) ?? new Map();
  const allowed = (s: string): boolean => granted.includes(s) && client.scopes.includes(s) && realmScopes.has(s);
  if (scope === undefined) return granted.filter((s) => s !== 'offline_access' && allowed(s));
  const requested = parseScope(scope);
  if (requested.length === 0 || !requested.every(allowed)) throw new OAuthError('invalid_scope', `Invalid scopes: ${scope}`, { userId });
  return requested;
}

/**
 * The audiences the requester's tokens for this user may name, as Keycloak checks "Requested audience not
 * available": those its operator gave it (Keycloak's audience mappers), and the clients of which the
 * user holds client roles (Keycloak's audience resolution from resource_access).
 */
async function availableAudiences(services: GrantContext['services'], realmId: string, client: Client, userId: string, scopes: readonly string[]): Promise<Set<string>> {
  // The roles the requester's token may carry (a client without full scope: only those in its scope).
  const roles = await tokenRoles(services, realmId, userId, client, scopes);
  const withRoles = roles ? Object.entries(roles.clients).filter(([, r]) => r.length > 0).map(([c]) => c) : [];
  return new Set([...client.audiences, ...withRoles]);
}
