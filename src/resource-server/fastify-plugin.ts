import { bearerChallenge, errorBody } from './errors.js';
import { createVerifier, type AccessTokenClaims, type Verifier, type VerifierOptions } from './verifier.js';

// Structural types for the parts of Fastify the plugin uses, so the kit does not depend on Fastify.
interface FastifyLikeRequest {
  headers: Record<string, string | string[] | undefined>;
  method?: string;
  url?: string;
  routeOptions?: { config?: unknown };
  accessToken?: AccessTokenClaims;
}
interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(body: unknown): unknown;
}
interface FastifyLikeInstance {
  addHook(name: 'onRequest', hook: (req: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<unknown>): unknown;
  decorateRequest?(name: string, value: unknown): unknown;
  hasRequestDecorator?(name: string): boolean;
}

/** Per-route settings, given as the route's `config`: `{ config: { requiredScopes: ['exports'] } }`. */
export interface RouteTokenConfig {
  requiredScopes?: string[];
  introspect?: boolean;
  /** The route needs no token (e.g. a health check). */
  public?: boolean;
}

export type ResourceServerPluginOptions = { verifier: Verifier } | VerifierOptions;

/**
 * A Fastify plugin: every route of the context it is registered in needs a valid access token; the
 * claims are on `request.accessToken`. Routes add scopes or ask for introspection through `config`.
 * Register it inside the plugin that holds the protected routes (`app.register(async (api) => {...})`).
 */
export function resourceServer(app: FastifyLikeInstance, opts: ResourceServerPluginOptions, done?: (err?: Error) => void): Promise<void> | void {
  const verifier = 'verifier' in opts ? opts.verifier : createVerifier(opts);
  if (app.decorateRequest && !app.hasRequestDecorator?.('accessToken')) app.decorateRequest('accessToken', undefined);
  app.addHook('onRequest', async (req, reply) => {
    const config = (req.routeOptions?.config ?? {}) as RouteTokenConfig;
    if (config.public) return;
    const result = await verifier.verifyRequest(req, { requiredScopes: config.requiredScopes, introspect: config.introspect });
    if (!result.ok) {
      reply.code(result.error.status).header('www-authenticate', bearerChallenge(result.error, verifier.realm)).header('cache-control', 'no-store');
      return reply.send(errorBody(result.error));
    }
    req.accessToken = result.claims;
    return undefined;
  });
  if (done) done();
}

// Like fastify-plugin: the hook applies to the context the plugin is registered in, not a child of it.
(resourceServer as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
(resourceServer as unknown as Record<symbol, unknown>)[Symbol.for('fastify.display-name')] = 'realmgate-resource-server';
