import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { Services } from './services.js';
import type { SessionEndListener } from './storage/store.js';
import { randomUUID } from 'node:crypto';
import { databaseReady } from './storage/database.js';
import { metrics } from './metrics.js';
import { believableChain, forwardedFor, proxyTrust, sanitizeRequestId } from './http/plugins/trusted-proxies.js';
import { STYLESHEET } from './views/styles.js';
import { STYLESHEET_PATH } from './views/layout.js';
import { SCRIPTS } from './views/scripts.js';
import { jsonErrorHandler, tokenRoutes } from './http/token/routes.js';
import { AUTHORIZE_PATH, authorizeRoutes } from './http/authorize/routes.js';
import { interactionRoutes } from './http/interaction/routes.js';
import { brokerRoutes } from './http/interaction/broker-routes.js';
import { requiredActionRoutes } from './http/interaction/required-action-routes.js';
import { webauthnRoutes } from './http/interaction/webauthn-routes.js';
import { resetRoutes } from './http/interaction/reset-routes.js';
import { registrationRoutes } from './http/interaction/registration-routes.js';
import { invitationRoutes } from './http/interaction/invitation-routes.js';
import { discoveryRoutes } from './http/discovery/routes.js';
import { appPageRoutes } from './http/app-pages/routes.js';
import { deviceRoutes } from './http/device/routes.js';
import { parRoutes } from './http/par/routes.js';
import { clientRegistrationRoutes } from './http/client-registration/routes.js';
import { lifecycleRoutes } from './http/token/lifecycle-routes.js';
import { logoutRoutes } from './http/logout/routes.js';
import { renderError } from './http/interaction/render.js';
import { accountRoutes } from './http/account/routes.js';
import { accountRestRoutes } from './http/account/rest.js';
import { sessionStatusRoutes } from './http/session-status/routes.js';
import { ADMIN_PREFIX } from './http/admin/prefix.js';
import { serveOnFirstRequest } from './http/plugins/on-first-request.js';
import { lazySerializerBuilder, lazyValidatorBuilder } from './http/plugins/lazy-schemas.js';
import { lazyChildLogger } from './http/plugins/lazy-child-logger.js';

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
        : err.code === 'CONNECT'
          ? [405, 'Method Not Allowed', 'this server is not a proxy']
          : [400, 'Bad Request', 'malformed HTTP request'];
  const body = JSON.stringify({ error: 'invalid_request', error_description: description });
  // The answer to HEAD has no body (RFC 9110 9.3.2): a client would fail to parse the bytes after the headers.
  const packet = (err as { rawPacket?: unknown }).rawPacket;
  const head = packet instanceof Buffer && packet.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${head ? '' : body}`);
  }
  socket.destroy();
}

/**
 * Node checks for slow requests only every `connectionsCheckingInterval` (30 s by default), so a
 * 30 s timeout used to cut connections after 30 to 60 s, and headers (60 s by default) later still.
 * The check runs every tenth of the limit (at most every second) against a limit shortened by one
 * interval, so a request is cut within the configured time, never after it.
 */
export function requestTimeouts(limitMs: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  const interval = Math.min(1_000, Math.floor(limitMs / 10));
  const timeout = limitMs - interval;
  return { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: interval };
}

/** A browser's navigation asks for HTML (Accept: text/html); an API client or a library does not. */
function wantsPage(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/html\b/i.test(accept);
}

/** NUL, or a UTF-16 surrogate without its pair (only a JSON body's \\ud800 escape can make one). */
const BAD_TEXT = /\0|\p{Cs}/u;

function hasBadText(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return BAD_TEXT.test(v);
  if (depth > 3 || v === null || typeof v !== 'object') return false;
  for (const [k, x] of Object.entries(v)) if (BAD_TEXT.test(k) || hasBadText(x, depth + 1)) return true;
  return false;
}

/**
 * Builds the HTTP application without listening, so tests can `inject` requests into it. The admin API
 * and console (everything under /auth/admin) are an app of their own, built by their first request
 * (src/http/plugins/on-first-request.ts): a server that is never administered never holds them.
 */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = await baseApp(opts);
  const { services } = opts;
  backchannelLogout(app, services);
  await app.register(tokenRoutes, { services });
  await app.register(authorizeRoutes, { services });
  await app.register(interactionRoutes, { services });
  await app.register(brokerRoutes, { services });
  await app.register(webauthnRoutes, { services });
  await app.register(requiredActionRoutes, { services });
  await app.register(resetRoutes, { services });
  await app.register(registrationRoutes, { services });
  await app.register(invitationRoutes, { services });
  await app.register(discoveryRoutes, { services });
  await app.register(deviceRoutes, { services });
  await app.register(parRoutes, { services });
  await app.register(clientRegistrationRoutes, { services });
  await app.register(lifecycleRoutes, { services });
  await app.register(logoutRoutes, { services });
  await app.register(accountRoutes, { services });
  await app.register(accountRestRoutes, { services });
  await app.register(sessionStatusRoutes, { services });
  serveOnFirstRequest(app, ADMIN_PREFIX, async () => {
    const admin = await baseApp(opts);
    const { adminRoutes } = await import('./http/admin/routes.js');
    await adminRoutes(admin, { services });
    return admin;
  });
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
    const ready = await isReady(services);
    return ready ? { status: 'UP' } : reply.code(503).send({ status: 'DOWN' });
  });
  return app;
}

/**
 * Back-channel logout: sessions that administrative changes end (src/admin/operations) are told to the
 * sender through the Store; at close, deliveries in flight finish or are dropped (logged) before the
 * database closes.
 */
function backchannelLogout(app: FastifyInstance, services: Services): void {
  const { backchannel, store } = services;
  backchannel.useLogger(app.log);
  const listener: SessionEndListener = (realmId, ended) => backchannel.notify(realmId, ended);
  store.sessionEnds = listener;
  app.addHook('onClose', async () => {
    if (store.sessionEnds === listener) store.sessionEnds = undefined;
    await backchannel.drain();
  });
}

/** A Fastify app with what every route of either app needs: options, parsers, root hooks, errors, 404. */
async function baseApp(opts: AppOptions): Promise<FastifyInstance> {
  const timeouts = requestTimeouts(opts.services.config.requestTimeoutMs);
  const trusted = proxyTrust(opts.services.config.trustedProxies);
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger, childLoggerFactory: lazyChildLogger } : { logger: false }),
    // One line per request costs more CPU than a refresh grant's own work; errors and events are logged instead.
    logController: new LogController({ disableRequestLogging: true }),
    // Bodies and URLs of OAuth requests are small; anything larger is refused early.
    bodyLimit: 64 * 1024,
    // Forwarding headers are believed only from the configured reverse proxies (REALMGATE_TRUSTED_PROXIES):
    // anyone else could name any address and dodge, or aim, the per-address limits.
    trustProxy: opts.services.config.trustedProxies.length > 0 ? (address: string) => trusted(address) : false,
    requestIdHeader: false,
    // A proxy's X-Request-Id ties our log lines to its own; from anyone else it is ignored.
    genReqId: (req) => (trusted(req.socket?.remoteAddress) ? sanitizeRequestId(req.headers['x-request-id']) : undefined) ?? randomUUID(),
    return503OnClosing: true,
    // Slow or stalled clients are cut off instead of holding a connection open (REALMGATE_REQUEST_TIMEOUT_MS).
    requestTimeout: timeouts.requestTimeout,
    http: timeouts,
    connectionTimeout: 120_000,
    keepAliveTimeout: 65_000,
    maxRequestsPerSocket: 10_000,
    clientErrorHandler: protocolClientError,
    // A URL that cannot be decoded, or a path parameter over the limit, before any route runs.
    // A browser gets an error page, anything else JSON.
    frameworkErrors: (error, req, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const description = tooLong ? 'the URL is too long' : 'the URL is malformed';
      const r = (reply as FastifyReply).code(tooLong ? 414 : 400).header('cache-control', 'no-store');
      if (wantsPage(req.headers.accept)) {
        void renderError(r, tooLong ? 414 : 400, { realmName: 'Realmgate', title: 'Invalid address', description: `The address of this page is not valid: ${description}.` });
      } else {
        void r.type('application/json').send(JSON.stringify({ error: 'invalid_request', error_description: description }));
      }
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // Route schemas are compiled on each route's first request, not at start (src/http/plugins/lazy-schemas.ts).
    schemaController: { compilersFactory: { buildValidator: lazyValidatorBuilder(), buildSerializer: lazySerializerBuilder() } },
  });
  // Node hands CONNECT (a proxy's tunnel request) to this event and, when nobody listens, drops the
  // connection without a word: answered like any other method this server does not serve.
  app.server.on('connect', (_req: unknown, socket: import('node:net').Socket) => protocolClientError(Object.assign(new Error('CONNECT'), { code: 'CONNECT' }), socket));
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });

  const { services } = opts;
  // The hooks every request runs take Fastify's callback form: an async hook costs a promise and a
  // microtask turn per request for nothing here (they never wait).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (trusted(req.socket.remoteAddress)) {
      // From a trusted proxy: X-Forwarded-For, else RFC 7239 Forwarded read as if it were one, each
      // entry reduced to a bare IP address and the list cut at the first that is not one, so that
      // req.ip (stored with interactions, events and failure counters) is always a valid address.
      const headers = req.raw.headers;
      const xff = headers['x-forwarded-for'];
      const fwd = headers.forwarded;
      const entries = xff !== undefined ? (Array.isArray(xff) ? xff.join(',') : xff).split(',') : typeof fwd === 'string' ? forwardedFor(fwd) : undefined;
      if (entries) {
        const chain = believableChain(entries);
        if (chain === undefined) delete headers['x-forwarded-for'];
        else headers['x-forwarded-for'] = chain;
      }
    }
    done();
  });
  // Route patterns, not URLs, label the metrics: a bounded set whatever the traffic.
  app.addHook('onResponse', (req, reply, done) => {
    // Fastify builds routeOptions anew at each read.
    const route = req.routeOptions;
    if (route.config.forwarded) return done();
    const labels = { route: route.url ?? 'unmatched', method: req.method, status: String(reply.statusCode) };
    metrics.requestDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  // Errors of requests that reach no route (a body the parsers refuse, say) answer in RFC 6749 form.
  app.setErrorHandler(jsonErrorHandler(services));
  // NUL never belongs in an OAuth parameter, and PostgreSQL refuses it in text; an unpaired surrogate is
  // no character at all (and encodeURIComponent throws on it): both refused at the door. The
  // authorization endpoint is exempt: it must answer such a request by redirecting the error to a
  // verified client (RFC 6749 4.1.2.1), and checks every value itself.
  app.addHook('preHandler', (req, _reply, done) => {
    if (req.routeOptions.url !== AUTHORIZE_PATH && (hasBadText(req.params) || hasBadText(req.query) || hasBadText(req.body))) {
      done(Object.assign(new Error('NUL or unpaired surrogate in request'), { statusCode: 400 }));
    } else done();
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).header('cache-control', 'no-store');
    if ((req.method === 'GET' || req.method === 'HEAD') && wantsPage(req.headers.accept)) return renderError(reply, 404, { realmName: 'Realmgate', title: 'Page not found', description: 'There is no page at this address.' });
    return reply.send({ error: 'invalid_request', error_description: 'no such endpoint' });
  });
  return app;
}

/** Ready: the database answers, takes writes, and has every migration this build knows applied (databaseReady). */
export async function isReady(services: Services): Promise<boolean> {
  return databaseReady(services.store.db);
}
