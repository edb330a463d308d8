import crypto from 'node:crypto';
import path from 'node:path';
import { chmod, open, rename, stat, unlink } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { CliError, withStore } from './common.js';
import { readExport, ExportFileError } from '../admin/keycloak/import-files.js';
import { formatReport } from '../admin/keycloak/import-report.js';
import { terminalSafe } from './terminal-text.js';
import { exportRealm } from '../admin/keycloak/export.js';
import { importKeycloakRealms, type IfExists } from '../admin/operations/realm-import.js';
import { cliActor } from '../admin/operations/common.js';

/** `realm import` and `realm export`: moving realms from and to Keycloak's export format (issue 10). */
export function registerRealmTransfer(realm: Command): void {
  realm
    .command('import <file-or-dir>')
    .description(
      'import Keycloak realms from a kc.sh export: one realm object, an array of realms (--file), or the folder kc.sh export --dir writes (<realm>-realm.json and <realm>-users-<n>.json; regular files only, no FIFO or device); ' +
        'each realm in one transaction; prints what was imported, mapped and skipped (control characters in names shown escaped)',
    )
    .addOption(new Option('--if-exists <what>', 'when a realm exists already: fail, skip (change nothing) or overwrite (replace it)').choices(['fail', 'skip', 'overwrite']).default('fail'))
    .option('--include-master', "import Keycloak's master realm too (skipped by default)")
    .option('--include-builtin-clients', "import Keycloak's built-in clients too (account, account-console, admin-cli, broker, security-admin-console)")
    .option('--json', 'print the report as JSON')
    .action(async (source: string, o: { ifExists: IfExists; includeMaster?: boolean; includeBuiltinClients?: boolean; json?: boolean }) => {
      let realms;
      try {
        realms = await readExport(source);
      } catch (err) {
        if (err instanceof ExportFileError) throw new CliError(err.message);
        throw err;
      }
      const report = await withStore((store) =>
        importKeycloakRealms(
          store,
          realms,
          {
            ifExists: o.ifExists,
            includeMaster: Boolean(o.includeMaster),
            includeBuiltinClients: Boolean(o.includeBuiltinClients),
            // The operator's terminal is the log here: the cause of an unexpected failure goes to stderr.
            onUnexpectedError: (name, err) => void process.stderr.write(`realm ${terminalSafe(name)}: ${terminalSafe(err instanceof Error ? err.message : String(err))}\n`),
          },
          cliActor(),
        ),
        // New realms get signing keys: sealed, after the key secret is checked (a wrong one changes nothing).
        { keys: true, access: 'create' },
      );
      process.stdout.write(o.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report, terminalSafe));
      if (report.failed) process.exitCode = 1;
    });
  realm
    .command('export <realm>')
    .description("write a realm in Keycloak's export format (client and identity provider secrets masked and no password hashes unless --with-secrets)")
    .option('--file <file>', 'write to this file, replaced whole (default: standard output); with --with-secrets it is made 0600, an existing file too')
    .option('--with-secrets', "include password hashes (as Keycloak credentials), client secret hashes (which only Realmgate can import), identity providers' client secrets in clear and the signing keys (opened with the key file or REALMGATE_KEY_SECRET)")
    .action(async (realmId: string, o: { file?: string; withSecrets?: boolean }) => {
      if (o.file !== undefined && o.file.trim() === '') throw new CliError('--file needs a file name (without --file the export goes to standard output)');
      const existing = o.file === undefined ? undefined : await regularFileOrNothing(o.file);
      const rep = await withStore((store) => exportRealm(store, realmId, { withSecrets: Boolean(o.withSecrets) }), { access: 'read', readKeys: Boolean(o.withSecrets) });
      const text = JSON.stringify(rep, null, 2) + '\n';
      if (o.file !== undefined) {
        // Hashes are secrets too: with them the file is readable by its owner only, an existing one too.
        await writeWhole(o.file, text, o.withSecrets ? 0o600 : (existing?.mode ?? 0o644));
        process.stdout.write(`exported realm ${realmId} to ${o.file}\n`);
      } else process.stdout.write(text);
    });
}

/** The permission bits of an existing regular file, undefined when there is none; anything else is refused. */
async function regularFileOrNothing(file: string): Promise<{ mode: number } | undefined> {
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new CliError(`${file} is not a regular file: choose a file name for --file`);
    return { mode: st.mode & 0o777 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Writes a new file beside `file` with exactly `mode`, then renames it over `file`: readers see the old
 * file or the whole new one, and a file that held secrets is never readable by others while they are in it.
 */
async function writeWhole(file: string, text: string, mode: number): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(tmp, mode);
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw new CliError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
