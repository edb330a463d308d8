import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { hasAdminRole } from '../../admin/authorization.js';
import type { Group } from '../../storage/repos/groups.js';
import {
  createGroup,
  deleteGroup,
  groupByPath,
  joinGroup,
  leaveGroup,
  moveGroup,
  pathOf,
  pathsOf,
  requireGroup,
  setDefaultGroup,
  updateGroup,
} from '../../admin/operations/groups.js';
import { toGroupRepresentation, type GroupRepresentation } from '../../admin/keycloak/representations/group.js';
import { toUserRepresentation } from '../../admin/keycloak/representations/user.js';
import { usersWithOtp } from '../../admin/operations/user-credentials.js';
import { checkPage, NotFound, ValidationError } from '../../admin/validation.js';
import { actorOf, mappingGuard, requireRole } from './authenticate.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['groups'];
const groupParams = params({ id: { type: 'string', maxLength: 64 } });

/** Keycloak's group listing parameters (GroupsResource.getGroups, GroupResource.getSubGroups). */
const listQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 255 },
    q: { type: 'string', maxLength: 2048 },
    exact: { type: 'boolean' },
    briefRepresentation: { type: 'boolean' },
    populateHierarchy: { type: 'boolean' },
    subGroupsCount: { type: 'boolean' },
    first: { type: 'integer' },
    max: { type: 'integer' },
  },
} as const;

interface ListQuery {
  search?: string;
  q?: string;
  exact?: boolean;
  briefRepresentation?: boolean;
  populateHierarchy?: boolean;
  subGroupsCount?: boolean;
  first?: number;
  max?: number;
}

/** A GroupRepresentation body: the fields Realmgate keeps (name, description, attributes; id to move an existing group). */
function groupBody(body: unknown): { id?: unknown; name?: unknown; description?: unknown; attributes?: unknown } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the request body must be a group (a JSON object)');
  const b = body as Record<string, unknown>;
  return { id: b.id, name: b.name, description: b.description, attributes: b.attributes };
}

/**
 * Keycloak's attribute query `q`: space-separated `name:value` pairs, every one of which a group's
 * attributes must hold (a value with spaces is not expressible, as in Keycloak).
 */
function parseAttributeQuery(q: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of q.trim().split(/\s+/)) {
    if (part === '') continue;
    const i = part.indexOf(':');
    if (i <= 0) throw new ValidationError(`the query ${JSON.stringify(part)} must be name:value`);
    pairs.push([part.slice(0, i), part.slice(i + 1)]);
  }
  return pairs;
}

