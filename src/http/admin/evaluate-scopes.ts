import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { Client, Realm, User } from '../../storage/types.js';
import { roleRepresenter } from './roles.js';
import { effectiveMappers, exampleAccessToken, exampleIdToken, exampleUserInfo, grantedRoles, type ExampleInput } from '../../admin/operations/evaluate-scopes.js';
import { hasAdminRole } from '../../admin/authorization.js';
import { requireRole } from './authenticate.js';
import { forbidden, notFound } from './errors.js';
import { setNoStore } from '../plugins/security-headers.js';
import { callerOf, loadRealm } from './plugin.js';
import { params, security } from './schemas.js';

const tags = ['clients'];
const clientParams = params({ id: { type: 'string', maxLength: 255 } });
const containerParams = params({ id: { type: 'string', maxLength: 255 }, roleContainer: { type: 'string', maxLength: 255 } });
const scopeQuery = { type: 'object', properties: { scope: { type: 'string', maxLength: 4096 } } } as const;
// audience (Keycloak 26: a check that the token's aud names those clients) is accepted and ignored.
const exampleQuery = {
  type: 'object',
  properties: { scope: { type: 'string', maxLength: 4096 }, userId: { type: 'string', maxLength: 255 }, audience: { type: 'string', maxLength: 4096 } },
} as const;

type Q = { Params: { realm: string; id: string }; Querystring: { scope?: string; userId?: string } };
type C = { Params: { realm: string; id: string; roleContainer: string }; Querystring: { scope?: string } };

/**
 * Keycloak's ClientScopeEvaluateResource (`clients/{id}/evaluate-scopes`, the console's "Client scopes >
 * Evaluate"): the protocol mappers, roles and example token claims of a client for a scope parameter.
 * Reading them needs view-clients; an example for a user needs view-users too (Keycloak 26), since it
 * shows what is known of the user.
 */
export async function evaluateScopeRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  async function clientOf(req: FastifyRequest<{ Params: { realm: string; id: string } }>): Promise<{ realm: Realm; client: Client }> {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    const client = await store.clients.get(realm.id, req.params.id);
    if (!client) throw notFound('Could not find client');
    return { realm, client };
  }

  /** Keycloak's order: a missing userId is 404, then the right to read users is checked, then the user is looked for. */
  async function exampleOf(req: FastifyRequest<Q>): Promise<ExampleInput> {
    const { realm, client } = await clientOf(req);
    const userId = req.query.userId;
    if (userId === undefined || userId === '') throw notFound('No userId provided');
    if (!hasAdminRole(callerOf(req), realm.id, 'view-users')) throw forbidden('You have no access to this user');
    const user: User | undefined = await store.users.get(userId);
    if (!user || user.realmId !== realm.id) throw notFound('No user found');
    return { realm, client, user, scope: req.query.scope };
  }

  const base = '/realms/:realm/clients/:id/evaluate-scopes';

  app.get<Q>(
    `${base}/protocol-mappers`,
    { schema: { tags, summary: "The protocol mappers the client's tokens would apply with this scope parameter (built-in claims of the standard scopes included)", params: clientParams, querystring: scopeQuery, security } },
    async (req) => {
      const { realm, client } = await clientOf(req);
      return effectiveMappers(services, { realm, client, scope: req.query.scope });
    },
  );

  for (const type of ['granted', 'not-granted'] as const) {
    app.get<C>(
      `${base}/scope-mappings/:roleContainer/${type}`,
      {
        schema: {
          tags,
          summary: `The roles of a role container (the realm's name, or a client's id) that the client's tokens with this scope parameter ${type === 'granted' ? 'may carry: all of them when the client has fullScopeAllowed, else those in its scope' : 'may not carry: none when the client has fullScopeAllowed, else those outside its scope'}`,
          params: containerParams,
          querystring: scopeQuery,
          security,
        },
      },
      async (req) => {
        const { realm, client } = await clientOf(req);
        const container = req.params.roleContainer;
        const roleClientId = container === realm.id ? '' : container;
        if (roleClientId !== '' && !(await store.clients.get(realm.id, roleClientId))) throw notFound('Role Container not found');
        return (await grantedRoles(services, { realmId: realm.id, client, scope: req.query.scope, roleClientId, granted: type === 'granted' })).map(await roleRepresenter(store, realm.id));
      },
    );
  }

  app.get<Q>(
    `${base}/generate-example-access-token`,
    { schema: { tags, summary: 'The claims of the access token the client would get for the user with this scope parameter (nothing is issued or stored)', params: clientParams, querystring: exampleQuery, security } },
    async (req, reply) => {
      const input = await exampleOf(req);
      // What is known of a user (Keycloak: @NoCache).
      setNoStore(reply);
      return exampleAccessToken(services, input);
    },
  );

  app.get<Q>(
    `${base}/generate-example-id-token`,
    { schema: { tags, summary: 'The claims of the ID token the client would get for the user with this scope parameter, openid added (nothing is issued or stored)', params: clientParams, querystring: exampleQuery, security } },
    async (req, reply) => {
      const input = await exampleOf(req);
      // What is known of a user (Keycloak: @NoCache).
      setNoStore(reply);
      return exampleIdToken(services, input);
    },
  );

  app.get<Q>(
    `${base}/generate-example-userinfo`,
    { schema: { tags, summary: 'The UserInfo answer to such an access token of the client for the user, openid added', params: clientParams, querystring: exampleQuery, security } },
    async (req, reply) => {
      const input = await exampleOf(req);
      // What is known of a user (Keycloak: @NoCache).
      setNoStore(reply);
      return exampleUserInfo(services, input);
    },
  );
}
