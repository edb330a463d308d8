import crypto from 'node:crypto';

/** 256 bits of randomness, base64url (43 characters): codes, refresh tokens, session secrets. */
export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function randomId(): string {
  return crypto.randomUUID();
}

/** SHA-256 of a high-entropy secret, base64url: what the database stores instead of the secret. */
export function tokenHash(value: string): string {
  return crypto.createHash('sha256').update(value).digest('base64url');
}

/** Constant-time string equality (lengths are compared first; a length is not a secret here). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}
