import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import {
  getRequiredAction,
  getRequiredActionConfig,
  listRequiredActions,
  moveRequiredAction,
  registerRequiredActionProvider,
  removeRequiredActionConfig,
  setRequiredActionConfig,
  unregisterRequiredAction,
  unregisteredRequiredActions,
  updateRequiredAction,
} from '../../admin/operations/required-actions.js';
import { isConfigurableAction, requiredActionConfigDescription, requiredActionRepresentation } from '../../admin/required-actions.js';
import { NotFound } from '../../admin/validation.js';
import type { Realm, RequiredAction } from '../../storage/types.js';
import type { AdminCaller, AdminRole } from '../../admin/authorization.js';
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
 * updateRequiredAction, raiseRequiredActionPriority, lowerRequiredActionPriority,
 * getRequiredActionConfigDescription, getRequiredActionConfig, updateRequiredActionConfig,
 * removeRequiredActionConfig): the actions Realmgate acts on, with the realm's settings.
 */
export async function requiredActionRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  /** The path's realm, once the caller is known to hold `role` in it. */
  const realmAs = async (req: FastifyRequest<{ Params: { realm: string } }>, role: AdminRole): Promise<{ caller: AdminCaller; realm: Realm }> => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, role);
    return { caller, realm };
  };

  app.get<{ Params: { realm: string } }>('/realms/:realm/authentication/required-actions', { schema: { tags, summary: 'The required actions and their settings, by priority', params: realmParams, security } }, async (req) => {
    const { realm } = await realmAs(req, 'view-realm');
    return (await listRequiredActions(store, realm.id)).map((a) => requiredActionRepresentation(a.alias, a.setting));
  });

  app.get<P>('/realms/:realm/authentication/required-actions/:alias', { schema: { tags, summary: 'One required action and its settings', params: aliasParams, security } }, async (req) => {
    const { realm } = await realmAs(req, 'view-realm');
    return requiredActionRepresentation(req.params.alias as RequiredAction, await getRequiredAction(store, realm.id, req.params.alias));
  });

  app.put<P>(
    '/realms/:realm/authentication/required-actions/:alias',
    { schema: { tags, summary: "Change a required action's enabled, defaultAction, priority or config (max_auth_age; TERMS_AND_CONDITIONS: terms_text)", params: aliasParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const { caller, realm } = await realmAs(req, 'manage-realm');
      await updateRequiredAction(store, { realmId: realm.id, alias: req.params.alias, changes: jsonObject(req.body) }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  // Keycloak 25's config sub-resource: an alias Realmgate does not act on (or delete_account, which has
  // no config) is a 404 here and a 400 on
  // /config, as Keycloak answers ("Could not find configurable RequiredAction provider", "RequiredAction
  // is not configurable").
  app.get<P>('/realms/:realm/authentication/required-actions/:alias/config-description', { schema: { tags, summary: 'The config keys a required action takes', params: aliasParams, security } }, async (req) => {
    await realmAs(req, 'view-realm');
    if (!isConfigurableAction(req.params.alias)) throw new NotFound('Could not find configurable RequiredAction provider');
    return requiredActionConfigDescription(req.params.alias);
  });

  app.get<P>('/realms/:realm/authentication/required-actions/:alias/config', { schema: { tags, summary: "A required action's config", params: aliasParams, security } }, async (req) => {
    const { realm } = await realmAs(req, 'view-realm');
    return { alias: req.params.alias, config: await getRequiredActionConfig(store, realm.id, req.params.alias) };
  });

  app.put<P>(
    '/realms/:realm/authentication/required-actions/:alias/config',
    { schema: { tags, summary: "Replace a required action's config (max_auth_age; TERMS_AND_CONDITIONS: terms_text)", params: aliasParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const { caller, realm } = await realmAs(req, 'manage-realm');
      await setRequiredActionConfig(store, { realmId: realm.id, alias: req.params.alias, config: jsonObject(req.body).config }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  app.delete<P>('/realms/:realm/authentication/required-actions/:alias/config', { schema: { tags, summary: "Remove a required action's config", params: aliasParams, response: noContent204, security } }, async (req, reply) => {
    const { caller, realm } = await realmAs(req, 'manage-realm');
    await removeRequiredActionConfig(store, { realmId: realm.id, alias: req.params.alias }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  // Registration of required action providers (keycloak-admin-client's getUnregisteredRequiredActions,
  // registerRequiredAction, deleteRequiredAction): refused in words, the seven being built in.
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/authentication/unregistered-required-actions',
    { schema: { tags, summary: 'Required action providers not yet registered in the realm: none (the seven are built in)', params: realmParams, security } },
    async (req) => unregisteredRequiredActions(store, (await realmAs(req, 'view-realm')).realm.id),
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/authentication/register-required-action',
    { schema: { tags, summary: 'Refused: the required actions are built in (409 for one of them, else 400)', params: realmParams, security } },
    async (req) => {
      const { realm } = await realmAs(req, 'manage-realm');
      const body = req.body !== null && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
      return registerRequiredActionProvider(store, { realmId: realm.id, providerId: body.providerId });
    },
  );

  app.delete<P>(
    '/realms/:realm/authentication/required-actions/:alias',
    { schema: { tags, summary: 'Refused: a built-in required action cannot be unregistered (disable it: enabled false)', params: aliasParams, security } },
    async (req) => unregisterRequiredAction(store, { realmId: (await realmAs(req, 'manage-realm')).realm.id, alias: req.params.alias }),
  );

  for (const direction of ['raise', 'lower'] as const) {
    app.post<P>(
      `/realms/:realm/authentication/required-actions/:alias/${direction}-priority`,
      { schema: { tags, summary: direction === 'raise' ? 'Ask the action before the one now before it' : 'Ask the action after the one now after it', params: aliasParams, response: noContent204, security } },
      async (req, reply) => {
        const { caller, realm } = await realmAs(req, 'manage-realm');
        await moveRequiredAction(store, { realmId: realm.id, alias: req.params.alias, direction }, actorOf(caller));
        services.cache.clear();
        return reply.code(204).send();
      },
    );
  }
}
