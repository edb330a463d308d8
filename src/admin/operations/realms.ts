import type { Store } from '../../storage/store.js';
import type { Realm } from '../../storage/types.js';
import { REALM_DEFAULTS, CODE_LIFETIME_RANGE } from '../../config/defaults.js';
import type { RealmSettings } from '../../storage/repos/realms.js';
import { generateSigningKey, isSigningAlg } from '../../crypto/keystore.js';
import { generateHmacKey } from '../../crypto/refresh-jwt.js';
import { ValidationError, checkName } from '../validation.js';
import { DEFAULT_STORED_EVENT_TYPES, OPTIONAL_EVENT_TYPES, isOptionalEventType } from '../../events/stored-types.js';
import { now, requireRealm } from './common.js';

export function checkRealmSettings(s: Partial<RealmSettings>): void {
  const positive = (name: string, v: number | undefined, max: number): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > max)) throw new ValidationError(`${name} must be a whole number of seconds from 1 to ${max}`);
  };
  if (s.codeLifetime !== undefined && (!Number.isInteger(s.codeLifetime) || s.codeLifetime < CODE_LIFETIME_RANGE.min || s.codeLifetime > CODE_LIFETIME_RANGE.max)) {
    throw new ValidationError(`the code lifetime must be from ${CODE_LIFETIME_RANGE.min} to ${CODE_LIFETIME_RANGE.max} seconds`);
  }
  positive('the access token lifetime', s.accessTokenLifetime, 366 * 86_400);
  positive('the refresh idle lifetime', s.refreshIdleLifetime, 5 * 366 * 86_400);
  positive('the refresh chain maximum', s.refreshMaxLifetime, 10 * 366 * 86_400);
  positive('the SSO session lifetime', s.ssoSessionLifetime, 366 * 86_400);
  positive('the number of login failures', s.maxLoginFailures, 1000);
  positive('the lockout time', s.lockoutSeconds, 86_400);
  positive('the longest lockout time', s.maxLockoutSeconds, 30 * 86_400);
  if (s.signingAlg !== undefined && !isSigningAlg(s.signingAlg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  if (s.refreshGraceSeconds !== undefined && (!Number.isInteger(s.refreshGraceSeconds) || s.refreshGraceSeconds < 0 || s.refreshGraceSeconds > 300)) {
    throw new ValidationError('the refresh grace window must be a whole number of seconds from 0 (off) to 300');
  }
  if (s.refreshGraceMax !== undefined && (!Number.isInteger(s.refreshGraceMax) || s.refreshGraceMax < 1 || s.refreshGraceMax > 100)) {
    throw new ValidationError('the refresh grace maximum must be a whole number from 1 to 100');
  }
  const badType = s.storedEventTypes?.find((t) => !isOptionalEventType(t));
  if (badType !== undefined) throw new ValidationError(`${JSON.stringify(badType)} is not an optional event type: choose from ${OPTIONAL_EVENT_TYPES.join(', ')} (failures, logins, consents, reuse and revocations are always stored)`);
  if (s.accessTokenFormat !== undefined && s.accessTokenFormat !== 'jwt' && s.accessTokenFormat !== 'rfc9068') throw new ValidationError('the access token format must be jwt or rfc9068');
}

export async function createRealm(store: Store, input: { id: string; displayName?: string; settings?: Partial<RealmSettings> }): Promise<Realm> {
  checkName('realm name', input.id);
  const settings: RealmSettings = { ...REALM_DEFAULTS, storedEventTypes: [...DEFAULT_STORED_EVENT_TYPES], ...input.settings };
  checkRealmSettings(settings);
  const t = now();
  const realm = await store.realms.create({ id: input.id, displayName: input.displayName ?? null, settings, now: t });
  const alg = isSigningAlg(settings.signingAlg) ? settings.signingAlg : 'RS256';
  await store.keys.insert(await generateSigningKey(realm.id, alg, t));
  await store.hmacKeys.insert(generateHmacKey(realm.id, t));
  return realm;
}


/** Every token issued before `at` (seconds) is refused from now on; 0 clears the policy. */
export async function revokeBefore(store: Store, input: { realmId: string; at: number }): Promise<void> {
  await requireRealm(store, input.realmId);
  if (!Number.isSafeInteger(input.at) || input.at < 0) throw new ValidationError('the time must be a non-negative number of seconds');
  await store.realms.update(input.realmId, { notBefore: input.at });
}
