import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, type Config } from '../config/config.js';
import { openDatabase, migrate } from '../storage/database.js';
import { Store } from '../storage/store.js';
import { describeDatabaseUrl } from '../config/data-dir.js';

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

/** Opens the database (migrating it) for one administrative command. */
export async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const url = config().databaseUrl;
  // Never a silent surprise: one line on stderr names the database this command works on.
  process.stderr.write(`realmgate: database ${describeDatabaseUrl(url)}\n`);
  const db = await openDatabase(url, { synchronous: 'FULL' });
  try {
    await migrate(db);
    return await fn(new Store(db));
  } finally {
    await db.close();
  }
}

export function intArg(name: string, range?: { min: number; max: number }) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${name} must be a whole number`);
    if (range && (n < range.min || n > range.max)) throw new InvalidArgumentError(`${name} must be from ${range.min} to ${range.max}`);
    return n;
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
