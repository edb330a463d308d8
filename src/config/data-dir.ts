import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory Realmgate is installed in: the nearest ancestor of this module holding Realmgate's
 * package.json (the checkout, or node_modules/realmgate). The same for the bundle and the sources.
 */
export function installDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = path.join(dir, 'package.json');
    try {
      if ((JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'realmgate') return dir;
    } catch {
      // not here: look further up
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return process.cwd();
}

/**
 * The default database: one file in the installation's data directory, whatever the working directory,
 * so that `realmgate start` and every `realmgate ...` command open the same database.
 */
export function defaultDatabaseUrl(): string {
  return `sqlite:${path.join(installDir(), 'data', 'realmgate.db')}`;
}

/** The file of a `sqlite:` URL, absolute; undefined for PostgreSQL and for `sqlite::memory:`. */
export function sqliteFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined;
  const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return file === '' || file === ':memory:' ? undefined : path.resolve(file);
}

/** A database URL fit for a log line: credentials hidden, a relative SQLite path made absolute. */
export function describeDatabaseUrl(url: string): string {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return file === ':memory:' ? url : `sqlite:${path.resolve(file)}`;
  }
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

let version: string | undefined;

/** Realmgate's version, from its package.json (read once). */
export function realmgateVersion(): string {
  if (version === undefined) {
    try {
      const v = (JSON.parse(fs.readFileSync(path.join(installDir(), 'package.json'), 'utf8')) as { version?: unknown }).version;
      version = typeof v === 'string' ? v : 'unknown';
    } catch {
      version = 'unknown';
    }
  }
  return version;
}
