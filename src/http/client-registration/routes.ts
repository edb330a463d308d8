import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { RegistrationError } from '../../oauth/client-registration.js';
import { setNoStore } from '../plugins/security-headers.js';
import { allowOrigin, preflight, realmOrigins, requestOrigin, varyOrigin } from '../plugins/cors.js';
import { registrationErrorHandler } from './errors.js';
import { read, register, remove, update } from './registration.js';
import { CLIENT_CONFIGURATION_PATH, CLIENT_REGISTRATION_PATH } from './paths.js';

export { CLIENT_CONFIGURATION_PATH, CLIENT_REGISTRATION_PATH };

/** Client metadata is a small document; an inline JWKS the largest part of it. */
const BODY_LIMIT = 64 * 1024;

type Params = { realm: string };
type ClientParams = { realm: string; clientId: string };

/** RFC 7591 3: the metadata is a JSON document (the form parser would otherwise read a form as one). */
function requireJson(req: FastifyRequest): void {
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw new RegistrationError('invalid_client_metadata', 'the client metadata must be sent as application/json');
  }
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592) at Keycloak's paths. Every
 * answer is JSON with Cache-Control: no-store (it carries secrets). Bearer-authorized, no cookies: a
 * browser application of the realm may call it (the origins its clients registered).
 */
export async function clientRegistrationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(registrationErrorHandler(services));
  varyOrigin(app);
  preflight(app, services, CLIENT_REGISTRATION_PATH, 'POST');
  preflight(app, services, CLIENT_CONFIGURATION_PATH, 'GET, PUT, DELETE');
  app.addHook('onRequest', async (req: FastifyRequest<{ Params: Params }>, reply) => {
    const origin = requestOrigin(req);
    if (origin && req.method !== 'OPTIONS' && (await realmOrigins(services, req.params.realm)).has(origin)) allowOrigin(reply, origin);
  });

  app.post<{ Params: Params }>(CLIENT_REGISTRATION_PATH, { bodyLimit: BODY_LIMIT }, async (req, reply) => {
    requireJson(req);
    if (!(await services.cache.realm(req.params.realm))) throw new RegistrationError('invalid_request', 'realm not found', 404);
    const body = await register(services, req, req.params.realm);
    setNoStore(reply);
    // RFC 7591 3.2.1: 201 Created.
    return reply.code(201).send(body);
  });

  // No HEAD: a read rotates the registration access token, and HEAD's answer would lose the new one.
  app.get<{ Params: ClientParams }>(CLIENT_CONFIGURATION_PATH, { exposeHeadRoute: false }, async (req, reply) => {
    const body = await read(services, req, req.params.realm, req.params.clientId);
    setNoStore(reply);
    return reply.code(200).send(body);
  });

  app.put<{ Params: ClientParams }>(CLIENT_CONFIGURATION_PATH, { bodyLimit: BODY_LIMIT }, async (req, reply) => {
    requireJson(req);
    const body = await update(services, req, req.params.realm, req.params.clientId);
    setNoStore(reply);
    return reply.code(200).send(body);
  });

  app.delete<{ Params: ClientParams }>(CLIENT_CONFIGURATION_PATH, async (req, reply) => {
    await remove(services, req, req.params.realm, req.params.clientId);
    setNoStore(reply);
    // RFC 7592 2.3: 204 No Content.
    return reply.code(204).send();
  });

  for (const [url, allow] of [
    [CLIENT_REGISTRATION_PATH, 'POST'],
    [CLIENT_CONFIGURATION_PATH, 'GET, PUT, DELETE'],
  ] as const) {
    const methods = url === CLIENT_REGISTRATION_PATH ? ['GET', 'PUT', 'DELETE', 'PATCH'] : ['POST', 'PATCH'];
    app.route({
      method: methods,
      url,
      handler: async (_req, reply) => {
        reply.header('allow', allow);
        throw new RegistrationError('invalid_request', `this endpoint accepts only ${allow}`, 405);
      },
    });
  }
}
