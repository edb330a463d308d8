import type { Command } from 'commander';
import { CliError, collect, withStore } from './common.js';
import { addMember, deleteOrganization, disableOrganization, enableOrganization, listMembers, removeMember, updateOrganization } from '../admin/operations.js';

/** `org update|disable|enable|delete|members`: an organization's lifecycle. */
export function registerOrgLifecycle(org: Command): void {
  org
    .command('update <realm> <org>')
    .description('change an organization (by alias or id): alias, name, description, redirect URL, domains, enabled')
    .option('--alias <alias>', 'new alias')
    .option('--name <name>', 'new display name (no control characters)')
    .option('--description <text>', 'new description (no control characters)')
    .option('--redirect-url <url>', 'where a member who joined through an invitation goes ("" : the account page)')
    .option('--domain <domain>', 'the organization has exactly these domains afterwards (repeatable)', collect)
    .option('--no-domains', 'remove every domain')
    .option('--enabled', 'enable the organization')
    .option('--disabled', 'disable the organization (members cannot choose it; its tokens are revoked)')
    .action(async (realmId: string, ref: string, o: { alias?: string; name?: string; description?: string; redirectUrl?: string; domain?: string[]; domains: boolean; enabled?: boolean; disabled?: boolean }) => {
      if (o.enabled && o.disabled) throw new CliError('use either --enabled or --disabled, not both');
      if (o.domain && !o.domains) throw new CliError('use either --domain or --no-domains, not both');
      const domains = o.domains ? o.domain : [];
      const r = await withStore((store) =>
        updateOrganization(store, {
          realmId,
          organization: ref,
          ...(o.alias !== undefined ? { alias: o.alias } : {}),
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.redirectUrl !== undefined ? { redirectUrl: o.redirectUrl } : {}),
          ...(domains !== undefined ? { domains: domains.map((name) => ({ name, verified: false })) } : {}),
          ...(o.enabled ? { enabled: true } : o.disabled ? { enabled: false } : {}),
        }),
      );
      process.stdout.write(`updated organization ${r.alias} in realm ${realmId}\n`);
    });
  org
    .command('disable <realm> <org>')
    .description('disable an organization: members cannot choose it at login and its tokens are revoked')
    .action(async (realmId: string, ref: string) => {
      const r = await withStore((store) => disableOrganization(store, { realmId, organization: ref }));
      process.stdout.write(`disabled organization ${r.alias} in realm ${realmId}\n`);
    });
  org
    .command('enable <realm> <org>')
    .description('enable a disabled organization')
    .action(async (realmId: string, ref: string) => {
      const r = await withStore((store) => enableOrganization(store, { realmId, organization: ref }));
      process.stdout.write(`enabled organization ${r.alias} in realm ${realmId}\n`);
    });
  org
    .command('delete <realm> <org>')
    .description('delete an organization with its memberships, domains and consents; its tokens are revoked')
    .action(async (realmId: string, ref: string) => {
      const r = await withStore((store) => deleteOrganization(store, { realmId, organization: ref }));
      process.stdout.write(`deleted organization ${r.alias} from realm ${realmId}\n`);
    });
  const members = org.command('members').description("manage an organization's members");
  members
    .command('list <realm> <org>')
    .description('list the members of an organization')
    .action(async (realmId: string, ref: string) => {
      const users = await withStore((store) => listMembers(store, { realmId, organization: ref, max: 1000 }), { access: 'read' });
      for (const u of users) process.stdout.write(`${u.username}\t${u.email ?? ''}\n`);
    });
  members
    .command('add <realm> <org> <user>')
    .description('add a user (by username or id) to an organization')
    .action(async (realmId: string, ref: string, userRef: string) => {
      const u = await withStore((store) => addMember(store, { realmId, organization: ref, user: userRef }));
      process.stdout.write(`added ${u.username} to ${ref}\n`);
    });
  members
    .command('remove <realm> <org> <user>')
    .description("remove a user from an organization (their tokens for it are revoked)")
    .action(async (realmId: string, ref: string, userRef: string) => {
      const u = await withStore((store) => removeMember(store, { realmId, organization: ref, user: userRef }));
      process.stdout.write(`removed ${u.username} from ${ref}\n`);
    });
}
