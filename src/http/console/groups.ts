import type { FastifyInstance, FastifyReply } from 'fastify';
import { hasAdminRole } from '../../admin/authorization.js';
import {
  changeGroupRoleMappings,
  createGroup,
  deleteGroup,
  groupDetails,
  groupRoleChoices,
  groupTree,
  joinGroup,
  leaveGroup,
  moveGroup,
  outsideSubtree,
  requireGroup,
  setDefaultGroup,
  updateGroup,
} from '../../admin/operations/groups.js';
import { findRoleById } from '../../admin/operations/roles.js';
import { requireUser } from '../../admin/operations/users.js';
import type { Group } from '../../storage/repos/groups.js';
import { NotFound } from '../../admin/validation.js';
import { realmBase } from '../../views/console/layout.js';
import { groupPage, groupsPage, groupUrl, visible } from '../../views/console/group-pages.js';
import { sendPage } from '../interaction/render.js';
import { CONSOLE_PATH } from './session.js';
import { field, isRefusal, mappingGuard, text, type ConsoleKit, type Req, type Signed } from './common.js';

/** Outcomes a redirect of these pages may announce (routes.ts adds them to its fixed set). */
export const GROUP_NOTICES: Record<string, string> = {
  'group-created': 'The group was created.',
  'group-saved': 'The group was saved.',
  'group-moved': 'The group was moved: from their next token on, its members hold the roles of the groups above it there.',
  'group-deleted': 'The group and its subgroups were deleted: their members no longer carry the roles they held through them.',
  'group-member-added': "The member was added: their next access token carries the group's roles.",
  'group-member-removed': "The member was removed: their next access token no longer carries the group's roles.",
  'group-role-mapped': "The role was mapped to the group: its members' next access tokens carry it.",
  'group-role-unmapped': "The role was unmapped from the group: its members' next access tokens no longer carry it through the group.",
  'group-joined': "The user joined the group: their next access token carries the group's roles.",
  'group-left': "The user left the group: their next access token no longer carries the group's roles.",
  'group-default-on': 'The group is a default group: every user created from now on joins it.',
  'group-default-off': 'The group is no longer a default group: users created from now on do not join it.',
};

const CHOOSE_GROUP = 'That group does not exist (any more) in this realm: choose one of the list.';

/**
 * Groups in the console, as the admin API decides for them: view-users to read, manage-users to change.
 * A change of who holds which role through a group (joining, leaving, mapping, moving, deleting) passes
 * the same check as a user's own role mappings (mappingGuard: an admin role only by an admin holding it).
 * Groups are named by id in URLs and forms, so any name works, '..' and '/x' included.
 */
