import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { Role } from '../../storage/repos/roles.js';
import { changeComposites, changeRoleMappings, createRole, deleteRole, roleComposites, updateRole } from '../../admin/operations/roles.js';
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

/** Keycloak's RoleRepresentation. */
export function roleRep(r: Role): Record<string, unknown> {
  return { id: r.id, name: r.name, description: r.description ?? '', composite: false, clientRole: r.clientId !== '', containerId: r.clientId || r.realmId };
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
    return (await store.roles.list(realm.id, '')).map(roleRep);
  });

  app.get<{ Params: { realm: string; name: string } }>('/realms/:realm/roles/:name', { schema: { tags, summary: 'A realm role', params: params({ name: { type: 'string' } }), security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    const role = await store.roles.find(realm.id, '', req.params.name);
    if (!role) throw notFound('Could not find role');
    return roleRep(role);
  });

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/clients/:id/roles', { schema: { tags, summary: "A client's roles", params: params({ id: { type: 'string' } }), security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    if (!(await store.clients.get(realm.id, req.params.id))) throw notFound('Could not find client');
    return (await store.roles.list(realm.id, req.params.id)).map(roleRep);
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
      return roleRep(role);
    },
  );

  /** A RoleRepresentation body: its name and description (composites, attributes and the rest are Keycloak's alone, ignored). */
  function roleBody(body: unknown): { name?: unknown; description?: unknown } {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the request body must be a role (a JSON object)');
    const b = body as Record<string, unknown>;
    return { name: b.name, description: b.description };
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
      const role = await createRole(store, { realmId: realm.id, clientId, name: body.name, description: body.description }, actorOf(caller));
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
    return roleRep(role);
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

  // A role's composites by its id (Keycloak's RoleByIdResource): read with the role's view role, changed
  // with its manage role, as the role itself. Realmgate's roles contain no other roles (changeComposites).
  const compositesQuery = { type: 'object', properties: { search: { type: 'string', maxLength: 255 }, first: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0 } } } as const;
  for (const [suffix, what] of [
    ['', 'every role'],
    ['/realm', 'the realm roles'],
    ['/clients/:clientId', "a client's roles"],
  ] as const) {
    app.get<{ Params: { realm: string; roleId: string; clientId?: string }; Querystring: { first?: number; max?: number } }>(
      `${byId}/composites${suffix}`,
      {
        schema: {
          tags,
          summary: `The roles a role contains (${what}), by its id: always none, Realmgate's roles are not composite`,
          params: params(suffix.includes(':clientId') ? { roleId: { type: 'string' }, clientId: { type: 'string' } } : { roleId: { type: 'string' } }),
          querystring: compositesQuery,
          security,
        },
      },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        const role = await roleById(realm.id, req.params.roleId);
        requireRole(caller, realm.id, role.clientId ? 'view-clients' : 'view-realm');
        checkPage(req.query);
        const clientId = req.params.clientId;
        const composites = await roleComposites(store, { realmId: realm.id, roleId: role.id, ...(clientId !== undefined ? { clientId } : {}) });
        return composites.filter((r) => suffix === '' || r.clientId === (clientId ?? '')).map(roleRep);
      },
    );
  }
  for (const method of ['POST', 'DELETE'] as const) {
    app.route<{ Params: { realm: string; roleId: string } }>({
      method,
      url: `${byId}/composites`,
      schema: {
        tags,
        summary: method === 'POST' ? "Add roles to a composite, by its id: refused (400), Realmgate's roles are not composite" : 'Remove roles from a composite, by its id: a role contains none, nothing to remove (204)',
        params: byIdParams,
        response: noContent204,
        security,
      },
      handler: async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        const role = await roleById(realm.id, req.params.roleId);
        requireRole(caller, realm.id, role.clientId ? 'manage-clients' : 'manage-realm');
        await changeComposites(store, { realmId: realm.id, roleId: role.id, roles: roleRefs(req.body), remove: method === 'DELETE' });
        return reply.code(204).send();
      },
    });
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
        return (await subject.direct(realm.id, req.params.id!)).filter((r) => r.clientId === clientId).map(roleRep);
      });
      app.get<{ Params: Record<string, string> }>(`${url}/available`, { schema: { tags, summary: `${kind} roles the ${subject.what} is not mapped yet`, params: schemaParams, security } }, async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        requireRole(caller, realm.id, 'view-users');
        const clientId = clientOf(req.params);
        const have = new Set((await subject.direct(realm.id, req.params.id!)).map((r) => r.id));
        return (await store.roles.list(realm.id, clientId)).filter((r) => !have.has(r.id)).map(roleRep);
      });
      app.get<{ Params: Record<string, string> }>(
        `${url}/composite`,
        { schema: { tags, summary: `The ${kind} roles the ${subject.what} holds: mapped to it, or through its groups and their parents`, params: schemaParams, security } },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'view-users');
          const clientId = clientOf(req.params);
          return (await subject.effective(realm.id, req.params.id!)).filter((r) => r.clientId === clientId).map(roleRep);
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
