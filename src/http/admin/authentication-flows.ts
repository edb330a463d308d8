import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { ValidationError } from '../../admin/validation.js';
import { AUTHENTICATORS, authenticatorProviders, flowExecutions, realmFlows, REVIEW_CONFIG_KEY, REVIEW_PROFILE, reviewConfig, reviewConfigId } from '../../admin/keycloak/representations/authentication-flows.js';
import { updateRealm } from '../../admin/operations/realms.js';
import type { BrokerReviewProfile } from '../../storage/types.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { notFound } from './errors.js';
import { params, realmParams, security } from './schemas.js';

const tags = ['authentication'];
const FIXED =
  "Realmgate's authentication flows are fixed: the password (or a passkey), then the security key or the code of an authenticator app for users who have one (see GET authentication/flows); they cannot be created, copied, changed or deleted";

/**
 * Keycloak's AuthenticationManagementResource for flows (keycloak-admin-client's authenticationManagement
 * getFlows, getFlow, getExecutions and the providers): the fixed sign-in steps Realmgate takes, as the
 * built-in flows they match (src/admin/keycloak/representations/authentication-flows.ts), under view-realm.
 * Every change of a flow, an execution or an authenticator's config is refused with a 400 that says so,
 * after the manage-realm check (required actions, which Realmgate does configure, are required-actions.ts).
 */
export async function authenticationFlowRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const reader = async (req: FastifyRequest<{ Params: { realm: string } }>): Promise<string> => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return realm.id;
  };
  const base = '/realms/:realm/authentication';

  app.get<{ Params: { realm: string } }>(`${base}/flows`, { schema: { tags, summary: "The realm's top-level authentication flows: Realmgate's fixed sign-in steps as Keycloak's built-in flows", params: realmParams, security } }, async (req) => {
    return realmFlows(await reader(req)).filter((f) => f.topLevel);
  });

  // One parameter name for the segment after /flows (an id here, an alias below), as the router needs.
  app.get<{ Params: { realm: string; flow: string } }>(
    `${base}/flows/:flow`,
    { schema: { tags, summary: 'One flow, top-level or nested, by its id', params: params({ flow: { type: 'string', maxLength: 255 } }), security } },
    async (req) => {
      const flow = realmFlows(await reader(req)).find((f) => f.id === req.params.flow);
      if (!flow) throw notFound('Could not find flow with id');
      return flow;
    },
  );

  app.get<{ Params: { realm: string; flow: string } }>(
    `${base}/flows/:flow/executions`,
    { schema: { tags, summary: "A flow's executions and those of the flows in it, with their level and index", params: params({ flow: { type: 'string', maxLength: 255 } }), security } },
    async (req) => {
      const list = flowExecutions(await reader(req), req.params.flow);
      if (!list) throw notFound('Flow not found');
      return list;
    },
  );

  const providers = [
    ['authenticator-providers', 'authenticator'],
    ['client-authenticator-providers', 'client'],
    ['form-providers', 'form'],
    ['form-action-providers', 'form-action'],
  ] as const;
  for (const [path, kind] of providers) {
    app.get<{ Params: { realm: string } }>(`${base}/${path}`, { schema: { tags, summary: `The ${kind} providers the flows use`, params: realmParams, security } }, async (req) => {
      await reader(req);
      return authenticatorProviders(kind);
    });
  }

  // keycloak-admin-client's getConfigDescription: what config an authenticator takes (none does here).
  app.get<{ Params: { realm: string; providerId: string } }>(
    `${base}/config-description/:providerId`,
    { schema: { tags, summary: "An authenticator's config description: no properties (none is configurable)", params: params({ providerId: { type: 'string', maxLength: 255 } }), security } },
    async (req) => {
      await reader(req);
      const a = Object.hasOwn(AUTHENTICATORS, req.params.providerId) ? AUTHENTICATORS[req.params.providerId] : undefined;
      if (!a) throw notFound('Could not find authenticator provider');
      const properties =
        req.params.providerId === REVIEW_PROFILE
          ? [{ name: REVIEW_CONFIG_KEY, label: 'Update profile on first login', helpText: 'on: the user always reviews the account the provider gives; missing: only when it lacks something a user needs; off: never', type: 'List', defaultValue: 'missing', options: ['on', 'missing', 'off'], secret: false, readOnly: false, required: false }]
          : [];
      return { providerId: req.params.providerId, name: a.displayName, helpText: a.description, properties };
    },
  );

  // An authenticator's config: only the first broker login's Review Profile has one (its mode, a realm
  // setting); keycloak-admin-client's getConfig and updateConfig.
  const configParams = params({ id: { type: 'string', maxLength: 255 } });
  app.get<{ Params: { realm: string; id: string } }>(`${base}/config/:id`, { schema: { tags, summary: "The review profile config (update.profile.on.first.login: missing, on or off); any other id: 404", params: configParams, security } }, async (req) => {
    const realm = await services.cache.realm(await reader(req));
    if (!realm || req.params.id !== reviewConfigId(realm.id)) throw notFound('Could not find authenticator config');
    return reviewConfig(realm);
  });
  app.put<{ Params: { realm: string; id: string }; Body: unknown }>(
    `${base}/config/:id`,
    { schema: { tags, summary: "Sets the review profile config's mode (config[\"update.profile.on.first.login\"]: missing, on or off); any other config is fixed (400)", params: configParams, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      if (req.params.id !== reviewConfigId(realm.id)) throw new ValidationError(FIXED);
      const config = (req.body as { config?: unknown } | null)?.config;
      const mode = typeof config === 'object' && config !== null ? (config as Record<string, unknown>)[REVIEW_CONFIG_KEY] : undefined;
      if (typeof mode !== 'string') throw new ValidationError(`config.${REVIEW_CONFIG_KEY} is required: missing, on or off`);
      await updateRealm(services.store, { realmId: realm.id, settings: { brokerReviewProfile: mode as BrokerReviewProfile } }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  // Every change: 400 after the manage-realm check (no route would be a 404, which reads as "no such realm").
  const refuse = async (req: FastifyRequest<{ Params: { realm: string } }>): Promise<never> => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-realm');
    throw new ValidationError(FIXED);
  };
  const any = { type: 'string' as const, maxLength: 255 };
  const changes: Array<[method: 'POST' | 'PUT' | 'DELETE', path: string, extra: Record<string, { type: 'string'; maxLength: number }>]> = [
    ['POST', '/flows', {}],
    ['PUT', '/flows/:flow', { flow: any }],
    ['DELETE', '/flows/:flow', { flow: any }],
    ['POST', '/flows/:flow/copy', { flow: any }],
    ['POST', '/flows/:flow/executions', { flow: any }],
    ['PUT', '/flows/:flow/executions', { flow: any }],
    ['POST', '/flows/:flow/executions/execution', { flow: any }],
    ['POST', '/flows/:flow/executions/flow', { flow: any }],
    ['DELETE', '/executions/:id', { id: any }],
    ['POST', '/executions/:id/raise-priority', { id: any }],
    ['POST', '/executions/:id/lower-priority', { id: any }],
    ['POST', '/executions/:id/config', { id: any }],
    ['DELETE', '/config/:id', { id: any }],
  ];
  for (const [method, path, extra] of changes) {
    app.route<{ Params: { realm: string } }>({
      method,
      url: `${base}${path}`,
      schema: { tags, summary: "Refused: Realmgate's authentication flows are fixed (400)", params: Object.keys(extra).length > 0 ? params(extra) : realmParams, security },
      handler: refuse,
    });
  }
}
