import type { Command } from 'commander';
import { withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { cliActor } from '../admin/operations/common.js';
import { changeScopeMappingsByName, listScopeMappings } from '../admin/operations/role-scope-cli.js';
import type { ScopeOwner } from '../storage/repos/role-scopes.js';

const ROLE_CLIENT_HELP = "the roles are this client's (client roles); without it, realm roles";

/**
 * `client scope-mappings ...` and `scope scope-mappings ...`: Keycloak's role scope mappings, the roles a
 * token of a client without full scope (client update --full-scope off) may carry: the client's own
 * roles, and those mapped to its scope or to the scope of one of the token's client scopes.
 */
export function registerScopeMappingCommands(parent: Command, kind: ScopeOwner['kind']): void {
  const ownerArg = kind === 'client' ? '<client-id>' : '<scope>';
  const ownerWord = kind === 'client' ? 'client' : 'client scope';
  const whose = kind === 'client' ? "a client's" : "a client scope's";
  const cmd = parent
    .command('scope-mappings')
    .description(
      kind === 'client'
        ? "a client's role scope mappings: the roles its tokens may carry when it has no full scope (client update --full-scope off), besides its own client roles and the roles in the scope of the token's client scopes (scope scope-mappings; Keycloak's client Scope tab)"
        : "a client scope's role scope mappings: the roles a token issued with the scope may carry for a client without full scope (Keycloak's client scope Scope tab)",
    );
  const where = (clientOpt: string | undefined): string => (clientOpt ? `roles of client ${terminalSafe(clientOpt)}` : 'realm roles');
  cmd
    .command(`list <realm> ${ownerArg}`)
    .description(`list the roles in ${whose} scope: name, tab, client ('' for a realm role); control characters shown escaped`)
    .action(async (realmId: string, name: string) => {
      const owner: ScopeOwner = { kind, id: name };
      const { roles, fullScope } = await withStore(
        async (store) => {
          const roles = await listScopeMappings(store, realmId, owner);
          const fullScope = kind === 'client' ? (await store.clients.get(realmId, name))?.fullScopeAllowed : undefined;
          return { roles, fullScope };
        },
        { access: 'read' },
      );
      for (const r of roles) process.stdout.write(`${terminalSafe(r.name)}\t${terminalSafe(r.clientId)}\n`);
      if (fullScope === true) process.stderr.write(`realmgate: client ${terminalSafe(name)} has full scope: its tokens carry every role of their user; these mappings count once it is off (client update --full-scope off)\n`);
    });
  for (const [verb, remove] of [
    ['add', false],
    ['remove', true],
  ] as const) {
    cmd
      .command(`${verb} <realm> ${ownerArg} <role...>`)
      .description(remove ? `take roles out of ${whose} scope` : `put roles in ${whose} scope (the next tokens of a client without full scope may carry them)`)
      .option('--client <client-id>', ROLE_CLIENT_HELP)
      .action(async (realmId: string, name: string, names: string[], o: { client?: string }) => {
        await withStore((store) => changeScopeMappingsByName(store, { realmId, owner: { kind, id: name }, clientId: o.client ?? '', names, remove }, cliActor()));
        process.stdout.write(`${remove ? 'removed' : 'added'} ${names.map(terminalSafe).join(', ')} (${where(o.client)}) ${remove ? 'from' : 'to'} the scope of ${ownerWord} ${terminalSafe(name)} in realm ${terminalSafe(realmId)}\n`);
      });
  }
}
