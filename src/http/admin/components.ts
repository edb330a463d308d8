import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import {
  LDAP_MAPPER_TYPE,
  USER_STORAGE_TYPE,
  bindCredentialOf,
  checkComponent,
  sameDirectory,
  createMapper,
  createUserStorage,
  deleteMapper,
  deleteUserStorage,
  findMapper,
  listUserStorage,
  readConfigMap,
  removeImportedUsers,
  toComponentRepresentation,
  toMapperRepresentation,
  unlinkImportedUsers,
  updateMapper,
  updateUserStorage,
  userStorageName,
  type ComponentFields,
} from '../../admin/operations/user-storage.js';
import { SECRET_MASK } from '../../admin/operations/identity-providers.js';
import { ValidationError } from '../../admin/validation.js';
import { MapperSyncRefused, ldapSettings, providerEnabled, syncProvider, syncProviderMapper } from '../../oauth/ldap/federation.js';
import { recordAdminEvent } from '../../admin/operations/common.js';
import { LdapUnavailable, serverCapabilities, testDirectory, type LdapSettings } from '../../oauth/ldap/directory.js';
import type { Realm } from '../../storage/types.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';
import { notFound } from './errors.js';
import { LDAP_MAPPER_TYPES } from '../../admin/keycloak/representations/ldap-mapper-types.js';

const tags = ['components'];
const idParams = params({ id: { type: 'string', maxLength: 64 } });
const listQuery = {
  type: 'object',
  properties: {
    type: { type: 'string', maxLength: 255, description: 'providerType: org.keycloak.storage.UserStorageProvider or org.keycloak.storage.ldap.mappers.LDAPStorageMapper' },
    parent: { type: 'string', maxLength: 64, description: "The parent's id: the realm's (providers) or a provider's (its mappers)" },
    name: { type: 'string', maxLength: 255 },
  },
} as const;
type IdReq = { Params: { realm: string; id: string } };

/** A ComponentRepresentation from a request body, field by field. */
function readComponent(body: unknown): ComponentFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError('the body must be a ComponentRepresentation object');
  const b = body as Record<string, unknown>;
  const out: ComponentFields = {};
  for (const k of ['id', 'name', 'providerId', 'providerType', 'parentId'] as const) {
    const v = b[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new ValidationError(`${k} must be a string`);
    out[k] = v;
  }
  if (b.config !== undefined) out.config = readConfigMap(b.config);
  return out;
}

/**
 * Keycloak's components API (ComponentResource) for user federation: the realm's LDAP providers
 * (providerType org.keycloak.storage.UserStorageProvider) and their mappers (LDAPStorageMapper), in
 * ComponentRepresentation's shape. Reading needs view-realm, changing manage-realm, as Keycloak. Other
 * component types (key providers, ...) are not served here.
 */
