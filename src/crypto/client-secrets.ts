import { hashPassword, verifyPassword } from './passwords.js';
import { randomToken, safeEqual, sha256 } from './random.js';

/**
 * Client secrets are stored only as hashes. A generated secret carries 256 bits of entropy, so one
 * SHA-256 is as strong as any slow hash and keeps the token endpoint fast; a secret chosen by an
 * operator may be weak, so it gets argon2id, and successful verifications are remembered in memory
 * (keyed by the stored hash, so a changed secret is never matched by an old entry).
 */
const SHA_PREFIX = 'sha256$';

export function generateClientSecret(): string {
  return randomToken(32);
}

export async function hashClientSecret(secret: string, opts: { generated: boolean }): Promise<string> {
  if (opts.generated) return SHA_PREFIX + sha256(secret);
  return hashPassword(secret);
}

const verified = new Map<string, number>();
const VERIFIED_TTL_MS = 10 * 60_000;

/**
 * True when one of the presented readings of a secret matches (Basic credentials may be read two ways:
 * RFC 6749 2.3.1 form-decoded, or raw as RFC 7617 sends them). A generated secret is checked against
 * every reading, each in constant time; an argon2id hash at most once per reading (two at most).
 */
export async function verifyClientSecret(stored: string, presented: string | readonly string[]): Promise<boolean> {
  const readings = (typeof presented === 'string' ? [presented] : [...new Set(presented)]).slice(0, 2);
  const shas = readings.map(sha256);
  if (stored.startsWith(SHA_PREFIX)) {
    // Every comparison runs: which reading matched is not visible in the timing.
    const matches = shas.map((sha) => safeEqual(stored.slice(SHA_PREFIX.length), sha));
    return matches.includes(true);
  }
  for (let i = 0; i < readings.length; i++) {
    const key = stored + '\0' + shas[i];
    const until = verified.get(key);
    if (until !== undefined && until > Date.now()) return true;
    if (await verifyPassword(stored, readings[i]!)) {
      if (verified.size > 10_000) verified.clear();
      verified.set(key, Date.now() + VERIFIED_TTL_MS);
      return true;
    }
  }
  return false;
}
