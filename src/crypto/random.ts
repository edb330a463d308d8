import crypto from 'node:crypto';

// Random bytes are drawn from the CSPRNG 4 KiB at a time and each byte is handed out once: one call
// into OpenSSL per ~100 tokens instead of one per token (the refresh hot path draws two).
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function randomSlice(bytes: number): Buffer {
  if (bytes > POOL_SIZE) return crypto.randomBytes(bytes);
  if (offset + bytes > pool.length) {
    pool = crypto.randomFillSync(Buffer.allocUnsafe(POOL_SIZE));
    offset = 0;
  }
  const out = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return out;
}

/** 256 bits of randomness, base64url (43 characters): codes, refresh tokens, session secrets. */
export function randomToken(bytes = 32): string {
  return randomSlice(bytes).toString('base64url');
}

export function randomId(): string {
  return crypto.randomUUID();
}

/**
 * SHA-256, base64url. node:crypto's one-shot `hash` (Node.js 20.12+) costs about half of
 * createHash().update().digest() (no Hash object); the fallback keeps older 20.x working.
 */
export const sha256: (value: string) => string =
  typeof crypto.hash === 'function' ? (value) => crypto.hash('sha256', value, 'base64url') : (value) => crypto.createHash('sha256').update(value).digest('base64url');

/** SHA-256 of a high-entropy secret, base64url: what the database stores instead of the secret. */
export function tokenHash(value: string): string {
  return sha256(value);
}

/** Constant-time string equality (lengths are compared first; a length is not a secret here). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

let lastMs = 0;
let seq = 0;

/**
 * A time-ordered unique id (milliseconds, a sequence, then randomness), for append-mostly tables such as
 * the audit log: new rows land at the end of the primary-key index instead of at random pages.
 */
export function sortableId(): string {
  const ms = Date.now();
  seq = ms === lastMs ? seq + 1 : 0;
  lastMs = ms;
  return ms.toString(36).padStart(9, '0') + seq.toString(36).padStart(3, '0') + randomToken(9);
}
