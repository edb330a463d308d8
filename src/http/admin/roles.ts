import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { Role } from '../../storage/repos/roles.js';
import { changeRoleMappings } from '../../admin/operations/roles.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { callerOf, loadRealm } from './plugin.js';
import { noContent204, params, realmParams, security } from './schemas.js';

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
          await changeRoleMappings(store, { realmId: realm.id, userId: req.params.id!, clientId: clientOf(req.params), roles: roleRefs(req.body), remove: method === 'DELETE' }, actorOf(caller));
          services.cache.clear();
          return reply.code(204).send();
        },
      });
    }
  }
}
