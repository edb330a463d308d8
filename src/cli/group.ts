import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import {
  changeGroupRoleMappings,
  createGroupAtPath,
  deleteGroup,
  groupDetails,
  groupMemberNames,
  groupTree,
  joinGroup,
  leaveGroup,
  moveGroup,
  pathsOf,
  requireGroupByPath,
  requireUser,
  setDefaultGroup,
  listDefaultGroups,
  updateGroup,
  userGroupsWithPaths,
} from '../admin/operations.js';
import { cliActor } from '../admin/operations/common.js';
import type { Store } from '../storage/store.js';

interface ClientOption {
  client?: string;
}

const PATH_HELP = 'groups are named by their path: /parent/child';

async function pathOfGroup(store: Store, id: string): Promise<string> {
  return (await pathsOf(store, [id])).get(id) ?? '';
}

function where(o: ClientOption, realmId: string): string {
  return o.client ? `client ${o.client} of realm ${realmId}` : `realm ${realmId}`;
}

/** `group create|update|move|delete|list|members|roles|join|leave|grant|revoke`: groups of users, named by path. */
export function registerGroup(program: Command): void {
  const group = program
    .command('group')
    .description(`manage groups: a tree per realm; a member holds the roles of its groups and of every group above them (${PATH_HELP})`);
  group
    .command('create <realm> <path>')
    .description('create a group at a path: /name at the top, /parent/name under a parent that exists')
    .option('--description <text>', 'what the group is for')
    .action(async (realmId: string, path: string, o: { description?: string }) => {
      const created = await withStore((store) => createGroupAtPath(store, { realmId, path, description: o.description }, cliActor()));
      process.stdout.write(`created group ${terminalSafe(created.path)} in realm ${realmId}\n`);
    });
  group
    .command('update <realm> <path>')
    .description('rename a group (its subgroups follow it) or change its description')
    .option('--name <new-name>', 'the new name (among its siblings, a name is taken once)')
    .option('--description <text>', 'the new description ("" removes it)')
    .action(async (realmId: string, path: string, o: { name?: string; description?: string }) => {
      if (o.name === undefined && o.description === undefined) throw new CliError('nothing to change: give --name, --description or both');
      const moved = await withStore(async (store) => {
        const g = await requireGroupByPath(store, realmId, path);
        await updateGroup(store, { realmId, id: g.id, name: o.name, description: o.description }, cliActor());
        return await pathOfGroup(store, g.id);
      });
      process.stdout.write(`updated group ${terminalSafe(moved)} in realm ${realmId}\n`);
    });
  group
    .command('move <realm> <path> <new-parent>')
    .description('move a group with its subgroups under another group, or to the top with /; its members gain the roles of the groups above it there and lose the others')
    .action(async (realmId: string, path: string, newParent: string) => {
      const moved = await withStore(async (store) => {
        const g = await requireGroupByPath(store, realmId, path);
        const parentId = newParent === '/' ? '' : (await requireGroupByPath(store, realmId, newParent)).id;
        await moveGroup(store, { realmId, id: g.id, parentId }, cliActor());
        return await pathOfGroup(store, g.id);
      });
      process.stdout.write(`moved group to ${terminalSafe(moved)} in realm ${realmId}\n`);
    });
  group
    .command('delete <realm> <path>')
    .description('delete a group with its subgroups; their members lose the roles they held through them')
    .action(async (realmId: string, path: string) => {
      const deleted = await withStore(async (store) => {
        const g = await requireGroupByPath(store, realmId, path);
        const full = await pathOfGroup(store, g.id);
        await deleteGroup(store, { realmId, id: g.id }, cliActor());
        return full;
      });
      process.stdout.write(`deleted group ${terminalSafe(deleted)} and its subgroups in realm ${realmId}\n`);
    });
  group
    .command('list <realm>')
    .description("list the realm's groups in tree order (each after its parent): path, tab, number of direct members; control characters shown escaped")
    .action(async (realmId: string) => {
      const tree = await withStore((store) => groupTree(store, { realmId }), { access: 'read' });
      for (const e of tree) process.stdout.write(`${terminalSafe(e.path)}\t${e.members}\n`);
    });
  group
    .command('default <realm> [path]')
    .description("make a group one of the realm's default groups, which every user created from then on joins (--remove: no longer); without a path, list them")
    .option('--remove', 'the group is no longer a default group')
    .action(async (realmId: string, path: string | undefined, o: { remove?: boolean }) => {
      if (path === undefined) {
        if (o.remove) throw new CliError('--remove needs the path of the group');
        const paths = await withStore(async (store) => {
          const defaults = await listDefaultGroups(store, { realmId });
          return [...(await pathsOf(store, defaults.map((g) => g.id))).values()].sort();
        }, { access: 'read' });
        for (const p of paths) process.stdout.write(`${terminalSafe(p)}\n`);
        return;
      }
      const done = await withStore(async (store) => {
        const g = await requireGroupByPath(store, realmId, path);
        await setDefaultGroup(store, { realmId, groupId: g.id, isDefault: !o.remove }, cliActor());
        return await pathOfGroup(store, g.id);
      });
      process.stdout.write(o.remove ? `${terminalSafe(done)} is no longer a default group of realm ${realmId}\n` : `${terminalSafe(done)} is a default group of realm ${realmId}: every user created from now on joins it\n`);
    });
  group
    .command('members <realm> <path>')
    .description("list the usernames of a group's direct members (not those of its subgroups)")
    .action(async (realmId: string, path: string) => {
      const names = await withStore(async (store) => groupMemberNames(store, { realmId, id: (await requireGroupByPath(store, realmId, path)).id }), { access: 'read' });
      for (const n of names) process.stdout.write(`${terminalSafe(n)}\n`);
    });
  group
    .command('roles <realm> <path>')
    .description("list the roles a group's members hold through it: name, tab, client ('' for a realm role), tab, 'mapped' (to the group) or 'inherited' (from a group above it)")
    .action(async (realmId: string, path: string) => {
      const d = await withStore(async (store) => groupDetails(store, { realmId, id: (await requireGroupByPath(store, realmId, path)).id, maxMembers: 0 }), { access: 'read' });
      for (const [roles, how] of [[d.roles, 'mapped'], [d.inheritedRoles, 'inherited']] as const) {
        for (const r of roles) process.stdout.write(`${terminalSafe(r.name)}\t${terminalSafe(r.clientId)}\t${how}\n`);
      }
    });
  for (const [verb, leave] of [['join', false], ['leave', true]] as const) {
    group
      .command(`${verb} <realm> <user> <path>`)
      .description(leave ? 'take a user (by username or id) out of a group' : "add a user (by username or id) to a group: their next access token carries the group's roles and those of the groups above it")
      .action(async (realmId: string, ref: string, path: string) => {
        const done = await withStore(async (store) => {
          const u = await requireUser(store, realmId, ref);
          const g = await requireGroupByPath(store, realmId, path);
          await (leave ? leaveGroup : joinGroup)(store, { realmId, userId: u.id, groupId: g.id }, cliActor());
          return { username: u.username, path: await pathOfGroup(store, g.id) };
        });
        process.stdout.write(`${terminalSafe(done.username)} ${leave ? 'left' : 'joined'} ${terminalSafe(done.path)} in realm ${realmId}\n`);
      });
  }
  for (const [verb, remove] of [['grant', false], ['revoke', true]] as const) {
    group
      .command(`${verb} <realm> <path> <role...>`)
      .description(remove ? "take roles from a group (its members' next tokens no longer carry them, unless they hold them otherwise)" : "map roles to a group: its members, and the members of its subgroups, carry them in their next access tokens")
      .option('--client <client-id>', "the roles are this client's (client roles); without it, realm roles")
      .action(async (realmId: string, path: string, names: string[], o: ClientOption) => {
        const full = await withStore(async (store) => {
          const g = await requireGroupByPath(store, realmId, path);
          await changeGroupRoleMappings(store, { realmId, groupId: g.id, clientId: o.client ?? '', roles: names.map((name) => ({ name })), remove }, cliActor());
          return await pathOfGroup(store, g.id);
        });
        process.stdout.write(`${remove ? 'revoked' : 'granted'} ${names.map(terminalSafe).join(', ')} ${remove ? 'from' : 'to'} group ${terminalSafe(full)} in ${where(o, realmId)}\n`);
      });
  }
}

/** `user groups <realm> <user>`: the groups a user belongs to directly, by path. */
export function registerUserGroups(user: Command): void {
  user
    .command('groups <realm> <user>')
    .description('list the paths of the groups a user (by username or id) belongs to directly, sorted')
    .action(async (realmId: string, ref: string) => {
      const groups = await withStore(async (store) => userGroupsWithPaths(store, { realmId, userId: (await requireUser(store, realmId, ref)).id }), { access: 'read' });
      for (const g of groups) process.stdout.write(`${terminalSafe(g.path)}\n`);
    });
}
