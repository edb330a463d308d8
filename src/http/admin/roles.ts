import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { Role } from '../../storage/repos/roles.js';
import { changeRoleMappings, createRole, deleteRole, updateRole } from '../../admin/operations/roles.js';
import { toUserRepresentation } from '../../admin/keycloak/representations/user.js';
import { checkPage, ValidationError } from '../../admin/validation.js';
import { mayMapRole } from '../../admin/authorization.js';
import { actorOf, requireRole } from './authenticate.js';
import { forbidden, notFound } from './errors.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['roles'];

/** Keycloak's RoleRepresentation. */
function roleRep(r: Role): Record<string, unknown> {
  return { id: r.id, name: r.name, description: r.description ?? '', composite: false, clientRole: r.clientId !== '', containerId: r.clientId || r.realmId };
}

function roleRefs(body: unknown): Array<{ id?: unknown; name?: unknown }> {
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
    app.get<{ Params: Record<string, string>; Querystring: { first?: number; max?: number } }>(
      `${one}/users`,
      {
        schema: {
          tags,
          summary: `The users granted a ${c.what}`,
          params: oneParams,
          querystring: { type: 'object', properties: { first: { type: 'integer' }, max: { type: 'integer' } } },
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
        const first = req.query.first ?? 0;
        const page = await store.roles.holders(role.id, first, req.query.max ?? 100);
        const users = await Promise.all(page.users.map((u) => store.users.get(u.id)));
        return users.filter((u) => u !== undefined).map((u) => toUserRepresentation(u!, { brief: true }));
      },
    );
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

  async function mapped(realmId: string, userId: string): Promise<Role[]> {
    const user = await store.users.get(userId);
    if (!user || user.realmId !== realmId) throw notFound('User not found');
    return store.roles.mappedRoles(userId);
  }

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/users/:id/role-mappings', { schema: { tags, summary: "A user's role mappings", params: params({ id: { type: 'string' } }), security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-users');
    const roles = await mapped(realm.id, req.params.id);
    const clientMappings: Record<string, { id: string; client: string; mappings: unknown[] }> = {};
    for (const r of roles.filter((x) => x.clientId !== '')) (clientMappings[r.clientId] ??= { id: r.clientId, client: r.clientId, mappings: [] }).mappings.push(roleRep(r));
    return { realmMappings: roles.filter((r) => r.clientId === '').map(roleRep), ...(Object.keys(clientMappings).length > 0 ? { clientMappings } : {}) };
  });

  // Realm role mappings (client '') and client role mappings share one shape.
  for (const [suffix, clientOf] of [
    ['realm', (): string => ''],
    ['clients/:client', (p: Record<string, string>): string => p.client ?? ''],
  ] as const) {
    const url = `/realms/:realm/users/:id/role-mappings/${suffix}`;
    const schemaParams = params(suffix === 'realm' ? { id: { type: 'string' } } : { id: { type: 'string' }, client: { type: 'string' } });
    app.get<{ Params: Record<string, string> }>(url, { schema: { tags, summary: `A user's ${suffix === 'realm' ? 'realm' : 'client'} role mappings`, params: schemaParams, security } }, async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm!);
      requireRole(caller, realm.id, 'view-users');
      const clientId = clientOf(req.params);
      return (await mapped(realm.id, req.params.id!)).filter((r) => r.clientId === clientId).map(roleRep);
    });
    app.get<{ Params: Record<string, string> }>(`${url}/available`, { schema: { tags, summary: 'Roles the user does not have yet', params: schemaParams, security } }, async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm!);
      requireRole(caller, realm.id, 'view-users');
      const clientId = clientOf(req.params);
      const have = new Set((await mapped(realm.id, req.params.id!)).map((r) => r.id));
      return (await store.roles.list(realm.id, clientId)).filter((r) => !have.has(r.id)).map(roleRep);
    });
    for (const method of ['POST', 'DELETE'] as const) {
      app.route<{ Params: Record<string, string> }>({
        method,
        url,
        schema: { tags, summary: method === 'POST' ? 'Grant roles to a user' : "Remove roles from a user", params: schemaParams, response: noContent204, security },
        handler: async (req, reply) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'manage-users');
          await changeRoleMappings(store, { realmId: realm.id, userId: req.params.id!, clientId: clientOf(req.params), roles: roleRefs(req.body), remove: method === 'DELETE' }, actorOf(caller), {
            authorize: (roles) => {
              const denied = roles.find((r) => !mayMapRole(caller, r));
              if (denied) throw forbidden(`only an administrator holding ${denied.name} may grant or remove it`);
            },
          });
          services.cache.clear();
          return reply.code(204).send();
        },
      });
    }
  }
}
