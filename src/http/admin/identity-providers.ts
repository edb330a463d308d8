import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import {
  createIdentityProvider,
  deleteIdentityProvider,
  discoverProvider,
  linkFederatedIdentity,
  listFederatedIdentities,
  listIdentityProviders,
  requireIdentityProvider,
  unlinkFederatedIdentity,
  updateIdentityProvider,
} from '../../admin/operations/identity-providers.js';
import {
  readFederatedIdentity,
  readIdentityProvider,
  toFederatedIdentityRepresentation,
  toIdentityProviderRepresentation,
} from '../../admin/keycloak/representations/identity-provider.js';
import { IDENTITY_PROVIDER_FACTORIES } from '../../admin/keycloak/representations/server-info.js';
import { SOCIAL_PROVIDER_FACTORIES } from '../../oauth/social-providers.js';
import { asObject } from '../../admin/keycloak/read-json.js';
import { NotFound, ValidationError } from '../../admin/validation.js';
import type { IdentityProvider, Realm } from '../../storage/types.js';
import { actorOf, mappingGuard, requireRole } from './authenticate.js';
import { createProviderMapper, deleteProviderMapper, listProviderMappers, requireProviderMapper, updateProviderMapper } from '../../admin/operations/identity-provider-mappers.js';
import { providerMapperTypes, readProviderMapper, toProviderMapperRepresentation } from '../../admin/keycloak/representations/identity-provider-mapper.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { userTarget, type UserReq } from './users.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';
import { forgetProviderKeysAt } from '../../oauth/broker.js';

const tags = ['identity-providers'];
const aliasParams = params({ alias: { type: 'string', maxLength: 255 } });
const providerIdParams = params({ provider_id: { type: 'string', maxLength: 255 } });
const linkParams = params({ id: { type: 'string', maxLength: 64 }, provider: { type: 'string', maxLength: 255 } });

/** Keycloak's IdentityProvidersResource.getIdentityProviders query parameters. */
const listQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 255, description: 'Alias or display name: a prefix (default), with * as a wildcard, or "exact" in double quotes' },
    briefRepresentation: { type: 'boolean' },
    realmOnly: { type: 'boolean', description: 'Only the providers of no organization' },
    first: { type: 'integer', minimum: 0 },
    max: { type: 'integer', minimum: 0, maximum: 1000 },
  },
} as const;
interface ListQuery {
  search?: string;
  briefRepresentation?: boolean;
  realmOnly?: boolean;
  first?: number;
  max?: number;
}
type AliasReq = { Params: { realm: string; alias: string } };
type MapperReq = { Params: { realm: string; alias: string; id: string } };
const mapperParams = params({ alias: { type: 'string', maxLength: 255 }, id: { type: 'string', maxLength: 64 } });

/** Keycloak's config key of a provider's organization, which its admin API never takes from a provider update. */
const ORGANIZATION_ATTRIBUTE = 'kc.org';
const WELL_KNOWN = '/.well-known/openid-configuration';

/**
 * Keycloak's search over identity providers (JpaIdentityProviderStorageProvider): `"x"` is an exact
 * alias or display name; otherwise a case-insensitive pattern, `*` any run of characters, a prefix
 * unless it ends with `*` already.
 */
function searchMatcher(search: string | undefined): (p: IdentityProvider) => boolean {
  if (search === undefined || search.trim() === '') return () => true;
  if (search.length >= 2 && search.startsWith('"') && search.endsWith('"')) {
    const exact = search.slice(1, -1);
    return (p) => p.alias === exact || p.displayName === exact;
  }
  const body = search
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const re = new RegExp(`^${body}${search.endsWith('*') ? '' : '.*'}$`, 's');
  return (p) => re.test(p.alias.toLowerCase()) || (p.displayName !== null && re.test(p.displayName.toLowerCase()));
}

/** Keycloak's brief representation of a provider: ids, names and enabled. */
function toBrief(p: IdentityProvider): Record<string, unknown> {
  return { alias: p.alias, ...(p.displayName !== null ? { displayName: p.displayName } : {}), internalId: p.id, providerId: p.providerId, enabled: p.enabled };
}

/**
 * Keycloak 26's identity providers API (IdentityProvidersResource, IdentityProviderResource) and a
 * user's links to accounts at them (UserResource's federated-identity routes). Reading providers needs
 * view-identity-providers, changing them manage-identity-providers (each implied by realm-admin; manage
 * implies view); a user's links need view-users / manage-users, as Keycloak.
 */
