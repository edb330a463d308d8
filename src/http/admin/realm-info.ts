import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { ValidationError } from '../../admin/validation.js';
import { keycloakEnabledEventTypes, keycloakEventType, storedEventType } from '../../admin/keycloak/event-types.js';
import { updateEventsConfig } from '../../admin/operations/realms.js';
import { listAdminEvents, listLoginEvents } from '../../admin/operations/events.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { anyObject, noContent204, realmParams, security } from './schemas.js';

const KEY_TYPES: Record<string, string> = { RS256: 'RSA', ES256: 'EC', EdDSA: 'OKP' };

/** publicKey (base64 SubjectPublicKeyInfo) and certificate (the JWK's x5c, base64 DER) of a stored public JWK. */
function keyMaterial(publicJwk: string): { publicKey: string; certificate?: string } {
  const jwk = JSON.parse(publicJwk) as JsonWebKey & { x5c?: string[] };
  const publicKey = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'der' }).toString('base64');
  return { publicKey, ...(jwk.x5c?.[0] ? { certificate: jwk.x5c[0] } : {}) };
}

/** Keycloak's dateFrom and dateTo: a day (yyyy-MM-dd, UTC; inclusive, so dateTo is its last millisecond) or epoch milliseconds. */
const dateParam = { type: 'string', maxLength: 32, description: 'yyyy-MM-dd (UTC, inclusive) or epoch milliseconds' } as const;
const pageParams = {
  first: { type: 'integer', minimum: 0, maximum: 2147483647 },
  max: { type: 'integer', minimum: 0, maximum: 2147483647, description: 'default 100; at most 1000 are returned' },
  direction: { type: 'string', enum: ['asc', 'desc'], description: 'by time; default desc (newest first)' },
} as const;

const eventQuery = {
  type: 'object',
  properties: {
    type: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 100, description: 'any of these event types (repeat the parameter)' },
    client: { type: 'string', maxLength: 255 },
    user: { type: 'string', maxLength: 255, description: 'user id or username' },
    ipAddress: { type: 'string', maxLength: 64 },
    dateFrom: dateParam,
    dateTo: dateParam,
    ...pageParams,
  },
} as const;

const adminEventQuery = {
  type: 'object',
  properties: {
    operationTypes: { type: 'array', items: { type: 'string', enum: ['CREATE', 'UPDATE', 'DELETE', 'ACTION'] }, maxItems: 4 },
    resourceTypes: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 100 },
    resourcePath: { type: 'string', maxLength: 1024, description: '`*` matches any characters' },
    authRealm: { type: 'string', maxLength: 64 },
    authClient: { type: 'string', maxLength: 255 },
    authUser: { type: 'string', maxLength: 255, description: 'user id' },
    authIpAddress: { type: 'string', maxLength: 64 },
    dateFrom: dateParam,
    dateTo: dateParam,
    ...pageParams,
  },
} as const;

interface Page {
  first?: number;
  max?: number;
  direction?: 'asc' | 'desc';
  dateFrom?: string;
  dateTo?: string;
}

/**
 * Keycloak's dateFrom/dateTo to epoch milliseconds: digits are milliseconds; yyyy-MM-dd is a UTC day, its
 * first millisecond for dateFrom and its last for dateTo (both bounds inclusive). Anything else is refused
 * with Keycloak's message.
 */
function dateMs(name: 'dateFrom' | 'dateTo', v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d{1,16}$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]) - 1, Number(day[3])];
    const t = new Date(0);
    t.setUTCFullYear(y, m, d);
    if (t.getUTCFullYear() === y && t.getUTCMonth() === m && t.getUTCDate() === d) return name === 'dateTo' ? t.getTime() + 86_400_000 - 1 : t.getTime();
  }
  throw new ValidationError(`Invalid value for '${name}', expected format is yyyy-MM-dd or an Epoch timestamp`);
}

