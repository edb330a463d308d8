import crypto from 'node:crypto';
import { tokenHash } from '../../crypto/random.js';

// RFC 8628 6.1: consonants only (no vowels, so no words; no look-alikes such as 0/O or 1/I),
// 8 characters: 20^8 ≈ 2^34.6 possibilities against a guessing rate that is limited.
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A new user code, shown as XXXX-XXXX. */
export function generateUserCode(): string {
  let out = '';
  for (let i = 0; i < LENGTH; i++) out += ALPHABET[crypto.randomInt(ALPHABET.length)];
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

/** RFC 8628 6.1: compare case-insensitively, ignoring the dash and spaces the user typed. */
export function normalizeUserCode(input: string): string | undefined {
  const s = input.toUpperCase().replace(/[\s-]/g, '');
  if (s.length !== LENGTH) return undefined;
  for (const c of s) if (!ALPHABET.includes(c)) return undefined;
  return s;
}

export function userCodeHash(normalized: string): string {
  return tokenHash(`user-code:${normalized}`);
}
