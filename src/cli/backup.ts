import fs from 'node:fs';
import type { Command } from 'commander';
import { config } from './common.js';
import { describeDatabaseUrl } from '../config/data-dir.js';
import { backupDatabase, restoreDatabase } from '../admin/operations/backup.js';

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** The key-encryption secret is never in the database: say where it is, so that it is saved (and kept) with the backup. */
function keyNote(keyFile: string, restored: boolean): string {
  if (restored) {
    return process.env.REALMGATE_KEY_SECRET
      ? 'its signing keys open with the REALMGATE_KEY_SECRET they were sealed with when the backup was made'
      : `its signing keys open with the key file they were sealed with when the backup was made (${keyFile}${fs.existsSync(keyFile) ? '' : ', missing now'}): a server started with another refuses to start, saying so`;
  }
  if (process.env.REALMGATE_KEY_SECRET) return 'the signing keys are sealed with REALMGATE_KEY_SECRET, which is not in the backup: keep it with the backup';
  return fs.existsSync(keyFile)
    ? `the signing keys are sealed with the key file ${keyFile}, which is not in the backup: back it up apart`
    : `no key file at ${keyFile} (the keys are not sealed with one)`;
}

export function registerBackup(program: Command): void {
  program
    .command('backup <file>')
    .description('copy the SQLite database to a new file, consistently, while servers keep running (PostgreSQL: use pg_dump)')
    .addHelpText('after', '\nThe copy (mode 0600) is one moment of the database, checked before it is kept. The key file or\nREALMGATE_KEY_SECRET is not in it: back it up apart. Put a backup back with realmgate restore.')
    .action((file: string) => {
      const cfg = config();
      process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
      const r = backupDatabase({ databaseUrl: cfg.databaseUrl, target: file, busyTimeoutMs: cfg.dbWaitTimeoutMs });
      process.stdout.write(`backed up ${r.source} to ${r.target} (${size(r.bytes)}: ${r.realms} realms, ${r.users} users, ${r.migrations} migrations; integrity check ok)\n`);
      process.stdout.write(`${keyNote(cfg.keyFile, false)}\n`);
    });

  program
    .command('restore <file>')
    .description('put a backup made by realmgate backup in place of the SQLite database; every server using it must be stopped')
    .addHelpText(
      'after',
      '\nThe backup is checked first. The database it replaces is kept beside it (<database>.replaced-<time>).\nRefused while any process has the database open. The signing keys need the key file or\nREALMGATE_KEY_SECRET the backup was made with. Tokens issued after the backup was made are unknown to it.',
    )
    .action((file: string) => {
      const cfg = config();
      process.stderr.write(`realmgate: database ${describeDatabaseUrl(cfg.databaseUrl)}\n`);
      const r = restoreDatabase({ databaseUrl: cfg.databaseUrl, backup: file, now: new Date() });
      process.stdout.write(`restored ${r.backup} to ${r.target} (${size(r.bytes)}: ${r.realms} realms, ${r.users} users, ${r.migrations} migrations)\n`);
      if (r.replaced) process.stdout.write(`the database it replaced is kept as ${r.replaced}\n`);
      process.stdout.write(`${keyNote(cfg.keyFile, true)}\n`);
    });
}
