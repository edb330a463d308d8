import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { Store } from '../../storage/store.js';
import type { Role } from '../../storage/repos/roles.js';
import { changeComposites, changeRoleMappings, createRole, deleteRole, requireRoleByName, roleComposites, updateRole } from '../../admin/operations/roles.js';
import { changeGroupRoleMappings, groupEffectiveRoles, pathsOf, requireGroup } from '../../admin/operations/groups.js';
import { toGroupRepresentation } from '../../admin/keycloak/representations/group.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { toUserRepresentation } from '../../admin/keycloak/representations/user.js';
import { checkPage, ValidationError } from '../../admin/validation.js';
import { actorOf, mappingGuard, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['roles'];

/** Keycloak's brief RoleRepresentation; `composite` when the role contains others (see roleRepresenter). */
export function roleRep(r: Role, composite = false): Record<string, unknown> {
  return { id: r.id, name: r.name, description: r.description ?? '', composite, clientRole: r.clientId !== '', containerId: r.clientId || r.realmId };
}

/** roleRep with the realm's composite flags, read once (one query) for every role a request answers. */
export async function roleRepresenter(store: Store, realmId: string): Promise<(r: Role) => Record<string, unknown>> {
  const composite = await store.roles.compositeIds(realmId);
  return (r) => roleRep(r, composite.has(r.id));
}

export function roleRefs(body: unknown): Array<{ id?: unknown; name?: unknown }> {
  if (!Array.isArray(body)) throw new ValidationError('the request body must be a list of roles');
  return body.map((r) => {
    if (!r || typeof r !== 'object') throw new ValidationError('each role must be an object with an id or a name');
    return r as { id?: unknown; name?: unknown };
  });
}

/** Realm and client roles, and users' role mappings (Keycloak's RoleMapperResource). */
export async function roleRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<{ Params: { realm: string } }>('/realms/:realm/roles', { schema: { tags, summary: 'Realm roles', params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return (await store.roles.list(realm.id, '')).map(await roleRepresenter(store, realm.id));
  });

  app.get<{ Params: { realm: string; name: string } }>('/realms/:realm/roles/:name', { schema: { tags, summary: 'A realm role', params: params({ name: { type: 'string' } }), security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    const role = await store.roles.find(realm.id, '', req.params.name);
    if (!role) throw notFound('Could not find role');
    return (await roleRepresenter(store, realm.id))(role);
  });

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/clients/:id/roles', { schema: { tags, summary: "A client's roles", params: params({ id: { type: 'string' } }), security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    if (!(await store.clients.get(realm.id, req.params.id))) throw notFound('Could not find client');
    return (await store.roles.list(realm.id, req.params.id)).map(await roleRepresenter(store, realm.id));
  });

  app.get<{ Params: { realm: string; id: string; roleName: string } }>(
    '/realms/:realm/clients/:id/roles/:roleName',
    { schema: { tags, summary: 'A client role', params: params({ id: { type: 'string' }, roleName: { type: 'string' } }), security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      const role = await store.roles.find(realm.id, req.params.id, req.params.roleName);
      if (!role) throw notFound('Could not find role');
      return (await roleRepresenter(store, realm.id))(role);
    },
  );

  /**
   * A RoleRepresentation body: its name, description and (creating) composites (attributes and the rest
   * are Keycloak's alone, ignored; a PUT ignores composites, as Keycloak's updateRole).
   */
  function roleBody(body: unknown): { name?: unknown; description?: unknown; composites?: unknown } {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the request body must be a role (a JSON object)');
    const b = body as Record<string, unknown>;
    return { name: b.name, description: b.description, composites: b.composites };
  }

  // Creating, changing and deleting roles (Keycloak's RoleContainerResource, RoleByIdResource): realm roles
  // need manage-realm, client roles manage-clients (view-realm, view-clients to read who has them).
  const containers = [
    { base: '/realms/:realm/roles', client: () => '', view: 'view-realm', manage: 'manage-realm', what: 'realm role' },
    { base: '/realms/:realm/clients/:id/roles', client: (p: Record<string, string>) => p.id!, view: 'view-clients', manage: 'manage-clients', what: 'client role' },
  ] as const;
  for (const c of containers) {
    const idParam: Record<string, { type: 'string' }> = c.base.includes(':id') ? { id: { type: 'string' } } : {};
    app.post<{ Params: Record<string, string> }>(c.base, { schema: { tags, summary: `Create a ${c.what}`, params: params(idParam), body: anyObject, security } }, async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm!);
      requireRole(caller, realm.id, c.manage);
      const body = roleBody(req.body);
      const clientId = c.client(req.params);
      // Keycloak 26's createRole adds the representation's composites (by name); admin roles among them
      // (or in what they contain) only by a caller who may map them (mappingGuard).
      const role = await createRole(store, { realmId: realm.id, clientId, name: body.name, description: body.description, composites: body.composites }, actorOf(caller), mappingGuard(caller));
      if (body.composites !== undefined && body.composites !== null) services.cache.clear();
      const name = encodeURIComponent(role.name);
      return created(services, reply, clientId ? `${realm.id}/clients/${encodeURIComponent(clientId)}/roles/${name}` : `${realm.id}/roles/${name}`);
    });
    const one = `${c.base}/:roleName`;
    const oneParams = params({ ...idParam, roleName: { type: 'string' } });
    app.put<{ Params: Record<string, string> }>(one, { schema: { tags, summary: `Rename a ${c.what} or change its description`, params: oneParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm!);
      requireRole(caller, realm.id, c.manage);
      const body = roleBody(req.body);
      await updateRole(store, { realmId: realm.id, clientId: c.client(req.params), name: req.params.roleName!, newName: body.name, description: body.description }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    });
    app.delete<{ Params: Record<string, string> }>(one, { schema: { tags, summary: `Delete a ${c.what} and every user's mapping to it`, params: oneParams, response: noContent204, security } }, async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm!);
      requireRole(caller, realm.id, c.manage);
      await deleteRole(store, { realmId: realm.id, clientId: c.client(req.params), name: req.params.roleName! }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    });
    // Who holds the role: its users (directly) and its groups, a page of each, with view-users.
    const holders = {
      users: async (role: Role, first: number, max: number): Promise<unknown[]> => {
        const page = await store.roles.holders(role.id, first, max);
        const users = await Promise.all(page.users.map((u) => store.users.get(u.id)));
        return users.filter((u) => u !== undefined).map((u) => toUserRepresentation(u!, { brief: true }));
      },
      groups: async (role: Role, first: number, max: number): Promise<unknown[]> => {
        const groups = (await store.groups.groupsWithRole(role.id)).slice(first, first + max);
        const [paths, counts] = await Promise.all([pathsOf(store, groups.map((g) => g.id)), store.groups.childCounts(groups.map((g) => g.id))]);
        return groups.map((g) => toGroupRepresentation(g, { path: paths.get(g.id) ?? `/${g.name}`, subGroupCount: counts.get(g.id) ?? 0 }));
      },
    };
    for (const [kind, list] of Object.entries(holders)) {
      app.get<{ Params: Record<string, string>; Querystring: { first?: number; max?: number } }>(
        `${one}/${kind}`,
        {
          schema: {
            tags,
            summary: kind === 'users' ? `The users granted a ${c.what}` : `The groups mapped a ${c.what}`,
            params: oneParams,
            querystring: { type: 'object', properties: { first: { type: 'integer' }, max: { type: 'integer' }, briefRepresentation: { type: 'boolean' } } },
            security,
          },
        },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'view-users');
          checkPage(req.query);
          const role = await store.roles.find(realm.id, c.client(req.params), req.params.roleName!);
          if (!role) throw notFound('Could not find role');
          return list(role, req.query.first ?? 0, req.query.max ?? 100);
        },
      );
    }
  }

  // Keycloak's roles-by-id: a role of any container, by its id.
  const byId = '/realms/:realm/roles-by-id/:roleId';
  const byIdParams = params({ roleId: { type: 'string' } });
  async function roleById(realmId: string, id: string): Promise<Role> {
    const role = await store.roles.get(id);
    if (!role || role.realmId !== realmId) throw notFound('Could not find role with id');
    return role;
  }
  app.get<{ Params: { realm: string; roleId: string } }>(byId, { schema: { tags, summary: 'A role by its id', params: byIdParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    const role = await roleById(realm.id, req.params.roleId);
    requireRole(caller, realm.id, role.clientId ? 'view-clients' : 'view-realm');
    return (await roleRepresenter(store, realm.id))(role);
  });
  app.put<{ Params: { realm: string; roleId: string } }>(byId, { schema: { tags, summary: 'Rename a role or change its description, by its id', params: byIdParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    const role = await roleById(realm.id, req.params.roleId);
    requireRole(caller, realm.id, role.clientId ? 'manage-clients' : 'manage-realm');
    const body = roleBody(req.body);
    await updateRole(store, { realmId: realm.id, clientId: role.clientId, name: role.name, newName: body.name, description: body.description }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });
  app.delete<{ Params: { realm: string; roleId: string } }>(byId, { schema: { tags, summary: 'Delete a role by its id', params: byIdParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    const role = await roleById(realm.id, req.params.roleId);
    requireRole(caller, realm.id, role.clientId ? 'manage-clients' : 'manage-realm');
    await deleteRole(store, { realmId: realm.id, clientId: role.clientId, name: role.name }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  // A role's composites (Keycloak's RoleByIdResource by id, RoleContainerResource by name): read with the
  // role's view role, changed with its manage role, as the role itself. GET answers the roles it contains
  // directly (Keycloak's getCompositesStream), all of them, the realm's, or one client's.
  const compositesQuery = { type: 'object', properties: { search: { type: 'string', maxLength: 255 }, first: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0 } } } as const;
  const compositeLists = [
    ['', 'every role', undefined],
    ['/realm', 'its realm roles', (): string => ''],
    ['/clients/:clientId', "one client's roles", (p: Record<string, string>): string => p.clientId!],
  ] as const;
  // Keycloak 26's GET roles-by-id/{id}/composites takes search (in the name), first and max.
  function page(roles: Role[], q: { search?: string; first?: number; max?: number }): Role[] {
    const search = q.search?.toLowerCase();
    const found = search ? roles.filter((r) => r.name.toLowerCase().includes(search)) : roles;
    const first = q.first ?? 0;
    return q.max === undefined ? found.slice(first) : found.slice(first, first + q.max);
  }
  async function answerComposites(realmId: string, role: Role, container: string | undefined): Promise<unknown[]> {
    const composites = await roleComposites(store, { realmId, roleId: role.id, ...(container !== undefined ? { container } : {}) });
    return composites.map(await roleRepresenter(store, realmId));
  }
  async function changeRoleComposites(req: FastifyRequest, caller: AdminCaller, realmId: string, role: Role, remove: boolean, resourcePath: string): Promise<void> {
    await changeComposites(store, { realmId, roleId: role.id, roles: roleRefs(req.body), remove, resourcePath }, actorOf(caller), mappingGuard(caller));
    services.cache.clear();
  }
  const changeSummary = (method: 'POST' | 'DELETE', how: string): string =>
    method === 'POST' ? `Add roles (each by its id) to a role, ${how}: its holders hold them too` : `Remove roles (each by its id) from a role, ${how}`;

  for (const [suffix, what, containerOf] of compositeLists) {
    app.get<{ Params: Record<string, string>; Querystring: { search?: string; first?: number; max?: number } }>(
      `${byId}/composites${suffix}`,
      {
        schema: {
          tags,
          summary: `The roles a role contains directly (${what}), by its id`,
          params: params(suffix.includes(':clientId') ? { roleId: { type: 'string' }, clientId: { type: 'string' } } : { roleId: { type: 'string' } }),
          ...(suffix === '' ? { querystring: compositesQuery } : {}),
          security,
        },
      },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        const role = await roleById(realm.id, req.params.roleId!);
        requireRole(caller, realm.id, role.clientId ? 'view-clients' : 'view-realm');
        if (suffix !== '') return answerComposites(realm.id, role, containerOf!(req.params));
        checkPage(req.query);
        const composites = page(await roleComposites(store, { realmId: realm.id, roleId: role.id }), req.query);
        return composites.map(await roleRepresenter(store, realm.id));
      },
    );
  }
  for (const method of ['POST', 'DELETE'] as const) {
    app.route<{ Params: { realm: string; roleId: string } }>({
      method,
      url: `${byId}/composites`,
      schema: { tags, summary: changeSummary(method, 'by its id'), params: byIdParams, response: noContent204, security },
      handler: async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        const role = await roleById(realm.id, req.params.roleId);
        requireRole(caller, realm.id, role.clientId ? 'manage-clients' : 'manage-realm');
        await changeRoleComposites(req, caller, realm.id, role, method === 'DELETE', `roles-by-id/${role.id}/composites`);
        return reply.code(204).send();
      },
    });
  }

  // The same by the role's name, under the realm's roles and a client's (Keycloak's RoleContainerResource:
  // an unknown role 404 "Could not find role", an unknown client 404 "Could not find client").
  for (const c of containers) {
    const idParam: Record<string, { type: 'string' }> = c.base.includes(':id') ? { id: { type: 'string' } } : {};
    const one = `${c.base}/:roleName`;
    for (const [suffix, what, containerOf] of compositeLists) {
      const listSuffix = suffix === '/clients/:clientId' ? '/clients/:client' : suffix;
      app.get<{ Params: Record<string, string> }>(
        `${one}/composites${listSuffix}`,
        {
          schema: {
            tags,
            summary: `The roles a ${c.what} contains directly (${what})`,
            params: params({ ...idParam, roleName: { type: 'string' }, ...(listSuffix.includes(':client') ? { client: { type: 'string' } } : {}) }),
            security,
          },
        },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, c.view);
          const role = await requireRoleByName(store, realm.id, c.client(req.params), req.params.roleName!);
          return answerComposites(realm.id, role, containerOf ? containerOf({ clientId: req.params.client! }) : undefined);
        },
      );
    }
    for (const method of ['POST', 'DELETE'] as const) {
      app.route<{ Params: Record<string, string> }>({
        method,
        url: `${one}/composites`,
        schema: { tags, summary: changeSummary(method, `a ${c.what} by its name`), params: params({ ...idParam, roleName: { type: 'string' } }), response: noContent204, security },
        handler: async (req, reply) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, c.manage);
          const clientId = c.client(req.params);
          const role = await requireRoleByName(store, realm.id, clientId, req.params.roleName!);
          const path = clientId ? `clients/${clientId}/roles/${role.name}/composites` : `roles/${role.name}/composites`;
          await changeRoleComposites(req, caller, realm.id, role, method === 'DELETE', path);
          return reply.code(204).send();
        },
      });
    }
  }

  // Role mappings of users and of groups (Keycloak's RoleMapperResource under /users/{id} and
  // /groups/{id}): the same routes, read with view-users, changed with manage-users. `direct` are the
  // roles mapped to the subject itself; `effective` also those it holds through groups and ancestors.
  const subjects = [
    {
      segment: 'users',
      what: 'user',
      direct: async (realmId: string, id: string): Promise<Role[]> => {
        const user = await store.users.get(id);
        if (!user || user.realmId !== realmId) throw notFound('User not found');
        return store.roles.mappedRoles(id);
      },
      effective: async (realmId: string, id: string): Promise<Role[]> => {
        const user = await store.users.get(id);
        if (!user || user.realmId !== realmId) throw notFound('User not found');
        return store.roles.effectiveRoles(id);
      },
      change: (realmId: string, id: string, clientId: string, refs: Array<{ id?: unknown; name?: unknown }>, remove: boolean, caller: AdminCaller) =>
        changeRoleMappings(store, { realmId, userId: id, clientId, roles: refs, remove }, actorOf(caller), mappingGuard(caller)),
    },
    {
      segment: 'groups',
      what: 'group',
      direct: async (realmId: string, id: string): Promise<Role[]> => store.groups.mappedRoles((await requireGroup(store, realmId, id)).id),
      effective: async (realmId: string, id: string): Promise<Role[]> => groupEffectiveRoles(store, await requireGroup(store, realmId, id)),
      change: (realmId: string, id: string, clientId: string, refs: Array<{ id?: unknown; name?: unknown }>, remove: boolean, caller: AdminCaller) =>
        changeGroupRoleMappings(store, { realmId, groupId: id, clientId, roles: refs, remove }, actorOf(caller), mappingGuard(caller)),
    },
  ] as const;

  for (const subject of subjects) {
    app.get<{ Params: { realm: string; id: string } }>(
      `/realms/:realm/${subject.segment}/:id/role-mappings`,
      { schema: { tags, summary: `A ${subject.what}'s role mappings`, params: params({ id: { type: 'string' } }), security } },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'view-users');
        const roles = await subject.direct(realm.id, req.params.id);
        const roleRep = await roleRepresenter(store, realm.id);
        const clientMappings: Record<string, { id: string; client: string; mappings: unknown[] }> = {};
        for (const r of roles.filter((x) => x.clientId !== '')) (clientMappings[r.clientId] ??= { id: r.clientId, client: r.clientId, mappings: [] }).mappings.push(roleRep(r));
        return { realmMappings: roles.filter((r) => r.clientId === '').map(roleRep), ...(Object.keys(clientMappings).length > 0 ? { clientMappings } : {}) };
      },
    );

    // Realm role mappings (client '') and client role mappings share one shape.
    for (const [suffix, clientOf] of [
      ['realm', (): string => ''],
      ['clients/:client', (p: Record<string, string>): string => p.client ?? ''],
    ] as const) {
      const url = `/realms/:realm/${subject.segment}/:id/role-mappings/${suffix}`;
      const schemaParams = params(suffix === 'realm' ? { id: { type: 'string' } } : { id: { type: 'string' }, client: { type: 'string' } });
      const kind = suffix === 'realm' ? 'realm' : 'client';
      app.get<{ Params: Record<string, string> }>(url, { schema: { tags, summary: `A ${subject.what}'s ${kind} role mappings`, params: schemaParams, security } }, async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        requireRole(caller, realm.id, 'view-users');
        const clientId = clientOf(req.params);
        return (await subject.direct(realm.id, req.params.id!)).filter((r) => r.clientId === clientId).map(await roleRepresenter(store, realm.id));
      });
      app.get<{ Params: Record<string, string> }>(`${url}/available`, { schema: { tags, summary: `${kind} roles the ${subject.what} is not mapped yet`, params: schemaParams, security } }, async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        requireRole(caller, realm.id, 'view-users');
        const clientId = clientOf(req.params);
        const have = new Set((await subject.direct(realm.id, req.params.id!)).map((r) => r.id));
        return (await store.roles.list(realm.id, clientId)).filter((r) => !have.has(r.id)).map(await roleRepresenter(store, realm.id));
      });
      app.get<{ Params: Record<string, string> }>(
        `${url}/composite`,
        { schema: { tags, summary: `The ${kind} roles the ${subject.what} holds: mapped to it, or through its groups and their parents`, params: schemaParams, security } },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'view-users');
          const clientId = clientOf(req.params);
          return (await subject.effective(realm.id, req.params.id!)).filter((r) => r.clientId === clientId).map(await roleRepresenter(store, realm.id));
        },
      );
      for (const method of ['POST', 'DELETE'] as const) {
        app.route<{ Params: Record<string, string> }>({
          method,
          url,
          schema: { tags, summary: method === 'POST' ? `Map roles to a ${subject.what}` : `Remove roles from a ${subject.what}`, params: schemaParams, response: noContent204, security },
          handler: async (req, reply) => {
            const caller = callerOf(req);
            const realm = await loadRealm(services, caller, req.params.realm!);
            requireRole(caller, realm.id, 'manage-users');
            await subject.change(realm.id, req.params.id!, clientOf(req.params), roleRefs(req.body), method === 'DELETE', caller);
            services.cache.clear();
            return reply.code(204).send();
          },
        });
      }
    }
  }
}
