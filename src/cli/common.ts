import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, type Config } from '../config/config.js';
import { describeDatabaseUrl, realmgateVersion, sqliteFile } from '../config/data-dir.js';
import { NoDatabaseError, openDeploymentStore, openReadOnlyStore, UnmigratedDatabaseError, type Store } from '../admin/operations/deployment.js';
import { LATEST_TIME } from '../admin/operations/realms.js';
import { requireSealing } from '../crypto/key-encryption.js';
import { openKeySecret } from '../crypto/key-file.js';

// No command stores a private key in clear: one that creates keys opens the secret first (withStore's
// `keys: true`), and one that did not fails instead.
requireSealing();

/** The commands that create a new SQLite database, as the refusal of the others names them. */
const CREATING = 'start, migrate, realm create, realm import and bootstrap-admin';

/** A failure the user can act on: printed as one line, exit status 1. */
export class CliError extends Error {}

export const program = new Command();
program
  .name('realmgate')
  .description('Realmgate: an OAuth 2.0 / OpenID Connect authorization server.\nSettings come from the environment (PORT, HOST, AUTH_URL, APP_URL, DATABASE_URL, LOG_LEVEL); see docs/configuration.md.')
  .version(realmgateVersion(), '-V, --version', "print Realmgate's version and exit")
  .option(
    '--database-url <url>',
    `sqlite:<path> or postgres://... (default: $DATABASE_URL or sqlite:<install dir>/data/realmgate.db); only ${CREATING} create a new database (an SQLite file, a PostgreSQL ?schema=), every other command needs an existing one (a command that only reads may read a file it cannot write)`,
  )
  .configureOutput({ outputError: (str, write) => write(str) })
  .addHelpText(
    'after',
    '\nExit status: 0 done; 1 refused (the error in one line); 75 the database is busy or cannot be reached (try again).',
  );

export function config(overrides: Partial<Config> = {}): Config {
  const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
  return loadConfig(process.env, { ...(url ? { databaseUrl: url } : {}), ...overrides });
}

/**
 * What a command does with the database. `create`: it may be the first command of a deployment (migrate,
 * realm create, realm import, bootstrap-admin; start opens the database itself), and creates an SQLite
 * database that does not exist yet. `write` (the default): it changes an existing one. `read`: it only
 * reads an existing one, which may be a file it cannot write.
 */
export type DatabaseAccess = 'create' | 'write' | 'read';

/**
 * Opens the database (migrating it) for one administrative command. A command that creates signing keys
 * (realm create and import, keys rotate, bootstrap-admin) passes `keys: true`: they are sealed like the
 * server's (key file or REALMGATE_KEY_SECRET, checked first, before anything is written). Other commands
 * skip that check, whose scrypt costs more than most commands.
 * Only `create` commands create a database: for any other, a path with no database (a mistyped
 * DATABASE_URL or --database-url: an SQLite path, a PostgreSQL `schema` that does not exist, an empty
 * database) is refused before anything is made, instead of becoming a new, empty database whose lists are
 * empty. A `read` command on a file it cannot write opens it read-only.
 */
export async function withStore<T>(fn: (store: Store) => Promise<T>, opts: { keys?: boolean; readKeys?: boolean; access?: DatabaseAccess } = {}): Promise<T> {
  const cfg = config();
  // Never a silent surprise: one line on stderr names the database this command works on.
  process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
  const access = opts.access ?? 'write';
  const file = sqliteFile(cfg.databaseUrl);
  const exists = file !== undefined && fs.existsSync(file);
  // An empty file is no database either (SQLite would make it one as it opens it).
  if (file !== undefined && (!exists || fs.statSync(file).size === 0) && access !== 'create') {
    throw new CliError(`no database at ${file}: choose the database with --database-url or DATABASE_URL (only ${CREATING} create a new one)`);
  }
  if (exists && !permitted(file, fs.constants.R_OK)) throw new CliError(`cannot read the database ${file}: no permission to read it`);
  const readOnly = exists && !permitted(file, fs.constants.W_OK);
  if (readOnly && access !== 'read') throw new CliError(`the database ${file} is read-only (no permission to write it), and this command changes it`);
  const { db, store } = readOnly
    ? await openReadOnly(cfg, file)
    : await openDeploymentStore(cfg, {
        synchronous: 'FULL',
        existing: access !== 'create',
        ...(opts.keys ? { keys: true, announce: (message: string) => process.stderr.write(`realmgate: ${message}\n`) } : {}),
      }).catch((err: unknown) => {
        if (err instanceof NoDatabaseError) {
          throw new CliError(`no Realmgate database at ${describeDatabaseUrl(cfg.databaseUrl)}: choose the database with --database-url or DATABASE_URL (only ${CREATING} create a new one)`);
        }
        throw err;
      });
  try {
    // A command that reads private keys (an export with secrets) opens their secret without writing anything.
    if (opts.readKeys) openKeySecret(cfg, (message) => process.stderr.write(`realmgate: ${message}\n`));
    return await fn(store);
  } finally {
    await db.close();
  }
}

