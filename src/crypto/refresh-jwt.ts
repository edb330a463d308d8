import crypto from 'node:crypto';
import { safeEqual, randomId } from './random.js';
import { openPrivateJwk, sealPrivateJwk } from './key-encryption.js';
import type { HmacKey } from '../storage/repos/hmac-keys.js';

/**
 * Refresh tokens are compact JWS signed with the realm's HMAC key, HS512 (as Keycloak does), so that
 * Keycloak's clients can decode them and a malformed or foreign token is refused before any database
 * access (a forged signature is found out by the refresh grant: see decodeRefreshJwt).
 * Signing and verification use node:crypto directly rather than jose: the token is minted inside the
 * synchronous decision of the rotation transaction (its hash is stored there), and jose's HMAC is async.
 * The tests verify these tokens with jose as an independent check.
 */
export const REFRESH_ALG = 'HS512';

/** 512 random bits: HS512's full block strength (RFC 7518 3.2 asks for at least the hash size). */
const SECRET_BYTES = 64;

/** The claims of a refresh token (contract: Keycloak's claims plus the chain and its generation). */
export interface RefreshClaims {
  iss: string;
  aud: string;
  sub: string;
  typ: 'Refresh' | 'Offline';
  azp: string;
  sid: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  /** The refresh chain (offline session) this token belongs to. */
  chain: string;
  /** 1 for the chain's first token, +1 per rotation. */
  gen: number;
  /** RFC 8707 2.1: the resources the grant is bound to (absent: none), carried from token to token. */
  resource?: string[];
  /** RFC 9449 5: the DPoP key a public client's chain is bound to (absent: none), carried from token to token. */
  cnf?: { jkt: string };
}

/** The realm's HMAC keys, imported: the newest active one signs, any of them verifies (by kid). */
export interface RefreshKeys {
  signer: { kid: string; key: crypto.KeyObject; header: string };
  byKid: ReadonlyMap<string, crypto.KeyObject>;
}

export function generateHmacKey(realmId: string, now: number): HmacKey {
  const kid = randomId();
  const k = crypto.randomBytes(SECRET_BYTES).toString('base64url');
  return {
    kid,
    realmId,
    alg: REFRESH_ALG,
    secretJwk: sealPrivateJwk(JSON.stringify({ kty: 'oct', k, kid, alg: REFRESH_ALG })),
    status: 'active',
    createdAt: now,
  };
}

/** Opens and imports the realm's HMAC keys; undefined when it has no active one. */
export function importHmacKeys(keys: readonly HmacKey[]): RefreshKeys | undefined {
  const byKid = new Map<string, crypto.KeyObject>();
  let signer: RefreshKeys['signer'] | undefined;
  for (const k of keys) {
    const jwk = JSON.parse(openPrivateJwk(k.secretJwk)) as { k?: unknown };
    if (typeof jwk.k !== 'string') throw new Error(`HMAC key ${k.kid} is malformed`);
    const key = crypto.createSecretKey(Buffer.from(jwk.k, 'base64url'));
    byKid.set(k.kid, key);
    // Keys come newest first: the first active one signs.
    if (!signer && k.status === 'active') signer = { kid: k.kid, key, header: b64json({ alg: REFRESH_ALG, typ: 'JWT', kid: k.kid }) };
  }
  return signer ? { signer, byKid } : undefined;
}

