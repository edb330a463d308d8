import crypto from 'node:crypto';

/**
 * Signing keys at rest: private JWKs are sealed with AES-256-GCM under a key derived (scrypt, a random
 * salt per key) from REALMGATE_KEY_SECRET, or when it is unset from the key file (src/crypto/key-file.ts),
 * so a copy of the database alone cannot sign tokens. Stored as enc:v1:<salt>:<iv>:<tag>:<ciphertext>,
 * each base64url.
 */
const PREFIX = 'enc:v1:';
/**
 * enc:v2: the same, under a key derived with HKDF-SHA256 instead of scrypt. Used for the key file's
 * secret, 256 random bits that need no stretching: scrypt would cost tens of milliseconds and 32 MiB per
 * key at every start (a passphrase in REALMGATE_KEY_SECRET still gets scrypt, v1).
 */
const PREFIX_V2 = 'enc:v2:';

export class KeySecretError extends Error {}

let fileSecret: { value: string; path: string } | undefined;
let sealingRequired = false;

/**
 * From now on, sealing without a secret fails instead of returning the key in clear. The command line
 * calls it: a command that creates keys must open the secret first (withStore's `keys: true`), and one
 * that forgot fails before it stores a private key in clear.
 */
export function requireSealing(): void {
  sealingRequired = true;
}

/** Whether a new private key can be stored now: sealed under an open secret, or (outside the CLI) in clear. */
export function canStoreKeys(): boolean {
  return secret() !== undefined || !sealingRequired;
}

/** The secret read from (or written to) the key file, used when REALMGATE_KEY_SECRET is unset. */
export function useKeyFileSecret(value: string | undefined, path = ''): void {
  fileSecret = value === undefined ? undefined : { value, path };
}

export function envKeySecret(): string | undefined {
  const s = process.env.REALMGATE_KEY_SECRET;
  return s === undefined || s === '' ? undefined : s;
}

function secret(): string | undefined {
  return envKeySecret() ?? fileSecret?.value;
}

function secretName(): string {
  return envKeySecret() !== undefined || !fileSecret ? 'REALMGATE_KEY_SECRET' : `the key file ${fileSecret.path}`;
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX) || stored.startsWith(PREFIX_V2);
}

const derived = new Map<string, Buffer>();

function kek(pass: string, salt: Buffer, version: 1 | 2): Buffer {
  if (version === 2) return Buffer.from(crypto.hkdfSync('sha256', pass, salt, 'realmgate key encryption v2', 32));
  // Keyed by the secret too: a wrong secret must never find the key derived from the right one.
  const id = `${crypto.createHash('sha256').update(pass).digest('base64url')}:${salt.toString('base64url')}`;
  let k = derived.get(id);
  if (!k) {
    k = crypto.scryptSync(pass, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    derived.set(id, k);
  }
  return k;
}

export function sealPrivateJwk(json: string): string {
  const pass = secret();
  if (!pass) {
    if (sealingRequired) throw new KeySecretError('no key-encryption secret is open: refusing to store a private key in clear');
    return json;
  }
  const salt = crypto.randomBytes(16);
  const iv = crypto.randomBytes(12);
  const version = envKeySecret() !== undefined ? 1 : 2;
  const cipher = crypto.createCipheriv('aes-256-gcm', kek(pass, salt, version), iv);
  const ct = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return (version === 1 ? PREFIX : PREFIX_V2) + [salt, iv, cipher.getAuthTag(), ct].map((b) => b.toString('base64url')).join(':');
}

export function openPrivateJwk(stored: string): string {
  if (!isSealed(stored)) return stored;
  const version = stored.startsWith(PREFIX_V2) ? 2 : 1;
  const pass = secret();
  if (!pass) throw new KeySecretError('the signing keys are encrypted: set REALMGATE_KEY_SECRET or restore the key file');
  const [salt, iv, tag, ct] = stored.slice(PREFIX.length).split(':').map((p) => Buffer.from(p, 'base64url'));
  if (!salt || !iv || !tag || !ct) throw new KeySecretError('a stored signing key is malformed');
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', kek(pass, salt, version), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  } catch {
    throw new KeySecretError(`${secretName()} does not open the stored signing keys`);
  }
}

const storedSecrets = new WeakMap<object, Map<string, Promise<Buffer>>>();

/**
 * A deployment-wide secret of 256 random bits kept in the meta table under `name`, sealed like a private
 * key (under REALMGATE_KEY_SECRET or the key file) and shared by every node; read and opened once per
 * process and store. A failed read is not remembered.
 */
export function storedSecret(store: { meta: { getOrCreate(key: string, make: () => string): Promise<string> } }, name: string, make: () => string): Promise<Buffer> {
  let byName = storedSecrets.get(store);
  if (!byName) storedSecrets.set(store, (byName = new Map()));
  let s = byName.get(name);
  if (!s) {
    s = store.meta.getOrCreate(name, () => sealPrivateJwk(make())).then((v) => Buffer.from(openPrivateJwk(v), 'base64url'));
    s.catch(() => byName.delete(name));
    byName.set(name, s);
  }
  return s;
}
