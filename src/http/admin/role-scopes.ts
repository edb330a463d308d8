import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { Role } from '../../storage/repos/roles.js';
import type { ScopeOwner } from '../../storage/repos/role-scopes.js';
import { availableScopeMappings, changeScopeMappings, containerScopeMappings, effectiveScopeMappings, listScopeMappings } from '../../admin/operations/role-scopes.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { roleRefs, roleRepresenter } from './roles.js';
import { noContent204, params, security } from './schemas.js';

const tags = ['scope-mappings'];

/** Keycloak's full RoleRepresentation (briefRepresentation=false): the brief one and its attributes (Realmgate's roles have none). */
function fullRoleRep(roleRep: (r: Role) => Record<string, unknown>): (r: Role) => Record<string, unknown> {
  return (r) => ({ ...roleRep(r), attributes: {} });
}

/**
 * Role scope mappings of clients and client scopes (Keycloak's ScopeMappedResource and
 * ScopeMappedClientResource, under clients/{id} and client-scopes/{id}): the roles a token of a client
 * without fullScopeAllowed may carry (src/oauth/role-scope.ts). Read with view-clients, changed with
 * manage-clients, for clients and client scopes alike (Keycloak's clients().requireView/requireManage).
 */
export async function roleScopeRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  const owners = [
    { segment: 'clients', kind: 'client', what: "a client's scope" },
    { segment: 'client-scopes', kind: 'scope', what: "a client scope's scope" },
  ] as const;

  for (const o of owners) {
    const base = `/realms/:realm/${o.segment}/:id/scope-mappings`;
    const ownerOf = (p: Record<string, string>): ScopeOwner => ({ kind: o.kind, id: p.id! });

    // Keycloak's MappingsRepresentation: realmMappings and clientMappings (by client id: {id, client,
    // mappings}), each left out when empty.
    app.get<{ Params: Record<string, string> }>(
      base,
      { schema: { tags, summary: `The roles mapped to ${o.what}: realmMappings, and clientMappings by client id (each left out when empty)`, params: params({ id: { type: 'string', maxLength: 255 } }), security } },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        requireRole(caller, realm.id, 'view-clients');
        const roles = await listScopeMappings(store, { realmId: realm.id, owner: ownerOf(req.params) });
        const roleRep = await roleRepresenter(store, realm.id);
        const realmMappings = roles.filter((r) => r.clientId === '').map(roleRep);
        const clientMappings: Record<string, { id: string; client: string; mappings: unknown[] }> = {};
        for (const r of roles.filter((x) => x.clientId !== '')) (clientMappings[r.clientId] ??= { id: r.clientId, client: r.clientId, mappings: [] }).mappings.push(roleRep(r));
        return { ...(realmMappings.length > 0 ? { realmMappings } : {}), ...(Object.keys(clientMappings).length > 0 ? { clientMappings } : {}) };
      },
    );

    // Realm roles (container '') and a client's roles (container its client id) share one shape.
    for (const [suffix, containerOf] of [
      ['realm', (): string => ''],
      ['clients/:client', (p: Record<string, string>): string => p.client ?? ''],
    ] as const) {
      const url = `${base}/${suffix}`;
      const kind = suffix === 'realm' ? 'realm' : 'client';
      const schemaParams = params(suffix === 'realm' ? { id: { type: 'string', maxLength: 255 } } : { id: { type: 'string', maxLength: 255 }, client: { type: 'string', maxLength: 255 } });
      const input = (realmId: string, p: Record<string, string>): { realmId: string; owner: ScopeOwner; clientId: string } => ({ realmId, owner: ownerOf(p), clientId: containerOf(p) });

      app.get<{ Params: Record<string, string> }>(url, { schema: { tags, summary: `The ${kind} roles mapped to ${o.what}`, params: schemaParams, security } }, async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm!);
        requireRole(caller, realm.id, 'view-clients');
        return (await containerScopeMappings(store, input(realm.id, req.params))).map(await roleRepresenter(store, realm.id));
      });

      app.get<{ Params: Record<string, string> }>(
        `${url}/available`,
        { schema: { tags, summary: `The ${kind} roles that may still be mapped to ${o.what} (not in it directly${o.kind === 'client' ? "; a client's own roles always are" : ''})`, params: schemaParams, security } },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'view-clients');
          return (await availableScopeMappings(store, input(realm.id, req.params))).map(await roleRepresenter(store, realm.id));
        },
      );

      app.get<{ Params: Record<string, string>; Querystring: { briefRepresentation?: boolean } }>(
        `${url}/composite`,
        {
          schema: {
            tags,
            summary:
              o.kind === 'client'
                ? `The ${kind} roles in the client's scope, its effective scope: all of them when the client has fullScopeAllowed, else those mapped and its own roles, with what they contain`
                : `The ${kind} roles in the client scope's scope: those mapped, with what they contain`,
            params: schemaParams,
            querystring: { type: 'object', properties: { briefRepresentation: { type: 'boolean' } } },
            security,
          },
        },
        async (req) => {
          const caller = callerOf(req);
          const realm = await loadRealm(services, caller, req.params.realm!);
          requireRole(caller, realm.id, 'view-clients');
          const roleRep = await roleRepresenter(store, realm.id);
          return (await effectiveScopeMappings(store, input(realm.id, req.params))).map(req.query.briefRepresentation === false ? fullRoleRep(roleRep) : roleRep);
        },
      );

      for (const method of ['POST', 'DELETE'] as const) {
        app.route<{ Params: Record<string, string> }>({
          method,
          url,
          schema: {
            tags,
            summary:
              method === 'POST'
                ? `Map ${kind} roles to ${o.what} (a list of roles, ${kind === 'realm' ? 'each by its id' : 'each by its name'} or the other)`
                : `Remove ${kind} roles from ${o.what}; without a body, every ${kind} role mapped to it`,
            params: schemaParams,
            response: noContent204,
            security,
          },
          handler: async (req, reply) => {
            const caller = callerOf(req);
            const realm = await loadRealm(services, caller, req.params.realm!);
            requireRole(caller, realm.id, 'manage-clients');
            // Keycloak's DELETE without a body removes all of them; a POST needs its list.
            const roles = method === 'DELETE' && (req.body === undefined || req.body === null) ? undefined : roleRefs(req.body);
            await changeScopeMappings(store, { ...input(realm.id, req.params), roles, remove: method === 'DELETE' }, actorOf(caller));
            services.cache.clear();
            return reply.code(204).send();
          },
        });
      }
    }
  }
}
