import type { Realm, RefreshChain, Subject } from '../storage/types.js';
import type { NewToken } from '../storage/repos/tokens.js';
import { realmBase, type Services } from '../services.js';
import { randomToken, tokenHash } from '../crypto/random.js';

/** The specification's token response, in Keycloak's shape. */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: number;
  refresh_token: string;
  token_type: 'Bearer';
  'not-before-policy': number;
  session_state: string;
  scope: string;
}

/** A fresh refresh token: the value for the client, the hash for the database. */
export interface MintedRefreshToken extends NewToken {
  value: string;
}

/**
 * A refresh token lives for the realm's idle lifetime, but never past the end of its chain
 * (specification, Limits: every refresh starts a fresh period; chains last 6 to 24 months).
 */
export function mintRefreshToken(realm: Realm, chainMaxExpiresAt: number, now: number): MintedRefreshToken {
  const value = randomToken();
  return { value, hash: tokenHash(value), expiresAt: Math.min(now + realm.refreshIdleLifetime, chainMaxExpiresAt) };
}

export async function buildTokenResponse(
  services: Services,
  input: { realm: Realm; chain: RefreshChain; subject: Subject; scopes: string[]; refresh: MintedRefreshToken; now: number },
): Promise<TokenResponse> {
  const { realm, chain, subject, scopes, now } = input;
  const scope = scopes.join(' ');
  const claims: Record<string, unknown> = {
    iss: realmBase(services.config, realm.id),
    sub: subject.userId,
    aud: realm.accessTokenAudience,
    azp: chain.clientId,
    typ: 'Bearer',
    exp: now + realm.accessTokenLifetime,
    iat: now,
    jti: randomToken(16),
    scope,
    sid: chain.sessionId,
    // Keycloak's organization claim: a list of the aliases of the selected organization.
    organization: subject.organizationAlias ? [subject.organizationAlias] : [],
  };
  if (scopes.includes('profile')) claims.preferred_username = subject.username;
  if (scopes.includes('email') && subject.email) claims.email = subject.email;
  const accessToken = await services.keys.sign(realm.id, claims);
  return {
    access_token: accessToken,
    expires_in: realm.accessTokenLifetime,
    refresh_expires_in: Math.max(0, input.refresh.expiresAt - now),
    refresh_token: input.refresh.value,
    token_type: 'Bearer',
    'not-before-policy': realm.notBefore,
    session_state: chain.sessionId,
    scope,
  };
}
