import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { createClientScope, deleteClientScope, updateClientScope } from '../../admin/operations/client-scopes.js';
import { fromClientScopeRepresentation, toClientScopeRepresentation } from '../../admin/keycloak/representations/client-scope.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { jsonObject } from './clients.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { mapperRepsByOwner, mappersOfBody } from './protocol-mappers.js';
import { addMappers, checkNewOwnerMappers } from '../../admin/operations/protocol-mappers.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['client-scopes'];
const scopeParams = params({ id: { type: 'string', maxLength: 255 } });
type P = { Params: { realm: string; id: string } };

/** Keycloak's ClientScopesResource: custom scopes and their consent text. */
export async function clientScopeRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<{ Params: { realm: string } }>('/realms/:realm/client-scopes', { schema: { tags, summary: 'Client scopes of the realm', params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    const mappers = await mapperRepsByOwner(services, realm.id, 'scope');
    return (await store.realms.scopes(realm.id)).map((s) => ({ ...toClientScopeRepresentation(s), ...mappers(s.name) }));
  });

  app.post<{ Params: { realm: string } }>('/realms/:realm/client-scopes', { schema: { tags, summary: 'Create a client scope (attributes["consent.screen.text"] is what the consent page shows)', params: realmParams, body: anyObject, response: created201, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    const body = jsonObject(req.body);
    const rep = fromClientScopeRepresentation(body);
    if (!rep.name) throw new ValidationError('name is required');
    const mappers = mappersOfBody(body);
    await checkNewOwnerMappers(store, realm.id, mappers);
    const scope = await createClientScope(store, { realmId: realm.id, name: rep.name, ...(rep.consentText ? { consentText: rep.consentText } : {}) }, actorOf(caller));
    if (mappers.length > 0) await addMappers(store, { realmId: realm.id, ownerType: 'scope', owner: scope.name }, mappers, actorOf(caller));
    services.cache.clear();
    return created(services, reply, `${encodeURIComponent(realm.id)}/client-scopes/${encodeURIComponent(scope.name)}`);
  });

  app.get<P>('/realms/:realm/client-scopes/:id', { schema: { tags, summary: 'A client scope', params: scopeParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-clients');
    const scope = (await store.realms.scopes(realm.id)).find((s) => s.name === req.params.id);
    if (!scope) throw notFound('Could not find client scope');
    return { ...toClientScopeRepresentation(scope), ...(await mapperRepsByOwner(services, realm.id, 'scope'))(scope.name) };
  });

  app.put<P>('/realms/:realm/client-scopes/:id', { schema: { tags, summary: "Change a client scope's consent text", params: scopeParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    const rep = fromClientScopeRepresentation(jsonObject(req.body));
    if (rep.name !== undefined && rep.name !== req.params.id) throw new ValidationError('a client scope cannot be renamed');
    if (rep.consentText !== undefined) await updateClientScope(store, { realmId: realm.id, name: req.params.id, consentText: rep.consentText }, actorOf(caller));
    else if (!(await store.realms.scopes(realm.id)).some((s) => s.name === req.params.id)) throw notFound('Could not find client scope');
    services.cache.clear();
    return reply.code(204).send();
  });

  app.delete<P>('/realms/:realm/client-scopes/:id', { schema: { tags, summary: 'Delete a client scope no client uses', params: scopeParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-clients');
    await deleteClientScope(store, { realmId: realm.id, name: req.params.id }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });
}
