import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** A file that cannot be read as a Keycloak export: the message names the file and what is wrong. */
export class ExportFileError extends Error {}

/**
 * A regular file's JSON. Anything else is refused before it is read: a FIFO or a device would block or
 * never end (opened without blocking, then checked). A parse error says where, never what: the file may
 * be anything (/etc/shadow), and its content does not belong in a message.
 */
async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      if (!(await handle.stat()).isFile()) throw new ExportFileError(`${file} is not a regular file (a FIFO, device or socket cannot be imported)`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof ExportFileError) throw err;
    throw new ExportFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ExportFileError(`${file} is not valid JSON: ${whereJsonFails(text, (err as Error).message)}`);
  }
}

/** Where JSON.parse gave up, without any of the text (V8's message quotes it). */
function whereJsonFails(text: string, message: string): string {
  if (text.trim() === '') return 'it is empty';
  const pos = /position (\d+)/.exec(message)?.[1];
  if (pos !== undefined) {
    const before = text.slice(0, Number(pos));
    const line = before.split('\n').length;
    return `invalid at line ${line}, column ${Number(pos) - before.lastIndexOf('\n')}`;
  }
  return /end of JSON input/i.test(message) ? 'it ends in the middle of a value' : 'it does not parse as JSON';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The realms of a parsed export: one realm object (`kc.sh export --realm X --file F`) or an array of
 * them (`kc.sh export --file F`, every realm).
 */
export function realmsOf(parsed: unknown, source: string): Array<Record<string, unknown>> {
  const list = Array.isArray(parsed) ? parsed : [parsed];
  if (list.length === 0) throw new ExportFileError(`${source} holds no realm`);
  return list.map((r, i) => {
    if (!isObject(r) || typeof r.realm !== 'string' || r.realm === '') throw new ExportFileError(`${source}: ${Array.isArray(parsed) ? `entry ${i} ` : ''}is not a Keycloak realm (no "realm" name)`);
    return r;
  });
}

/**
 * A `kc.sh export --dir D` folder: `<realm>-realm.json` plus `<realm>-users-<n>.json` files of
 * `{realm, users}` whose users join their realm's (`federatedUsers` files are reported by the import).
 */
async function readDir(dir: string): Promise<Array<Record<string, unknown>>> {
  const names = (await readdir(dir)).sort();
  const realmFiles = names.filter((n) => n.endsWith('-realm.json'));
  if (realmFiles.length === 0) throw new ExportFileError(`${dir} holds no <realm>-realm.json file: is it a kc.sh export --dir folder?`);
  const realms = new Map<string, Record<string, unknown>>();
  for (const n of realmFiles) {
    for (const r of realmsOf(await readJson(path.join(dir, n)), path.join(dir, n))) realms.set(r.realm as string, r);
  }
  for (const n of names.filter((x) => /-(federated-)?users-\d+\.json$/.test(x))) {
    const file = path.join(dir, n);
    const part = await readJson(file);
    if (!isObject(part) || typeof part.realm !== 'string') throw new ExportFileError(`${file} is not a users file ({"realm": ..., "users": [...]})`);
    const realm = realms.get(part.realm);
    if (!realm) throw new ExportFileError(`${file} belongs to realm ${part.realm}, which has no ${part.realm}-realm.json`);
    for (const key of ['users', 'federatedUsers'] as const) {
      const list = part[key];
      if (list === undefined) continue;
      if (!Array.isArray(list)) throw new ExportFileError(`${file}: "${key}" is not a list`);
      realm[key] = [...((realm[key] as unknown[] | undefined) ?? []), ...list];
    }
  }
  return [...realms.values()];
}

/** Every realm of an export file or folder (a regular file or a directory, nothing else). */
export async function readExport(fileOrDir: string): Promise<Array<Record<string, unknown>>> {
  let isDir: boolean;
  try {
    isDir = (await stat(fileOrDir)).isDirectory();
  } catch (err) {
    throw new ExportFileError(`cannot read ${fileOrDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return isDir ? readDir(fileOrDir) : realmsOf(await readJson(fileOrDir), fileOrDir);
}
