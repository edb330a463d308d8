import { pbkdf2, timingSafeEqual } from 'node:crypto';

/**
 * Password hashes moved from Keycloak: PBKDF2 (RFC 8018 5.2) with the PRF Keycloak's provider id
 * names, kept in a self-describing string so the ordinary password column can hold them:
 *   $kc-pbkdf2-sha256$i=27500$<salt, base64>$<derived key, base64>
 * The derived key's length is the stored hash's length (Keycloak used 64 bytes before version 21 and 32
 * after for pbkdf2-sha256), never a constant, within PBKDF2_KEY_LENGTH and MAX_PBKDF2_WORK.
 */
export const PBKDF2_KINDS = { pbkdf2: 'sha1', 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512' } as const;
export type Pbkdf2Kind = keyof typeof PBKDF2_KINDS;

const PREFIX = '$kc-';
/** Keycloak's largest default is 1 300 000 (pbkdf2, version 24+); far above it is a mistake or an attack on our CPU. */
export const MAX_PBKDF2_ITERATIONS = 10_000_000;
/** The derived key's length in bytes: Keycloak writes 20 to 64; a longer key costs a whole PBKDF2 run per block of the digest. */
export const PBKDF2_KEY_LENGTH = { min: 16, max: 512 } as const;
/**
 * The most HMAC computations one verification may cost: PBKDF2 runs its iterations once per block of
 * the digest's length (RFC 8018 5.2), so the work is iterations x blocks, and the bound is the one meant
 * for the iterations alone (Keycloak's pbkdf2 default, 1 300 000 iterations of 4 SHA-1 blocks, is within).
 */
export const MAX_PBKDF2_WORK = MAX_PBKDF2_ITERATIONS;
const DIGEST_BYTES: Record<Pbkdf2Kind, number> = { pbkdf2: 20, 'pbkdf2-sha256': 32, 'pbkdf2-sha512': 64 };

export interface Pbkdf2Hash {
  kind: Pbkdf2Kind;
  iterations: number;
  salt: Buffer;
  hash: Buffer;
}

/**
 * Why a PBKDF2 hash with these parameters is not verified (one verification would cost too much, or the
 * key is too short to mean anything), or undefined when it is within the bounds above.
 */
export function pbkdf2CostProblem(kind: Pbkdf2Kind, iterations: number, keyLength: number): string | undefined {
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_PBKDF2_ITERATIONS) return `hashIterations ${iterations} is out of range (1 to ${MAX_PBKDF2_ITERATIONS})`;
  if (keyLength < PBKDF2_KEY_LENGTH.min) return `the stored hash is too short (${keyLength} bytes, at least ${PBKDF2_KEY_LENGTH.min})`;
  if (keyLength > PBKDF2_KEY_LENGTH.max) return `the stored hash is too long (${keyLength} bytes, at most ${PBKDF2_KEY_LENGTH.max})`;
  const work = iterations * Math.ceil(keyLength / DIGEST_BYTES[kind]);
  if (work > MAX_PBKDF2_WORK) return `${iterations} iterations for a ${keyLength}-byte key cost ${work} HMAC computations a login, more than ${MAX_PBKDF2_WORK}`;
  return undefined;
}

export function isPbkdf2Kind(algorithm: string): algorithm is Pbkdf2Kind {
  return Object.hasOwn(PBKDF2_KINDS, algorithm);
}

export function formatPbkdf2(h: Pbkdf2Hash): string {
  return `${PREFIX}${h.kind}$i=${h.iterations}$${h.salt.toString('base64')}$${h.hash.toString('base64')}`;
}

export function isPbkdf2Hash(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The parts of a stored `$kc-pbkdf2…` string, or undefined when it is not a well-formed one. */
export function parsePbkdf2(stored: string): Pbkdf2Hash | undefined {
  const m = /^\$kc-(pbkdf2(?:-sha256|-sha512)?)\$i=(\d{1,9})\$([A-Za-z0-9+/]*={0,2})\$([A-Za-z0-9+/]+={0,2})$/.exec(stored);
  if (!m) return undefined;
  const kind = m[1] as Pbkdf2Kind;
  const iterations = Number(m[2]);
  const hash = Buffer.from(m[4]!, 'base64');
  // A hash stored before these bounds existed is not verified either: no login may cost more.
  if (pbkdf2CostProblem(kind, iterations, hash.length)) return undefined;
  return { kind, iterations, salt: Buffer.from(m[3]!, 'base64'), hash };
}

function derive(password: string, h: Pbkdf2Hash): Promise<Buffer> {
  // node:crypto's pbkdf2 runs on libuv's thread pool: the event loop keeps serving while it works.
  return new Promise((resolve, reject) =>
    pbkdf2(Buffer.from(password, 'utf8'), h.salt, h.iterations, h.hash.length, PBKDF2_KINDS[h.kind], (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Verifies a password against a `$kc-pbkdf2…` string in constant time; a malformed string never matches. */
export async function verifyPbkdf2(stored: string, password: string): Promise<boolean> {
  const h = parsePbkdf2(stored);
  if (!h) return false;
  const key = await derive(password, h);
  return timingSafeEqual(key, h.hash);
}

/** Hashes as Keycloak would (for tests and round trips): a 16-byte salt as Keycloak's provider uses. */
export async function hashPbkdf2(password: string, kind: Pbkdf2Kind, iterations: number, salt: Buffer, keyLength: number): Promise<string> {
  const key = await derive(password, { kind, iterations, salt, hash: Buffer.alloc(keyLength) });
  return formatPbkdf2({ kind, iterations, salt, hash: key });
}
