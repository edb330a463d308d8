import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { realmParams, security } from './schemas.js';

const KEY_TYPES: Record<string, string> = { RS256: 'RSA', ES256: 'EC', EdDSA: 'OKP' };

function int(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return v !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** A day (yyyy-MM-dd, Keycloak's dateFrom/dateTo) or epoch milliseconds, to milliseconds. */
function dateMs(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

/** Keys, login events and admin events of a realm, in Keycloak's representations. */
export async function realmInfoRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<{ Params: { realm: string } }>('/realms/:realm/keys', { schema: { tags: ['keys'], summary: "The realm's signing keys (public parts)", params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    const keys = await store.keys.list(realm.id);
    const now = nowSeconds(services.clock);
    const active: Record<string, string> = {};
    for (const k of keys) if (k.status === 'active') active[k.alg] ??= k.kid;
    return {
      active,
      keys: keys
        .filter((k) => k.status === 'active' || (k.retiredAt != null && k.retiredAt + realm.accessTokenLifetime > now))
        .map((k) => ({
          providerId: `${k.alg.toLowerCase()}-generated`,
          providerPriority: k.status === 'active' ? 100 : 0,
          kid: k.kid,
          // Keycloak: ACTIVE signs, PASSIVE only verifies (a retired key still published).
          status: k.status === 'active' ? 'ACTIVE' : 'PASSIVE',
          type: KEY_TYPES[k.alg] ?? k.alg,
          algorithm: k.alg,
          use: 'SIG',
          publicKey: k.publicJwk,
          validTo: k.retiredAt != null ? (k.retiredAt + realm.accessTokenLifetime) * 1000 : undefined,
        })),
    };
  });

  app.get<{ Params: { realm: string }; Querystring: Record<string, string | undefined> }>(
    '/realms/:realm/events',
    { schema: { tags: ['events'], summary: 'Login and token events, newest first (client, user, dateFrom, first, max)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-events');
      const q = req.query;
      const from = dateMs(q.dateFrom);
      const first = int(q.first, 0);
      const max = Math.min(int(q.max, 100), 1000);
      const list = await store.events.list(realm.id, {
        ...(q.user !== undefined ? { userId: q.user, username: q.user } : {}),
        ...(q.client !== undefined ? { clientId: q.client } : {}),
        ...(from !== undefined ? { since: Math.floor(from / 1000) } : {}),
        limit: first + max,
      });
      return list.slice(first).map((e) => ({
        id: e.id,
        time: e.time * 1000,
        type: e.type,
        realmId: e.realmId,
        clientId: e.clientId ?? undefined,
        userId: e.userId ?? undefined,
        ipAddress: e.ip ?? undefined,
        ...(e.outcome === 'failure' ? { error: e.reason ?? 'failed' } : {}),
        details: { ...(e.username ? { username: e.username } : {}), ...(e.reason && e.outcome === 'success' ? { reason: e.reason } : {}) },
      }));
    },
  );

  app.get<{ Params: { realm: string }; Querystring: Record<string, string | undefined> }>(
    '/realms/:realm/admin-events',
    { schema: { tags: ['events'], summary: 'Admin events (who changed what, when, from where), newest first', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-events');
      const q = req.query;
      const from = dateMs(q.dateFrom);
      const list = await store.adminEvents.list(realm.id, {
        ...(q.operationTypes !== undefined ? { operation: q.operationTypes } : {}),
        ...(q.resourceTypes !== undefined ? { resourceType: q.resourceTypes } : {}),
        ...(from !== undefined ? { sinceMs: from } : {}),
        first: int(q.first, 0),
        max: Math.min(int(q.max, 100), 1000),
      });
      return list.map((e) => ({
        id: e.id,
        time: e.timeMs,
        realmId: e.realmId,
        authDetails: { realmId: e.authRealmId ?? undefined, clientId: e.authClientId ?? undefined, userId: e.authUserId ?? undefined, ipAddress: e.ip ?? undefined, username: e.authUsername ?? undefined },
        operationType: e.operation,
        resourceType: e.resourceType,
        resourcePath: e.resourcePath,
        representation: e.representation ?? undefined,
        details: { via: e.via },
      }));
    },
  );
}
