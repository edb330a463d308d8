import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { ValidationError } from '../../admin/validation.js';
import { AUTHENTICATORS, authenticatorProviders, flowExecutions, realmFlows } from '../../admin/keycloak/representations/authentication-flows.js';
import { requireRole } from './authenticate.js';
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
      return { providerId: req.params.providerId, name: a.displayName, helpText: a.description, properties: [] };
    },
  );

  // An authenticator's config: none has one (every execution is configurable: false).
  app.get<{ Params: { realm: string; id: string } }>(`${base}/config/:id`, { schema: { tags, summary: 'No authenticator has a config (404)', params: params({ id: { type: 'string', maxLength: 255 } }), security } }, async (req) => {
    await reader(req);
    throw notFound('Could not find authenticator config');
  });

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
    ['PUT', '/config/:id', { id: any }],
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
