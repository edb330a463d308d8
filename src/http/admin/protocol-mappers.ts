import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { MapperOwnerType } from '../../storage/types.js';
import type { MapperOwner } from '../../storage/repos/protocol-mappers.js';
import { addMappers, getMapper, listMappers, removeMapper, updateMapper } from '../../admin/operations/protocol-mappers.js';
import {
  fromProtocolMapperList,
  fromProtocolMapperRepresentation,
  protocolMappersByOwner,
  toProtocolMapperRepresentation,
  type MapperFields,
  type ProtocolMapperRepresentation,
} from '../../admin/keycloak/representations/protocol-mapper.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, created201, noContent204, params, security } from './schemas.js';

type P = { Params: { realm: string; id: string; mapperId?: string; protocol?: string } };

const ownerParam = { id: { type: 'string' as const, maxLength: 255 } };
const mapperParam = { ...ownerParam, mapperId: { type: 'string' as const, maxLength: 36 } };
const listBody = { type: 'array', items: anyObject, maxItems: 100 } as const;

/**
 * Keycloak's ProtocolMappersResource under a client (`clients/{id}`, the client id) and under a client
 * scope (`client-scopes/{id}`, its name): the same roles as changing the client or scope.
 */
export async function protocolMapperRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  const owners: Array<{ kind: MapperOwnerType; segment: string; tag: string }> = [
    { kind: 'client', segment: 'clients', tag: 'clients' },
    { kind: 'scope', segment: 'client-scopes', tag: 'client-scopes' },
  ];

  async function ownerOf(req: FastifyRequest<P>, kind: MapperOwnerType, role: 'view-clients' | 'manage-clients'): Promise<MapperOwner> {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, role);
    return { realmId: realm.id, ownerType: kind, owner: req.params.id };
  }

  for (const { kind, segment, tag } of owners) {
    const base = `/realms/:realm/${segment}/:id/protocol-mappers`;
    const tags = [tag];
    const what = kind === 'client' ? "the client's" : "the client scope's";

    app.get<P>(`${base}/models`, { schema: { tags, summary: `List ${what} protocol mappers`, params: params(ownerParam), security } }, async (req) => {
      return (await listMappers(store, await ownerOf(req, kind, 'view-clients'))).map(toProtocolMapperRepresentation);
    });

    app.get<P>(`${base}/protocol/:protocol`, { schema: { tags, summary: `List ${what} protocol mappers of a protocol (openid-connect)`, params: params({ ...ownerParam, protocol: { type: 'string', maxLength: 64 } }), security } }, async (req) => {
      const list = await listMappers(store, await ownerOf(req, kind, 'view-clients'));
      return req.params.protocol === 'openid-connect' ? list.map(toProtocolMapperRepresentation) : [];
    });

    app.post<P>(`${base}/models`, { schema: { tags, summary: `Add a protocol mapper to ${what.replace("'s", '')} (a custom claim)`, params: params(ownerParam), body: anyObject, response: created201, security } }, async (req, reply) => {
      const owner = await ownerOf(req, kind, 'manage-clients');
      const [m] = await addMappers(store, owner, [fromProtocolMapperRepresentation(req.body)], actorOf(callerOf(req)));
      services.cache.clear();
      return created(services, reply, `${encodeURIComponent(owner.realmId)}/${segment}/${encodeURIComponent(owner.owner)}/protocol-mappers/models/${m!.id}`);
    });

    app.post<P>(`${base}/add-models`, { schema: { tags, summary: `Add several protocol mappers to ${what.replace("'s", '')}: all or none`, params: params(ownerParam), body: listBody, response: noContent204, security } }, async (req, reply) => {
      const owner = await ownerOf(req, kind, 'manage-clients');
      await addMappers(store, owner, fromProtocolMapperList(req.body), actorOf(callerOf(req)));
      services.cache.clear();
      return reply.code(204).send();
    });

    app.get<P>(`${base}/models/:mapperId`, { schema: { tags, summary: `One of ${what} protocol mappers`, params: params(mapperParam), security } }, async (req) => {
      return toProtocolMapperRepresentation(await getMapper(store, await ownerOf(req, kind, 'view-clients'), req.params.mapperId!));
    });

    app.put<P>(`${base}/models/:mapperId`, { schema: { tags, summary: `Change one of ${what} protocol mappers`, params: params(mapperParam), body: anyObject, response: noContent204, security } }, async (req, reply) => {
      const owner = await ownerOf(req, kind, 'manage-clients');
      await updateMapper(store, owner, req.params.mapperId!, fromProtocolMapperRepresentation(req.body), actorOf(callerOf(req)));
      services.cache.clear();
      return reply.code(204).send();
    });

    app.delete<P>(`${base}/models/:mapperId`, { schema: { tags, summary: `Remove one of ${what} protocol mappers`, params: params(mapperParam), response: noContent204, security } }, async (req, reply) => {
      await removeMapper(store, await ownerOf(req, kind, 'manage-clients'), req.params.mapperId!, actorOf(callerOf(req)));
      services.cache.clear();
      return reply.code(204).send();
    });
  }
}

/** Keycloak's protocolMappers of each client or scope of a realm, for their representations (owners without: absent). */
export async function mapperRepsByOwner(services: Services, realmId: string, kind: MapperOwnerType): Promise<(owner: string) => { protocolMappers?: ProtocolMapperRepresentation[] }> {
  return protocolMappersByOwner(await services.store.protocolMappers.listRealm(realmId), kind);
}

/** The protocolMappers a create body carries (Keycloak accepts them on a new client or scope). */
export function mappersOfBody(body: Record<string, unknown>): MapperFields[] {
  return body.protocolMappers === undefined || body.protocolMappers === null ? [] : fromProtocolMapperList(body.protocolMappers, 'protocolMappers');
}
