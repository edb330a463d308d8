import type { Command } from 'commander';
import { withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { changeCompositesByName, changeRoleMappings, createRole, deleteRole, listRoles, requireUser, roleCompositesByName, roleUsers, updateRole } from '../admin/operations.js';
import { cliActor } from '../admin/operations/common.js';

interface ClientOption {
  client?: string;
}

const CLIENT_HELP = "the role is one of this client's (client roles: resource_access.<client>.roles); without it, a realm role (realm_access.roles)";

function where(o: ClientOption, realmId: string): string {
  return o.client ? `client ${o.client} of realm ${realmId}` : `realm ${realmId}`;
}

/** `role create|update|delete|list|users|grant|revoke|composites|add-composite|remove-composite`: realm and client roles, carried in access tokens. */
export function registerRole(program: Command): void {
  const role = program.command('role').description('manage realm and client roles (carried in access tokens as Keycloak carries them)');
  role
    .command('create <realm> <name>')
    .description('create a realm role, or a client role with --client')
    .option('--client <client-id>', CLIENT_HELP)
    .option('--description <text>', 'what the role allows')
    .action(async (realmId: string, name: string, o: ClientOption & { description?: string }) => {
      await withStore((store) => createRole(store, { realmId, clientId: o.client ?? '', name, description: o.description }, cliActor()));
      process.stdout.write(`created role ${terminalSafe(name)} in ${where(o, realmId)}\n`);
    });
  role
    .command('update <realm> <name>')
    .description('rename a role or change its description (tokens issued from then on carry the new name)')
    .option('--client <client-id>', CLIENT_HELP)
    .option('--name <new-name>', 'the new name')
    .option('--description <text>', 'the new description ("" removes it)')
    .action(async (realmId: string, name: string, o: ClientOption & { name?: string; description?: string }) => {
      const r = await withStore((store) => updateRole(store, { realmId, clientId: o.client ?? '', name, newName: o.name, description: o.description }, cliActor()));
      process.stdout.write(`updated role ${terminalSafe(r.name)} in ${where(o, realmId)}\n`);
    });
  role
    .command('delete <realm> <name>')
    .description("delete a role and every user's grant of it")
    .option('--client <client-id>', CLIENT_HELP)
    .action(async (realmId: string, name: string, o: ClientOption) => {
      await withStore((store) => deleteRole(store, { realmId, clientId: o.client ?? '', name }, cliActor()));
      process.stdout.write(`deleted role ${terminalSafe(name)} in ${where(o, realmId)}\n`);
    });
  role
    .command('list <realm>')
    .description("list the realm's roles, or a client's with --client (name, tab, description; control characters shown escaped)")
    .option('--client <client-id>', CLIENT_HELP)
    .action(async (realmId: string, o: ClientOption) => {
      const roles = await withStore((store) => listRoles(store, { realmId, clientId: o.client ?? '' }), { access: 'read' });
      for (const r of roles) process.stdout.write(`${terminalSafe(r.name)}\t${terminalSafe(r.description ?? '')}\n`);
    });
  role
    .command('users <realm> <name>')
    .description('list the usernames of the users granted a role')
    .option('--client <client-id>', CLIENT_HELP)
    .action(async (realmId: string, name: string, o: ClientOption) => {
      const names = await withStore((store) => roleUsers(store, { realmId, clientId: o.client ?? '', name }), { access: 'read' });
      for (const n of names) process.stdout.write(`${terminalSafe(n)}\n`);
    });
  // Composite roles: a role holds the roles it contains (recursively) for everyone granted it.
  const CONTAINED_HELP = 'each a realm role by name, or a client role as <client-id>/<name>';
  role
    .command('composites <realm> <name>')
    .description(`list the roles a role contains directly, one a line: a realm role's name, a client role as <client-id>/<name>`)
    .option('--client <client-id>', CLIENT_HELP)
    .action(async (realmId: string, name: string, o: ClientOption) => {
      const roles = await withStore((store) => roleCompositesByName(store, { realmId, clientId: o.client ?? '', name }), { access: 'read' });
      for (const r of roles) process.stdout.write(`${r.clientId ? `${terminalSafe(r.clientId)}/` : ''}${terminalSafe(r.name)}\n`);
    });
  for (const [verb, remove] of [['add-composite', false], ['remove-composite', true]] as const) {
    role
      .command(`${verb} <realm> <name> <contained...>`)
      .description(
        remove
          ? `stop a role containing other roles (${CONTAINED_HELP}); its holders' next tokens no longer carry them through it`
          : `make a role contain other roles (${CONTAINED_HELP}): whoever is granted it holds them too, from their next token on`,
      )
      .option('--client <client-id>', `the composite role is one of this client's; without it, a realm role (the contained roles are named as above)`)
      .action(async (realmId: string, name: string, contained: string[], o: ClientOption) => {
        const roles = await withStore((store) => changeCompositesByName(store, { realmId, clientId: o.client ?? '', name, contained, remove }, cliActor()));
        const names = roles.map((r) => `${r.clientId ? `${terminalSafe(r.clientId)}/` : ''}${terminalSafe(r.name)}`).join(', ');
        process.stdout.write(`${terminalSafe(name)} in ${where(o, realmId)} ${remove ? 'no longer contains' : 'contains'} ${names}\n`);
      });
  }
  for (const [verb, remove] of [['grant', false], ['revoke', true]] as const) {
    role
      .command(`${verb} <realm> <user> <role...>`)
      .description(remove ? 'take roles from a user (by username or id)' : 'give a user (by username or id) roles; their next access token carries them')
      .option('--client <client-id>', "the roles are this client's")
      .action(async (realmId: string, ref: string, names: string[], o: ClientOption) => {
        const user = await withStore(async (store) => {
          const u = await requireUser(store, realmId, ref);
          await changeRoleMappings(store, { realmId, userId: u.id, clientId: o.client ?? '', roles: names.map((name) => ({ name })), remove }, cliActor());
          return u;
        });
        process.stdout.write(`${remove ? 'revoked' : 'granted'} ${names.map(terminalSafe).join(', ')} ${remove ? 'from' : 'to'} ${terminalSafe(user.username)} in ${where(o, realmId)}\n`);
      });
  }
}
