import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { isMasterAdmin, mayCreateRealm, maySeeRealm } from '../../admin/authorization.js';
import { serverInfoRepresentation } from '../../admin/keycloak/representations/server-info.js';
import { realmgateVersion } from '../../config/data-dir.js';
import { callerOf } from './plugin.js';
import { forbidden } from './errors.js';
import { security } from './schemas.js';

/**
 * GET /admin/serverinfo: what the server is (src/admin/keycloak/representations/server-info.ts). As in
 * Keycloak (AdminRoot.isAdmin), any administrator may read it: an admin of master, or a holder of a
 * realm-management role of its own realm; any other token gets 403.
 */
export async function serverInfoRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.get('/serverinfo', { schema: { tags: ['server-info'], summary: 'What the server is: the Keycloak API version it answers, its features, memory and uptime', security } }, async (req) => {
    const caller = callerOf(req);
    if (!isMasterAdmin(caller) && !mayCreateRealm(caller) && !maySeeRealm(caller, caller.realmId)) throw forbidden('only an administrator may read the server info');
    return serverInfoRepresentation({ realmgateVersion: realmgateVersion(), nowMs: services.clock.nowMs() });
  });
}
