import type { Command } from 'commander';
import { CliError, collect, withStore } from './common.js';
import { createOrganization, listOrganizations } from '../admin/operations.js';
import { registerOrgLifecycle } from './org-lifecycle.js';
import { registerOrgInvitations } from './org-invitations.js';
import { terminalSafe } from './terminal-text.js';

export function registerOrg(program: Command): void {
  const org = program.command('org').description('manage organizations');
  org
    .command('create <realm> <alias>')
    .description('create an organization')
    .option('--name <name>', 'display name (default: the alias; no control characters)')
    .option('--description <text>', 'description (no control characters)')
    .option('--domain <domain>', 'an internet domain of the organization (repeatable)', collect)
    .option('--redirect-url <url>', 'where a member who joined through an invitation goes (default: the account page)')
    .action(async (realmId: string, alias: string, o: { name?: string; description?: string; domain?: string[]; redirectUrl?: string }) => {
      await withStore((store) =>
        createOrganization(store, {
          realmId,
          alias,
          ...(o.name ? { name: o.name } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.redirectUrl !== undefined ? { redirectUrl: o.redirectUrl } : {}),
          ...(o.domain ? { domains: o.domain.map((name) => ({ name, verified: false })) } : {}),
        }),
      );
      process.stdout.write(`created organization ${alias} in realm ${realmId}\n`);
    });
  org
    .command('list <realm>')
    .description("list a realm's organizations (alias, name, enabled, domains; tab-separated, control characters shown escaped)")
    .action(async (realmId: string) => {
      const orgs = await withStore(async (store) => {
        if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
        return listOrganizations(store, { realmId, max: 1000 });
      }, { access: 'read' });
      // A name stored before control characters were refused must not drive the terminal.
      for (const o of orgs) process.stdout.write(`${o.alias}\t${terminalSafe(o.name)}\t${o.enabled ? 'enabled' : 'disabled'}\t${o.domains.map((d) => d.name).join(' ')}\n`);
    });
  registerOrgLifecycle(org);
  registerOrgInvitations(org);
}
