import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { createOrganization } from '../admin/operations.js';

export function registerOrg(program: Command): void {
  const org = program.command('org').description('manage organizations');
  org
    .command('create <realm> <alias>')
    .description('create an organization')
    .option('--name <name>', 'display name (default: the alias)')
    .action(async (realmId: string, alias: string, o: { name?: string }) => {
      await withStore((store) => createOrganization(store, { realmId, alias, ...(o.name ? { name: o.name } : {}) }));
      process.stdout.write(`created organization ${alias} in realm ${realmId}\n`);
    });
  org
    .command('list <realm>')
    .description("list a realm's organizations")
    .action(async (realmId: string) => {
      const orgs = await withStore(async (store) => {
        if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
        return store.organizations.list(realmId);
      });
      for (const o of orgs) process.stdout.write(`${o.alias}\t${o.name}\n`);
    });
}
