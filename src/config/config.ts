import path from 'node:path';
import { SETTINGS } from './defaults.js';

export interface Config {
  port: number;
  host: string;
  authUrl: string;
  appUrl: string;
  databaseUrl: string;
  logLevel: string;
  cacheTtlMs: number;
  /** Slow headers or bodies are cut this long after the request started (see requestTimeouts in app.ts). */
  requestTimeoutMs: number;
  /** Where the key-encryption secret lives when REALMGATE_KEY_SECRET is unset (src/crypto/key-file.ts). */
  keyFile: string;
  sqliteSync: 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function read(env: Env, key: keyof typeof SETTINGS): string | undefined {
  const spec = SETTINGS[key];
  const v = env[spec.env];
  return v === undefined || v === '' ? spec.default : v;
}

function parseBaseUrl(name: string, value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${name} must use http or https`);
  if (u.search || u.hash) throw new ConfigError(`${name} must not have a query or fragment`);
  return u.href.replace(/\/+$/, '');
}

function parseIntSetting(name: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/**
 * The key file sits beside an SQLite database (one directory to back up and to protect) and in ./data
 * for PostgreSQL, whose data lives elsewhere.
 */
function defaultKeyFile(databaseUrl: string): string {
  const file = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : '';
  if (!file || file === ':memory:') return path.join('data', 'realmgate.key');
  const ext = path.extname(file);
  return path.join(path.dirname(file), `${path.basename(file, ext)}.key`);
}

/** Builds the configuration from the environment, with explicit overrides (CLI flags) taking precedence. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? parseIntSetting('PORT', read(env, 'port'), 0, 65535);
  const authUrl = parseBaseUrl('AUTH_URL', overrides.authUrl ?? read(env, 'authUrl') ?? `http://localhost:${port}`);
  const appUrl = parseBaseUrl('APP_URL', overrides.appUrl ?? read(env, 'appUrl') ?? authUrl);
  const sync = (read(env, 'sqliteSync') ?? 'FULL').toUpperCase();
  if (!['FULL', 'NORMAL', 'OFF', 'EXTRA'].includes(sync)) throw new ConfigError('REALMGATE_SQLITE_SYNCHRONOUS must be FULL, NORMAL, EXTRA or OFF');
  const databaseUrl = overrides.databaseUrl ?? read(env, 'databaseUrl') ?? 'sqlite:./data/realmgate.db';
  return {
    port,
    host: overrides.host ?? read(env, 'host') ?? '127.0.0.1',
    authUrl,
    appUrl,
    databaseUrl,
    keyFile: overrides.keyFile ?? read(env, 'keyFile') ?? defaultKeyFile(databaseUrl),
    logLevel: overrides.logLevel ?? read(env, 'logLevel') ?? 'info',
    cacheTtlMs: overrides.cacheTtlMs ?? parseIntSetting('REALMGATE_CACHE_TTL_MS', read(env, 'cacheTtlMs'), 0, 3_600_000),
    requestTimeoutMs: overrides.requestTimeoutMs ?? parseIntSetting('REALMGATE_REQUEST_TIMEOUT_MS', read(env, 'requestTimeoutMs'), 1_000, 600_000),
    sqliteSync: (overrides.sqliteSync ?? sync) as Config['sqliteSync'],
  };
}
