import { nowSeconds } from '../../clock.js';
import { tokenHash } from '../../crypto/random.js';
import { OAuthError, type OAuthErrorCode } from '../errors.js';
import { required } from '../params.js';
import { parseScope } from '../scopes.js';
import { buildTokenResponse, mintRefreshToken, type MintedRefreshToken } from '../tokens.js';
import type { Grant, GrantContext } from './types.js';
import { grantResources } from '../resources.js';
import { realmBase } from '../../services.js';
import { decodeRefreshJwt, isLegacyRefreshToken, type RefreshClaims } from '../../crypto/refresh-jwt.js';
import type { Foreseen } from '../../storage/repos/tokens.js';

/** RFC 6749 6, with rotation and reuse detection (RFC 9700 4.14.2). */
export const refreshTokenGrant: Grant = {
  grantType: 'refresh_token',
  parameters: ['refresh_token', 'scope'],
  async handle({ services, realm, client, params, resources, ip, dpopJkt }: GrantContext) {
    const presented = required(params, 'refresh_token');
    const requestedScope = params.has('scope') ? parseScope(params.get('scope')) : undefined;
    // RFC 6749 3.3: a scope parameter holds at least one scope-token.
    if (requestedScope !== undefined && requestedScope.length === 0) throw new OAuthError('invalid_scope', 'scope is empty');
    const now = nowSeconds(services.clock);
    let refresh: MintedRefreshToken | undefined;
    let scopes: string[] = [];

    const keys = await services.keys.refreshKeys(realm.id);
    const issuer = realmBase(services.config, realm.id);
    // A well-formed, unexpired token of this realm goes to the database with its signature unchecked: if
    // its hash is its chain's current token hash it is the very token this server issued (SHA-256, a
    // preimage would be needed to forge it), and the HMAC would prove nothing more. Only a token that is
    // not current has its signature checked (rotateIn), before it can count as a reuse or get a grace
    // answer: a forged one is invalid and changes nothing. Any other token is answered here, before any
    // database access: an expired one (said so only when its signature holds), one that is not a token
    // of this realm, or a legacy opaque token (looked up below).
    const decoded = decodeRefreshJwt(keys, presented, { issuer, now });
    let claims: RefreshClaims | undefined;
    let signed: (() => boolean) | undefined;
    let legacy = false;
    if (decoded.ok && !decoded.expired) {
      claims = decoded.claims;
      signed = decoded.signatureValid;
    } else if (decoded.ok) {
      // An expired token whose signature holds is ours: its failure event names its user.
      if (decoded.signatureValid()) throw new OAuthError('invalid_grant', 'the refresh token has expired', { userId: decoded.claims.sub });
      throw new OAuthError('invalid_grant', 'the refresh token is invalid');
    } else {
      legacy = isLegacyRefreshToken(presented);
      if (!legacy) throw new OAuthError('invalid_grant', 'the refresh token is invalid');
    }
    const hash = tokenHash(presented);
    // A token from before refresh tokens were JWTs names no chain and no generation: its row in the old
    // per-token table names the chain (generation 1 at least: the exact count was never recorded).
    const old = legacy ? await services.store.refresh.legacyToken(hash) : undefined;
    if (!claims && !old) throw new OAuthError('invalid_grant', 'the refresh token is invalid');
    if (old && old.expiresAt <= now) throw new OAuthError('invalid_grant', 'the refresh token has expired');
    // RFC 8707 2.1, 2.2: a chain whose authorization request named resources carries them in each of its
    // tokens; a refresh may narrow them, not widen them. Read from the claims, trusted once the token is
    // proven (below); a refusal is answered only then, so that a revoked chain still says so first.
    const bound = claims?.resource ?? [];
    let audience: string[] = [];
    let audienceRefused: OAuthError | undefined;
    try {
      audience = grantResources(resources, bound, client);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      audienceRefused = err;
    }
    /** The rotation the full path would make of a current token, from its claims alone (see above). */
    const foresee = (c: RefreshClaims): { rotation: Foreseen<MintedRefreshToken>; scopes: string[] } | undefined => {
      // A chain bound to another key (or to one while no proof came) is refused by the full path, in its order.
      if (c.azp !== client.clientId || audienceRefused || (c.cnf !== undefined && c.cnf.jkt !== dpopJkt)) return undefined;
      const chainScopes = c.scope === '' ? [] : c.scope.split(' ');
      const granted = chainScopes.filter((sc) => client.scopes.includes(sc));
      if (requestedScope && requestedScope.some((sc) => !chainScopes.includes(sc))) return undefined;
      const next = mintRefreshToken({
        realm,
        keys: keys!,
        issuer,
        // The chain's own end is unknown here: the statement requires the chain to outlive this token.
        chain: { chainId: c.chain, clientId: client.clientId, userId: c.sub, sessionId: c.sid, scopes: chainScopes, chainMaxExpiresAt: Number.MAX_SAFE_INTEGER, resources: bound, dpopJkt: c.cnf?.jkt },
        gen: c.gen + 1,
        now,
      });
      return {
        rotation: { expect: { realmId: realm.id, clientId: client.clientId, userId: c.sub, sessionId: c.sid, scopes: chainScopes, notBefore: Math.max(realm.notBefore, client.notBefore) }, next },
        scopes: requestedScope ? requestedScope.filter((sc) => granted.includes(sc)) : granted,
      };
    };
    const presentedToken = claims
      ? { hash, chainId: claims.chain, generation: claims.gen, issuedAt: claims.iat, expiresAt: claims.exp, signed }
      : { hash, chainId: old!.chainId, generation: 1, issuedAt: old!.createdAt, expiresAt: old!.expiresAt };
    const grace = { seconds: realm.refreshGraceSeconds, max: realm.refreshGraceMax };
    // The usual case decided from the claims alone (its chain's row must then be exactly as they say; the
    // database checks that in the same statement that rotates it, where it can: one round trip on
    // PostgreSQL). Anything else (another client, a scope not granted, a chain near the end of its lifetime,
    // a token already rotated...) takes the full path below, whose answer is the same as without this.
    const foreseen = claims && services.store.refresh.rotatesInOneStatement ? foresee(claims) : undefined;
    const outcome = await services.store.refresh.rotate(presentedToken, now, grace, (token, chain, subject, generation) => {
      // The failure event names the chain's user, except for a token that is not this realm's chain's.
      const reject = (error: OAuthErrorCode, description: string, userId: string | undefined = chain.userId): { reject: OAuthError } => ({
        reject: new OAuthError(error, description, userId === undefined ? {} : { userId }),
      });
      if (chain.realmId !== realm.id || (claims !== undefined && chain.id !== claims.chain)) return reject('invalid_grant', 'the refresh token is invalid', undefined);
      // RFC 6749 6: the refresh token must have been issued to the authenticated client.
      if (chain.clientId !== client.clientId) return reject('invalid_grant', 'the refresh token was issued to another client');
      if (chain.revokedAt !== null) return reject('invalid_grant', 'the refresh token has been revoked');
      if (token.expiresAt <= now) return reject('invalid_grant', 'the refresh token has expired');
      if (chain.maxExpiresAt <= now) return reject('invalid_grant', 'the refresh token has reached the end of its lifetime: the user must log in again');
      if (chain.createdAt < realm.notBefore) return reject('invalid_grant', 'the refresh token was revoked by the realm');
      if (chain.createdAt < client.notBefore) return reject('invalid_grant', 'the refresh token was revoked for this client');
      if (!subject.enabled) return reject('invalid_grant', 'the user is disabled');
      // RFC 9449 5: a public client's chain bound to a key is refreshed only with a proof of that key.
      if (chain.dpopJkt) {
        if (dpopJkt === undefined) return reject('invalid_dpop_proof', 'DPoP proof is missing: the refresh token is bound to a DPoP key');
        if (dpopJkt !== chain.dpopJkt) return reject('invalid_dpop_proof', 'the DPoP proof\'s key is not the one the refresh token is bound to');
      }
      // Scopes the operator has since taken from the client are dropped from new access tokens.
      const granted = chain.scopes.filter((s) => client.scopes.includes(s));
      if (requestedScope) {
        // RFC 6749 6: a narrower scope may be requested, never one not originally granted.
        const extra = requestedScope.find((s) => !chain.scopes.includes(s));
        if (extra !== undefined) return reject('invalid_scope', 'a requested scope was not granted to this refresh token');
        scopes = requestedScope.filter((s) => granted.includes(s));
      } else {
        scopes = granted;
      }
      if (audienceRefused) return { reject: audienceRefused };
      const refreshChain = { chainId: chain.id, clientId: chain.clientId, userId: chain.userId, sessionId: chain.sessionId, scopes: chain.scopes, chainMaxExpiresAt: chain.maxExpiresAt, resources: bound, dpopJkt: chain.dpopJkt };
      refresh = mintRefreshToken({ realm, keys, issuer, chain: refreshChain, gen: generation, now });
      return { next: refresh };
    }, { ip, storedEventTypes: realm.storedEventTypes }, foreseen?.rotation);

    switch (outcome.status) {
      case 'not_found':
        throw new OAuthError('invalid_grant', 'the refresh token is invalid');
      case 'reused':
        if (outcome.newer) {
          throw new OAuthError('invalid_grant', "the refresh token is newer than the server's record of its grant (a database restored from an earlier backup): sign in again", {
            detail: `newer than its chain: chain ${outcome.chain.id} ended`,
            userId: outcome.chain.userId,
          });
        }
        services.audit.counter.count(realm.id, 'TOKEN_REUSE', 'failure');
        throw new OAuthError('invalid_grant', 'the refresh token has already been used', { detail: `reuse detected: chain ${outcome.chain.id} revoked`, userId: outcome.chain.userId });
      case 'rejected':
        throw outcome.reason;
      case 'rotated':
        // Counted whether or not the realm stores it (src/events/stored-types.ts), after the commit.
        services.audit.counter.count(realm.id, 'REFRESH_TOKEN', 'success');
        if (outcome.grace) services.audit.counter.count(realm.id, 'REFRESH_TOKEN_GRACE', 'success');
        if (foreseen && outcome.token === foreseen.rotation.next) {
          refresh = foreseen.rotation.next;
          scopes = foreseen.scopes;
        }
        return buildTokenResponse(services, { realm, client, resources: audience, chain: outcome.chain, subject: outcome.subject, scopes, refresh: refresh!, now, dpopJkt });
    }
  },
};
