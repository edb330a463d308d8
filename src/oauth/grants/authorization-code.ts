import { nowSeconds } from '../../clock.js';
import { randomId, safeEqual, tokenHash } from '../../crypto/random.js';
import { s256 } from '../../crypto/keystore.js';
import type { AuthorizationCode, Subject } from '../../storage/types.js';
import { OAuthError } from '../errors.js';
import { required } from '../params.js';
import { buildTokenResponse, chainBinding, mintRefreshToken, type MintedRefreshToken } from '../tokens.js';
import type { Grant, GrantContext } from './types.js';
import { grantResources } from '../resources.js';
import { realmBase } from '../../services.js';

/** RFC 6749 4.1.3, with PKCE (RFC 7636 4.5, 4.6). */
export const authorizationCodeGrant: Grant = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  async handle({ services, realm, client, params, resources, ip, dpopJkt }: GrantContext) {
    const code = required(params, 'code');
    const redirectUri = required(params, 'redirect_uri');
    const verifier = params.get('code_verifier');
    const now = nowSeconds(services.clock);
    let refresh: MintedRefreshToken | undefined;
    let audience: string[] = [];
    const keys = await services.keys.refreshKeys(realm.id);
    const issuer = realmBase(services.config, realm.id);

    const outcome = await services.store.codes.redeem(tokenHash(code), now, (stored: AuthorizationCode, subject: Subject) => {
      // The failure event names the code's user, except for a code of another realm.
      const reject = (description: string, userId: string | undefined = stored.userId): { reject: OAuthError } => ({
        reject: new OAuthError('invalid_grant', description, userId === undefined ? {} : { userId }),
      });
      if (stored.realmId !== realm.id) return reject('the authorization code is invalid', undefined);
      if (stored.clientId !== client.clientId) return reject('the authorization code was issued to another client');
      if (stored.expiresAt <= now) return reject('the authorization code has expired');
      // RFC 6749 4.1.3: redirect_uri must be identical to the one of the authorization request.
      if (stored.redirectUri !== redirectUri) return reject('redirect_uri does not match the authorization request');
      if (stored.codeChallenge) {
        if (verifier === undefined) return reject('code_verifier is required');
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !safeEqual(s256(verifier), stored.codeChallenge)) {
          return reject('code_verifier does not match the code challenge');
        }
      } else if (verifier !== undefined) {
        // RFC 9700 4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
        return reject('code_verifier sent for an authorization code issued without code_challenge');
      }
      if (!subject.enabled) return reject('the user is disabled');
      // RFC 9449 10: a code requested with dpop_jkt is exchanged only with a proof of that key (Keycloak's words).
      if (stored.dpopJkt) {
        if (dpopJkt === undefined) return { reject: new OAuthError('invalid_dpop_proof', 'DPoP Proof missing', { userId: stored.userId }) };
        if (dpopJkt !== stored.dpopJkt) return { reject: new OAuthError('invalid_dpop_proof', 'DPoP Proof public key thumbprint does not match dpop_jkt', { userId: stored.userId }) };
      }
      if (stored.createdAt < realm.notBefore || stored.createdAt < client.notBefore) return reject('the authorization code was revoked');
      // RFC 8707 2.1, 2.2: the resources of the authorization request bind the grant. Refused here, the
      // code is used up as by any refused redemption (a resource no client may ask for was refused before).
      try {
        audience = grantResources(resources, stored.resources, client);
      } catch (err) {
        if (err instanceof OAuthError) return { reject: err };
        throw err;
      }
      const maxExpiresAt = now + realm.refreshMaxLifetime;
      const chainId = randomId();
      const bound = chainBinding(client, dpopJkt);
      const chain = { chainId, clientId: stored.clientId, userId: stored.userId, sessionId: stored.sessionId, scopes: stored.scopes, chainMaxExpiresAt: maxExpiresAt, resources: stored.resources, dpopJkt: bound };
      refresh = mintRefreshToken({ realm, keys, issuer, chain, gen: 1, now });
      return { chain: { id: chainId, maxExpiresAt, dpopJkt: bound }, token: refresh };
    }, { ip, storedEventTypes: realm.storedEventTypes }, { realmId: realm.id, clientId: client.clientId });

    switch (outcome.status) {
      case 'foreign':
        // Refused as an unknown code would be: the presenter learns nothing, and the code stays usable.
        throw new OAuthError('invalid_grant', 'the authorization code is invalid', { detail: 'code of another client' });
      case 'not_found':
        throw new OAuthError('invalid_grant', 'the authorization code is invalid');
      case 'reused':
        services.audit.counter.count(realm.id, 'TOKEN_REUSE', 'failure');
        throw new OAuthError('invalid_grant', 'the authorization code has already been used', { detail: 'code reuse: chain revoked', userId: outcome.code.userId });
      case 'rejected':
        throw outcome.reason;
      case 'issued':
        services.audit.counter.count(realm.id, 'CODE_TO_TOKEN', 'success');
        return buildTokenResponse(services, {
          realm,
          client,
          resources: audience,
          chain: outcome.chain,
          subject: outcome.subject,
          scopes: outcome.chain.scopes,
          refresh: refresh!,
          now,
          nonce: outcome.code.nonce,
          dpopJkt,
        });
    }
  },
};
