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

let hashesStarted = 0;
/** How many new hashes this process has started (an import's test checks none starts inside its transaction). */
export function passwordHashesStarted(): number {
  return hashesStarted;
}

export async function hashPassword(password: string): Promise<string> {
  hashesStarted++;
  const a = await lib();
  return limited(() => a.hash(password, OPTIONS));
}

/**
 * The bounds of an argon2 hash Realmgate verifies (one imported from Keycloak, whose defaults are 7168
 * KiB, 5 passes, 1 lane, a 32-byte hash): memory in KiB, passes, lanes and the hash's length, each
 * bounded, and memory x passes (the blocks one verification fills) no more than four passes over the
 * largest memory, so that no hash can make one login take gigabytes of memory or minutes of CPU.
 */
export const ARGON2_BOUNDS = { memory: 262_144, iterations: 100, parallelism: 16, work: 4 * 262_144, hashLength: { min: 4, max: 1024 } } as const;

/** Why an argon2 hash with these parameters is not verified, or undefined when it is within ARGON2_BOUNDS. */
export function argon2CostProblem(memory: number, iterations: number, parallelism: number, hashLength: number): string | undefined {
  const b = ARGON2_BOUNDS;
  if (!Number.isSafeInteger(memory) || memory < 1 || memory > b.memory) return `argon2 memory ${memory} is out of range (1 to ${b.memory} KiB)`;
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > b.iterations) return `argon2 iterations ${iterations} is out of range (1 to ${b.iterations})`;
  if (!Number.isSafeInteger(parallelism) || parallelism < 1 || parallelism > b.parallelism) return `argon2 parallelism ${parallelism} is out of range (1 to ${b.parallelism})`;
  // RFC 9106 3.1: the memory is at least 8 KiB per lane; a hash made otherwise can never verify.
  if (memory < 8 * parallelism) return `argon2 memory ${memory} is less than 8 KiB per lane (parallelism ${parallelism}): no such hash can be verified`;
  if (memory * iterations > b.work) return `argon2 memory ${memory} KiB x ${iterations} iterations is more work than ${b.work} KiB a login`;
  if (hashLength < b.hashLength.min || hashLength > b.hashLength.max) return `the argon2 hash has ${hashLength} bytes (${b.hashLength.min} to ${b.hashLength.max})`;
  return undefined;
}

const PHC_PARAMS = /^\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$[A-Za-z0-9+/]*\$([A-Za-z0-9+/]*)$/;

/** Why a stored argon2 PHC string is not verified (see argon2CostProblem), or undefined. */
export function argon2PhcProblem(stored: string): string | undefined {
  const m = PHC_PARAMS.exec(stored);
  if (!m) return 'the argon2 PHC string is malformed';
  return argon2CostProblem(Number(m[1]), Number(m[2]), Number(m[3]), Math.floor((m[4]!.length * 3) / 4));
}

/**
 * Verifies a password against a stored hash: Realmgate's argon2id, any other PHC argon2 string
 * (argon2i/argon2d, version 1.0 or 1.3, as imported from Keycloak), or an imported `$kc-pbkdf2…` hash.
 */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    if (isPbkdf2Hash(stored)) return await limited(() => verifyPbkdf2(stored, password));
    // A hash stored before these bounds existed is not verified either: no login may cost more.
    if (argon2PhcProblem(stored)) return false;
    const a = await lib();
    return await limited(() => a.verify(stored, password));
  } catch (err) {
    if (err instanceof PasswordHashingBusy) throw err;
    return false;
  }
}

/** A user without a usable password: no password verifies against it (it is not a valid hash). */
export const NO_PASSWORD_HASH = '!no-password';

/**
 * Whether a stored value is a password at all: users without one (created by the admin API without a
 * credential, imported without one, brokered, federated, service accounts) hold a marker starting with
 * '!' instead, which no hash does and verifyPassword never accepts. Keycloak lists no password
 * credential for such a user.
 */
export function hasPassword(stored: string): boolean {
  return !stored.startsWith('!');
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
