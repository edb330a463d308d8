import { decodeJwt } from 'jose';
import { isClientId, type Services } from '../services.js';
import { authenticateClient, parseBasicAuth } from './client-auth.js';
import type { EventType } from '../storage/repos/events.js';
import { OAuthError } from './errors.js';
import { GRANTS } from './grants/index.js';
import { checkResources, readResources } from './resources.js';
import { readParams, required, type RawParams } from './params.js';
import type { TokenResponse } from './tokens.js';
import type { ServiceTokenResponse } from './grants/types.js';
import { metrics } from '../metrics.js';
import { verifyDpopProof } from './dpop.js';

/** RFC 6749 3.2 and 5: the token endpoint, step by step. */
const FAILURE_EVENT: Record<string, EventType> = {
  authorization_code: 'CODE_TO_TOKEN_ERROR',
  refresh_token: 'REFRESH_TOKEN_ERROR',
  client_credentials: 'CLIENT_LOGIN_ERROR',
  'urn:ietf:params:oauth:grant-type:token-exchange': 'TOKEN_EXCHANGE_ERROR',
};

export async function handleTokenRequest(
  services: Services,
  input: { realmId: string; authorization: string | undefined; body: RawParams; ip?: string; userAgent?: string | undefined; dpop?: string },
): Promise<TokenResponse | ServiceTokenResponse> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });

  const grantType = required(readParams(input.body, ['grant_type']), 'grant_type');
  const grant = GRANTS.get(grantType);
  if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);

  const params = readParams(input.body, ['client_id', 'client_secret', 'client_assertion', ...grant.parameters]);
  const ip = input.ip ?? null;
  let client;
  try {
    client = await authenticateClient(services, realm.id, input.authorization, params, input.ip ?? '', input.body);
  } catch (err) {
    if (err instanceof OAuthError && err.error === 'invalid_client') {
      metrics.clientAuthFailures.inc();
      metrics.grants.inc({ grant_type: grant.grantType, outcome: 'invalid_client' });
      // Anyone can send these: only a sample is stored (a count of the rest rides on the next stored one).
      const sample = services.clientFailures.sampler.sample(realm.id, services.clock.nowMs());
      if (sample.store) {
        const attempted = parseBasicAuthSafe(input.authorization) ?? params.get('client_id') ?? assertedSubject(params.get('client_assertion')) ?? null;
        const more = sample.skipped > 0 ? ` (${sample.skipped} more failures not stored)` : '';
        await services.audit.record({ realmId: realm.id, type: 'CLIENT_AUTH_ERROR', outcome: 'failure', clientId: attempted, ip, reason: (err.detail ?? err.description) + more });
      }
    }
    throw err;
  }
  try {
    const resources = readResources(input.body);
    checkResources(resources, client);
    // RFC 9449 5: a valid proof binds what this request issues to its key. Without a DPoP header
    // nothing more is read (the refresh hot path stays as it was).
    const proof = input.dpop === undefined ? undefined : await verifyDpopProof(services, realm.id, input.dpop, { method: 'POST', endpoint: 'token' });
    // Keycloak's dpop.bound.access.tokens, in its words.
    if (!proof && client.dpopBoundAccessTokens) throw new OAuthError('invalid_request', 'DPoP proof is missing');
    const response = await grant.handle({ services, realm, client, params, resources, raw: input.body, ip, userAgent: input.userAgent, ...(proof ? { dpopJkt: proof.jkt } : {}) });
    metrics.grants.inc({ grant_type: grant.grantType, outcome: 'success' });
    return response;
  } catch (err) {
    if (err instanceof OAuthError) {
      metrics.grants.inc({ grant_type: grant.grantType, outcome: err.error });
      // The three reuse answers (code, device code, refresh token) share this wording.
      if (err.error === 'invalid_grant' && err.description.includes('has already been used')) metrics.reuse.inc({ kind: grant.grantType });
    }
    // Successes and reuse detection are recorded inside the grant's own transaction.
    const type = FAILURE_EVENT[grant.grantType];
    if (err instanceof OAuthError && type && err.error !== 'authorization_pending' && err.error !== 'slow_down') {
      await services.audit.record({ realmId: realm.id, type, outcome: 'failure', clientId: client.clientId, userId: err.userId ?? null, ip, reason: `${err.error}: ${err.description}` });
    }
    throw err;
  }
}

/** The client an assertion names (unverified, for the failure event only). */
function assertedSubject(assertion: string | undefined): string | undefined {
  if (assertion === undefined) return undefined;
  try {
    const sub = decodeJwt(assertion).sub;
    return typeof sub === 'string' && isClientId(sub) ? sub : undefined;
  } catch {
    return undefined;
  }
}

function parseBasicAuthSafe(header: string | undefined): string | undefined {
  try {
    return parseBasicAuth(header)?.clientId;
  } catch {
    return undefined;
  }
}
