import { nowSeconds } from '../../clock.js';
import { randomId, tokenHash } from '../../crypto/random.js';
import { OAuthError } from '../errors.js';
import { required } from '../params.js';
import { buildTokenResponse, chainBinding, mintRefreshToken, type MintedRefreshToken } from '../tokens.js';
import type { Grant, GrantContext } from './types.js';
import { grantResources } from '../resources.js';
import { realmBase } from '../../services.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 3.4 and 3.5: the device polls until the user approved, denied, or the code expired. */
export const deviceCodeGrant: Grant = {
  grantType: DEVICE_CODE_GRANT,
  parameters: ['device_code'],
  async handle({ services, realm, client, params, resources, ip, dpopJkt }: GrantContext) {
    const deviceCode = required(params, 'device_code');
    const now = nowSeconds(services.clock);
    let refresh: MintedRefreshToken | undefined;
    let audience: string[] = [];
    const keys = await services.keys.refreshKeys(realm.id);
    const issuer = realmBase(services.config, realm.id);

    const outcome = await services.store.devices.poll(tokenHash(deviceCode), now, (device, subject) => {
      if (device.realmId !== realm.id || device.clientId !== client.clientId) return { reject: new OAuthError('invalid_grant', 'the device code is invalid') };
      if (device.expiresAt <= now) return { reject: new OAuthError('expired_token', 'the device code has expired: start again') };
      if (device.status === 'denied') return { reject: new OAuthError('access_denied', 'the user denied the request') };
      if (device.status === 'pending') {
        // RFC 8628 3.5: polling faster than the interval earns slow_down and an interval 5 seconds longer.
        if (device.lastPolledAt !== null && now - device.lastPolledAt < device.interval) {
          return { reject: new OAuthError('slow_down', `poll at most every ${device.interval + 5} seconds`), interval: device.interval + 5 };
        }
        return { reject: new OAuthError('authorization_pending', 'the user has not finished yet') };
      }
      if (!subject?.enabled) return { reject: new OAuthError('invalid_grant', 'the user is disabled') };
      if (device.createdAt < realm.notBefore || device.createdAt < client.notBefore) return { reject: new OAuthError('invalid_grant', 'the device code was revoked') };
      // RFC 8707 2.1, 2.2, as for a code: refused, the device code stays usable (as for every refusal here).
      try {
        audience = grantResources(resources, device.resources, client);
      } catch (err) {
        if (err instanceof OAuthError) return { reject: err };
        throw err;
      }
      const maxExpiresAt = now + realm.refreshMaxLifetime;
      const chainId = randomId();
      // An approved device code has its user and session (DeviceRepository.approve sets them together).
      const bound = chainBinding(client, dpopJkt);
      const chain = { chainId, clientId: device.clientId, userId: device.userId!, sessionId: device.sessionId!, scopes: device.scopes, chainMaxExpiresAt: maxExpiresAt, resources: device.resources, dpopJkt: bound };
      refresh = mintRefreshToken({ realm, keys, issuer, chain, gen: 1, now });
      return { chain: { id: chainId, maxExpiresAt, dpopJkt: bound }, token: refresh };
    }, { ip, storedEventTypes: realm.storedEventTypes });

    switch (outcome.status) {
      case 'not_found':
        throw new OAuthError('invalid_grant', 'the device code is invalid');
      case 'reused':
        throw new OAuthError('invalid_grant', 'the device code has already been used');
      case 'rejected':
        throw outcome.reason;
      case 'issued':
        services.audit.counter.count(realm.id, 'DEVICE_TO_TOKEN', 'success');
        return buildTokenResponse(services, { realm, client, resources: audience, chain: outcome.chain, subject: outcome.subject, scopes: outcome.chain.scopes, refresh: refresh!, now, dpopJkt });
    }
  },
};
