import crypto from 'node:crypto';
import { hashPassword, verifyPassword } from './passwords.js';
import { randomToken, safeEqual } from './random.js';

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
  if (opts.generated) return SHA_PREFIX + crypto.createHash('sha256').update(secret).digest('base64url');
  return hashPassword(secret);
}

const verified = new Map<string, number>();
const VERIFIED_TTL_MS = 10 * 60_000;

export async function verifyClientSecret(stored: string, presented: string): Promise<boolean> {
  const presentedSha = crypto.createHash('sha256').update(presented).digest('base64url');
  if (stored.startsWith(SHA_PREFIX)) return safeEqual(stored.slice(SHA_PREFIX.length), presentedSha);
  const key = stored + '\0' + presentedSha;
  const until = verified.get(key);
  if (until !== undefined && until > Date.now()) return true;
  const ok = await verifyPassword(stored, presented);
  if (ok) {
    if (verified.size > 10_000) verified.clear();
    verified.set(key, Date.now() + VERIFIED_TTL_MS);
  }
  return ok;
}