function b64json(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

function mac(key: crypto.KeyObject, signingInput: string): string {
  return crypto.createHmac('sha512', key).update(signingInput).digest('base64url');
}

/** The compact JWS of the claims (RFC 7515 7.1), signed by the realm's active HMAC key. */
export function signRefreshJwt(keys: RefreshKeys, claims: RefreshClaims): string {
  const input = `${keys.signer.header}.${b64json(claims)}`;
  return `${input}.${mac(keys.signer.key, input)}`;
}

const MAX_LENGTH = 8192;

function parseJson(segment: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): v is string => typeof v === 'string';
const int = (v: unknown): v is number => Number.isSafeInteger(v);
/** A string a token of ours can hold in a claim that reaches the database: no NUL (PostgreSQL refuses it in text). */
const text = (v: unknown): v is string => typeof v === 'string' && !v.includes('\0');
/** The largest generation whose successor fits the chain's 32-bit generation column. */
const MAX_GENERATION = 2 ** 31 - 2;

export type RefreshVerdict = { ok: true; claims: RefreshClaims } | { ok: false; expired: boolean };

/** A refresh token read without its signature checked: `signatureValid` checks it (once). */
export type RefreshDecoded = { ok: true; claims: RefreshClaims; expired: boolean; signatureValid: () => boolean } | { ok: false };

const NOT_A_TOKEN: RefreshDecoded = { ok: false };

/**
 * Everything verifyRefreshJwt checks but the signature: the shape, a key of the realm named in the header,
 * the issuer and audience, every claim's type, and whether it has expired (unless `now` is undefined).
 * The claims are not to be trusted until `signatureValid()` holds or something else proves the token is
 * one this server issued (the refresh grant: its hash is the chain's current token hash).
 */
export function decodeRefreshJwt(keys: RefreshKeys, token: string, opts: { issuer: string; now: number | undefined }): RefreshDecoded {
  if (token.length > MAX_LENGTH) return NOT_A_TOKEN;
  const d1 = token.indexOf('.');
  const d2 = token.indexOf('.', d1 + 1);
  if (d1 < 0 || d2 < 0 || token.includes('.', d2 + 1)) return NOT_A_TOKEN;
  const h = token.slice(0, d1);
  const p = token.slice(d1 + 1, d2);
  let key: crypto.KeyObject | undefined;
  // The active key's header, byte for byte as it is minted, needs no parsing.
  if (h === keys.signer.header) key = keys.signer.key;
  else {
    const header = parseJson(h);
    if (!header || header.alg !== REFRESH_ALG || !str(header.kid)) return NOT_A_TOKEN;
    key = keys.byKid.get(header.kid);
  }
  if (!key) return NOT_A_TOKEN;
  const c = parseJson(p);
  if (!c) return NOT_A_TOKEN;
  if (c.iss !== opts.issuer || c.aud !== opts.issuer || (c.typ !== 'Refresh' && c.typ !== 'Offline')) return NOT_A_TOKEN;
  if (!text(c.sub) || !str(c.azp) || !text(c.sid) || !text(c.scope) || !str(c.jti) || !text(c.chain)) return NOT_A_TOKEN;
  if (!int(c.iat) || !int(c.exp) || !int(c.gen) || c.gen < 1 || c.gen > MAX_GENERATION) return NOT_A_TOKEN;
  if (c.resource !== undefined && !(Array.isArray(c.resource) && c.resource.length > 0 && c.resource.length <= 20 && c.resource.every(str))) return NOT_A_TOKEN;
  if (c.cnf !== undefined && !(typeof c.cnf === 'object' && c.cnf !== null && text((c.cnf as { jkt?: unknown }).jkt))) return NOT_A_TOKEN;
  const signingKey = key;
  let valid: boolean | undefined;
  return {
    ok: true,
    claims: c as unknown as RefreshClaims,
    expired: opts.now !== undefined && c.exp <= opts.now,
    // Comparing the base64url text also refuses a non-canonical encoding of the right signature.
    signatureValid: () => (valid ??= safeEqual(token.slice(d2 + 1), mac(signingKey, token.slice(0, d2)))),
  };
}

/**
 * Verifies a refresh token without touching the database: the HS512 signature by one of the realm's
 * keys (compared in constant time), the issuer and audience (the realm), the shape of every claim, and
 * the expiry unless `now` is undefined (revocation accepts an expired token). A token whose signature
 * does not verify is invalid whatever its claims say (expired or not).
 */
export function verifyRefreshJwt(keys: RefreshKeys, token: string, opts: { issuer: string; now: number | undefined }): RefreshVerdict {
  const d = decodeRefreshJwt(keys, token, opts);
  if (!d.ok || !d.signatureValid()) return { ok: false, expired: false };
  return d.expired ? { ok: false, expired: true } : { ok: true, claims: d.claims };
}

/**
 * Refresh tokens issued before they were JWTs: 256 random bits, base64url (43 characters). They stay
 * valid after an upgrade (looked up by hash, as before) until they are rotated into JWTs or expire, so
 * that an upgrade does not log every client out. Nothing else reaches the database unsigned.
 */
export function isLegacyRefreshToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
