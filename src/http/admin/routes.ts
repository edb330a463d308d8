import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { ADMIN_PREFIX, adminApi } from './plugin.js';
import { collectOpenApi } from './openapi.js';
import { consoleRoutes } from '../console/routes.js';

/**
 * Everything under /auth/admin: the admin REST API, its OpenAPI document and the admin console. The app
 * that serves them is built on the first request under /auth/admin (src/app.ts, src/http/plugins/on-first-request.ts).
 */
export async function adminRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  // The admin API's OpenAPI 3 document, generated from its route schemas (only tagged routes: the admin ones).
  const openApiDocument = collectOpenApi(app, {
    info: { title: 'Realmgate admin REST API (Keycloak-compatible)', version: '1' },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
  });
  await app.register(adminApi, { services, prefix: ADMIN_PREFIX });
  await app.register(consoleRoutes, { services });
  app.get(`${ADMIN_PREFIX}/openapi.json`, async (_req, reply) => reply.header('cache-control', 'no-cache').send(openApiDocument()));
}
