import type { Command } from 'commander';
import { CliError, passwordFrom, withStore } from './common.js';
import { bootstrapAdmin } from '../admin/operations/bootstrap.js';
import { cliActor } from '../admin/operations/common.js';

export function registerBootstrap(program: Command): void {
  program
    .command('bootstrap-admin')
    .description(
      'create realm master, its admin-cli client and an administrator (as Keycloak 26), unless master already has one; ' +
        'the server does the same at start when REALMGATE_BOOTSTRAP_ADMIN_USERNAME and _PASSWORD are set',
    )
    .option('--username <name>', 'the admin user (default: $REALMGATE_BOOTSTRAP_ADMIN_USERNAME or admin)')
    .option('--password <pw>', 'the password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (o: { username?: string; password?: string; passwordStdin?: boolean }) => {
      const username = o.username ?? process.env.REALMGATE_BOOTSTRAP_ADMIN_USERNAME ?? 'admin';
      const envPassword = process.env.REALMGATE_BOOTSTRAP_ADMIN_PASSWORD;
      const password = o.password === undefined && !o.passwordStdin && envPassword ? envPassword : await passwordFrom(o);
      if (password.length < 8) throw new CliError('the password must have at least 8 characters');
      const outcome = await withStore((store) => bootstrapAdmin(store, { username, password }, cliActor()), { keys: true, access: 'create' });
      process.stdout.write(
        outcome === 'created'
          ? `created admin ${username.toLowerCase()} in realm master (client admin-cli, password grant); change the password after the first login\n`
          : 'realm master already has an administrator: nothing changed\n',
      );
    });
}
