import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

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
