import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { MapperOwner } from '../../storage/repos/protocol-mappers.js';
import { ConflictError, type ProtocolMapper } from '../../storage/types.js';
import type { MapperFields } from '../keycloak/representations/protocol-mapper.js';
import {
  ATTRIBUTE_MAPPER,
  AUDIENCE_MAPPER,
  CLIENT_ID_PLACEHOLDER,
  CLIENT_ROLE_MAPPER,
  GROUP_MAPPER,
  HARDCODED_MAPPER,
  JSON_TYPES,
  MAPPER_TYPES,
  PROPERTY_MAPPER,
  REALM_ROLE_MAPPER,
  SESSION_NOTES,
  SESSION_NOTE_MAPPER,
  USER_PROPERTIES,
  converterOf,
  mayWrite,
  parseClaimPath,
  userProperty,
} from '../../oauth/protocol-mappers.js';
import { NotFound, ValidationError, checkText } from '../validation.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';

/** A mapper as the rules accept it, before it has an id and an owner. */
export type CheckedMapper = Pick<ProtocolMapper, 'name' | 'type' | 'config'>;

const FLAGS = ['access.token.claim', 'id.token.claim', 'userinfo.token.claim', 'introspection.token.claim', 'multivalued', 'aggregate.attrs', 'full.path'];
const MAX_CONFIG_ENTRIES = 50;
const MAX_CONFIG_VALUE = 8192;

function required(config: Record<string, string>, key: string, type: string): string {
  const v = config[key];
  if (v === undefined || v === '') throw new ValidationError(`a ${type} needs config.${key}`);
  return v;
}

/**
 * Keycloak's claim.name: a path of claims (dots nest, backslash escapes), whose top claim the mapper's
 * type may write (no mapper writes a claim Realmgate issues itself; role mappers may write groups).
 */
export function checkClaimName(name: string, type: string): void {
  checkText('claim.name', name, 255);
  const path = parseClaimPath(name);
  if (!path) throw new ValidationError(`claim.name ${JSON.stringify(name)} has an empty part (dots nest claims: escape a literal dot as \\.) or __proto__`);
  if (!mayWrite(type, path[0]!)) {
    const roles = path[0] === 'realm_access' || path[0] === 'resource_access' ? ` (the user's roles are in it already: name another claim, e.g. "roles")` : '';
    throw new ValidationError(`claim.name ${JSON.stringify(name)}: the claim ${path[0]} is Realmgate's own, no mapper may write it${roles}`);
  }
}

function checkJsonType(config: Record<string, string>): void {
  const t = config['jsonType.label'];
  if (t !== undefined && t !== '' && !JSON_TYPES.includes(t)) throw new ValidationError(`config.jsonType.label must be one of ${JSON_TYPES.join(', ')}`);
}

function checkConfigShape(config: Record<string, string>): void {
  const entries = Object.entries(config);
  if (entries.length > MAX_CONFIG_ENTRIES) throw new ValidationError(`config may have at most ${MAX_CONFIG_ENTRIES} entries`);
  for (const [k, v] of entries) {
    checkText('a config key', k, 255);
    if (v.length > MAX_CONFIG_VALUE) throw new ValidationError(`config.${k} must have at most ${MAX_CONFIG_VALUE} characters`);
  }
  for (const f of FLAGS) if (config[f] !== undefined && config[f] !== 'true' && config[f] !== 'false') throw new ValidationError(`config.${f} must be "true" or "false"`);
}

