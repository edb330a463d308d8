import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { revokeTokens } from '../admin/operations.js';

export function registerToken(program: Command): void {
  const token = program.command('token').description('revoke tokens');
  token
    .command('revoke <realm>')
    .description('revoke every refresh token of a user or of a client, and the access tokens they issued')
    .option('--user <user>', 'the username or id of the user')
    .option('--client <client-id>', 'the client id')
    .action(async (realmId: string, o: { user?: string; client?: string }) => {
      if ((o.user === undefined) === (o.client === undefined)) throw new CliError('name exactly one of --user or --client');
      const r = await withStore((store) => revokeTokens(store, { realmId, ...(o.user !== undefined ? { user: o.user } : { clientId: o.client! }) }));
      process.stdout.write(`revoked ${r.chains} token chain(s) of ${o.user !== undefined ? `user ${o.user}` : `client ${o.client}`} in realm ${realmId}\n`);
    });
}
