import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { clearAdminEvents, clearLoginEvents, recordCacheCleared, unlockAllUsers, type CacheName } from '../../admin/operations/realm-maintenance.js';
import { exportPartialRealm } from '../../admin/keycloak/export.js';
import { forgetProviderKeys } from '../../oauth/broker.js';
import { clearRealmOrigins } from '../plugins/cors.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { noContent204, realmParams, security } from './schemas.js';

type RealmReq = { Params: { realm: string } };

/** Keycloak's Boolean query parameter: "true" in any case is true, anything else (or nothing) false. */
const flag = { type: 'string', maxLength: 16, description: '"true" to include; anything else, or absent, leaves it out' } as const;

/**
 * Keycloak's realm housekeeping (RealmAdminResource, AttackDetectionResource): clearing the stored events
 * and admin events, every user's brute-force state, the server's caches, and the partial export.
 *
 * The caches are this process's own (src/services.ts ConfigCache, the signing keys, the clients' and
 * identity providers' fetched keys). Realmgate has no channel between processes or nodes: the others
 * drop what they cached within the cache time (REALMGATE_CACHE_TTL_MS), as after any change made
 * directly in the database.
 */
export async function realmMaintenanceRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.delete<RealmReq>(
    '/realms/:realm/events',
    { schema: { tags: ['events'], summary: "Delete the realm's stored login and token events (Keycloak's clearEvents); the clearing is recorded as an admin event", params: realmParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-events');
      // Events are stamped with the server's clock: those of the clearing's own moment on go too, later ones stay.
      await clearLoginEvents(store, { realmId: realm.id, until: nowSeconds(services.clock) }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.delete<RealmReq>(
    '/realms/:realm/admin-events',
    { schema: { tags: ['events'], summary: "Delete the realm's admin events (Keycloak's clearAdminEvents); the clearing itself is then recorded as a new admin event", params: realmParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-events');
      await clearAdminEvents(store, { realmId: realm.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.delete<RealmReq>(
    '/realms/:realm/attack-detection/brute-force/users',
    { schema: { tags: ['attack-detection'], summary: "Clear every user's failed logins and lockout in the realm (and the address, device and one-time-code counters)", params: realmParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      await unlockAllUsers(store, { realmId: realm.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  /** What each of Keycloak's clear-*-cache calls drops in this process. */
  const clearers: Record<CacheName, { summary: string; clear: () => void }> = {
    realm: {
      summary: "Drop this server's cached realms, clients, client scopes, role-mapping flags, protocol mappers, allowed origins and signing keys (Keycloak's realm cache)",
      clear: () => {
        services.cache.clear();
        services.keys.clear();
        clearRealmOrigins(services);
      },
    },
    // Realmgate keeps no user cache: every sign-in and token reads the user from the database.
    user: { summary: "Keycloak's user cache: Realmgate caches no users (each request reads them), so there is nothing to drop", clear: () => undefined },
    keys: {
      summary: "Drop this server's cached public keys of clients (JWKS URL, inline JWKS, certificate) and identity providers (Keycloak's keys cache)",
      clear: () => {
        services.clientKeys.clear();
        forgetProviderKeys();
      },
    },
    // Keycloak's CRLs serve X.509 client certificate authentication, which Realmgate does not have.
    crl: { summary: "Keycloak's CRL cache (X.509 authentication): Realmgate has none, so there is nothing to drop", clear: () => undefined },
  };
  for (const [name, c] of Object.entries(clearers) as Array<[CacheName, (typeof clearers)[CacheName]]>) {
    app.post<RealmReq>(`/realms/:realm/clear-${name}-cache`, { schema: { tags: ['realms'], summary: c.summary, params: realmParams, response: noContent204, security } }, async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      c.clear();
      await recordCacheCleared(store, { realmId: realm.id, cache: name }, actorOf(caller));
      return reply.code(204).send();
    });
  }

  app.post<RealmReq & { Querystring: { exportClients?: string; exportGroupsAndRoles?: string } }>(
    '/realms/:realm/partial-export',
    {
      schema: {
        tags: ['realms'],
        summary: "Keycloak's partial export: the realm's RealmRepresentation with every secret masked (**********), no users; clients (with their service accounts) with exportClients=true, roles and groups with exportGroupsAndRoles=true",
        params: realmParams,
        querystring: { type: 'object', properties: { exportClients: flag, exportGroupsAndRoles: flag } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      // Keycloak 26: manage-realm, and to see what is asked for, query-groups (groups and roles) and view-clients (clients).
      requireRole(caller, realm.id, 'manage-realm');
      const groupsAndRoles = req.query.exportGroupsAndRoles?.toLowerCase() === 'true';
      const clients = req.query.exportClients?.toLowerCase() === 'true';
      if (groupsAndRoles) requireRole(caller, realm.id, 'query-groups');
      if (clients) requireRole(caller, realm.id, 'view-clients');
      return exportPartialRealm(store, realm.id, { clients, groupsAndRoles });
    },
  );
}
