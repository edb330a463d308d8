import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { changeClient, createClient, deleteClient, invalidatePreviousSecret, previousSecretOf, pushClientNotBefore, rotateClientSecret } from '../../admin/operations/clients.js';
import { ensureServiceAccount } from '../../admin/operations/service-accounts.js';
import { regenerateRegistrationToken } from '../../admin/operations/initial-access.js';
import { setNoStore } from '../plugins/security-headers.js';
import { fromClientRepresentation, toClientRepresentation } from '../../admin/keycloak/representations/client.js';
import { ValidationError } from '../../admin/validation.js';
import { nowSeconds } from '../../clock.js';
import type { Client } from '../../storage/types.js';
import { actorOf, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { mapperRepsByOwner, mappersOfBody } from './protocol-mappers.js';
import { addMappers, checkNewOwnerMappers } from '../../admin/operations/protocol-mappers.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['clients'];
const clientParams = params({ id: { type: 'string', maxLength: 255 } });

type P = { Params: { realm: string; id: string } };

export function jsonObject(b: unknown): Record<string, unknown> {
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new ValidationError('the request body must be a JSON object');
  return b as Record<string, unknown>;
}

/** Keycloak's ClientsResource and ClientResource: clients, secrets, service-account users. */
export async function clientRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  async function load(realmId: string, id: string): Promise<Client> {
    const client = await store.clients.get(realmId, id);
    if (!client) throw notFound('Could not find client');
    return client;
  }

  app.get<{ Params: { realm: string }; Querystring: { clientId?: string; search?: string; first?: string; max?: string } }>(
    '/realms/:realm/clients',
    { schema: { tags, summary: 'List clients (clientId filters; search=true makes it a substring match)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-clients');
      let list = await store.clients.list(realm.id);
      const q = req.query.clientId;
      if (q !== undefined) list = list.filter((c) => (req.query.search === 'true' ? c.clientId.toLowerCase().includes(q.toLowerCase()) : c.clientId === q));
      const first = Math.max(0, Number(req.query.first ?? 0) || 0);
      const max = Math.max(0, Number(req.query.max ?? 100) || 100);
      const mappers = await mapperRepsByOwner(services, realm.id, 'client');
      return list.slice(first, first + max).map((c) => ({ ...toClientRepresentation(c), ...mappers(c.clientId) }));
    },
  );

  app.post<{ Params: { realm: string } }>('/realms/:realm/clients', { schema: { tags, summary: 'Create a client', params: realmParams, body: anyObject, response: created201, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    const body = jsonObject(req.body);
    const rep = fromClientRepresentation(body);
    if (!rep.clientId) throw new ValidationError('clientId is required');
    if (rep.expectJwt) throw new ValidationError('a signed JWT (private_key_jwt) is clientAuthenticatorType "client-jwt"');
    const mappers = mappersOfBody(body);
    await checkNewOwnerMappers(store, realm.id, mappers, rep.clientId);
    const { client } = await createClient(
      store,
      {
        realmId: realm.id,
        clientId: rep.clientId,
        redirectUris: rep.redirectUris ?? [],
        // A client-jwt client has no secret: one sent along (a Keycloak representation often has it) is ignored.
        ...(rep.secret !== undefined && !rep.public && !rep.authMethods?.includes('private_key_jwt') ? { secret: rep.secret } : {}),
        ...(rep.scopes ? { scopes: rep.scopes.join(' ') } : {}),
        ...(rep.optionalScopes ? { optionalScopes: rep.optionalScopes.join(' ') } : {}),
        ...(rep.public ? { public: true } : {}),
        ...(rep.name ? { name: rep.name } : {}),
        ...(rep.postLogoutRedirectUris ? { postLogoutRedirectUris: rep.postLogoutRedirectUris } : {}),
        ...(rep.standardFlowEnabled !== undefined ? { standardFlowEnabled: rep.standardFlowEnabled } : {}),
        ...(rep.directAccessGrantsEnabled !== undefined ? { directAccessGrantsEnabled: rep.directAccessGrantsEnabled } : {}),
        ...(rep.serviceAccountsEnabled !== undefined ? { serviceAccountsEnabled: rep.serviceAccountsEnabled } : {}),
        ...(rep.pkceMethod !== undefined ? { pkceMethod: rep.pkceMethod } : {}),
        ...(rep.webOrigins ? { webOrigins: rep.webOrigins } : {}),
        ...(rep.authMethods ? { authMethods: rep.authMethods } : {}),
        ...(rep.backchannelLogout ? { backchannelLogout: rep.backchannelLogout } : {}),
        ...(rep.requirePushedAuthorizationRequests !== undefined ? { requirePushedAuthorizationRequests: rep.requirePushedAuthorizationRequests } : {}),
        ...(rep.standardTokenExchange !== undefined ? { standardTokenExchange: rep.standardTokenExchange } : {}),
        ...(rep.tokenExchangeRefresh !== undefined ? { tokenExchangeRefresh: rep.tokenExchangeRefresh } : {}),
        ...(rep.dpopBoundAccessTokens !== undefined ? { dpopBoundAccessTokens: rep.dpopBoundAccessTokens } : {}),
        ...(rep.fullScopeAllowed !== undefined ? { fullScopeAllowed: rep.fullScopeAllowed } : {}),
        ...(rep.requestObjectRequired !== undefined ? { requestObjectRequired: rep.requestObjectRequired } : {}),
        ...(rep.requestObjectSignatureAlg !== undefined ? { requestObjectSignatureAlg: rep.requestObjectSignatureAlg } : {}),
        ...(rep.frontchannelLogout ? { frontchannelLogout: rep.frontchannelLogout } : {}),
        ...(rep.jwtKeys ? { jwtKeys: rep.jwtKeys } : {}),
      },
      actorOf(caller),
    );
    if (rep.enabled === false) await changeClient(store, { realmId: realm.id, clientId: client.clientId, changes: { enabled: false } }, actorOf(caller));
    if (mappers.length > 0) await addMappers(store, { realmId: realm.id, ownerType: 'client', owner: client.clientId }, mappers, actorOf(caller));
    services.cache.clear();
    return created(services, reply, `${encodeURIComponent(realm.id)}/clients/${encodeURIComponent(client.clientId)}`);
  });

  app.get<P>('/realms/:realm/clients/:id', { schema: { tags, summary: 'Read a client', params: clientParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    const client = await load(realm.id, req.params.id);
    return { ...toClientRepresentation(client), ...(await mapperRepsByOwner(services, realm.id, 'client'))(client.clientId) };
  });

  app.put<P>('/realms/:realm/clients/:id', { schema: { tags, summary: 'Update a client: redirect URIs, flows, public/confidential, PKCE, enabled, fullScopeAllowed', params: clientParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    const client = await load(realm.id, req.params.id);
    const rep = fromClientRepresentation(jsonObject(req.body));
    if (rep.clientId !== undefined && rep.clientId !== client.clientId) throw new ValidationError('a client id cannot be changed');
    const { clientId: _id, secret: _secret, ...changes } = rep;
    await changeClient(store, { realmId: realm.id, clientId: client.clientId, changes }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  app.delete<P>('/realms/:realm/clients/:id', { schema: { tags, summary: 'Delete a client (its refresh tokens are revoked)', params: clientParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    await load(realm.id, req.params.id);
    await deleteClient(store, { realmId: realm.id, clientId: req.params.id }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  app.get<P>(
    '/realms/:realm/clients/:id/client-secret',
    { schema: { tags, summary: 'The client secret: stored only as a hash, so its value is shown only when generated', params: clientParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      const client = await load(realm.id, req.params.id);
      if (client.public) throw new ValidationError('a public client has no secret');
      return { type: 'secret' };
    },
  );

  app.post<P & { Querystring: { rotatedExpirationPeriod?: string } }>(
    '/realms/:realm/clients/:id/client-secret',
    {
      schema: {
        tags,
        summary: 'Generate a new client secret, shown only now. The old one is refused at once, or with ?rotatedExpirationPeriod=<seconds> (up to 30 days) kept valid that long beside the new one (the rotated secret)',
        params: clientParams,
        querystring: { type: 'object', properties: { rotatedExpirationPeriod: { type: 'string', description: 'Seconds to keep the old secret valid (0 to 2592000; default 0)' } } },
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      await load(realm.id, req.params.id);
      const period = req.query.rotatedExpirationPeriod;
      if (period !== undefined && !/^\d{1,9}$/.test(period)) throw new ValidationError('rotatedExpirationPeriod: whole seconds, 0 to 2592000');
      const { secret } = await rotateClientSecret(store, { realmId: realm.id, clientId: req.params.id, keepPreviousSeconds: period === undefined ? 0 : Number(period), now: nowSeconds(services.clock) }, actorOf(caller));
      services.cache.clear();
      setNoStore(reply);
      return { type: 'secret', value: secret };
    },
  );

  app.get<P>(
    '/realms/:realm/clients/:id/client-secret/rotated',
    { schema: { tags, summary: "The client's previous (rotated) secret, while a rotation keeps it valid: stored only as a hash, so without its value; 404 when there is none", params: clientParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-clients');
      const client = await load(realm.id, req.params.id);
      const previous = previousSecretOf(client, nowSeconds(services.clock));
      if (!previous) throw notFound('Client does not have a rotated secret');
      return { type: 'secret', expiresAt: previous.expiresAt };
    },
  );

  app.delete<P>(
    '/realms/:realm/clients/:id/client-secret/rotated',
    { schema: { tags, summary: "Invalidate the client's previous (rotated) secret: only the current one is accepted from now on", params: clientParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      await load(realm.id, req.params.id);
      await invalidatePreviousSecret(store, { realmId: realm.id, clientId: req.params.id, now: nowSeconds(services.clock) }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  app.post<P>(
    '/realms/:realm/clients/:id/push-revocation',
    { schema: { tags, summary: "Refuse every token issued to the client until now (its notBefore set to the next second; Keycloak's client push revocation)", params: clientParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      await load(realm.id, req.params.id);
      await pushClientNotBefore(store, { realmId: realm.id, clientId: req.params.id, nowMs: () => services.clock.nowMs() }, actorOf(caller));
      services.cache.clear();
      // Keycloak's GlobalRequestResult: Realmgate has no client admin URLs to notify.
      return { successRequests: [], failedRequests: [] };
    },
  );

  app.post<P>(
    '/realms/:realm/clients/:id/registration-access-token',
    { schema: { tags, summary: "Generate a new registration access token (RFC 7592) for the client: its configuration endpoint takes it, the old one is refused at once; shown only now", params: clientParams, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-clients');
      const client = await load(realm.id, req.params.id);
      const token = await regenerateRegistrationToken(store, { realmId: realm.id, clientId: client.clientId }, actorOf(caller));
      setNoStore(reply);
      return { ...toClientRepresentation(client), ...(await mapperRepsByOwner(services, realm.id, 'client'))(client.clientId), registrationAccessToken: token };
    },
  );

  app.get<P>('/realms/:realm/clients/:id/service-account-user', { schema: { tags, summary: "The client's service-account user", params: clientParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    const client = await load(realm.id, req.params.id);
    if (!client.serviceAccountsEnabled) throw new ValidationError('service accounts are not enabled for this client');
    const user = await ensureServiceAccount(store, client);
    return { id: user.id, username: user.username, enabled: user.enabled, serviceAccountClientId: client.clientId, createdTimestamp: user.createdAt * 1000 };
  });
}