export async function componentRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  async function realmFor(caller: AdminCaller, realmId: string, role: 'view-realm' | 'manage-realm'): Promise<Realm> {
    const realm = await loadRealm(services, caller, realmId);
    requireRole(caller, realm.id, role);
    return realm;
  }

  app.get<{ Params: { realm: string }; Querystring: { type?: string; parent?: string; name?: string } }>(
    '/realms/:realm/components',
    { schema: { tags, summary: "List the realm's user storage providers and their mappers (type, parent, name filter them; bindCredential masked)", params: realmParams, querystring: listQuery, security } },
    async (req) => {
      const realm = await realmFor(callerOf(req), req.params.realm, 'view-realm');
      const { type, parent, name } = req.query;
      const providers = await listUserStorage(store, realm.id);
      const out: Array<Record<string, unknown>> = [];
      if ((type === undefined || type === USER_STORAGE_TYPE) && (parent === undefined || parent === realm.id)) out.push(...providers.map(toComponentRepresentation));
      if (type === undefined || type === LDAP_MAPPER_TYPE) {
        for (const p of providers) if (parent === undefined || parent === p.id) out.push(...p.mappers.map((m) => toMapperRepresentation(p, m)));
      }
      return name === undefined ? out : out.filter((c) => c.name === name);
    },
  );

  app.get<IdReq>('/realms/:realm/components/:id', { schema: { tags, summary: 'Read a component (bindCredential masked)', params: idParams, security } }, async (req) => {
    const realm = await realmFor(callerOf(req), req.params.realm, 'view-realm');
    const p = await store.userStorage.get(realm.id, req.params.id);
    if (p) return toComponentRepresentation(p);
    const m = await findMapper(store, realm.id, req.params.id);
    if (m) return toMapperRepresentation(m.provider, m.mapper);
    throw notFound(`Could not find component ${req.params.id}`);
  });

  app.get<IdReq & { Querystring: { type?: string } }>(
    '/realms/:realm/components/:id/sub-component-types',
    {
      schema: {
        tags,
        summary:
          "Keycloak's sub-component types of a component (keycloak-admin-client's components.listSubComponents): for an LDAP provider and type org.keycloak.storage.ldap.mappers.LDAPStorageMapper, the mapper types it takes, each a ComponentTypeRepresentation with the config Realmgate reads; another type, or a mapper: []",
        params: idParams,
        querystring: { type: 'object', properties: { type: { type: 'string', maxLength: 255 } } },
        security,
      },
    },
    async (req) => {
      const realm = await realmFor(callerOf(req), req.params.realm, 'view-realm');
      const p = await store.userStorage.get(realm.id, req.params.id);
      if (!p && !(await findMapper(store, realm.id, req.params.id))) throw notFound('Could not find parent component');
      if (!req.query.type) throw new ValidationError('must specify a subtype');
      return p && req.query.type === LDAP_MAPPER_TYPE ? LDAP_MAPPER_TYPES : [];
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/components',
    { schema: { tags, summary: 'Create an LDAP user storage provider (providerId ldap) or a user-attribute-ldap-mapper of one (parentId: the provider)', params: realmParams, body: anyObject, response: created201, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const fields = readComponent(req.body);
      if (fields.providerType === LDAP_MAPPER_TYPE || (fields.parentId !== undefined && fields.parentId !== realm.id)) {
        if (!fields.parentId) throw new ValidationError('a mapper needs parentId: its provider');
        const m = await createMapper(store, actorOf(caller), realm.id, fields.parentId, { ...(fields.id ? { id: fields.id } : {}), ...(fields.name !== undefined ? { name: fields.name } : {}), ...(fields.providerId ? { providerId: fields.providerId } : {}), config: fields.config ?? {} });
        return created(services, reply, `${encodeURIComponent(realm.id)}/components/${encodeURIComponent(m.id)}`);
      }
      if (fields.providerType === undefined) throw new ValidationError(`providerType is required (${USER_STORAGE_TYPE})`);
      const p = await createUserStorage(store, actorOf(caller), realm.id, fields);
      return created(services, reply, `${encodeURIComponent(realm.id)}/components/${encodeURIComponent(p.id)}`);
    },
  );

  app.put<IdReq>(
    '/realms/:realm/components/:id',
    { schema: { tags, summary: 'Replace a component; a bindCredential of "**********" (or left out) keeps the stored one', params: idParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const fields = readComponent(req.body);
      if (await store.userStorage.get(realm.id, req.params.id)) {
        await updateUserStorage(store, actorOf(caller), realm.id, req.params.id, fields, { replace: true });
        return reply.code(204).send();
      }
      if (await findMapper(store, realm.id, req.params.id)) {
        await updateMapper(store, actorOf(caller), realm.id, req.params.id, { ...(fields.name !== undefined ? { name: fields.name } : {}), ...(fields.providerId ? { providerId: fields.providerId } : {}), ...(fields.config ? { config: fields.config } : {}) });
        return reply.code(204).send();
      }
      throw notFound(`Could not find component ${req.params.id}`);
    },
  );

  app.delete<IdReq>(
    '/realms/:realm/components/:id',
    { schema: { tags, summary: 'Delete a component; a provider\'s imported users stay, unlinked and without a password', params: idParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      if (await store.userStorage.get(realm.id, req.params.id)) await deleteUserStorage(store, actorOf(caller), realm.id, req.params.id);
      else if (await findMapper(store, realm.id, req.params.id)) await deleteMapper(store, actorOf(caller), realm.id, req.params.id);
      else throw notFound(`Could not find component ${req.params.id}`);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { realm: string; id: string }; Querystring: { action?: string } }>(
    '/realms/:realm/user-storage/:id/sync',
    {
      schema: {
        tags,
        summary: "Keycloak's user storage sync: action triggerFullSync (every entry under usersDn) or triggerChangedUsersSync (modified since the last sync); users imported or updated without a password; answers SynchronizationResultRepresentation",
        params: idParams,
        querystring: { type: 'object', properties: { action: { type: 'string', maxLength: 64 } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const action = req.query.action;
      if (action !== 'triggerFullSync' && action !== 'triggerChangedUsersSync') throw new ValidationError('action must be triggerFullSync or triggerChangedUsersSync');
      const p = await store.userStorage.get(realm.id, req.params.id);
      if (!p) throw notFound(`Could not find component ${req.params.id}`);
      if (!providerEnabled(p)) return { ignored: true, added: 0, updated: 0, removed: 0, failed: 0, status: 'the provider is disabled' };
      let result;
      try {
        result = await syncProvider(services, realm, p, action);
      } catch (err) {
        if (err instanceof LdapUnavailable) throw new ValidationError(`LDAP synchronization error: ${err.message}`);
        throw err;
      }
      await recordAdminEvent(store, actorOf(caller), { realmId: realm.id, operation: 'ACTION', resourceType: 'USER_STORAGE', resourcePath: `user-storage/${p.id}/sync`, representation: result });
      return result;
    },
  );

  // Keycloak's UserStorageProviderResource: a provider's name (query-users, as Keycloak: the console
  // names a federated user's provider with it), and what to do with its imported users (manage-users).
  app.get<IdReq>(
    '/realms/:realm/user-storage/:id/name',
    { schema: { tags, summary: "A user storage provider's id and name", params: idParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-users');
      return userStorageName(store, realm.id, req.params.id);
    },
  );

  app.post<IdReq>(
    '/realms/:realm/user-storage/:id/remove-imported-users',
    {
      schema: {
        tags,
        summary: 'Delete every user imported from the provider, as a user delete does: their sessions end and their refresh tokens are revoked (imported again at their next sign-in)',
        params: idParams,
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      await removeImportedUsers(store, actorOf(caller), realm.id, req.params.id);
      return reply.code(204).send();
    },
  );

  app.post<IdReq>(
    '/realms/:realm/user-storage/:id/unlink-users',
    {
      schema: {
        tags,
        summary: "Make the provider's imported users local users: they keep their data and sessions, and have no password until one is set (it lived in the directory)",
        params: idParams,
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      await unlinkImportedUsers(store, actorOf(caller), realm.id, req.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { realm: string; id: string; mapperId: string }; Querystring: { direction?: string } }>(
    '/realms/:realm/user-storage/:id/mappers/:mapperId/sync',
    {
      schema: {
        tags,
        summary: "Keycloak's mapper sync: direction fedToKeycloak makes a group-ldap-mapper's (role-ldap-mapper's) directory groups here as groups (roles); with drop.non.existing.groups.during.sync, its groups gone from the directory are deleted. keycloakToFed is refused (400). Answers SynchronizationResultRepresentation",
        params: params({ id: { type: 'string', maxLength: 64 }, mapperId: { type: 'string', maxLength: 64 } }),
        querystring: { type: 'object', properties: { direction: { type: 'string', maxLength: 64 } } },
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const p = await store.userStorage.get(realm.id, req.params.id);
      if (!p) throw notFound(`Could not find component ${req.params.id}`);
      if (!p.mappers.some((m) => m.id === req.params.mapperId)) throw notFound(`Could not find component ${req.params.mapperId}`);
      let result;
      try {
        result = await syncProviderMapper(services, realm, p, req.params.mapperId, req.query.direction);
      } catch (err) {
        if (err instanceof MapperSyncRefused) throw new ValidationError(err.message);
        if (err instanceof LdapUnavailable) throw new ValidationError(`LDAP synchronization error: ${err.message}`);
        throw err;
      }
      await recordAdminEvent(store, actorOf(caller), { realmId: realm.id, operation: 'ACTION', resourceType: 'USER_STORAGE', resourcePath: `user-storage/${p.id}/mappers/${req.params.mapperId}/sync`, representation: result });
      return result;
    },
  );

  /**
   * The directory a test names (Keycloak's TestLdapConnectionRepresentation): the stored provider's
   * settings when componentId names one, with what the body gives over them, checked as a provider would
   * be; and the credential to bind with: the body's, or the stored one (when the body masks it or leaves
   * it out) only for the provider's own URL and bind DN (sameDirectory).
   */
  async function directoryOf(realmId: string, body: unknown, anonymous: boolean): Promise<{ settings: LdapSettings; credential: string | undefined }> {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof b[k] === 'string' ? (b[k] as string) : undefined);
    const componentId = str('componentId');
    const stored = componentId ? await store.userStorage.get(realmId, componentId) : undefined;
    const config: Record<string, string[]> = { ...(stored?.config ?? {}) };
    for (const k of ['connectionUrl', 'bindDn', 'authType', 'startTls', 'connectionTimeout']) if (str(k) !== undefined) config[k] = [str(k)!];
    // (a test needs no users DN nor bind credential: placeholders then).
    const probe = await checkComponent(store, realmId, { name: 'test', config: { usersDn: ['dc=unused'], ...config, ...(anonymous ? { authType: ['none'] } : {}), bindCredential: ['-'] }, mappers: [] });
    const given = str('bindCredential');
    let credential: string | undefined;
    if (given !== undefined && given !== SECRET_MASK) credential = given;
    else if (stored?.sealedBindCredential && !anonymous && probe.config.authType?.[0] !== 'none') {
      if (!sameDirectory(stored.config, config)) throw new ValidationError("the stored bindCredential is used only with its provider's own connectionUrl and bindDn: give bindCredential to test another");
      credential = await bindCredentialOf(store, stored);
    }
    return { settings: ldapSettings(probe), credential };
  }

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/testLDAPConnection',
    { schema: { tags, summary: 'Keycloak\'s LDAP connection test: action testConnection (connect) or testAuthentication (also bind as bindDn); 204, or 400 with the reason', params: realmParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const action = (req.body as Record<string, unknown> | null)?.action;
      if (action !== 'testConnection' && action !== 'testAuthentication') throw new ValidationError('action must be testConnection or testAuthentication');
      const { settings, credential } = await directoryOf(realm.id, req.body, action === 'testConnection');
      try {
        await testDirectory(settings, credential, action);
      } catch (err) {
        if (err instanceof LdapUnavailable) throw new ValidationError(`LDAP test error: ${err.message}`);
        throw err;
      }
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/ldap-server-capabilities',
    {
      schema: {
        tags,
        summary:
          "Keycloak's LDAP server capabilities (action queryServerCapabilities): the controls, extended operations and features the directory's root DSE lists, as LDAPCapabilityRepresentation ({oid, type: CONTROL, EXTENSION or FEATURE}), read after binding as bindDn (or anonymously, authType none); 400 with the reason when the directory cannot be read",
        params: realmParams,
        body: anyObject,
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      if ((req.body as Record<string, unknown> | null)?.action !== 'queryServerCapabilities') throw new ValidationError('action must be queryServerCapabilities');
      const { settings, credential } = await directoryOf(realm.id, req.body, false);
      try {
        return await serverCapabilities(settings, credential);
      } catch (err) {
        if (err instanceof LdapUnavailable) throw new ValidationError(`ldapServerCapabilities error: ${err.message}`);
        throw err;
      }
    },
  );
}
