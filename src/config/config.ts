import { SETTINGS } from './defaults.js';
import { defaultDatabaseUrl } from './data-dir.js';

export interface Config {
  port: number;
  host: string;
  authUrl: string;
  appUrl: string;
  databaseUrl: string;
  logLevel: string;
  cacheTtlMs: number;
  sqliteSync: 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';
  /** REALMGATE_BOOTSTRAP_ADMIN_USERNAME / _PASSWORD, when both are set. */
  bootstrapAdmin?: { username: string; password: string };
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

/** Builds the configuration from the environment, with explicit overrides (CLI flags) taking precedence. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? parseIntSetting('PORT', read(env, 'port'), 0, 65535);
  // A port from a flag is checked here too, so that a bad --port is named as such, not as a bad AUTH_URL.
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`the port must be an integer from 0 to 65535, got ${port}`);
  const authUrl = parseBaseUrl('AUTH_URL', overrides.authUrl ?? read(env, 'authUrl') ?? `http://localhost:${port}`);
  const appUrl = parseBaseUrl('APP_URL', overrides.appUrl ?? read(env, 'appUrl') ?? authUrl);
  const sync = (read(env, 'sqliteSync') ?? 'FULL').toUpperCase();
  if (!['FULL', 'NORMAL', 'OFF', 'EXTRA'].includes(sync)) throw new ConfigError('REALMGATE_SQLITE_SYNCHRONOUS must be FULL, NORMAL, EXTRA or OFF');
  const adminUser = read(env, 'bootstrapAdminUsername');
  const adminPassword = read(env, 'bootstrapAdminPassword');
  if ((adminUser === undefined) !== (adminPassword === undefined)) {
    throw new ConfigError('set both REALMGATE_BOOTSTRAP_ADMIN_USERNAME and REALMGATE_BOOTSTRAP_ADMIN_PASSWORD, or neither');
  }
  const bootstrapAdmin = overrides.bootstrapAdmin ?? (adminUser !== undefined && adminPassword !== undefined ? { username: adminUser, password: adminPassword } : undefined);
  return {
    ...(bootstrapAdmin ? { bootstrapAdmin } : {}),
    port,
    host: overrides.host ?? read(env, 'host') ?? '127.0.0.1',
    authUrl,
    appUrl,
    databaseUrl: overrides.databaseUrl ?? read(env, 'databaseUrl') ?? defaultDatabaseUrl(),
    logLevel: overrides.logLevel ?? read(env, 'logLevel') ?? 'info',
    cacheTtlMs: overrides.cacheTtlMs ?? parseIntSetting('REALMGATE_CACHE_TTL_MS', read(env, 'cacheTtlMs'), 0, 3_600_000),
    sqliteSync: (overrides.sqliteSync ?? sync) as Config['sqliteSync'],
  };
}
