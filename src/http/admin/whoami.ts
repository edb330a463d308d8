import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { whoAmI } from '../../admin/operations/whoami.js';
import { callerOf } from './plugin.js';
import { unauthorized } from './errors.js';
import { security } from './schemas.js';

/**
 * GET /admin/{realm}/console/whoami[?currentRealm=R] (keycloak-admin-client's `whoAmI.find`): who the
 * caller is and which admin roles they hold, as Keycloak's admin console asks at start
 * (src/admin/operations/whoami.ts). The token must be one of `{realm}`, the realm the administrator signed
 * in to (another realm's token: 401, as Keycloak, which verifies the token against the path's realm).
 */
export async function whoAmIRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.get<{ Params: { realm: string }; Querystring: { currentRealm?: string } }>(
    '/:realm/console/whoami',
    {
      schema: {
        tags: ['whoami'],
        summary: "Who the caller is and the admin roles they hold (Keycloak's admin console whoami)",
        params: { type: 'object', properties: { realm: { type: 'string', maxLength: 255 } }, required: ['realm'] },
        querystring: { type: 'object', properties: { currentRealm: { type: 'string', maxLength: 255 } } },
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      if (caller.realmId !== req.params.realm) throw unauthorized(`the bearer token was not issued by realm ${req.params.realm}`);
      reply.header('cache-control', 'no-cache');
      return whoAmI(services.store, caller, { target: req.query.currentRealm ?? caller.realmId, acceptLanguage: req.headers['accept-language'] });
    },
  );
}