export async function identityProviderRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  async function realmFor(caller: AdminCaller, realmId: string, role: 'view-identity-providers' | 'manage-identity-providers'): Promise<Realm> {
    const realm = await loadRealm(services, caller, realmId);
    requireRole(caller, realm.id, role);
    return realm;
  }

  /** The provider a path names: by alias, or by internal id as Keycloak's getByIdOrAlias; else 404. */
  async function providerAt(realm: Realm, aliasOrId: string): Promise<IdentityProvider> {
    try {
      return await requireIdentityProvider(store, realm.id, aliasOrId);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      const byId = (await listIdentityProviders(store, realm.id)).find((p) => p.id === aliasOrId);
      if (!byId) throw err;
      return byId;
    }
  }

  app.get<{ Params: { realm: string }; Querystring: ListQuery }>(
    '/realms/:realm/identity-provider/instances',
    { schema: { tags, summary: "List the realm's identity providers (search, briefRepresentation, realmOnly, first, max; client secrets masked)", params: realmParams, querystring: listQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-identity-providers');
      const q = req.query;
      const matches = searchMatcher(q.search);
      const first = q.first ?? 0;
      const max = q.max ?? 100;
      const page = (await listIdentityProviders(store, realm.id)).filter((p) => matches(p) && (!q.realmOnly || p.organizationId === null)).slice(first, first + max);
      return page.map((p) => (q.briefRepresentation ? toBrief(p) : toIdentityProviderRepresentation(p)));
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/identity-provider/instances',
    { schema: { tags, summary: 'Create an OpenID Connect identity provider (providerId oidc or keycloak-oidc); 409 if the alias is taken', params: realmParams, body: anyObject, response: created201, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const fields = readIdentityProvider(req.body);
      if (fields.alias === undefined) throw new ValidationError('alias is required');
      const p = await createIdentityProvider(store, actorOf(caller), realm.id, fields);
      return created(services, reply, `${encodeURIComponent(realm.id)}/identity-provider/instances/${encodeURIComponent(p.alias)}`);
    },
  );

  app.get<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias',
    { schema: { tags, summary: 'Read an identity provider (its client secret masked)', params: aliasParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-identity-providers');
      return toIdentityProviderRepresentation(await providerAt(realm, req.params.alias));
    },
  );

  app.put<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias',
    {
      schema: {
        tags,
        summary: 'Replace an identity provider: what is left out takes its default; a clientSecret left out or "**********" keeps the stored one; the alias and organization do not change',
        params: aliasParams,
        body: anyObject,
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const existing = await providerAt(realm, req.params.alias);
      const fields = readIdentityProvider(req.body);
      // Keycloak's IdentityProviderResource.update: "organization-related information should not be
      // processed by non-organization API" (Organizations.stripOrganizationId); the stored link stays.
      fields.organizationId = existing.organizationId;
      if (fields.config) delete fields.config[ORGANIZATION_ATTRIBUTE];
      if (fields.alias !== undefined && fields.alias !== existing.alias) throw new ValidationError('Identity Provider alias cannot be changed');
      await updateIdentityProvider(store, actorOf(caller), realm.id, existing.alias, fields, { replace: true });
      return reply.code(204).send();
    },
  );

  app.delete<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias',
    { schema: { tags, summary: "Delete an identity provider and every user's link to it (the users stay)", params: aliasParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const existing = await providerAt(realm, req.params.alias);
      await deleteIdentityProvider(store, actorOf(caller), realm.id, existing.alias);
      return reply.code(204).send();
    },
  );

  // ---- The provider's mappers (IdentityProviderResource: mappers, mapper-types) ----

  app.get<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias/mappers',
    { schema: { tags, summary: "An identity provider's mappers (IdentityProviderMapperRepresentation), by name", params: aliasParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      return (await listProviderMappers(store, realm.id, p.alias)).map(toProviderMapperRepresentation);
    },
  );

  app.post<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias/mappers',
    {
      schema: {
        tags,
        summary: 'Add a mapper: 400 for an unknown type or a role or group that does not exist, 409 for a name the provider has already, 403 for an admin role the caller may not grant',
        params: aliasParams,
        body: anyObject,
        response: created201,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      const m = await createProviderMapper(store, actorOf(caller), realm.id, p.alias, readProviderMapper(req.body), mappingGuard(caller));
      return created(services, reply, `${encodeURIComponent(realm.id)}/identity-provider/instances/${encodeURIComponent(p.alias)}/mappers/${encodeURIComponent(m.id)}`);
    },
  );

  app.get<MapperReq>(
    '/realms/:realm/identity-provider/instances/:alias/mappers/:id',
    { schema: { tags, summary: 'Read a mapper of an identity provider', params: mapperParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      return toProviderMapperRepresentation(await requireProviderMapper(store, realm.id, p.alias, req.params.id));
    },
  );

  app.put<MapperReq>(
    '/realms/:realm/identity-provider/instances/:alias/mappers/:id',
    { schema: { tags, summary: "Replace a mapper's name, type and config (what is left out is kept)", params: mapperParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      const fields = readProviderMapper(req.body);
      const id = (req.body as { id?: unknown }).id;
      if (typeof id === 'string' && id !== '' && id !== req.params.id) throw new ValidationError("the mapper's id is the one of the path");
      await updateProviderMapper(store, actorOf(caller), realm.id, p.alias, req.params.id, fields, mappingGuard(caller));
      return reply.code(204).send();
    },
  );

  app.delete<MapperReq>(
    '/realms/:realm/identity-provider/instances/:alias/mappers/:id',
    { schema: { tags, summary: 'Delete a mapper of an identity provider (what it set on users stays)', params: mapperParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      await deleteProviderMapper(store, actorOf(caller), realm.id, p.alias, req.params.id);
      return reply.code(204).send();
    },
  );

  app.get<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias/mapper-types',
    { schema: { tags, summary: 'The mapper types an OpenID Connect provider takes (IdentityProviderMapperTypeRepresentation by id)', params: aliasParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-identity-providers');
      await providerAt(realm, req.params.alias);
      return providerMapperTypes();
    },
  );

  app.get<{ Params: { realm: string; provider_id: string } }>(
    '/realms/:realm/identity-provider/providers/:provider_id',
    { schema: { tags, summary: 'The identity provider type of a providerId ({id, name}); 400 for a type Realmgate does not have', params: providerIdParams, security } },
    async (req) => {
      const caller = callerOf(req);
      await realmFor(caller, req.params.realm, 'view-identity-providers');
      const all = [...IDENTITY_PROVIDER_FACTORIES, ...SOCIAL_PROVIDER_FACTORIES];
      const factory = all.find((f) => f.id === req.params.provider_id);
      if (!factory) throw new ValidationError(`providerId ${JSON.stringify(req.params.provider_id)} is not supported (Realmgate brokers to OpenID Connect providers: ${all.map((f) => f.id).join(', ')})`);
      return { ...factory };
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/identity-provider/import-config',
    {
      schema: {
        tags,
        summary: "A provider's config from its OpenID Connect Discovery document: {providerId, fromUrl} where fromUrl is the issuer or its /.well-known/openid-configuration URL",
        params: realmParams,
        body: anyObject,
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const o = asObject(req.body, 'import-config');
      const { providerId, fromUrl } = o;
      if (typeof providerId !== 'string' || typeof fromUrl !== 'string') throw new ValidationError('the body must have providerId and fromUrl, both strings');
      if (!IDENTITY_PROVIDER_FACTORIES.some((f) => f.id === providerId)) {
        throw new ValidationError(`providerId ${JSON.stringify(providerId)} is not supported (Realmgate imports OpenID Connect metadata: ${IDENTITY_PROVIDER_FACTORIES.map((f) => f.id).join(', ')})`);
      }
      // Keycloak reads the document at fromUrl as given; the issuer alone is taken too. The document's
      // issuer must be the one its URL is of (OpenID Connect Discovery 4.3).
      const issuer = fromUrl.endsWith(WELL_KNOWN) ? fromUrl.slice(0, -WELL_KNOWN.length) : fromUrl;
      const config = await discoverProvider(issuer);
      return { ...config, metadataDescriptorUrl: fromUrl };
    },
  );

  app.get<AliasReq>(
    '/realms/:realm/identity-provider/instances/:alias/reload-keys',
    {
      schema: {
        tags,
        summary: "Drop this server's cached keys of the provider (its JWKS URL's key set, fetched again at the next sign-in): true when the provider checks signatures with keys from a JWKS URL, false when it has no keys to reload",
        params: aliasParams,
        security,
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-identity-providers');
      const p = await providerAt(realm, req.params.alias);
      // Keycloak's OIDCIdentityProvider.reloadKeys: only a provider validating signatures with a JWKS URL has keys to reload.
      if (p.config.validateSignature !== 'true' || !p.config.jwksUrl) return false;
      forgetProviderKeysAt(p.config.jwksUrl);
      return true;
    },
  );

  // ---- A user's links (UserResource: federated-identity) ----

  app.get<UserReq>(
    '/realms/:realm/users/:id/federated-identity',
    { schema: { tags: ['users'], summary: "A user's accounts at identity providers (FederatedIdentityRepresentation: identityProvider, userId, userName)", params: params({ id: { type: 'string', maxLength: 64 } }), security } },
    async (req) => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'view-users');
      return (await listFederatedIdentities(store, user)).map(toFederatedIdentityRepresentation);
    },
  );

  app.post<{ Params: { realm: string; id: string; provider: string } }>(
    '/realms/:realm/users/:id/federated-identity/:provider',
    {
      schema: {
        tags: ['users'],
        summary: 'Link a user to an account at an identity provider (body {userId, userName}); 409 if either is linked already, 404 for an unknown provider',
        params: linkParams,
        body: anyObject,
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'manage-users');
      const account = readFederatedIdentity(req.body);
      await linkFederatedIdentity(store, actorOf(caller), user, req.params.provider, account);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { realm: string; id: string; provider: string } }>(
    '/realms/:realm/users/:id/federated-identity/:provider',
    { schema: { tags: ['users'], summary: "Remove a user's link to an identity provider (the user stays)", params: linkParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'manage-users');
      await unlinkFederatedIdentity(store, actorOf(caller), user, req.params.provider);
      return reply.code(204).send();
    },
  );
}
