import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { notFound } from './errors.js';
import { params, security } from './schemas.js';

/** Keycloak's installation provider of the keycloak.json adapter file (the one keycloak-js reads). */
export const KEYCLOAK_JSON = 'keycloak-oidc-keycloak-json';

/**
 * GET /clients/{id}/installation/providers/keycloak-oidc-keycloak-json (keycloak-admin-client's
 * clients.getInstallationProviders): the client's keycloak.json, as Keycloak's KeycloakOIDCClientInstallation
 * writes it, for `new Keycloak('/keycloak.json')` and Keycloak's other adapters. `auth-server-url` is
 * Realmgate's base with its `/auth` (where keycloak-js finds the realm's endpoints); `ssl-required` is
 * Keycloak's default, `external` (Realmgate has no per-realm setting: TLS is its proxy's); a confidential
 * client's file has no `credentials`: Realmgate keeps only the secret's hash, shown once when it is made.
 * Other installation providers (Keycloak's XML subsystems, the CLI snippets) are a 404, as Keycloak's
 * unknown ones.
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
      const client = await services.store.clients.get(realm.id, req.params.id);
      if (!client) throw notFound('Could not find client');
      if (req.params.providerId !== KEYCLOAK_JSON) throw notFound('Unknown Provider');
      const roles = await services.store.roles.list(realm.id, client.clientId);
      reply.header('cache-control', 'no-cache');
      return {
        realm: realm.id,
        'auth-server-url': `${services.config.authUrl}/auth/`,
        'ssl-required': 'external',
        resource: client.clientId,
        ...(client.public ? { 'public-client': true } : {}),
        ...(roles.length > 0 ? { 'use-resource-role-mappings': true } : {}),
        'confidential-port': 0,
      };
    },
  );
}
