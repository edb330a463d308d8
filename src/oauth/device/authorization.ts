import { nowSeconds } from '../../clock.js';
import { randomToken, tokenHash } from '../../crypto/random.js';
import { realmBase, type Services } from '../../services.js';
import { ConflictError, type Client } from '../../storage/types.js';
import { authenticateClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import { readParams, type RawParams } from '../params.js';
import { checkRequestedScopes, parseScope } from '../scopes.js';
import { readBoundResources } from '../resources.js';
import { generateUserCode, normalizeUserCode, userCodeHash } from './user-code.js';

/** Seconds a refused device authorization request is told to wait (Retry-After). */
const CAP_RETRY_AFTER = 60;

/** How long the user has to enter the code, and the polling interval (RFC 8628 3.2). */
export const DEVICE_CODE_LIFETIME = 600;
export const DEVICE_POLL_INTERVAL = 5;

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export function verificationUri(services: Services, realmId: string): string {
  return `${realmBase(services.config, realmId)}/device`;
}

/**
 * Bounded storage (issue 11): each request stores a device code until it expires, so pending ones are
 * capped overall and, for a public client (anyone may ask for its codes), per client address. A
 * confidential client authenticated itself: its backend may rightly ask for many codes from one address.
 */
async function checkPendingCaps(services: Services, client: Client, ip: string | undefined, now: number): Promise<void> {
  const cap = await services.deviceCaps.exceeded(client.public ? ip : undefined, now);
  if (!cap) return;
  // RFC 6749 4.1.2.1's temporarily_unavailable; slow_down (RFC 8628 3.5) is an answer to polling.
  const where = cap === 'address' ? 'from this address' : 'on this server';
  throw new OAuthError('temporarily_unavailable', `too many pending device authorizations ${where}, try again later`, { status: 429, retryAfter: CAP_RETRY_AFTER });
}

/** RFC 8628 3.1, 3.2: the device authorization endpoint. */
export async function handleDeviceAuthorization(
  services: Services,
  input: { realmId: string; authorization: string | undefined; body: RawParams; ip?: string },
): Promise<DeviceAuthorizationResponse> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
  const params = readParams(input.body, ['client_id', 'client_secret', 'client_assertion', 'scope']);
  const client = await authenticateClient(services, realm.id, input.authorization, params, input.ip ?? '', input.body);
  const scopes = parseScope(params.get('scope'));
  checkRequestedScopes(scopes, client, (await services.cache.realmScopes(realm.id)) ?? new Map());
  // RFC 8707 2.1 (RFC 8628 defines no resource, but this request starts the grant as an authorization
  // request does): the resources named bind the grant.
  const resources = readBoundResources(input.body, client);

  const now = nowSeconds(services.clock);
  await checkPendingCaps(services, client, input.ip, now);
  const deviceCode = randomToken(32);
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = generateUserCode();
    try {
      await services.store.devices.create({
        hash: tokenHash(deviceCode),
        userCodeHash: userCodeHash(normalizeUserCode(userCode)!),
        realmId: realm.id,
        clientId: client.clientId,
        scopes,
        resources,
        interval: DEVICE_POLL_INTERVAL,
        now,
        expiresAt: now + DEVICE_CODE_LIFETIME,
        ip: input.ip ?? null,
      });
    } catch (err) {
      if (err instanceof ConflictError) continue;
      throw err;
    }
    const uri = verificationUri(services, realm.id);
    return {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: uri,
      verification_uri_complete: `${uri}?user_code=${encodeURIComponent(userCode)}`,
      expires_in: DEVICE_CODE_LIFETIME,
      interval: DEVICE_POLL_INTERVAL,
    };
  }
  throw new OAuthError('temporarily_unavailable', 'could not allocate a user code, try again', { status: 503 });
}
