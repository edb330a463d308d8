import crypto from 'node:crypto';
import type { OtpAlgorithm } from '../storage/types.js';

/**
 * Time-based one-time passwords (RFC 6238, on HOTP of RFC 4226), as authenticator apps (Google
 * Authenticator, FreeOTP, Aegis, 1Password) and Keycloak compute them.
 */

const HASH: Record<OtpAlgorithm, string> = { HmacSHA1: 'sha1', HmacSHA256: 'sha256', HmacSHA512: 'sha512' };
/** The otpauth URI's algorithm parameter (Key Uri Format). */
export const URI_ALGORITHM: Record<OtpAlgorithm, string> = { HmacSHA1: 'SHA1', HmacSHA256: 'SHA256', HmacSHA512: 'SHA512' };

/** RFC 4226 5.3: HOTP(K, C), dynamic truncation, `digits` decimal digits. */
export function hotp(key: Buffer, counter: number, digits: number, algorithm: OtpAlgorithm): string {
  const c = Buffer.alloc(8);
  c.writeBigUInt64BE(BigInt(counter));
  const mac = crypto.createHmac(HASH[algorithm], key).update(c).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** RFC 6238 4.2: the time step of a moment (T = floor((unix time - T0) / X), T0 = 0). */
export function timeStep(nowSeconds: number, period: number): number {
  return Math.floor(nowSeconds / period);
}

/**
 * The time step whose code `code` is, among the current step and `window` steps on each side (RFC 6238
 * 5.2: allow for clock drift and the time it takes to type; Keycloak's look-ahead window, 1 by default);
 * undefined when none matches. Each candidate is compared in constant time.
 */
export function matchTotp(key: Buffer, code: string, nowSeconds: number, o: { period: number; digits: number; algorithm: OtpAlgorithm; window?: number }): number | undefined {
  if (!/^\d+$/.test(code) || code.length !== o.digits) return undefined;
  const current = timeStep(nowSeconds, o.period);
  const window = o.window ?? 1;
  let found: number | undefined;
  for (let step = current - window; step <= current + window; step++) {
    const expected = Buffer.from(hotp(key, step, o.digits, o.algorithm));
    // Every candidate is computed and compared, so the time taken says nothing of which one matched.
    if (crypto.timingSafeEqual(expected, Buffer.from(code)) && found === undefined) found = step;
  }
  return found;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 6 base32, without padding (as the otpauth URI's secret and authenticator apps take it). */
export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Base32 text to bytes (case, spaces and padding ignored); undefined when it is not base32. */
export function fromBase32(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  if (!/^[A-Z2-7]*$/.test(clean)) return undefined;
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    value = (value << 5) | BASE32.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/**
 * The otpauth URI an authenticator app reads from the QR code (Google Authenticator's Key Uri Format):
 * otpauth://totp/<issuer>:<account>?secret=...&issuer=...&algorithm=...&digits=...&period=...
 */
export function otpauthUri(o: { issuer: string; account: string; key: Buffer; algorithm: OtpAlgorithm; digits: number; period: number }): string {
  const label = `${encodeURIComponent(o.issuer)}:${encodeURIComponent(o.account)}`;
  const q = new URLSearchParams({ secret: base32(o.key), issuer: o.issuer, algorithm: URI_ALGORITHM[o.algorithm], digits: String(o.digits), period: String(o.period) });
  return `otpauth://totp/${label}?${q.toString().replace(/\+/g, '%20')}`;
}
