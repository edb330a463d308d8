import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { getRequiredAction, listRequiredActions, moveRequiredAction, updateRequiredAction } from '../../admin/operations/required-actions.js';
import { requiredActionRepresentation } from '../../admin/required-actions.js';
import type { RequiredAction } from '../../storage/types.js';
import { actorOf, requireRole } from './authenticate.js';
import { jsonObject } from './clients.js';
import { callerOf, loadRealm } from './plugin.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['authentication'];
const aliasParams = params({ alias: { type: 'string', maxLength: 255 } });
type P = { Params: { realm: string; alias: string } };

/**
 * Keycloak's AuthenticationManagementResource, its required-actions part
 * (keycloak-admin-client's authenticationManagement.getRequiredActions / getRequiredActionForAlias /
 * updateRequiredAction, raiseRequiredActionPriority, lowerRequiredActionPriority): the actions
 * Realmgate acts on, with the realm's settings.
 */
export async function requiredActionRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<{ Params: { realm: string } }>('/realms/:realm/authentication/required-actions', { schema: { tags, summary: 'The required actions and their settings, by priority', params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return (await listRequiredActions(store, realm.id)).map((a) => requiredActionRepresentation(a.alias, a.setting));
  });

  app.get<P>('/realms/:realm/authentication/required-actions/:alias', { schema: { tags, summary: 'One required action and its settings', params: aliasParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return requiredActionRepresentation(req.params.alias as RequiredAction, await getRequiredAction(store, realm.id, req.params.alias));
  });

  app.put<P>(
    '/realms/:realm/authentication/required-actions/:alias',
    { schema: { tags, summary: "Change a required action's enabled, defaultAction, priority or config (TERMS_AND_CONDITIONS: terms_text)", params: aliasParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      await updateRequiredAction(store, { realmId: realm.id, alias: req.params.alias, changes: jsonObject(req.body) }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  for (const direction of ['raise', 'lower'] as const) {
    app.post<P>(
      `/realms/:realm/authentication/required-actions/:alias/${direction}-priority`,
      { schema: { tags, summary: direction === 'raise' ? 'Ask the action before the one now before it' : 'Ask the action after the one now after it', params: aliasParams, response: noContent204, security } },
      async (req, reply) => {
        const caller = callerOf(req);
        const realm = await loadRealm(services, caller, req.params.realm);
        requireRole(caller, realm.id, 'manage-realm');
        await moveRequiredAction(store, { realmId: realm.id, alias: req.params.alias, direction }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );
  }
}
