import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { ValidationError } from '../../admin/validation.js';
import { requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { realmParams, security } from './schemas.js';

const tags = ['client-policies'];

/**
 * Keycloak's client policies (keycloak-admin-client's clientPolicies.*): Realmgate has none, neither a
 * realm's own nor Keycloak's global ones (fapi-1-baseline, oauth-2-1-for-confidential-client, ...), whose
 * executors it does not run. The reads say so in Keycloak's shapes, as a Keycloak realm without any
 * answers them (and as a realm export lists them: `{"policies": []}`, `{"profiles": []}`), so that a tool
 * reconciling them (keycloak-config-cli, Terraform) sees nothing to do; a write that would add one is
 * refused in words, one that leaves none is accepted and changes nothing.
 */
export async function clientPolicyRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const kinds = [
    { path: 'profiles', list: 'profiles', global: 'globalProfiles', include: 'include-global-profiles', what: 'client profiles' },
    { path: 'policies', list: 'policies', global: 'globalPolicies', include: 'include-global-policies', what: 'client policies' },
  ] as const;
  for (const k of kinds) {
    app.get<{ Params: { realm: string }; Querystring: Record<string, string | undefined> }>(
      `/realms/:realm/client-policies/${k.path}`,
      {
        schema: {
          tags,
          summary: `The realm's ${k.what} (none: Realmgate has no client policies)`,
          params: realmParams,
          querystring: { type: 'object', properties: { [k.include]: { type: 'string', enum: ['true', 'false'] } } },
          security,
        },
      },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'view-realm');
        reply.header('cache-control', 'no-cache');
        return req.query[k.include] === 'true' ? { [k.list]: [], [k.global]: [] } : { [k.list]: [] };
      },
    );
    app.put<{ Params: { realm: string }; Body: unknown }>(
      `/realms/:realm/client-policies/${k.path}`,
      { schema: { tags, summary: `Accepted only without ${k.what} (Realmgate has none); one is refused (400)`, params: realmParams, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-realm');
        const body = req.body;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError(`the body must be a JSON object with "${k.list}"`);
        const list = (body as Record<string, unknown>)[k.list];
        if (list !== undefined && list !== null && !Array.isArray(list)) throw new ValidationError(`"${k.list}" must be an array`);
        if (Array.isArray(list) && list.length > 0) {
          throw new ValidationError(`Realmgate has no ${k.what}: it runs none of Keycloak's client policy executors, so it cannot keep one`);
        }
        return reply.code(204).send();
      },
    );
  }
}
