import { nowSeconds } from '../../clock.js';
import { randomToken } from '../../crypto/random.js';
import { realmBase } from '../../services.js';
import { ensureServiceAccount } from '../../admin/operations/service-accounts.js';
import { OAuthError } from '../errors.js';
import { accessTokenAudience, addProtocolMapperClaims, dpopConfirmation, groupClaims, roleClaims, scopedClaims } from '../tokens.js';
import { directGrantScopes, noRefreshFor } from './grant-scopes.js';
import type { Grant, GrantContext, ServiceTokenResponse } from './types.js';
import { subjectOfUser } from '../../storage/repos/mappers.js';

/**
 * RFC 6749 4.4: the client acts for itself, as its service-account user (Keycloak's model), so its
 * roles decide what it may do. RFC 6749 4.4.3: no refresh token. Only confidential clients with
 * service accounts enabled (RFC 6749 4.4: the client must authenticate).
 */
export const clientCredentialsGrant: Grant = {
  grantType: 'client_credentials',
  parameters: ['scope'],
  async handle({ services, realm, client, params, ip, dpopJkt }: GrantContext): Promise<ServiceTokenResponse> {
    if (client.public) throw new OAuthError('unauthorized_client', 'a public client cannot use client_credentials');
    if (!client.serviceAccountsEnabled) throw new OAuthError('unauthorized_client', 'the client is not enabled to retrieve a service account');
    const scopes = await directGrantScopes(services, realm.id, client, params, ['offline_access', 'openid']);
    noRefreshFor(scopes, 'client_credentials');
    const user = await ensureServiceAccount(services.store, client);
    if (!user.enabled) throw new OAuthError('invalid_grant', 'the service account is disabled');
    const now = nowSeconds(services.clock);
    const scope = scopes.join(' ');
    const subject = subjectOfUser(user);
    const claims: Record<string, unknown> = {
      iss: realmBase(services.config, realm.id),
      sub: user.id,
      aud: accessTokenAudience(realm, client, undefined),
      azp: client.clientId,
      typ: 'Bearer',
      exp: now + realm.accessTokenLifetime,
      iat: now,
      // No chain: the jti has no chain prefix, so revocation works by jti alone.
      jti: randomToken(16),
      scope,
      client_id: client.clientId,
      ...scopedClaims(subject, scopes),
      ...(await roleClaims(services, realm.id, user.id, client, scopes)),
      ...(await groupClaims(services, user.id, scopes)),
      ...dpopConfirmation(dpopJkt),
    };
    // The protocol mappers of the client and of its granted scopes (no openid here: no implied scopes).
    await addProtocolMapperClaims(services, claims, { realmId: realm.id, clientId: client.clientId, client, released: scopes, subject, target: 'access' });
    // RFC 9068 2.1: the header says at+jwt when the realm issues that format.
    const accessToken = await services.keys.sign(realm.id, claims, undefined, realm.accessTokenFormat === 'rfc9068' ? { typ: 'at+jwt' } : {});
    await services.audit.record({ realmId: realm.id, type: 'CLIENT_LOGIN', outcome: 'success', clientId: client.clientId, userId: user.id, username: user.username, ip });
    return {
      access_token: accessToken,
      expires_in: realm.accessTokenLifetime,
      refresh_expires_in: 0,
      token_type: dpopJkt ? 'DPoP' : 'Bearer',
      'not-before-policy': realm.notBefore,
      scope,
    };
  },
};
