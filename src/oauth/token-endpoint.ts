import type { Services } from '../services.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError } from './errors.js';
import { GRANTS } from './grants/index.js';
import { readParams, required, type RawParams } from './params.js';
import type { TokenResponse } from './tokens.js';

/** RFC 6749 3.2 and 5: the token endpoint, step by step. */
export async function handleTokenRequest(
  services: Services,
  input: { realmId: string; authorization: string | undefined; body: RawParams },
): Promise<TokenResponse> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });

  const grantType = required(readParams(input.body, ['grant_type']), 'grant_type');
  const grant = GRANTS.get(grantType);
  if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);

  const params = readParams(input.body, ['client_id', 'client_secret', ...grant.parameters]);
  const client = await authenticateClient(services, realm.id, input.authorization, params);
  return grant.handle({ services, realm, client, params });
}
