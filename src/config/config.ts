import path from 'node:path';
import { SETTINGS } from './defaults.js';
import { defaultDatabaseUrl, installDir } from './data-dir.js';

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
  /** How long a request waits for the database (a lock, a pooled connection) before a 503 (OpenOptions.waitTimeoutMs). */
  dbWaitTimeoutMs: number;
  /** PostgreSQL: the most connections one process opens (OpenOptions.poolSize). */
  dbPoolSize: number;
  dbQueryTimeoutMs: number;
  /** Where the key-encryption secret lives when REALMGATE_KEY_SECRET is unset (src/crypto/key-file.ts). */
  keyFile: string;
  sqliteSync: 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';
  /** REALMGATE_BOOTSTRAP_ADMIN_USERNAME / _PASSWORD, when both are set. */
  bootstrapAdmin?: { username: string; password: string };
  /** Addresses/CIDRs of trusted reverse proxies; empty: forwarding headers are ignored. */
  trustedProxies: string[];
  /** Management port (/metrics, /health/*); undefined: none. */
  metricsPort: number | undefined;
  collectorIntervalS: number;
  eventsRetentionDays: number;
  adminEventsRetentionDays: number;
  maxInteractionsPerAddress: number;
  maxInteractions: number;
  maxPushedRequestsPerClient: number;
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
 * The key file sits beside an SQLite database (one directory to back up and to protect) and in the
 * installation's data directory for PostgreSQL, whose data lives elsewhere.
 */
function defaultKeyFile(databaseUrl: string): string {
  const file = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : '';
  if (!file || file === ':memory:') return path.join(installDir(), 'data', 'realmgate.key');
  const ext = path.extname(file);
  return path.join(path.dirname(file), `${path.basename(file, ext)}.key`);
}

function optionalInt(name: string, value: string | undefined, min: number, max: number): number | undefined {
  return value === undefined ? undefined : parseIntSetting(name, value, min, max);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address with optional `/n`, or proxy-addr's names (loopback, linklocal, uniquelocal). */
function parseProxies(value: string | undefined): string[] {
  if (!value) return [];
  return value.split(',').map((raw) => {
    const v = raw.trim();
    const [addr = '', bits, extra] = v.split('/');
    const v4 = IPV4.test(addr);
    const v6 = !v4 && addr.includes(':') && /^[0-9a-fA-F:.]+$/.test(addr);
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(v);
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128));
    if (named || ((v4 || v6) && bitsOk && extra === undefined)) return v;
    throw new ConfigError(`REALMGATE_TRUSTED_PROXIES: ${JSON.stringify(v)} is not an address, a CIDR or loopback/linklocal/uniquelocal`);
  });
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
  const databaseUrl = overrides.databaseUrl ?? read(env, 'databaseUrl') ?? defaultDatabaseUrl();
  const config: Config = {
    ...(bootstrapAdmin ? { bootstrapAdmin } : {}),
    port,
    host: overrides.host ?? read(env, 'host') ?? '127.0.0.1',
    authUrl,
    appUrl,
    databaseUrl,
    keyFile: overrides.keyFile ?? read(env, 'keyFile') ?? defaultKeyFile(databaseUrl),
    logLevel: overrides.logLevel ?? read(env, 'logLevel') ?? 'info',
    cacheTtlMs: overrides.cacheTtlMs ?? parseIntSetting('REALMGATE_CACHE_TTL_MS', read(env, 'cacheTtlMs'), 0, 3_600_000),
    requestTimeoutMs: overrides.requestTimeoutMs ?? parseIntSetting('REALMGATE_REQUEST_TIMEOUT_MS', read(env, 'requestTimeoutMs'), 1_000, 600_000),
    dbWaitTimeoutMs: overrides.dbWaitTimeoutMs ?? parseIntSetting('REALMGATE_DB_WAIT_TIMEOUT_MS', read(env, 'dbWaitTimeoutMs'), 100, 600_000),
    dbPoolSize: overrides.dbPoolSize ?? parseIntSetting('REALMGATE_DB_POOL_SIZE', read(env, 'dbPoolSize'), 1, 1000),
    dbQueryTimeoutMs: overrides.dbQueryTimeoutMs ?? parseIntSetting('REALMGATE_DB_QUERY_TIMEOUT_MS', read(env, 'dbQueryTimeoutMs'), 1000, 3_600_000),
    sqliteSync: (overrides.sqliteSync ?? sync) as Config['sqliteSync'],
    trustedProxies: overrides.trustedProxies ?? parseProxies(read(env, 'trustedProxies')),
    metricsPort: 'metricsPort' in overrides ? overrides.metricsPort : optionalInt('REALMGATE_METRICS_PORT', read(env, 'metricsPort'), 0, 65535),
    collectorIntervalS: overrides.collectorIntervalS ?? parseIntSetting('REALMGATE_COLLECTOR_INTERVAL_S', read(env, 'collectorIntervalS'), 0, 86_400),
    eventsRetentionDays: overrides.eventsRetentionDays ?? parseIntSetting('REALMGATE_EVENTS_RETENTION_DAYS', read(env, 'eventsRetentionDays'), 1, 36_500),
    adminEventsRetentionDays: overrides.adminEventsRetentionDays ?? parseIntSetting('REALMGATE_ADMIN_EVENTS_RETENTION_DAYS', read(env, 'adminEventsRetentionDays'), 1, 36_500),
    maxInteractionsPerAddress:
      overrides.maxInteractionsPerAddress ?? parseIntSetting('REALMGATE_MAX_INTERACTIONS_PER_ADDRESS', read(env, 'maxInteractionsPerAddress'), 1, 1_000_000),
    maxInteractions: overrides.maxInteractions ?? parseIntSetting('REALMGATE_MAX_INTERACTIONS', read(env, 'maxInteractions'), 1, 100_000_000),
    maxPushedRequestsPerClient:
      overrides.maxPushedRequestsPerClient ?? parseIntSetting('REALMGATE_MAX_PUSHED_REQUESTS_PER_CLIENT', read(env, 'maxPushedRequestsPerClient'), 1, 100_000_000),
  };
  // A statement may wait for a lock up to the wait timeout: bounding it by less would cut legitimate waits.
  if (/^postgres(ql)?:/.test(databaseUrl) && config.dbQueryTimeoutMs <= config.dbWaitTimeoutMs) {
    throw new ConfigError('REALMGATE_DB_QUERY_TIMEOUT_MS must be more than REALMGATE_DB_WAIT_TIMEOUT_MS');
  }
  return config;
}
