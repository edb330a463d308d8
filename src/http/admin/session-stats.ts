import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import {
  clientOfflineSessionCount,
  clientOfflineSessions,
  clientSessionCount,
  clientSessionStats,
  logoutAllUsers,
  userOfflineSessions,
} from '../../admin/operations/session-stats.js';
import { toSessionRepresentation } from '../../admin/keycloak/representations/session.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { userTarget } from './users.js';
import { params, realmParams, security } from './schemas.js';

const tags = ['sessions'];
const clientParams = params({ id: { type: 'string', maxLength: 255 } });
const page = { type: 'object', properties: { first: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0, maximum: 1000 } } } as const;
type ClientReq = { Params: { realm: string; id: string } };

/**
 * Keycloak's session statistics and offline sessions (ClientResource, UserResource, RealmAdminResource)
 * and the realm-wide logout. A client's id in the path is its clientId (clients.ts).
 */
export async function sessionStatsRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<ClientReq>(
    '/realms/:realm/clients/:id/session-count',
    { schema: { tags, summary: 'How many live browser sessions the client holds tokens from: {"count": n}', params: clientParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      return { count: await clientSessionCount(store, { realmId: realm.id, clientId: req.params.id }) };
    },
  );

  app.get<ClientReq>(
    '/realms/:realm/clients/:id/offline-session-count',
    { schema: { tags, summary: 'How many offline sessions (live offline_access refresh chains, by session) the client holds: {"count": n}', params: clientParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      return { count: await clientOfflineSessionCount(store, { realmId: realm.id, clientId: req.params.id }) };
    },
  );

  app.get<ClientReq & { Querystring: { first?: number; max?: number } }>(
    '/realms/:realm/clients/:id/offline-sessions',
    { schema: { tags, summary: "The client's offline sessions (UserSessionRepresentation), newest first; first and max page them", params: clientParams, querystring: page, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      const sessions = await clientOfflineSessions(store, { realmId: realm.id, clientId: req.params.id, first: req.query.first, max: req.query.max ?? 100 });
      return sessions.map((s) => toSessionRepresentation(s));
    },
  );

  app.get<{ Params: { realm: string; id: string; clientId: string } }>(
    '/realms/:realm/users/:id/offline-sessions/:clientId',
    {
      schema: {
        tags: ['users'],
        summary: "The user's offline sessions in which the client (its clientId: a client's id in this API) holds offline access",
        params: params({ id: { type: 'string', maxLength: 64 }, clientId: { type: 'string', maxLength: 255 } }),
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'view-users');
      return (await userOfflineSessions(store, { realmId: user.realmId, user: user.id, clientId: req.params.clientId })).map((s) => toSessionRepresentation(s));
    },
  );

  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/client-session-stats',
    { schema: { tags, summary: 'Each client with a live session: [{id, clientId, active, offline}] (counts as strings, as Keycloak)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-realm');
      const stats = await clientSessionStats(store, { realmId: realm.id });
      return stats.map((c) => ({ id: c.clientId, clientId: c.clientId, active: String(c.active), offline: String(c.offline) }));
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/logout-all',
    {
      schema: {
        tags,
        summary: "Sign every user of the realm out: end their browser sessions, revoke their refresh tokens (offline ones too), tell the clients by back-channel logout; answers Keycloak's GlobalRequestResult",
        params: realmParams,
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const r = await logoutAllUsers(store, { realmId: realm.id, tell: (ended) => services.backchannel.notifyAndReport(realm.id, ended) }, actorOf(caller));
      return { successRequests: r.successRequests, failedRequests: r.failedRequests };
    },
  );
}
