import type { Client } from '../../storage/types.js';
import type { Services } from '../../services.js';
import { OAuthError } from '../errors.js';
import type { Params } from '../params.js';
import { checkRequestedScopes, defaultScopesOf, parseScope } from '../scopes.js';

/**
 * Scopes of a grant without an authorization request (password, client_credentials): the requested
 * ones, each available to the client (RFC 6749 3.3), or by default the client's default scopes (not its
 * optional ones, as Keycloak) except those named in `leaveOut` (Keycloak treats offline_access as
 * optional, never granted by default).
 */
export async function directGrantScopes(services: Services, realmId: string, client: Client, params: Params, leaveOut: readonly string[]): Promise<string[]> {
  if (!params.has('scope')) return defaultScopesOf(client).filter((s) => !leaveOut.includes(s));
  const requested = parseScope(params.get('scope'));
  checkRequestedScopes(requested, client, (await services.cache.realmScopes(realmId)) ?? new Map());
  return requested;
}

export function noRefreshFor(scopes: string[], grant: string): void {
  // RFC 6749 4.4.3: client_credentials issues no refresh token, so offline access makes no sense there.
  if (scopes.includes('offline_access')) throw new OAuthError('invalid_scope', `offline_access is not available with ${grant}`);
}
