import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Store } from '../../src/storage/store.js';
import type { OtpAlgorithm, User } from '../../src/storage/types.js';
import { enrollOtp, OTP_POLICY } from '../../src/admin/operations/otp.js';
import { hotp, timeStep } from '../../src/crypto/totp.js';

/**
 * Independent oracles for one-time passwords: Debian's oathtool computes codes (RFC 6238), zbarimg reads
 * QR codes from a screenshot. .ci/run installs both (apt packages oathtool, zbar-tools).
 */
export const OATHTOOL = '/usr/bin/oathtool';
export const ZBARIMG = '/usr/bin/zbarimg';
export const OTP_TOOLS_MISSING = !fs.existsSync(OATHTOOL) || !fs.existsSync(ZBARIMG) ? `${OATHTOOL} or ${ZBARIMG} is not installed (apt-get install oathtool zbar-tools)` : undefined;

/** The TOTP code oathtool computes for a base32 key at a moment (seconds), with Keycloak's defaults unless told. */
export function oathtoolCode(base32Key: string, atSeconds: number, o: { digits?: number; algorithm?: 'sha1' | 'sha256' | 'sha512'; period?: number } = {}): string {
  const args = [`--totp=${o.algorithm ?? 'sha1'}`, '-b', '-d', String(o.digits ?? 6), '-s', `${o.period ?? 30}s`, '-N', `@${Math.floor(atSeconds)}`, base32Key];
  return execFileSync(OATHTOOL, args, { encoding: 'utf8' }).trim();
}

/** The text of the QR code in a PNG image, as zbarimg reads it. */
export function readQr(png: Buffer): string {
  const out = execFileSync(ZBARIMG, ['--quiet', '--raw', '-'], { input: png, encoding: 'utf8' });
  return out.trim();
}

/**
 * Sets up an authenticator for the user the way a user does (enrollOtp: the key and the current code it
 * gives), and returns its key. Time steps are claimed once: two set-ups in one step are fine (each key has
 * its own credential). `atSeconds`: the server's time when it has a manual clock.
 */
export async function enrollTestOtp(store: Store, user: User, label?: string, atSeconds?: number): Promise<Buffer> {
  const key = randomBytes(20);
  // A server with a manual clock: its time, or the step claimed here and the one the test types later
  // are read off two clocks (the real one runs on while the manual one stands).
  const t = atSeconds ?? Math.floor(Date.now() / 1000);
  const code = hotp(key, timeStep(t, OTP_POLICY.period), OTP_POLICY.digits, OTP_POLICY.algorithm);
  const refused = await enrollOtp(store, { user, key, code, nowSeconds: t, ...(label !== undefined ? { label } : {}) });
  if (refused) throw new Error(refused);
  return key;
}

/** Whether Debian's oathtool (package oathtool) is installed: the independent oracle of TOTP codes. */
export function hasOathtool(): boolean {
  try {
    execFileSync(OATHTOOL, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const OATH_HASH: Record<OtpAlgorithm, string> = { HmacSHA1: 'sha1', HmacSHA256: 'sha256', HmacSHA512: 'sha512' };

/** The TOTP code oathtool computes at `unixSeconds` for a key given as bytes, or as base32 text (oathtool decodes it itself). */
export function oathtoolCodeWith(key: Buffer | { base32: string }, o: { algorithm: OtpAlgorithm; digits: number; period: number }, unixSeconds: number): string {
  const at = new Date(unixSeconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const secret = Buffer.isBuffer(key) ? [key.toString('hex')] : ['-b', key.base32];
  return execFileSync(OATHTOOL, [`--totp=${OATH_HASH[o.algorithm]}`, '-d', String(o.digits), '-s', `${o.period}s`, '-N', at, ...secret], { encoding: 'utf8' }).trim();
}
