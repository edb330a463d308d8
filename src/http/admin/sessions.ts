import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { clientSessions, endSession } from '../../admin/operations/tokens.js';
import { toSessionRepresentation } from '../../admin/keycloak/representations/session.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { noContent204, params, security } from './schemas.js';
import { notFound } from './errors.js';

const tags = ['sessions'];

/** Keycloak's session endpoints: a client's user sessions, and ending one session. */
export async function sessionRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<{ Params: { realm: string; id: string }; Querystring: { first?: number; max?: number } }>(
    '/realms/:realm/clients/:id/user-sessions',
    {
      schema: {
        tags,
        summary: 'Live browser sessions from which the client holds tokens',
        params: params({ id: { type: 'string', maxLength: 255 } }),
        querystring: { type: 'object', properties: { first: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0, maximum: 1000 } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      if (!(await store.clients.get(realm.id, req.params.id))) throw notFound('Could not find client');
      const sessions = await clientSessions(store, { realmId: realm.id, clientId: req.params.id, first: req.query.first, max: req.query.max ?? 100 });
      return sessions.map((s) => toSessionRepresentation(s));
    },
  );

  app.delete<{ Params: { realm: string; id: string }; Querystring: { isOffline?: boolean } }>(
    '/realms/:realm/sessions/:id',
    {
      schema: {
        tags,
        summary: 'End a browser session and revoke the refresh tokens issued from it (offline ones stay); with isOffline=true, revoke only its offline tokens',
        params: params({ id: { type: 'string', maxLength: 64 } }),
        querystring: { type: 'object', properties: { isOffline: { type: 'boolean', default: false } } },
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      await endSession(store, { realmId: realm.id, sessionId: req.params.id, offline: req.query.isOffline === true }, actorOf(caller));
      return reply.code(204).send();
    },
  );
}
