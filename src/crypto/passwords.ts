import { isPbkdf2Hash, verifyPbkdf2 } from './pbkdf2-hashes.js';

// @node-rs/argon2 exports Algorithm as an ambient const enum; 2 is Algorithm.Argon2id.
const ARGON2ID = 2;

// OWASP's argon2id recommendation (19 MiB, 2 iterations, 1 lane). @node-rs/argon2 runs on libuv's
// thread pool, so hashing never blocks the event loop.
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

// Loaded on first use: the token endpoint never needs it, and it costs memory.
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
function lib(): Promise<typeof import('@node-rs/argon2')> {
  return (argon2 ??= import('@node-rs/argon2'));
}

/**
 * At most this many hashes run at once: each holds a libuv thread and 19 MiB, and the token endpoint's
 * RSA signatures need those threads too. Callers beyond the queue's length are refused at once, so a
 * flood of logins cannot stall the server.
 */
export const MAX_RUNNING = 2;
const MAX_WAITING = 64;
let running = 0;
const waiting: Array<() => void> = [];

export class PasswordHashingBusy extends Error {}

async function limited<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_RUNNING) {
    if (waiting.length >= MAX_WAITING) throw new PasswordHashingBusy('too many logins at once');
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export async function hashPassword(password: string): Promise<string> {
  const a = await lib();
  return limited(() => a.hash(password, OPTIONS));
}

/**
 * Verifies a password against a stored hash: Realmgate's argon2id, any other PHC argon2 string
 * (argon2i/argon2d, version 1.0 or 1.3, as imported from Keycloak), or an imported `$kc-pbkdf2…` hash.
 */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    if (isPbkdf2Hash(stored)) return await limited(() => verifyPbkdf2(stored, password));
    const a = await lib();
    return await limited(() => a.verify(stored, password));
  } catch (err) {
    if (err instanceof PasswordHashingBusy) throw err;
    return false;
  }
}

/** The prefix of a hash made with today's OPTIONS; anything else is re-hashed at the next successful login. */
const CURRENT_PREFIX = `$argon2id$v=19$m=${OPTIONS.memoryCost},t=${OPTIONS.timeCost},p=${OPTIONS.parallelism}$`;

/** True when a stored hash is not Realmgate's current argon2id (an imported Keycloak hash, older parameters). */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith(CURRENT_PREFIX);
}

let dummy: Promise<string> | undefined;

/** Spends the same time as a real verification, so an unknown username is not revealed by timing. */
export async function verifyDummy(password: string): Promise<void> {
  dummy ??= hashPassword('realmgate-dummy-password');
  await verifyPassword(await dummy, password);
}
