import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, type Config } from '../config/config.js';
import { describeDatabaseUrl } from '../config/data-dir.js';
import { openDeploymentStore, type Store } from '../admin/operations/deployment.js';
import { LATEST_TIME } from '../admin/operations/realms.js';
import { requireSealing } from '../crypto/key-encryption.js';

// No command stores a private key in clear: one that creates keys opens the secret first (withStore's
// `keys: true`), and one that did not fails instead.
requireSealing();

/** A failure the user can act on: printed as one line, exit status 1. */
export class CliError extends Error {}

export const program = new Command();
program
  .name('realmgate')
  .description('Realmgate: an OAuth 2.0 / OpenID Connect authorization server.\nSettings come from the environment (PORT, HOST, AUTH_URL, APP_URL, DATABASE_URL, LOG_LEVEL); see docs/configuration.md.')
  .option('--database-url <url>', 'sqlite:<path> or postgres://... (default: $DATABASE_URL or sqlite:<install dir>/data/realmgate.db)')
  .configureOutput({ outputError: (str, write) => write(str) });

export function config(overrides: Partial<Config> = {}): Config {
  const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
  return loadConfig(process.env, { ...(url ? { databaseUrl: url } : {}), ...overrides });
}

/**
 * Opens the database (migrating it) for one administrative command. A command that creates signing keys
 * (realm create and import, keys rotate, bootstrap-admin) passes `keys: true`: they are sealed like the
 * server's (key file or REALMGATE_KEY_SECRET, checked first, before anything is written). Other commands
 * skip that check, whose scrypt costs more than most commands.
 */
export async function withStore<T>(fn: (store: Store) => Promise<T>, opts: { keys?: boolean } = {}): Promise<T> {
  const cfg = config();
  // Never a silent surprise: one line on stderr names the database this command works on.
  process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
  const { db, store } = await openDeploymentStore(cfg, {
    synchronous: 'FULL',
    ...(opts.keys ? { keys: true, announce: (message: string) => process.stderr.write(`realmgate: ${message}\n`) } : {}),
  });
  try {
    return await fn(store);
  } finally {
    await db.close();
  }
}

export function intArg(name: string, range?: { min: number; max: number }) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a whole number`);
    // Digits beyond 2^53 - 1 lose their value in a JavaScript number: too large for any setting.
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${name} is too large: ${v} is above ${Number.MAX_SAFE_INTEGER}`);
    if (range && (n < range.min || n > range.max)) throw new InvalidArgumentError(`${name} must be from ${range.min} to ${range.max}`);
    return n;
  };
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A time given as seconds since the epoch or as an ISO 8601 date or time (read as Date.parse does: a date
 * alone is UTC, a time without an offset local), from 1970 to 9999; anything else ("-1", "tomorrow",
 * "12/31", which Date.parse would guess at) is refused.
 */
export function timeArg(name: string) {
  return (v: string): number => {
    let t = NaN;
    if (/^\d+$/.test(v)) t = Number(v);
    else if (ISO_8601.test(v)) t = Math.floor(Date.parse(v) / 1000);
    if (!Number.isSafeInteger(t)) throw new InvalidArgumentError(`it is not a time: ${name} takes seconds since the epoch or an ISO 8601 time such as 2026-01-31T12:00:00Z`);
    if (t < 0 || t > LATEST_TIME) throw new InvalidArgumentError(`${name} must be from 1970 to the year 9999`);
    return t;
  };
}

export function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export async function passwordFrom(opts: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (opts.password !== undefined && opts.passwordStdin) throw new CliError('use either --password or --password-stdin, not both');
  if (opts.password !== undefined) return opts.password;
  if (opts.passwordStdin) return readStdin();
  throw new CliError('a password is required: --password PW or --password-stdin');
}

/** A switch given as on/off (also true/false, yes/no). */
export function onOff(name: string) {
  return (v: string): boolean => {
    const x = v.toLowerCase();
    if (['on', 'true', 'yes'].includes(x)) return true;
    if (['off', 'false', 'no'].includes(x)) return false;
    throw new InvalidArgumentError(`${name} takes on or off`);
  };
}
