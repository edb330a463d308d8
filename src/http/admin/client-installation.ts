import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { clientAdapterConfig } from '../../admin/operations/client-installation.js';
import { requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { params, security } from './schemas.js';

/**
 * GET /clients/{id}/installation/providers/{providerId} (keycloak-admin-client's
 * clients.getInstallationProviders): keycloak-oidc-keycloak-json, the client's keycloak.json
 * (src/admin/operations/client-installation.ts); other providers 404, as Keycloak's unknown ones.
 */
export async function clientInstallationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.get<{ Params: { realm: string; id: string; providerId: string } }>(
    '/realms/:realm/clients/:id/installation/providers/:providerId',
    {
      schema: {
        tags: ['clients'],
        summary: "The client's adapter configuration (keycloak-oidc-keycloak-json: keycloak.json)",
        params: params({ id: { type: 'string', maxLength: 255 }, providerId: { type: 'string', maxLength: 255 } }),
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      reply.header('cache-control', 'no-cache');
      return clientAdapterConfig(services.store, { realmId: realm.id, clientId: req.params.id, providerId: req.params.providerId, authUrl: services.config.authUrl });
    },
  );
}
