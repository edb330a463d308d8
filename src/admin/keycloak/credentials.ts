import { formatPbkdf2, isPbkdf2Kind, parsePbkdf2, pbkdf2CostProblem } from '../../crypto/pbkdf2-hashes.js';
import { argon2CostProblem, argon2PhcProblem } from '../../crypto/passwords.js';

/**
 * Keycloak's CredentialRepresentation (a password): `secretData` and `credentialData` are JSON strings;
 * `value` is a plain password (import only) or, from a third-party argon2 provider, a PHC string; the
 * deprecated shape has hashedSaltedValue, salt, hashIterations and algorithm at the top.
 */
export interface KeycloakCredential {
  id?: string;
  type?: string;
  userLabel?: string;
  createdDate?: number;
  secretData?: string;
  credentialData?: string;
  priority?: number;
  value?: string;
  temporary?: boolean;
  hashedSaltedValue?: string;
  salt?: string;
  hashIterations?: number;
  algorithm?: string;
}

/** What a credential becomes: a hash for the password column, a plain password to hash, or why not. */
export type ImportedCredential = { hash: string; algorithm: string } | { plain: string } | { unusable: string };

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const ARGON2_TYPES = new Set(['id', 'i', 'd']);

export function parseJson(text: unknown, what: string): Record<string, unknown> {
  if (typeof text !== 'string') throw new Error(`${what} is missing`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

function base64(v: unknown, what: string): Buffer {
  if (typeof v !== 'string' || v === '' || !B64.test(v)) throw new Error(`${what} is not base64`);
  return Buffer.from(v, 'base64');
}

/** Keycloak writes argon2 parameters as string arrays (`{"memory":["7168"]}`); older files may use plain values. */
function param(params: Record<string, unknown>, key: string, fallback: string): string {
  const v = params[key];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined || one === null ? fallback : String(one);
}

/** A whole number written as digits (Keycloak's argon2 parameters are strings); its range is checked by the caller. */
function wholeNumber(v: string, what: string): number {
  if (!/^\d{1,10}$/.test(v)) throw new Error(`${what} ${JSON.stringify(v)} is not a whole number`);
  return Number(v);
}

/** A PHC argon2 string kept as it is, once its cost parameters are within ARGON2_BOUNDS. */
function checkedPhc(value: string): string {
  if (!/^\$argon2(?:id|i|d)\$v=(?:16|19)\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$[A-Za-z0-9+/]{11,}\$[A-Za-z0-9+/]{6,}$/.test(value)) throw new Error('the argon2 PHC string is malformed');
  const problem = argon2PhcProblem(value);
  if (problem) throw new Error(problem);
  return value;
}

/** hashIterations: a JSON number (Keycloak writes one); a string or anything else is the wrong type, not a count out of range. */
function iterationCount(v: unknown): number {
  if (v === undefined) throw new Error('hashIterations is missing');
  if (typeof v !== 'number') throw new Error(`hashIterations must be a number, not ${v === null ? 'null' : typeof v === 'object' ? (Array.isArray(v) ? 'a list' : 'an object') : `a ${typeof v}`}`);
  if (!Number.isSafeInteger(v)) throw new Error(`hashIterations ${v} is not a whole number`);
  return v;
}

const noPad = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');

function hashFrom(algorithm: string, iterations: unknown, salt: Buffer, value: Buffer, params: Record<string, unknown>): string {
  if (isPbkdf2Kind(algorithm)) {
    const n = iterationCount(iterations);
    const problem = pbkdf2CostProblem(algorithm, n, value.length);
    if (problem) throw new Error(problem);
    return formatPbkdf2({ kind: algorithm, iterations: n, salt, hash: value });
  }
  if (algorithm === 'argon2') {
    // Keycloak 25+ defaults: argon2id, version 1.3, 7168 KiB, 5 iterations, 1 lane, 32-byte hash.
    const type = param(params, 'type', 'id');
    if (!ARGON2_TYPES.has(type)) throw new Error(`argon2 type ${JSON.stringify(type)} is not id, i or d`);
    const version = param(params, 'version', '1.3');
    if (version !== '1.3' && version !== '1.0') throw new Error(`argon2 version ${JSON.stringify(version)} is not 1.3 or 1.0`);
    // Bounds well above Keycloak's defaults (ARGON2_BOUNDS), so that no imported hash can make one
    // login take gigabytes of memory or minutes of CPU.
    const m = wholeNumber(param(params, 'memory', '7168'), 'argon2 memory');
    const p = wholeNumber(param(params, 'parallelism', '1'), 'argon2 parallelism');
    const t = iterations === undefined ? 5 : iterationCount(iterations);
    if (salt.length < 8) throw new Error('the argon2 salt is shorter than 8 bytes');
    const problem = argon2CostProblem(m, t, p, value.length);
    if (problem) throw new Error(problem);
    // The PHC string @node-rs/argon2 verifies; version 1.3 is 19 (0x13), 1.0 is 16 (0x10).
    return `$argon2${type}$v=${version === '1.3' ? 19 : 16}$m=${m},t=${t},p=${p}$${noPad(salt)}$${noPad(value)}`;
  }
  throw new Error(`unknown hash algorithm ${JSON.stringify(algorithm)}`);
}

/**
 * A Keycloak password credential as Realmgate stores it. Never guesses: a credential with an unknown
 * algorithm, or missing salt or iterations, is unusable and the caller reports it.
 */
export function importCredential(c: KeycloakCredential): ImportedCredential {
  try {
    if (typeof c.value === 'string' && c.value !== '') {
      // A third-party argon2 provider for Keycloak before 25 keeps a PHC string in `value`.
      if (/^\$argon2(id|i|d)\$/.test(c.value)) return { hash: checkedPhc(c.value), algorithm: 'argon2' };
      return { plain: c.value };
    }
    if (typeof c.hashedSaltedValue === 'string') {
      const algorithm = c.algorithm ?? 'pbkdf2-sha256';
      if (typeof c.salt !== 'string') throw new Error('the salt is missing');
      return { hash: hashFrom(algorithm, c.hashIterations, base64(c.salt, 'salt'), base64(c.hashedSaltedValue, 'hashedSaltedValue'), {}), algorithm };
    }
    const secret = parseJson(c.secretData, 'secretData');
    const data = parseJson(c.credentialData, 'credentialData');
    const algorithm = data.algorithm;
    if (typeof algorithm !== 'string') throw new Error('credentialData has no algorithm');
    const params = data.additionalParameters && typeof data.additionalParameters === 'object' ? (data.additionalParameters as Record<string, unknown>) : {};
    if (typeof secret.value === 'string' && /^\$argon2(id|i|d)\$/.test(secret.value)) return { hash: checkedPhc(secret.value), algorithm };
    return { hash: hashFrom(algorithm, data.hashIterations, base64(secret.salt, 'salt'), base64(secret.value, 'the hash value'), params), algorithm };
  } catch (err) {
    return { unusable: (err as Error).message };
  }
}

/**
 * A stored hash as a Keycloak password credential, when Keycloak knows its kind: our argon2 PHC strings
 * become Keycloak `argon2` credentials, imported PBKDF2 hashes their original kind. Otherwise undefined.
 */
export function exportCredential(stored: string, createdDate: number): KeycloakCredential | undefined {
  const pb = parsePbkdf2(stored);
  if (pb) {
    return {
      type: 'password',
      createdDate,
      secretData: JSON.stringify({ value: pb.hash.toString('base64'), salt: pb.salt.toString('base64'), additionalParameters: {} }),
      credentialData: JSON.stringify({ hashIterations: pb.iterations, algorithm: pb.kind, additionalParameters: {} }),
    };
  }
  const m = /^\$argon2(id|i|d)\$v=(16|19)\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored);
  if (!m) return undefined;
  const hash = Buffer.from(m[7]!, 'base64');
  return {
    type: 'password',
    createdDate,
    secretData: JSON.stringify({ value: hash.toString('base64'), salt: Buffer.from(m[6]!, 'base64').toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({
      hashIterations: Number(m[4]),
      algorithm: 'argon2',
      additionalParameters: { hashLength: [String(hash.length)], memory: [m[3]], type: [m[1]], version: [m[2] === '19' ? '1.3' : '1.0'], parallelism: [m[5]] },
    }),
  };
}
