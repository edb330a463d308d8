import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { clientScopesOfKind, linkClientScope, linkRealmDefaultScope, realmDefaultScopes, unlinkClientScope, unlinkRealmDefaultScope, type ScopeKind } from '../../admin/operations/client-scope-links.js';
import { actorOf, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { callerOf, loadRealm } from './plugin.js';
import { noContent204, params, realmParams, security } from './schemas.js';

const clientParams = params({ id: { type: 'string', maxLength: 255 } });
const linkParams = params({ id: { type: 'string', maxLength: 255 }, scopeId: { type: 'string', maxLength: 255 } });
const realmLinkParams = params({ scopeId: { type: 'string', maxLength: 255 } });

/** Keycloak lists a link as a brief ClientScopeRepresentation: its id and name (both the name here). */
const brief = (name: string): { id: string; name: string } => ({ id: name, name });

/**
 * Keycloak's default and optional client scopes: a client's (ClientResource's default-client-scopes and
 * optional-client-scopes, what keycloak-admin-client's clients.addDefaultClientScope and
 * Terraform's keycloak_openid_client_default_scopes call) and the realm's for new clients
 * (default-default-client-scopes, default-optional-client-scopes). openid is implied, never listed.
 */
export async function clientScopeLinkRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  const kinds: Array<{ kind: ScopeKind; path: string; realmPath: string }> = [
    { kind: 'default', path: 'default-client-scopes', realmPath: 'default-default-client-scopes' },
    { kind: 'optional', path: 'optional-client-scopes', realmPath: 'default-optional-client-scopes' },
  ];
  for (const { kind, path, realmPath } of kinds) {
    app.get<{ Params: { realm: string; id: string } }>(
      `/realms/:realm/clients/:id/${path}`,
      { schema: { tags: ['clients'], summary: `The client's ${kind} client scopes (openid, implied, is not listed)`, params: clientParams, security } },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'view-clients');
        const client = await store.clients.get(realm.id, req.params.id);
        if (!client) throw notFound('Could not find client');
        return clientScopesOfKind(client, kind).map(brief);
      },
    );

    app.put<{ Params: { realm: string; id: string; scopeId: string } }>(
      `/realms/:realm/clients/:id/${path}/:scopeId`,
      { schema: { tags: ['clients'], summary: `Link a client scope to the client as a ${kind} one (one linked as the other kind moves)`, params: linkParams, response: noContent204, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-clients');
        await linkClientScope(store, { realmId: realm.id, clientId: req.params.id, scope: req.params.scopeId, kind }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );

    app.delete<{ Params: { realm: string; id: string; scopeId: string } }>(
      `/realms/:realm/clients/:id/${path}/:scopeId`,
      { schema: { tags: ['clients'], summary: `Unlink a ${kind} client scope from the client (tokens already issued keep their scopes until refreshed)`, params: linkParams, response: noContent204, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-clients');
        await unlinkClientScope(store, { realmId: realm.id, clientId: req.params.id, scope: req.params.scopeId, kind }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );

    app.get<{ Params: { realm: string } }>(
      `/realms/:realm/${realmPath}`,
      { schema: { tags: ['client-scopes'], summary: `The realm's ${kind} client scopes for new clients (openid, implied, is not listed)`, params: realmParams, security } },
      async (req) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'view-realm');
        return (await realmDefaultScopes(store, realm.id, kind)).map(brief);
      },
    );

    app.put<{ Params: { realm: string; scopeId: string } }>(
      `/realms/:realm/${realmPath}/:scopeId`,
      { schema: { tags: ['client-scopes'], summary: `New clients get this client scope as a ${kind} one (clients that exist keep theirs)`, params: realmLinkParams, response: noContent204, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-realm');
        await linkRealmDefaultScope(store, { realmId: realm.id, scope: req.params.scopeId, kind }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );

    app.delete<{ Params: { realm: string; scopeId: string } }>(
      `/realms/:realm/${realmPath}/:scopeId`,
      { schema: { tags: ['client-scopes'], summary: `New clients no longer get this ${kind} client scope`, params: realmLinkParams, response: noContent204, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-realm');
        await unlinkRealmDefaultScope(store, { realmId: realm.id, scope: req.params.scopeId, kind }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );
  }
}