function paging(q: Page): { from: number | undefined; to: number | undefined; first: number; max: number; order: 'asc' | 'desc' } {
  return { from: dateMs('dateFrom', q.dateFrom), to: dateMs('dateTo', q.dateTo), first: q.first ?? 0, max: Math.min(q.max ?? 100, 1000), order: q.direction ?? 'desc' };
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
          // Keycloak's KeyMetadataRepresentation: the base64 DER SubjectPublicKeyInfo, and the certificate when the key has one.
          ...keyMaterial(k.publicJwk),
          validTo: k.retiredAt != null ? (k.retiredAt + realm.accessTokenLifetime) * 1000 : undefined,
        })),
    };
  });

  // Keycloak's RealmEventsConfigRepresentation. Security events are always stored (eventsEnabled is always
  // true); retention is the realm's own or the server's (REALMGATE_EVENTS_RETENTION_DAYS); there are no event listeners;
  // every admin change is recorded with its representation.
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/events/config',
    { schema: { tags: ['events'], summary: 'Which events the realm stores, and for how long (Keycloak\'s events config)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-events');
      return {
        eventsEnabled: true,
        eventsExpiration: realm.eventsRetention ?? services.config.eventsRetentionDays * 86_400,
        eventsListeners: [],
        enabledEventTypes: keycloakEnabledEventTypes(realm.storedEventTypes),
        adminEventsEnabled: true,
        adminEventsDetailsEnabled: true,
      };
    },
  );

  app.put<{ Params: { realm: string } }>(
    '/realms/:realm/events/config',
    { schema: { tags: ['events'], summary: 'Choose the optional event types the realm stores (enabledEventTypes, eventsEnabled) and for how long (eventsExpiration)', params: realmParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-events');
      const b = req.body;
      if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new ValidationError('the request body must be a JSON object');
      await updateEventsConfig(store, { realmId: realm.id, config: b as Record<string, unknown> }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string }; Querystring: Page & { type?: string[]; client?: string; user?: string; ipAddress?: string } }>(
    '/realms/:realm/events',
    { schema: { tags: ['events'], summary: "Login and token events, newest first unless direction=asc (Keycloak's filters)", params: realmParams, querystring: eventQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-events');
      const q = req.query;
      const { from, to, first, max, order } = paging(q);
      // Stored times are seconds, shown as seconds * 1000: the bounds select what the answer shows.
      const filter = {
        ...(q.user !== undefined ? { userId: q.user, username: q.user } : {}),
        ...(q.client !== undefined ? { clientId: q.client } : {}),
        ...(q.type !== undefined ? { types: q.type.map(storedEventType) } : {}),
        ...(q.ipAddress !== undefined ? { ip: q.ipAddress } : {}),
        ...(from !== undefined ? { since: Math.ceil(from / 1000) } : {}),
        ...(to !== undefined ? { until: Math.floor(to / 1000) } : {}),
        order,
        offset: first,
        limit: max,
      };
      const list = await listLoginEvents(store, { realmId: realm.id, filter });
      return list.map((e) => ({
        id: e.id,
        time: e.time * 1000,
        type: keycloakEventType(e.type),
        realmId: e.realmId,
        clientId: e.clientId ?? undefined,
        userId: e.userId ?? undefined,
        ipAddress: e.ip ?? undefined,
        ...(e.outcome === 'failure' ? { error: e.reason ?? 'failed' } : {}),
        details: { ...(e.username ? { username: e.username } : {}), ...(e.reason && e.outcome === 'success' ? { reason: e.reason } : {}) },
      }));
    },
  );

  app.get<{
    Params: { realm: string };
    Querystring: Page & { operationTypes?: string[]; resourceTypes?: string[]; resourcePath?: string; authRealm?: string; authClient?: string; authUser?: string; authIpAddress?: string };
  }>(
    '/realms/:realm/admin-events',
    { schema: { tags: ['events'], summary: "Admin events (who changed what, when, from where), newest first unless direction=asc (Keycloak's filters)", params: realmParams, querystring: adminEventQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-events');
      const q = req.query;
      const { from, to, first, max, order } = paging(q);
      const filter = {
        ...(q.operationTypes !== undefined ? { operation: q.operationTypes } : {}),
        ...(q.resourceTypes !== undefined ? { resourceType: q.resourceTypes } : {}),
        ...(q.resourcePath !== undefined ? { resourcePath: q.resourcePath } : {}),
        ...(q.authRealm !== undefined ? { authRealmId: q.authRealm } : {}),
        ...(q.authClient !== undefined ? { authClientId: q.authClient } : {}),
        ...(q.authUser !== undefined ? { authUserId: q.authUser } : {}),
        ...(q.authIpAddress !== undefined ? { ip: q.authIpAddress } : {}),
        ...(from !== undefined ? { sinceMs: from } : {}),
        ...(to !== undefined ? { untilMs: to } : {}),
        order,
        first,
        max,
      };
      const list = await listAdminEvents(store, { realmId: realm.id, filter });
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
