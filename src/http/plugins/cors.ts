import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { Client } from '../../storage/types.js';
import { decodeJwt } from 'jose';
import { TtlCache } from '../../cache.js';
import { allowedOrigins, originAllowed } from '../../oauth/web-origins.js';

/**
 * CORS for the JSON endpoints a browser application calls (token, userinfo, revocation, account...).
 * Our own small hook rather than @fastify/cors: the allowed origin depends on the client named in the
 * request (or its token), which a route learns only after parsing it.
 */

/** The request's Origin, when it is a single serialized origin (Fetch standard, RFC 6454 7). */
export function requestOrigin(req: FastifyRequest): string | undefined {
  const o = req.headers.origin;
  return typeof o === 'string' && o.length <= 256 && /^https?:\/\/[^/\s]+$/.test(o) ? o : undefined;
}

/** The response may be read by `origin`, with credentials (keycloak-js fetches with credentials: include). */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-allow-credentials', 'true');
  reply.header('access-control-expose-headers', 'WWW-Authenticate, Retry-After');
}

/** Sets the CORS headers when `client` allows the request's origin; returns whether it did. */
export function corsForClient(req: FastifyRequest, reply: FastifyReply, client: Client | undefined): boolean {
  const origin = requestOrigin(req);
  if (!origin || !client || !originAllowed(client, origin)) return false;
  allowOrigin(reply, origin);
  return true;
}

/** Whether the request comes from a page of another origin than this server (a CORS request). */
export function isCrossOrigin(services: Services, req: FastifyRequest): boolean {
  const origin = requestOrigin(req) ?? (typeof req.headers.origin === 'string' ? req.headers.origin : undefined);
  return origin !== undefined && origin !== new URL(services.config.authUrl).origin;
}

const realmOriginCaches = new WeakMap<Services, TtlCache<Set<string>>>();

/** Forgets the realms' allowed origins (the admin API's clear-realm-cache): read again at the next request. */
export function clearRealmOrigins(services: Services): void {
  realmOriginCaches.get(services)?.clear();
}

/**
 * Every origin some client of the realm allows: what a preflight (which names no client) and the
 * session-status pages (framed before any client is known) are answered for. A realm that does not
 * exist (or is disabled) has none, and is not cached: preflights naming made-up realms would otherwise
 * fill the cache with empty sets and push the real realms out.
 */
export async function realmOrigins(services: Services, realmId: string): Promise<Set<string>> {
  if (!(await services.cache.realm(realmId))) return new Set();
  let cache = realmOriginCaches.get(services);
  if (!cache) {
    cache = new TtlCache<Set<string>>(services.config.cacheTtlMs, 1000);
    realmOriginCaches.set(services, cache);
  }
  const set = await cache.get(realmId, async () => {
    const out = new Set<string>();
    for (const c of await services.store.clients.list(realmId)) if (c.enabled) for (const o of allowedOrigins(c)) out.add(o);
    return out;
  });
  return set ?? new Set();
}

/** Every response of a CORS endpoint depends on Origin, for caches (Fetch standard, CORS protocol and HTTP caches). */
export function varyOrigin(app: FastifyInstance): void {
  app.addHook('onRequest', (_req, reply, done) => {
    reply.header('vary', 'Origin');
    done();
  });
}

/**
 * Answers preflights at `url`: for origins some client of the realm registered, or for any origin when
 * the resource is public (JWKS, discovery). The actual response decides per client.
 */
export function preflight(app: FastifyInstance, services: Services, url: string, methods: string, opts: { public?: boolean } = {}): void {
  app.options<{ Params: { realm: string } }>(url, async (req, reply) => {
    const origin = requestOrigin(req);
    reply.header('vary', 'Origin, Access-Control-Request-Headers');
    reply.header('cache-control', 'no-store');
    const ok = origin !== undefined && (opts.public || (await realmOrigins(services, req.params.realm)).has(origin));
    if (ok) {
      allowOrigin(reply, origin);
      reply.header('access-control-allow-methods', methods);
      reply.header('access-control-allow-headers', 'Authorization, Content-Type, Accept, DPoP');
      reply.header('access-control-max-age', '3600');
    }
    return reply.code(204).send();
  });
}

/**
 * CORS for a bearer-token resource (userinfo, account JSON): the origins of the client the token was
 * issued to (azp, read unverified: the route verifies the token itself and an error body is harmless),
 * or, when there is no readable token, any origin a client of the realm registered, so that the
 * application can read the error.
 */
export async function corsForBearer(services: Services, req: FastifyRequest, reply: FastifyReply, realmId: string, token: string | undefined): Promise<void> {
  const origin = requestOrigin(req);
  if (!origin) return;
  let azp: unknown;
  try {
    azp = token ? decodeJwt(token).azp : undefined;
  } catch {
    azp = undefined;
  }
  if (typeof azp === 'string') {
    corsForClient(req, reply, await services.cache.client(realmId, azp));
    return;
  }
  if ((await realmOrigins(services, realmId)).has(origin)) allowOrigin(reply, origin);
}