/** The rules of each type (Keycloak's validateConfig, and what Realmgate needs to issue the claim). */
function checkTypeConfig(type: string, config: Record<string, string>, knownClient: (clientId: string) => boolean): void {
  switch (type) {
    case ATTRIBUTE_MAPPER:
      checkText('config.user.attribute', required(config, 'user.attribute', type), 255);
      checkClaimName(required(config, 'claim.name', type), type);
      return checkJsonType(config);
    case HARDCODED_MAPPER: {
      checkClaimName(required(config, 'claim.name', type), type);
      checkJsonType(config);
      const label = config['jsonType.label'] || 'String';
      if (converterOf(label)!(required(config, 'claim.value', type)) === undefined) throw new ValidationError(`config.claim.value is not a valid ${label} value`);
      return;
    }
    case GROUP_MAPPER:
      return checkClaimName(required(config, 'claim.name', type), type);
    case PROPERTY_MAPPER: {
      // Keycloak 22+ refuses a property UserModel does not have (ProtocolMapperUtils.validateUserModelProperty).
      const property = required(config, 'user.attribute', type);
      if (!userProperty(property)) throw new ValidationError(`config.user.attribute: ${JSON.stringify(property)} is not a user property (one of ${USER_PROPERTIES.join(', ')}; a user attribute needs the attribute mapper)`);
      checkClaimName(required(config, 'claim.name', type), type);
      return checkJsonType(config);
    }
    case REALM_ROLE_MAPPER:
    case CLIENT_ROLE_MAPPER: {
      const name = required(config, 'claim.name', type);
      checkClaimName(name, type);
      if (type === REALM_ROLE_MAPPER && name.includes(CLIENT_ID_PLACEHOLDER)) throw new ValidationError(`claim.name: ${CLIENT_ID_PLACEHOLDER} names a client only in a client role mapper`);
      checkJsonType(config);
      const prefixKey = type === REALM_ROLE_MAPPER ? 'usermodel.realmRoleMapping.rolePrefix' : 'usermodel.clientRoleMapping.rolePrefix';
      if (config[prefixKey]) checkText(`config.${prefixKey}`, config[prefixKey], 255);
      const client = config['usermodel.clientRoleMapping.clientId'];
      if (type === CLIENT_ROLE_MAPPER && client && !knownClient(client)) throw new ValidationError(`config.usermodel.clientRoleMapping.clientId: there is no client ${JSON.stringify(client)} in the realm`);
      return;
    }
    case SESSION_NOTE_MAPPER: {
      const note = required(config, 'user.session.note', type);
      if (!SESSION_NOTES.includes(note)) throw new ValidationError(`config.user.session.note: Realmgate's sessions keep the notes ${SESSION_NOTES.join(', ')}; ${JSON.stringify(note)} is not one of them`);
      checkClaimName(required(config, 'claim.name', type), type);
      return checkJsonType(config);
    }
    case AUDIENCE_MAPPER: {
      const client = config['included.client.audience'];
      const custom = config['included.custom.audience'];
      if (!client && !custom) throw new ValidationError(`a ${type} needs config.included.client.audience (a client of the realm) or config.included.custom.audience`);
      if (client && !knownClient(client)) throw new ValidationError(`config.included.client.audience: there is no client ${JSON.stringify(client)} in the realm`);
      if (custom) checkText('config.included.custom.audience', custom, 255);
      return;
    }
  }
}

/**
 * Checks a mapper from any door (admin API, CLI, import) and returns what to store: openid-connect only,
 * one of the types Realmgate runs, a name of 1 to 255 characters, a config of strings that the type's
 * rules accept. `knownClient` says whether a client id names a client of the realm (audience mapper).
 */
export function checkMapper(fields: MapperFields, knownClient: (clientId: string) => boolean): CheckedMapper {
  const name = fields.name ?? '';
  if (name.trim() === '') throw new ValidationError('a protocol mapper needs a name');
  checkText('the mapper name', name, 255);
  if (fields.protocol !== undefined && fields.protocol !== 'openid-connect') throw new ValidationError('only openid-connect protocol mappers are supported');
  const type = fields.protocolMapper ?? '';
  if (!MAPPER_TYPES.includes(type)) throw new ValidationError(`protocol mapper type ${JSON.stringify(type)} is not supported (Realmgate runs ${MAPPER_TYPES.join(', ')})`);
  const config = fields.config ?? {};
  checkConfigShape(config);
  checkTypeConfig(type, config, knownClient);
  return { name, type, config };
}

/** The client or scope a mapper belongs to must exist. */
async function requireOwner(store: Store, owner: MapperOwner): Promise<void> {
  await requireRealm(store, owner.realmId);
  if (owner.ownerType === 'client' && !(await store.clients.get(owner.realmId, owner.owner))) throw new NotFound(`client ${owner.owner} does not exist in realm ${owner.realmId}`);
  if (owner.ownerType === 'scope' && !(await store.realms.scopes(owner.realmId)).some((s) => s.name === owner.owner)) {
    throw new NotFound(`client scope ${owner.owner} does not exist in realm ${owner.realmId}`);
  }
}

/**
 * Which of the clients the mappers' settings name (audience, client roles) exist in the realm, for checkMapper's
 * `knownClient`: each named client is looked up once (not the realm's whole list of clients).
 */
async function namedClients(store: Store, realmId: string, list: readonly MapperFields[]): Promise<(clientId: string) => boolean> {
  const named = new Set(
    list.flatMap((f) => [f.config?.['included.client.audience'], f.config?.['usermodel.clientRoleMapping.clientId']]).filter((v): v is string => typeof v === 'string' && v !== ''),
  );
  const found = new Set<string>();
  for (const id of named) if (await store.clients.get(realmId, id)) found.add(id);
  return (id) => found.has(id);
}