/** Keycloak's GroupsResource and GroupResource, and a user's groups (UserResource). */
export async function groupRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  /** What the caller may do with groups, as Keycloak's `access` map says it (no fine-grained permissions: the realm's roles decide). */
  function access(caller: AdminCaller, realmId: string): Record<string, boolean> {
    const view = hasAdminRole(caller, realmId, 'view-users');
    const manage = hasAdminRole(caller, realmId, 'manage-users');
    return { view, viewMembers: view, manage, manageMembers: manage, manageMembership: manage };
  }

  /** Representations of these groups: brief, or full with attributes and mapped roles; subgroup counts in one query. */
  async function reps(caller: AdminCaller, realmId: string, groups: Group[], o: { brief: boolean; paths?: Map<string, string> }): Promise<GroupRepresentation[]> {
    const ids = groups.map((g) => g.id);
    const [counts, paths] = await Promise.all([store.groups.childCounts(ids), o.paths ?? pathsOf(store, ids)]);
    const acc = access(caller, realmId);
    return Promise.all(
      groups.map(async (g) =>
        toGroupRepresentation(g, {
          path: paths.get(g.id) ?? `/${g.name}`,
          subGroupCount: counts.get(g.id) ?? 0,
          access: acc,
          ...(o.brief ? {} : { roles: await store.groups.mappedRoles(g.id) }),
        }),
      ),
    );
  }

  /**
   * Groups that match a search, in their hierarchy (Keycloak's populateHierarchy, the default): the
   * top-level groups above the matches, a page of them, each with subGroups down to the matches only.
   */
  async function hierarchy(caller: AdminCaller, realmId: string, matches: Group[], o: { brief: boolean; first: number; max: number }): Promise<GroupRepresentation[]> {
    const lineages = await store.groups.lineages(matches.map((g) => g.id));
    const byId = new Map<string, Group>();
    const children = new Map<string, Set<string>>();
    for (const line of lineages.values()) {
      line.forEach((g, i) => {
        byId.set(g.id, g);
        const parent = i === 0 ? '' : line[i - 1]!.id;
        (children.get(parent) ?? children.set(parent, new Set()).get(parent)!).add(g.id);
      });
    }
    const all = [...byId.values()];
    const paths = new Map([...lineages.values()].flatMap((line) => line.map((g, i): [string, string] => [g.id, pathOf(line.slice(0, i + 1))])));
    const flat = new Map((await reps(caller, realmId, all, { brief: o.brief, paths })).map((r) => [r.id, r]));
    const build = (id: string): GroupRepresentation => {
      const rep = flat.get(id)!;
      const kids = [...(children.get(id) ?? [])].map((k) => byId.get(k)!).sort((a, b) => a.name.localeCompare(b.name));
      return { ...rep, subGroups: kids.map((k) => build(k.id)) };
    };
    const top = [...(children.get('') ?? [])].map((k) => byId.get(k)!).sort((a, b) => a.name.localeCompare(b.name));
    return top.slice(o.first, o.first + o.max).map((g) => build(g.id));
  }

  /** The groups an attribute query matches, anywhere in the realm. */
  async function attributeMatches(realmId: string, q: string): Promise<Group[]> {
    const pairs = parseAttributeQuery(q);
    return (await store.groups.withAttributes(realmId)).filter((g) => pairs.every(([k, v]) => (g.attributes[k] ?? []).includes(v)));
  }

  app.get<{ Params: { realm: string }; Querystring: ListQuery }>(
    '/realms/:realm/groups',
    { schema: { tags, summary: 'Top-level groups, a page of them; with search (name) or q (attributes), the matching groups in their hierarchy', params: realmParams, querystring: listQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-groups');
      const q = req.query;
      checkPage(q);
      const page = { first: q.first ?? 0, max: q.max ?? 100 };
      const brief = q.briefRepresentation ?? true;
      if (q.search !== undefined || q.q !== undefined) {
        let matches = q.search !== undefined ? await store.groups.searchByName(realm.id, q.search.trim(), q.exact ?? false) : await attributeMatches(realm.id, q.q!);
        if (q.search !== undefined && q.q !== undefined) {
          const byAttributes = new Set((await attributeMatches(realm.id, q.q)).map((g) => g.id));
          matches = matches.filter((g) => byAttributes.has(g.id));
        }
        if (q.populateHierarchy === false) return reps(caller, realm.id, matches.slice(page.first, page.first + page.max), { brief });
        return hierarchy(caller, realm.id, matches, { brief, ...page });
      }
      return reps(caller, realm.id, await store.groups.children(realm.id, '', page), { brief });
    },
  );

  app.get<{ Params: { realm: string }; Querystring: { search?: string; top?: boolean } }>(
    '/realms/:realm/groups/count',
    {
      schema: {
        tags,
        summary: 'How many groups the realm has (top: top-level only; search: named with it)',
        params: realmParams,
        querystring: { type: 'object', properties: { search: { type: 'string', maxLength: 255 }, top: { type: 'boolean' } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-groups');
      const count = await store.groups.count(realm.id, { ...(req.query.top ? { top: true } : {}), ...(req.query.search !== undefined ? { search: req.query.search.trim() } : {}) });
      return { count };
    },
  );

  /**
   * Creates a group (201, Location names it), or with the id of an existing group moves that group
   * here (204): Keycloak's POST on /groups (to the top) and on /groups/{id}/children.
   */
  async function createOrMove(caller: AdminCaller, realmId: string, parentId: string, body: unknown): Promise<{ createdId?: string }> {
    const b = groupBody(body);
    if (b.id !== undefined && b.id !== null) {
      if (typeof b.id !== 'string') throw new ValidationError('the group id must be a string');
      await moveGroup(store, { realmId, id: b.id, parentId }, actorOf(caller), mappingGuard(caller));
      return {};
    }
    const { group } = await createGroup(store, { realmId, parentId, name: b.name, description: b.description, attributes: b.attributes }, actorOf(caller));
    return { createdId: group.id };
  }

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/groups',
    { schema: { tags, summary: 'Create a top-level group, or move an existing group (its id in the body) to the top', params: realmParams, body: anyObject, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const r = await createOrMove(caller, realm.id, '', req.body);
      services.cache.clear();
      return r.createdId ? created(services, reply, `${encodeURIComponent(realm.id)}/groups/${r.createdId}`) : reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/groups/:id', { schema: { tags, summary: 'A group, with its attributes and role mappings', params: groupParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-users');
    const group = await requireGroup(store, realm.id, req.params.id);
    return (await reps(caller, realm.id, [group], { brief: false }))[0];
  });

  app.put<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/groups/:id',
    { schema: { tags, summary: 'Rename a group or change its description or attributes (a field left out is kept)', params: groupParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const b = groupBody(req.body);
      await updateGroup(store, { realmId: realm.id, id: req.params.id, name: b.name, description: b.description, attributes: b.attributes }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/groups/:id',
    { schema: { tags, summary: 'Delete a group and its subgroups; their members lose the roles they held through them', params: groupParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      await deleteGroup(store, { realmId: realm.id, id: req.params.id }, actorOf(caller), mappingGuard(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string }; Querystring: ListQuery }>(
    '/realms/:realm/groups/:id/children',
    { schema: { tags, summary: "A page of a group's subgroups (10 unless max says otherwise), by name", params: groupParams, querystring: listQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-users');
      const parent = await requireGroup(store, realm.id, req.params.id);
      const q = req.query;
      checkPage(q);
      // Keycloak's GroupResource.getSubGroups: first 0, max 10, full representations unless asked otherwise.
      const kids = await store.groups.children(realm.id, parent.id, { ...(q.search !== undefined ? { search: q.search.trim(), exact: q.exact ?? false } : {}), first: q.first ?? 0, max: q.max ?? 10 });
      const parentPath = (await pathsOf(store, [parent.id])).get(parent.id)!;
      return reps(caller, realm.id, kids, { brief: q.briefRepresentation ?? false, paths: new Map(kids.map((k) => [k.id, `${parentPath}/${k.name}`])) });
    },
  );

  app.post<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/groups/:id/children',
    { schema: { tags, summary: 'Create a subgroup, or move an existing group (its id in the body) under this one', params: groupParams, body: anyObject, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const parent = await requireGroup(store, realm.id, req.params.id);
      const r = await createOrMove(caller, realm.id, parent.id, req.body);
      services.cache.clear();
      return r.createdId ? created(services, reply, `${encodeURIComponent(realm.id)}/groups/${r.createdId}`) : reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string }; Querystring: { first?: number; max?: number; briefRepresentation?: boolean } }>(
    '/realms/:realm/groups/:id/members',
    {
      schema: {
        tags,
        summary: "A page of a group's direct members, by username",
        params: groupParams,
        querystring: { type: 'object', properties: { first: { type: 'integer' }, max: { type: 'integer' }, briefRepresentation: { type: 'boolean' } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-users');
      const group = await requireGroup(store, realm.id, req.params.id);
      checkPage(req.query);
      const page = await store.groups.members(group.id, req.query.first ?? 0, req.query.max ?? 100);
      const users = await Promise.all(page.users.map((u) => store.users.get(u.id)));
      const canManage = hasAdminRole(caller, realm.id, 'manage-users');
      const otp = req.query.briefRepresentation ? new Set<string>() : await usersWithOtp(store, page.users.map((u) => u.id));
      return users.filter((u) => u !== undefined).map((u) => toUserRepresentation(u!, { brief: req.query.briefRepresentation ?? false, canManage, totp: otp.has(u!.id) }));
    },
  );

  app.get<{ Params: { realm: string; '*': string } }>(
    '/realms/:realm/group-by-path/*',
    { schema: { tags, summary: 'A group by its path (/parent/child)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-users');
      let group: Group;
      try {
        group = await groupByPath(store, realm.id, req.params['*']);
      } catch (err) {
        if (err instanceof NotFound) throw new NotFound('Group path does not exist');
        throw err;
      }
      return (await reps(caller, realm.id, [group], { brief: false }))[0];
    },
  );

  // The realm's default groups (Keycloak's RealmAdminResource default-groups): read with view-realm,
  // changed with manage-realm; every user created from then on joins them.
  app.get<{ Params: { realm: string } }>('/realms/:realm/default-groups', { schema: { tags, summary: "The realm's default groups, which every new user joins", params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return reps(caller, realm.id, await store.groups.defaults(realm.id), { brief: true });
  });
  for (const method of ['PUT', 'DELETE'] as const) {
    app.route<{ Params: { realm: string; id: string } }>({
      method,
      url: '/realms/:realm/default-groups/:id',
      schema: { tags, summary: method === 'PUT' ? 'Make a group a default group' : 'Make a group no longer a default group', params: groupParams, response: noContent204, security },
      handler: async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-realm');
        await setDefaultGroup(store, { realmId: realm.id, groupId: req.params.id, isDefault: method === 'PUT' }, actorOf(caller));
        return reply.code(204).send();
      },
    });
  }

  // A user's groups (Keycloak's UserResource): read with view-users, joined and left with manage-users.
  const userParams = params({ id: { type: 'string', maxLength: 64 } });
  async function member(caller: AdminCaller, realmId: string, id: string, role: 'view-users' | 'manage-users'): Promise<string> {
    const realm = await loadRealm(services, caller, realmId);
    requireRole(caller, realm.id, role);
    const user = await store.users.get(id);
    if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
    return realm.id;
  }

  app.get<{ Params: { realm: string; id: string }; Querystring: { search?: string; first?: number; max?: number; briefRepresentation?: boolean } }>(
    '/realms/:realm/users/:id/groups',
    {
      schema: {
        tags,
        summary: 'The groups a user belongs to directly, by path',
        params: userParams,
        querystring: { type: 'object', properties: { search: { type: 'string', maxLength: 255 }, first: { type: 'integer' }, max: { type: 'integer' }, briefRepresentation: { type: 'boolean' } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realmId = await member(caller, req.params.realm, req.params.id, 'view-users');
      checkPage(req.query);
      let groups = await store.groups.userGroups(req.params.id);
      const search = req.query.search?.trim().toLowerCase();
      if (search) groups = groups.filter((g) => g.name.toLowerCase().includes(search));
      const paths = await pathsOf(store, groups.map((g) => g.id));
      groups.sort((a, b) => (paths.get(a.id) ?? '').localeCompare(paths.get(b.id) ?? ''));
      const first = req.query.first ?? 0;
      return reps(caller, realmId, groups.slice(first, first + (req.query.max ?? 100)), { brief: req.query.briefRepresentation ?? true, paths });
    },
  );

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/users/:id/groups/count', { schema: { tags, summary: 'How many groups a user belongs to directly', params: userParams, security } }, async (req) => {
    const caller = callerOf(req);
    await member(caller, req.params.realm, req.params.id, 'view-users');
    return { count: (await store.groups.userGroups(req.params.id)).length };
  });

  for (const method of ['PUT', 'DELETE'] as const) {
    app.route<{ Params: { realm: string; id: string; groupId: string } }>({
      method,
      url: '/realms/:realm/users/:id/groups/:groupId',
      schema: {
        tags,
        summary: method === 'PUT' ? 'Add a user to a group (the group’s roles and its parents’ are in the next token)' : 'Take a user out of a group',
        params: params({ id: { type: 'string', maxLength: 64 }, groupId: { type: 'string', maxLength: 64 } }),
        response: noContent204,
        security,
      },
      handler: async (req, reply) => {
        const caller = callerOf(req);
        const realmId = await member(caller, req.params.realm, req.params.id, 'manage-users');
        const input = { realmId, userId: req.params.id, groupId: req.params.groupId };
        if (method === 'PUT') await joinGroup(store, input, actorOf(caller), mappingGuard(caller));
        else await leaveGroup(store, { ...input, quiet: true }, actorOf(caller), mappingGuard(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    });
  }
}
