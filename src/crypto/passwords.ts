
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

export async function hashPassword(password: string): Promise<string> {
  return (await lib()).hash(password, OPTIONS);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await (await lib()).verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/** Spends the same time as a real verification, so an unknown username is not revealed by timing. */
export async function verifyDummy(password: string): Promise<void> {
  dummy ??= hashPassword('realmgate-dummy-password');
  await verifyPassword(await dummy, password);
}