/** Keycloak's admin path of a mapper (admin events). */
export function mapperPath(owner: MapperOwner, id?: string): string {
  const base = `${owner.ownerType === 'client' ? 'clients' : 'client-scopes'}/${owner.owner}/protocol-mappers/models`;
  return id === undefined ? base : `${base}/${id}`;
}

export async function listMappers(store: Store, owner: MapperOwner): Promise<ProtocolMapper[]> {
  await requireOwner(store, owner);
  return store.protocolMappers.list(owner);
}

export async function getMapper(store: Store, owner: MapperOwner, id: string): Promise<ProtocolMapper> {
  await requireOwner(store, owner);
  const m = await store.protocolMappers.get(owner, id);
  if (!m) throw new NotFound('Model not found');
  return m;
}

/** Checks a list of mappers for one owner: each by the rules, no name twice (in the list or stored). */
export function checkMapperList(list: readonly MapperFields[], knownClient: (clientId: string) => boolean, taken: readonly string[] = []): CheckedMapper[] {
  const names = new Set(taken);
  return list.map((fields) => {
    const m = checkMapper(fields, knownClient);
    if (names.has(m.name)) throw new ConflictError(`Protocol mapper exists with same name: ${m.name}`);
    names.add(m.name);
    return m;
  });
}

/** Stores checked mappers for an owner (inside the caller's transaction, if any). */
export async function storeMappers(store: Store, owner: MapperOwner, list: readonly CheckedMapper[]): Promise<ProtocolMapper[]> {
  const t = now();
  const out: ProtocolMapper[] = [];
  for (const m of list) {
    const stored: ProtocolMapper = { ...owner, ...m, id: randomUUID(), createdAt: t };
    await store.protocolMappers.create(stored);
    out.push(stored);
  }
  return out;
}

/**
 * Adds mappers to a client or scope (Keycloak's models and add-models): every one is checked before any
 * is stored, and they are stored together or not at all.
 */
export async function addMappers(store: Store, owner: MapperOwner, list: readonly MapperFields[], actor: Actor = cliActor()): Promise<ProtocolMapper[]> {
  await requireOwner(store, owner);
  const existing = (await store.protocolMappers.list(owner)).map((m) => m.name);
  const checked = checkMapperList(list, await namedClients(store, owner.realmId, list), existing);
  const added = await store.transaction((tx) => storeMappers(tx, owner, checked));
  for (const m of added) {
    await recordAdminEvent(store, actor, { realmId: owner.realmId, operation: 'CREATE', resourceType: 'PROTOCOL_MAPPER', resourcePath: mapperPath(owner, m.id), representation: m });
  }
  return added;
}

/** Replaces a mapper's name, type and config (Keycloak's PUT models/{id}); absent fields stay. */
export async function updateMapper(store: Store, owner: MapperOwner, id: string, fields: MapperFields, actor: Actor = cliActor()): Promise<ProtocolMapper> {
  await requireOwner(store, owner);
  const current = await store.protocolMappers.get(owner, id);
  if (!current) throw new NotFound('Model not found');
  const merged: MapperFields = { name: current.name, protocolMapper: current.type, config: current.config, ...fields };
  const checked = checkMapper(merged, await namedClients(store, owner.realmId, [merged]));
  if ((await store.protocolMappers.list(owner)).some((m) => m.id !== id && m.name === checked.name)) throw new ConflictError(`Protocol mapper exists with same name: ${checked.name}`);
  await store.protocolMappers.update(owner, id, checked);
  const updated = { ...current, ...checked };
  await recordAdminEvent(store, actor, { realmId: owner.realmId, operation: 'UPDATE', resourceType: 'PROTOCOL_MAPPER', resourcePath: mapperPath(owner, id), representation: updated });
  return updated;
}

export async function removeMapper(store: Store, owner: MapperOwner, id: string, actor: Actor = cliActor()): Promise<void> {
  await requireOwner(store, owner);
  if (!(await store.protocolMappers.delete(owner, id))) throw new NotFound('Model not found');
  await recordAdminEvent(store, actor, { realmId: owner.realmId, operation: 'DELETE', resourceType: 'PROTOCOL_MAPPER', resourcePath: mapperPath(owner, id) });
}

/**
 * Checks the mappers a new client or scope comes with (Keycloak's protocolMappers on create), before
 * the owner is created: nothing is stored when one is refused. A new client may be its own audience.
 */
export async function checkNewOwnerMappers(store: Store, realmId: string, list: readonly MapperFields[], newClientId?: string): Promise<void> {
  if (list.length === 0) return;
  const known = await namedClients(store, realmId, list);
  checkMapperList(list, (id) => known(id) || id === newClientId);
}
