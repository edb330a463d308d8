import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { busy } from '../busy.js';
import type { Services } from '../../services.js';
import { OAuthError, safeDescription } from '../../oauth/errors.js';
import { handleTokenRequest } from '../../oauth/token-endpoint.js';
import { setNoStore } from '../plugins/security-headers.js';
import { namedClientId } from '../../oauth/web-origins.js';
import { corsForClient, isCrossOrigin, preflight, varyOrigin } from '../plugins/cors.js';
import { dpopHeader } from '../../oauth/dpop.js';

const TOKEN_PATH = '/auth/realms/:realm/protocol/openid-connect/token';

// fast-json-stringify serializes the hot response without reflection.
const tokenResponseSchema = {
  200: {
    type: 'object',
    properties: {
      access_token: { type: 'string' },
      expires_in: { type: 'integer' },
      refresh_expires_in: { type: 'integer' },
      refresh_token: { type: 'string' },
      token_type: { type: 'string' },
      'not-before-policy': { type: 'integer' },
      session_state: { type: 'string' },
      scope: { type: 'string' },
      id_token: { type: 'string' },
      // RFC 8693 2.2.1
      issued_token_type: { type: 'string' },
    },
  },
} as const;

/** Token-style endpoints take only application/x-www-form-urlencoded bodies (RFC 6749 3.2, RFC 8628 3.1). */
export function requireForm(contentType: string | undefined): void {
  if (!contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
  }
}

/** Sends an RFC 6749 5.2 error body; invalid_client carries the challenge of RFC 6749 5.2 / RFC 7235. */
export function sendOAuthError(reply: FastifyReply, err: OAuthError, realmId: string | undefined): FastifyReply {
  setNoStore(reply);
  if (err.retryAfter !== undefined) reply.header('retry-after', String(err.retryAfter));
  if (err.status === 401) reply.header('www-authenticate', `Basic realm="${(realmId ?? 'realmgate').replace(/[^A-Za-z0-9._-]/g, '')}"`);
  return reply.code(err.status).type('application/json').send({ error: err.error, error_description: safeDescription(err.description) });
}

/** Turns anything thrown in a JSON protocol endpoint into an RFC 6749 error; internals only reach the log. */
export function jsonErrorHandler(services: Services) {
  return function handler(this: FastifyInstance, error: FastifyError | Error, request: { params: unknown; log: FastifyInstance['log'] }, reply: FastifyReply): FastifyReply {
    const realmId = (request.params as { realm?: string } | undefined)?.realm;
    if (error instanceof OAuthError) {
      if (error.detail) request.log.info({ oauthError: error.error, detail: error.detail }, 'oauth error');
      return sendOAuthError(reply, error, realmId);
    }
    if (busy(error, reply, request.log)) {
      return sendOAuthError(reply, new OAuthError('temporarily_unavailable', 'the server is busy, retry shortly', { status: 503 }), realmId);
    }
    const status = (error as FastifyError).statusCode;
    if (status === 413) return sendOAuthError(reply, new OAuthError('invalid_request', 'request body is too large', { status: 413 }), realmId);
    if (status === 415) return sendOAuthError(reply, new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded'), realmId);
    if (status !== undefined && status >= 400 && status < 500) return sendOAuthError(reply, new OAuthError('invalid_request', 'malformed request'), realmId);
    request.log.error({ err: error }, 'unexpected error');
    void services;
    return sendOAuthError(reply, new OAuthError('server_error', 'the server could not handle the request'), realmId);
  };
}

/**
 * A browser request (it carries Origin) is answered with CORS headers when the client it names allows
 * that origin, and refused otherwise, before anything else happens: a code sent from a page the client
 * does not trust is not consumed, and stays usable from the right place.
 */
export async function checkBrowserOrigin(
  services: Services,
  req: FastifyRequest<{ Params: { realm: string } }>,
  reply: FastifyReply,
): Promise<void> {
  if (!isCrossOrigin(services, req)) return;
  const clientId = namedClientId(req.headers.authorization, req.body);
  const client = clientId === undefined ? undefined : await services.cache.client(req.params.realm, clientId);
  // An unknown client is left to client authentication, which refuses it in its own words.
  if (!client || corsForClient(req, reply, client)) return;
  throw new OAuthError('invalid_request', 'this client does not accept requests from the origin of this page', { detail: `origin ${String(req.headers.origin)}` });
}

export async function tokenRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(jsonErrorHandler(services));
  varyOrigin(app);
  preflight(app, services, TOKEN_PATH, 'POST');

  app.post<{ Params: { realm: string } }>(TOKEN_PATH, { schema: { response: tokenResponseSchema } }, async (req, reply) => {
    // RFC 6749 3.2: the parameters come as application/x-www-form-urlencoded.
    requireForm(req.headers['content-type']);
    await checkBrowserOrigin(services, req, reply);
    const dpop = req.headers.dpop === undefined ? undefined : dpopHeader(req.raw.rawHeaders);
    const body = await handleTokenRequest(services, {
      ...(dpop !== undefined ? { dpop } : {}),
      realmId: req.params.realm,
      authorization: req.headers.authorization,
      body: req.body as Record<string, unknown> | undefined,
      ip: req.ip,
      userAgent: req.headers['user-agent'],
    });
    setNoStore(reply);
    return body;
  });

  // RFC 6749 3.2: the token endpoint only accepts POST.
  app.route<{ Params: { realm: string } }>({
    method: ['GET', 'PUT', 'DELETE', 'PATCH'],
    url: TOKEN_PATH,
    handler: async (_req, reply) => {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the token endpoint accepts only POST', { status: 405 });
    },
  });
}
