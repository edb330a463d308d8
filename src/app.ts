import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { Services } from './services.js';
import { ping } from './storage/database.js';
import { STYLESHEET } from './views/styles.js';
import { STYLESHEET_PATH } from './views/layout.js';
import { SCRIPTS } from './views/scripts.js';
import { jsonErrorHandler, tokenRoutes } from './http/token/routes.js';
import { AUTHORIZE_PATH, authorizeRoutes } from './http/authorize/routes.js';
import { interactionRoutes } from './http/interaction/routes.js';
import { discoveryRoutes } from './http/discovery/routes.js';
import { appPageRoutes } from './http/app-pages/routes.js';
import { deviceRoutes } from './http/device/routes.js';
import { lifecycleRoutes } from './http/token/lifecycle-routes.js';
import { logoutRoutes } from './http/logout/routes.js';
import { accountRoutes } from './http/account/routes.js';
import fastifySwagger from '@fastify/swagger';
import { ADMIN_PREFIX, adminApi } from './http/admin/plugin.js';
import { sessionStatusRoutes } from './http/session-status/routes.js';

export interface AppOptions {
  services: Services;
  /** A pino logger; none means silent (tests). */
  logger?: FastifyBaseLogger;
}

/**
 * Errors Node's HTTP parser raises before a route runs (oversized headers, malformed requests,
 * timeouts), answered in RFC 6749's JSON form rather than a bare status line.
 */
function protocolClientError(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, description] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request took too long']
        : [400, 'Bad Request', 'malformed HTTP request'];
  const body = JSON.stringify({ error: 'invalid_request', error_description: description });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

function hasNul(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('\0');
  if (depth > 3 || v === null || typeof v !== 'object') return false;
  for (const [k, x] of Object.entries(v)) if (k.includes('\0') || hasNul(x, depth + 1)) return true;
  return false;
}

/** Builds the HTTP application without listening, so tests can `inject` requests into it. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // One line per request costs more CPU than a refresh grant's own work; errors and events are logged instead.
    logController: new LogController({ disableRequestLogging: true }),
    // Bodies and URLs of OAuth requests are small; anything larger is refused early.
    bodyLimit: 64 * 1024,
    trustProxy: false,
    return503OnClosing: true,
    // Slow or stalled clients are cut off instead of holding a connection open.
    requestTimeout: 30_000,
    connectionTimeout: 120_000,
    keepAliveTimeout: 65_000,
    maxRequestsPerSocket: 10_000,
    clientErrorHandler: protocolClientError,
    // A URL that cannot be decoded, or a path parameter over the limit, before any route runs.
    frameworkErrors: (error, _req, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const body = JSON.stringify({ error: 'invalid_request', error_description: tooLong ? 'the URL is too long' : 'the URL is malformed' });
      void (reply as FastifyReply).code(tooLong ? 414 : 400).header('cache-control', 'no-store').type('application/json').send(body);
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
  });
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
  // The admin API's OpenAPI 3 document, generated from its route schemas (only tagged routes: the admin ones).
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Realmgate admin REST API (Keycloak-compatible)', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    hideUntagged: true,
  });

  const { services } = opts;
  // Errors of requests that reach no route (a body the parsers refuse, say) answer in RFC 6749 form.
  app.setErrorHandler(jsonErrorHandler(services));
  // NUL never belongs in an OAuth parameter, and PostgreSQL refuses it in text: refused at the door.
  // The authorization endpoint is exempt: it must answer such a request by redirecting the error to a
  // verified client (RFC 6749 4.1.2.1), and checks every value itself.
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.url === AUTHORIZE_PATH) return;
    if (hasNul(req.params) || hasNul(req.query) || hasNul(req.body)) throw Object.assign(new Error('NUL in request'), { statusCode: 400 });
  });
  await app.register(tokenRoutes, { services });
  await app.register(authorizeRoutes, { services });
  await app.register(interactionRoutes, { services });
  await app.register(discoveryRoutes, { services });
  await app.register(deviceRoutes, { services });
  await app.register(lifecycleRoutes, { services });
  await app.register(logoutRoutes, { services });
  await app.register(accountRoutes, { services });
  await app.register(adminApi, { services, prefix: ADMIN_PREFIX });
  app.get(`${ADMIN_PREFIX}/openapi.json`, async (_req, reply) => reply.header('cache-control', 'no-cache').send(app.swagger()));
  await app.register(sessionStatusRoutes, { services });
  // The service's web application pages, when APP_URL is this server.
  if (new URL(services.config.appUrl).origin === new URL(services.config.authUrl).origin) await app.register(appPageRoutes, { services });

  app.get(STYLESHEET_PATH, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    reply.header('x-content-type-options', 'nosniff');
    return reply.type('text/css; charset=utf-8').send(STYLESHEET);
  });

  for (const [path, source] of SCRIPTS) {
    app.get(path, async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=3600');
      reply.header('x-content-type-options', 'nosniff');
      return reply.type('text/javascript; charset=utf-8').send(source);
    });
  }

  app.get('/health/live', async () => ({ status: 'UP' }));
  app.get('/health/ready', async (_req, reply) => {
    try {
      await ping(services.store.db);
      return { status: 'UP' };
    } catch {
      return reply.code(503).send({ status: 'DOWN' });
    }
  });

  app.setNotFoundHandler((_req, reply) =>
    reply.code(404).header('cache-control', 'no-store').send({ error: 'invalid_request', error_description: 'no such endpoint' }),
  );
  return app;
}
