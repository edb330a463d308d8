import type { WebAuthnPolicy } from '../storage/types.js';
import { COSE_ALGORITHMS, type CoseAlgorithmName } from '../crypto/cose-key.js';
import { ValidationError } from './validation.js';

/**
 * Keycloak's webAuthnPolicy* realm settings (the two-factor policy; the Passwordless ones are not
 * offered yet): their defaults as a Keycloak 26 export writes them, reading from a representation, and
 * writing back. Stored as JSON of the fields that differ from the defaults.
 */

export const WEBAUTHN_POLICY_DEFAULTS: WebAuthnPolicy = {
  rpEntityName: 'keycloak',
  signatureAlgorithms: ['ES256'],
  rpId: '',
  attestationConveyancePreference: 'not specified',
  authenticatorAttachment: 'not specified',
  requireResidentKey: 'not specified',
  userVerificationRequirement: 'not specified',
  createTimeout: 0,
  avoidSameAuthenticatorRegister: false,
  acceptableAaguids: [],
  extraOrigins: [],
};

const CHOICES = {
  attestationConveyancePreference: ['not specified', 'none', 'indirect', 'direct', 'enterprise'],
  authenticatorAttachment: ['not specified', 'platform', 'cross-platform'],
  requireResidentKey: ['not specified', 'Yes', 'No'],
  userVerificationRequirement: ['not specified', 'required', 'preferred', 'discouraged'],
} as const;

/** Keycloak's algorithm names Realmgate verifies (ES256, RS256, EdDSA); Keycloak's others (ES384, RS1, ...) are refused. */
export const WEBAUTHN_ALGORITHMS = Object.keys(COSE_ALGORITHMS) as CoseAlgorithmName[];

/** The stored JSON read leniently (unknown or broken fields: the default). */
export function storedWebAuthnPolicy(json: string | null | undefined): WebAuthnPolicy {
  let v: unknown;
  try {
    v = JSON.parse(json ?? '{}');
  } catch {
    v = {};
  }
  try {
    return { ...WEBAUTHN_POLICY_DEFAULTS, ...readWebAuthnPolicy(v && typeof v === 'object' ? (v as Record<string, unknown>) : {}, '') };
  } catch {
    return WEBAUTHN_POLICY_DEFAULTS;
  }
}

/** The JSON to store: only what differs from the defaults. */
export function webAuthnPolicyJson(p: WebAuthnPolicy): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p) as [keyof WebAuthnPolicy, unknown][]) {
    if (JSON.stringify(v) !== JSON.stringify(WEBAUTHN_POLICY_DEFAULTS[k])) out[k] = v;
  }
  return JSON.stringify(out);
}

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

/**
 * The policy fields a body carries, named `${prefix}RpEntityName` etc. (Keycloak's realm
 * representation: prefix 'webAuthnPolicy'); absent or null: unchanged. Wrong types and values are a
 * ValidationError naming the field.
 */
export function readWebAuthnPolicy(body: Record<string, unknown>, prefix = 'webAuthnPolicy'): Partial<WebAuthnPolicy> {
  const name = (k: string): string => (prefix === '' ? k : `${prefix}${k[0]!.toUpperCase()}${k.slice(1)}`);
  const get = (k: keyof WebAuthnPolicy): unknown => body[name(k)];
  const out: Partial<WebAuthnPolicy> = {};
  const str = (k: 'rpEntityName' | 'rpId', max: number): void => {
    const v = get(k);
    if (v === undefined || v === null) return;
    if (typeof v !== 'string' || v.length > max || /[\x00-\x1f\x7f]/.test(v)) throw new ValidationError(`${name(k)} must be a string of at most ${max} characters`);
    out[k] = v.trim();
  };
  str('rpEntityName', 255);
  str('rpId', 253);
  if (out.rpId && !/^[A-Za-z0-9.-]+$/.test(out.rpId)) throw new ValidationError(`${name('rpId')} must be a host name (a registrable domain suffix of AUTH_URL's host), or empty`);
  for (const k of Object.keys(CHOICES) as (keyof typeof CHOICES)[]) {
    const v = get(k);
    if (v === undefined || v === null) continue;
    // Keycloak writes "not specified"; an empty string means the same.
    const value = v === '' ? 'not specified' : v;
    if (typeof value !== 'string' || !(CHOICES[k] as readonly string[]).includes(value)) throw new ValidationError(`${name(k)} must be one of ${CHOICES[k].map((c) => JSON.stringify(c)).join(', ')}`);
    (out as Record<string, string>)[k] = value;
  }
  const timeout = get('createTimeout');
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout !== 'number' || !Number.isSafeInteger(timeout) || timeout < 0 || timeout > 31_536) throw new ValidationError(`${name('createTimeout')} must be a whole number of seconds, 0 to 31536`);
    out.createTimeout = timeout;
  }
  const avoid = get('avoidSameAuthenticatorRegister');
  if (avoid !== undefined && avoid !== null) {
    if (typeof avoid !== 'boolean') throw new ValidationError(`${name('avoidSameAuthenticatorRegister')} must be true or false`);
    out.avoidSameAuthenticatorRegister = avoid;
  }
  const list = (k: 'signatureAlgorithms' | 'acceptableAaguids' | 'extraOrigins', ok: (s: string) => boolean, what: string): void => {
    const v = get(k);
    if (v === undefined || v === null) return;
    if (!Array.isArray(v) || v.length > 50 || !v.every((s) => typeof s === 'string' && ok(s))) throw new ValidationError(`${name(k)} must be a list of ${what}`);
    out[k] = [...new Set(v as string[])];
  };
  list('signatureAlgorithms', (s) => (WEBAUTHN_ALGORITHMS as string[]).includes(s), `algorithms Realmgate verifies (${WEBAUTHN_ALGORITHMS.join(', ')})`);
  if (out.signatureAlgorithms && out.signatureAlgorithms.length === 0) throw new ValidationError(`${name('signatureAlgorithms')} must name at least one algorithm`);
  list('acceptableAaguids', (s) => /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s), 'AAGUIDs (UUIDs)');
  if (out.acceptableAaguids) out.acceptableAaguids = out.acceptableAaguids.map((s) => s.toLowerCase());
  list('extraOrigins', (s) => ORIGIN.test(s) && s.length <= 300, 'origins (scheme://host[:port], no path)');
  return out;
}

/** The policy as Keycloak's realm representation carries it (webAuthnPolicy* fields). */
export function webAuthnPolicyRepresentation(p: WebAuthnPolicy, prefix = 'webAuthnPolicy'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) out[`${prefix}${k[0]!.toUpperCase()}${k.slice(1)}`] = v;
  return out;
}

/** Keycloak's prefix of the passwordless policy's fields. */
export const PASSWORDLESS_PREFIX = 'webAuthnPolicyPasswordless';
