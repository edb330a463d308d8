import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { createInitialAccess, deleteInitialAccess, initialAccessRepresentation, listInitialAccess } from '../../admin/operations/initial-access.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { jsonObject } from './clients.js';
import { callerOf, loadRealm } from './plugin.js';
import { ADMIN_PREFIX } from './prefix.js';
import { setNoStore } from '../plugins/security-headers.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['client-initial-access'];

/** Keycloak's ClientInitialAccessPresentation; `token` only in the answer to a create. */
const presentation = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    token: { type: 'string' },
    timestamp: { type: 'integer', description: 'created, seconds since the epoch' },
    expiration: { type: 'integer', description: 'seconds from timestamp until it expires; 0: never' },
    count: { type: 'integer', description: 'how many clients it may register' },
    remainingCount: { type: 'integer', description: 'how many it may still register' },
  },
} as const;

/**
 * A whole number field of the create body, or undefined when absent or null (Keycloak's Integer fields:
 * null is the default). Only a JSON number is one: "5" or true is refused here, before the operation
 * checks the range, rather than coerced.
 */
function wholeNumber(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new ValidationError(`${name} must be a whole number`);
  return v;
}

/**
 * Keycloak's ClientInitialAccessResource (/{realm}/clients-initial-access): the tokens that let their
 * bearer register clients at the realm's registration endpoint (RFC 7591 3's initial access token).
 * Creating and deleting one needs manage-clients, listing them view-clients (Keycloak's
 * clients().requireManage/requireView). The token is in the create answer only; only its hash is stored.
 */
export async function initialAccessRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  const base = '/realms/:realm/clients-initial-access';

  // Keycloak's client registration policies are components an administrator configures (trusted hosts,
  // max clients, ...). Realmgate's registration follows fixed rules instead (docs/client-registration.md:
  // no anonymous registration, an initial access token or an administrator's token), so it offers no
  // policy provider to configure: the list is empty, truthfully, where it was a 404.
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/client-registration-policy/providers',
    { schema: { tags, summary: "Keycloak's client registration policy providers (realms.getClientRegistrationPolicyProviders): none, since Realmgate's registration rules are fixed (docs/client-registration.md); view-realm", params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-realm');
      return [];
    },
  );

  app.post<{ Params: { realm: string } }>(
    base,
    {
      schema: {
        tags,
        summary: 'Create an initial access token: expiration (seconds; 0 or left out: never) and count (clients it may register; default 1). 201 with the token, shown only now',
        params: realmParams,
        body: anyObject,
        response: { 201: { description: 'Created; Location names it', ...presentation } },
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      const body = jsonObject(req.body);
      const expiration = wholeNumber(body, 'expiration');
      const count = wholeNumber(body, 'count');
      const { access, token } = await createInitialAccess(
        store,
        { realmId: realm.id, ...(expiration !== undefined ? { expiration } : {}), ...(count !== undefined ? { count } : {}) },
        actorOf(caller),
      );
      // Keycloak answers 201 with a Location and the presentation with its token (keycloak-admin-client reads the body).
      reply.code(201).header('location', `${services.config.authUrl}${ADMIN_PREFIX}/realms/${encodeURIComponent(realm.id)}/clients-initial-access/${access.id}`);
      setNoStore(reply);
      return { ...initialAccessRepresentation(access), token };
    },
  );

  app.get<{ Params: { realm: string } }>(
    base,
    {
      schema: {
        tags,
        summary: 'List the initial access tokens that may still register a client (not expired, not used up), newest first; without their tokens',
        params: realmParams,
        response: { 200: { type: 'array', items: presentation } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      return (await listInitialAccess(store, realm.id)).map(initialAccessRepresentation);
    },
  );

  app.delete<{ Params: { realm: string; id: string } }>(
    `${base}/:id`,
    { schema: { tags, summary: 'Delete an initial access token: it registers no more clients (those it registered stay)', params: params({ id: { type: 'string', maxLength: 255 } }), response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      await deleteInitialAccess(store, { realmId: realm.id, id: req.params.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );
}
