import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { OAuthError } from '../../oauth/errors.js';
import { handlePushedAuthorizationRequest } from '../../oauth/par.js';
import { setNoStore } from '../plugins/security-headers.js';
import { preflight, varyOrigin } from '../plugins/cors.js';
import { checkBrowserOrigin, jsonErrorHandler, requireForm } from '../token/routes.js';

/** Keycloak's path of the pushed authorization request endpoint. */
export const PAR_PATH = '/auth/realms/:realm/protocol/openid-connect/ext/par/request';

/** RFC 9126: the pushed authorization request endpoint; JSON answers, CORS as at the token endpoint. */
export async function parRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(jsonErrorHandler(services));
  varyOrigin(app);
  preflight(app, services, PAR_PATH, 'POST');

  app.post<{ Params: { realm: string } }>(PAR_PATH, async (req, reply) => {
    // RFC 9126 2.1: the parameters come as application/x-www-form-urlencoded.
    requireForm(req.headers['content-type']);
    await checkBrowserOrigin(services, req, reply);
    const body = await handlePushedAuthorizationRequest(services, {
      realmId: req.params.realm,
      authorization: req.headers.authorization,
      body: req.body as Record<string, unknown> | undefined,
      ip: req.ip,
    });
    setNoStore(reply);
    // RFC 9126 2.2: 201 Created.
    return reply.code(201).send(body);
  });

  // RFC 9126 2.3: 405 for any other method.
  app.route<{ Params: { realm: string } }>({
    method: ['GET', 'PUT', 'DELETE', 'PATCH'],
    url: PAR_PATH,
    handler: async (_req, reply) => {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the pushed authorization request endpoint accepts only POST', { status: 405 });
    },
  });
}