function permitted(file: string, mode: number): boolean {
  try {
    fs.accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * An SQLite file this process cannot write, for a command that only reads: opened read-only (SQLite refuses
 * any write), without migrating it, so it must be migrated already. SQLite reads a WAL database through its
 * -shm file: when that is absent (no server has the database open) it creates it, which a read-only folder
 * prevents; only the immutable mode would read it then, which is wrong if another process writes the file
 * meanwhile (a server running as another user, or through another mount), so it is refused, saying why.
 */
async function openReadOnly(cfg: Config, file: string): ReturnType<typeof openReadOnlyStore> {
  try {
    return await openReadOnlyStore(cfg);
  } catch (err) {
    if (err instanceof UnmigratedDatabaseError) {
      throw new CliError(`the database ${file} is read-only and lacks ${err.missing.length} migration(s) of this version (${err.missing[0]}...): run realmgate migrate with permission to write it first`);
    }
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN'))) {
      throw new CliError(
        `cannot read the database ${file} read-only: SQLite must create ${path.basename(file)}-shm beside it to read it, and its folder is read-only too (make the folder writable, or read it while the server has it open)`,
      );
    }
    throw err;
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

/** The options of a revoke-before command (a realm's or a client's not-before policy). */
export interface NotBeforeOptions {
  now?: boolean;
  at?: number;
  clear?: boolean;
}

/** Adds --now, --at and --clear to a revoke-before command. */
export function notBeforeOptions(cmd: Command): Command {
  return cmd
    .option('--now', 'revoke every token issued until now')
    .option('--at <time>', 'an ISO 8601 time or seconds since the epoch: now, a past time, or at most a day ahead (a later one would refuse every new token until then)', timeArg('--at'))
    .option('--clear', 'remove the policy');
}

/**
 * A revoke-before command: without options it shows the policy `current()` reads; with one of --now, --at
 * and --clear it sets it through `set` and says so. `what` names the owner ("realm shop", "client web").
 */
export async function runNotBefore(o: NotBeforeOptions, what: string, current: () => Promise<number>, set: (at: number) => Promise<void>): Promise<void> {
  const chosen = [o.now, o.at !== undefined, o.clear].filter(Boolean).length;
  if (chosen > 1) throw new CliError('use only one of --now, --at and --clear');
  const at = o.now ? Math.floor(Date.now() / 1000) : o.clear ? 0 : o.at;
  if (at === undefined) {
    const value = await current();
    const iso = isoSeconds(value);
    if (!value) process.stdout.write('no not-before policy\n');
    else if (iso === undefined) process.stdout.write(`not-before-policy ${value} is beyond any date: every token is refused (replace it with --now or --clear)\n`);
    else process.stdout.write(`tokens issued before ${iso} (${value}) are refused\n`);
    return;
  }
  await set(at);
  process.stdout.write(at ? `tokens of ${what} issued before ${isoSeconds(at)} are refused (not-before-policy ${at})\n` : `not-before policy of ${what} cleared\n`);
}

/** An epoch second as ISO 8601; undefined for a stored value no date can show (an earlier version let one in). */
export function isoSeconds(s: number): string | undefined {
  const d = new Date(s * 1000);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
