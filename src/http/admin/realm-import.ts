import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { partialImport } from '../../admin/operations/realm-import.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { anyObject, realmParams, security } from './schemas.js';

/** Keycloak's PartialImportResource: clients, users (with their links) and identity providers into an existing realm. */
export async function realmImportRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/partialImport',
    { schema: { tags: ['realms'], summary: 'Import clients, users (with their consents and identity provider links) and identity providers from a Keycloak RealmRepresentation; ifResourceExists FAIL, SKIP or OVERWRITE', params: realmParams, body: anyObject, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      const body = req.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the request body must be a JSON realm representation');
      const result = await partialImport(services.store, realm.id, body as Record<string, unknown>, actorOf(caller));
      services.cache.clear();
      return result;
    },
  );
}