export function groupRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { services, signedIn, realmOf, need, attempt, showUser } = kit;
  const store = services.store;
  const R = `${CONSOLE_PATH}/realms/:realm`;

  /** The realm of the URL, once the admin holds view-users (or manage-users, to change) there. */
  async function usersRealm(s: Signed, req: Req, level: 'view' | 'manage'): Promise<string> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, level === 'view' ? 'view-users' : 'manage-users');
    return realmId;
  }

  async function showGroups(s: Signed, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const tree = await groupTree(store, { realmId });
    const frame = { ...s.frame, title: 'Groups', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, groupsPage(frame, tree, hasAdminRole(s.caller, realmId, 'manage-users'), form));
  }

  async function showGroup(s: Signed, reply: FastifyReply, realmId: string, id: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const [details, roles, tree, defaults] = await Promise.all([
      groupDetails(store, { realmId, id, maxMembers: 500 }),
      groupRoleChoices(store, { realmId, id }),
      groupTree(store, { realmId }),
      store.groups.defaults(realmId),
    ]);
    const { group } = details;
    const byId = new Map(tree.map((e) => [e.group.id, e.group]));
    const ancestors: Group[] = [];
    for (let p = byId.get(group.parentId); p && ancestors.length < tree.length; p = byId.get(p.parentId)) ancestors.unshift(p);
    const moveTargets = outsideSubtree(tree, group.id);
    const data = {
      group,
      ancestors,
      subgroups: tree.filter((e) => e.group.parentId === group.id),
      descendants: tree.length - moveTargets.length - 1,
      members: details.members,
      memberCount: details.memberCount,
      roles,
      moveTargets,
      isDefault: defaults.some((g) => g.id === id),
      canSetDefault: hasAdminRole(s.caller, realmId, 'manage-realm'),
    };
    const frame = { ...s.frame, title: visible(details.path), realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, groupPage(frame, data, hasAdminRole(s.caller, realmId, 'manage-users'), form));
  }

  app.get(`${R}/groups`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await usersRealm(s, req, 'view');
    return showGroups(s, reply, realmId);
  });

  // A group at the top (parent '') or under the group the form names by id.
  app.post(`${R}/groups`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await usersRealm(s, req, 'manage');
    const form = { name: field(req, 'name'), description: text(req, 'description'), parent: field(req, 'parent') };
    let id: string;
    try {
      ({ group: { id } } = await createGroup(store, { realmId, parentId: form.parent, name: form.name, description: form.description }, s.actor));
    } catch (err) {
      if (err instanceof NotFound) return showGroups(s, reply, realmId, 400, 'That parent group does not exist (any more): choose one of the list.', form);
      if (isRefusal(err)) return showGroups(s, reply, realmId, 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${groupUrl(realmId, id)}?done=group-created`, 303);
  });

  app.get(`${R}/groups/:group`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await usersRealm(s, req, 'view');
    return showGroup(s, reply, realmId, req.params.group!);
  });

  /** The group of the URL, once the admin holds manage-users: a group that is gone is a 404. */
  async function managedGroup(s: Signed, req: Req): Promise<{ realmId: string; group: Group; page: string }> {
    const realmId = await usersRealm(s, req, 'manage');
    const group = await requireGroup(store, realmId, req.params.group!);
    return { realmId, group, page: groupUrl(realmId, group.id) };
  }

  app.post(`${R}/groups/:group/children`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, group } = await managedGroup(s, req);
    const form = { childName: field(req, 'name'), childDescription: text(req, 'description') };
    let id: string;
    try {
      ({ group: { id } } = await createGroup(store, { realmId, parentId: group.id, name: form.childName, description: form.childDescription }, s.actor));
    } catch (err) {
      if (isRefusal(err)) return showGroup(s, reply, realmId, group.id, 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${groupUrl(realmId, id)}?done=group-created`, 303);
  });

  app.post(`${R}/groups/:group/update`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, group, page } = await managedGroup(s, req);
    const form = { name: field(req, 'name'), description: text(req, 'description') };
    return attempt(
      reply,
      () => updateGroup(store, { realmId, id: group.id, name: form.name, description: form.description }, s.actor),
      (error) => showGroup(s, reply, realmId, group.id, 400, error, form),
      `${page}?done=group-saved`,
    );
  });

  // Under the group the form names by id, or to the top (''); its members gain and lose roles, which the guard sees first.
  app.post(`${R}/groups/:group/move`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, group, page } = await managedGroup(s, req);
    try {
      await moveGroup(store, { realmId, id: group.id, parentId: field(req, 'parent') }, s.actor, mappingGuard(s.caller));
    } catch (err) {
      if (err instanceof NotFound) return showGroup(s, reply, realmId, group.id, 400, CHOOSE_GROUP);
      if (isRefusal(err)) return showGroup(s, reply, realmId, group.id, 400, err.message);
      throw err;
    }
    return reply.redirect(`${page}?done=group-moved`, 303);
  });

  // A default group (every user created joins it) is a realm setting, as in the admin API: manage-realm.
  app.post(`${R}/groups/:group/default`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    const group = await requireGroup(store, realmId, req.params.group!);
    const isDefault = field(req, 'default') === 'on';
    await setDefaultGroup(store, { realmId, groupId: group.id, isDefault }, s.actor);
    return reply.redirect(`${groupUrl(realmId, group.id)}?done=group-default-${isDefault ? 'on' : 'off'}`, 303);
  });

  // Deleting asks for the group's name typed again, as deleting a role or a client does.
  app.post(`${R}/groups/:group/delete`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, group } = await managedGroup(s, req);
    if (field(req, 'confirm') !== group.name) return showGroup(s, reply, realmId, group.id, 400, 'Type the group name to confirm that the group is to be deleted.');
    return attempt(
      reply,
      () => deleteGroup(store, { realmId, id: group.id }, s.actor, mappingGuard(s.caller)),
      (error) => showGroup(s, reply, realmId, group.id, 400, error),
      `${realmBase(realmId)}/groups?done=group-deleted`,
    );
  });

  // Members: added by the username typed, removed by the id of the list's button.
  for (const op of ['add', 'remove'] as const) {
    app.post(`${R}/groups/:group/members${op === 'add' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const { realmId, group, page } = await managedGroup(s, req);
      const user = field(req, 'user');
      try {
        const found = await requireUser(store, realmId, user);
        await (op === 'add' ? joinGroup : leaveGroup)(store, { realmId, userId: found.id, groupId: group.id }, s.actor, mappingGuard(s.caller));
      } catch (err) {
        // An unknown username is the operator's typo: said on the page, with what was typed, not a 404.
        if (err instanceof NotFound || isRefusal(err)) return showGroup(s, reply, realmId, group.id, 400, err.message, op === 'add' ? { user } : {});
        throw err;
      }
      return reply.redirect(`${page}?done=group-member-${op === 'add' ? 'added' : 'removed'}`, 303);
    });
  }

  // Role mappings: the form names the role by its id.
  for (const op of ['map', 'unmap'] as const) {
    app.post(`${R}/groups/:group/roles${op === 'map' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const { realmId, group, page } = await managedGroup(s, req);
      const role = await findRoleById(store, realmId, field(req, 'role'));
      if (!role) return showGroup(s, reply, realmId, group.id, 400, 'That role does not exist (any more) in this realm: choose one of the list.');
      return attempt(
        reply,
        () => changeGroupRoleMappings(store, { realmId, groupId: group.id, clientId: role.clientId, roles: [{ id: role.id }], remove: op === 'unmap' }, s.actor, mappingGuard(s.caller)),
        (error) => showGroup(s, reply, realmId, group.id, 400, error),
        `${page}?done=group-role-${op}ped`,
      );
    });
  }

  // A user's groups, on the user's page: the form names the group by its id.
  for (const op of ['join', 'leave'] as const) {
    app.post(`${R}/users/:user/groups${op === 'join' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await usersRealm(s, req, 'manage');
      const user = await requireUser(store, realmId, req.params.user!);
      const userPage = `${realmBase(realmId)}/users/${encodeURIComponent(user.id)}`;
      let group: Group;
      try {
        group = await requireGroup(store, realmId, field(req, 'group'));
      } catch (err) {
        if (err instanceof NotFound) return showUser(s, reply, realmId, user.id, 400, CHOOSE_GROUP);
        throw err;
      }
      try {
        await (op === 'join' ? joinGroup : leaveGroup)(store, { realmId, userId: user.id, groupId: group.id }, s.actor, mappingGuard(s.caller));
      } catch (err) {
        if (err instanceof NotFound || isRefusal(err)) return showUser(s, reply, realmId, user.id, 400, err.message);
        throw err;
      }
      return reply.redirect(`${userPage}?done=group-${op === 'join' ? 'joined' : 'left'}`, 303);
    });
  }
}
