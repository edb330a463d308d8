import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import {
  addMember,
  createOrganization,
  deleteOrganization,
  listMembers,
  listOrganizations,
  removeMember,

  updateOrganization,
} from '../../admin/operations/organizations.js';
import { userOrganizations } from '../../admin/operations/users.js';
import { linkOrganizationProvider, organizationProvider, organizationProviders, unlinkOrganizationProvider } from '../../admin/operations/organization-identity-providers.js';
import { toIdentityProviderRepresentation } from '../../admin/keycloak/representations/identity-provider.js';
import { readMemberId, readOrganization, toMemberRepresentation, toOrganizationRepresentation } from '../../admin/keycloak/representations/organization.js';
import { NotFound, ValidationError } from '../../admin/validation.js';
import type { Realm } from '../../storage/types.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['organizations'];
const orgParams = params({ id: { type: 'string', maxLength: 64 } });
const memberParams = params({ id: { type: 'string', maxLength: 64 }, userId: { type: 'string', maxLength: 64 } });
const orgIdpParams = params({ id: { type: 'string', maxLength: 64 }, alias: { type: 'string', maxLength: 255 } });

/**
 * Keycloak's body of an identity provider link: its alias or internal id, a JSON string or bare (as
 * keycloak-admin-client sends it); surrounding whitespace and quotes are trimmed, as Keycloak trims them.
 */
function readProviderRef(body: unknown): string {
  const ref = typeof body === 'string' ? body.trim().replace(/^"|"$/g, '').trim() : '';
  if (ref === '' || ref.length > 255) throw new ValidationError("the body must be the identity provider's alias (or id) as a JSON string");
  return ref;
}
const page = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 255 },
    q: { type: 'string', maxLength: 1000 },
    exact: { type: 'boolean' },
    briefRepresentation: { type: 'boolean' },
    first: { type: 'integer', minimum: 0 },
    max: { type: 'integer', minimum: 0, maximum: 1000 },
  },
} as const;
interface Page {
  search?: string;
  exact?: boolean;
  first?: number;
  max?: number;
}

/**
 * Keycloak's alias defaults to the name; ours must be a simple name (letters, digits, '.', '_', '-'),
 * so a name like "Acme Corp" gives the alias "acme-corp".
 */
function aliasFrom(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|-+$/g, '')
    .slice(0, 64);
}

/**
 * Keycloak 26's Organizations API. Reading needs view-realm (or view-users, to see members), changing
 * needs manage-realm; members are users, so adding and removing them needs manage-users as well.
 */
export async function organizationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  async function realmFor(caller: AdminCaller, realmId: string, role: 'view-realm' | 'manage-realm' | 'view-users' | 'manage-users'): Promise<Realm> {
    const realm = await loadRealm(services, caller, realmId);
    requireRole(caller, realm.id, role);
    return realm;
  }

  async function orgById(realm: Realm, id: string): Promise<OrganizationDetails> {
    const org = await store.organizationAdmin.get(id);
    if (!org || org.realmId !== realm.id) throw new NotFound('Organization not found');
    return org;
  }

  app.get<{ Params: { realm: string }; Querystring: Page }>(
    '/realms/:realm/organizations',
    { schema: { tags, summary: 'Search organizations by name, alias or domain', params: realmParams, querystring: page, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-realm');
      const q = req.query;
      const orgs = await listOrganizations(store, { realmId: realm.id, search: q.search, exact: q.exact, first: q.first, max: q.max ?? 100 });
      return orgs.map(toOrganizationRepresentation);
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/organizations',
    { schema: { tags, summary: 'Create an organization (name, alias, description, enabled, domains)', params: realmParams, body: anyObject, response: created201, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const input = readOrganization(req.body);
      if (input.name === undefined || input.name.trim() === '') throw new ValidationError('name is required');
      const org = await createOrganization(
        store,
        { realmId: realm.id, alias: input.alias ?? aliasFrom(input.name), name: input.name, description: input.description ?? '', enabled: input.enabled ?? true, ...(input.redirectUrl !== undefined ? { redirectUrl: input.redirectUrl } : {}), domains: input.domains ?? [] },
        actorOf(caller),
      );
      return created(services, reply, `${encodeURIComponent(realm.id)}/organizations/${org.id}`);
    },
  );

  app.get<{ Params: { realm: string; id: string } }>('/realms/:realm/organizations/:id', { schema: { tags, summary: 'Read an organization', params: orgParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await realmFor(caller, req.params.realm, 'view-realm');
    return toOrganizationRepresentation(await orgById(realm, req.params.id));
  });

  app.put<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id',
    { schema: { tags, summary: 'Update an organization; disabling it revokes the tokens issued for it', params: orgParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const org = await orgById(realm, req.params.id);
      const input = readOrganization(req.body);
      await updateOrganization(store, { realmId: realm.id, organization: org.id, ...input }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id',
    { schema: { tags, summary: 'Delete an organization with its memberships and domains', params: orgParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const org = await orgById(realm, req.params.id);
      await deleteOrganization(store, { realmId: realm.id, organization: org.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string }; Querystring: Page }>(
    '/realms/:realm/organizations/:id/members',
    { schema: { tags, summary: 'The members of an organization', params: orgParams, querystring: page, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-users');
      const org = await orgById(realm, req.params.id);
      const users = await listMembers(store, { realmId: realm.id, organization: org.id, first: req.query.first, max: req.query.max ?? 100 });
      return users.map(toMemberRepresentation);
    },
  );

  app.post<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id/members',
    { schema: { tags, summary: "Add a user to an organization; the body is the user's id as a JSON string", params: orgParams, response: created201, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-users');
      const org = await orgById(realm, req.params.id);
      const userId = readMemberId(req.body);
      const user = await store.users.get(userId);
      if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
      await addMember(store, { realmId: realm.id, organization: org.id, user: user.id }, actorOf(caller));
      return created(services, reply, `${encodeURIComponent(realm.id)}/organizations/${org.id}/members/${user.id}`);
    },
  );

  app.get<{ Params: { realm: string; id: string; userId: string } }>(
    '/realms/:realm/organizations/:id/members/:userId',
    { schema: { tags, summary: 'A member of an organization', params: memberParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-users');
      const org = await orgById(realm, req.params.id);
      const user = await store.users.get(req.params.userId);
      if (!user || user.realmId !== realm.id || !(await store.organizationAdmin.isMember(org.id, user.id))) throw new NotFound('User is not a member of the organization');
      return toMemberRepresentation(user);
    },
  );

  app.delete<{ Params: { realm: string; id: string; userId: string } }>(
    '/realms/:realm/organizations/:id/members/:userId',
    { schema: { tags, summary: 'Remove a member; their tokens for the organization are revoked', params: memberParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-users');
      const org = await orgById(realm, req.params.id);
      const user = await store.users.get(req.params.userId);
      if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
      await removeMember(store, { realmId: realm.id, organization: org.id, user: user.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  // ---- The organization's identity providers (OrganizationIdentityProvidersResource) ----

  app.get<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id/identity-providers',
    { schema: { tags, summary: "The identity providers linked to an organization (client secrets masked)", params: orgParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-realm');
      const org = await orgById(realm, req.params.id);
      return (await organizationProviders(store, realm.id, org.id)).map((p) => toIdentityProviderRepresentation(p));
    },
  );

  app.post<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id/identity-providers',
    {
      schema: {
        tags,
        summary: "Link an identity provider to an organization; the body is its alias (or id) as a JSON string. 400 for an unknown provider or one of another organization, 409 if it is this organization's already",
        params: orgParams,
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const org = await orgById(realm, req.params.id);
      await linkOrganizationProvider(store, actorOf(caller), realm.id, org.id, readProviderRef(req.body));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string; alias: string } }>(
    '/realms/:realm/organizations/:id/identity-providers/:alias',
    { schema: { tags, summary: "An identity provider of an organization; 404 if the organization has none of that alias", params: orgIdpParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-realm');
      const org = await orgById(realm, req.params.id);
      return toIdentityProviderRepresentation(await organizationProvider(store, realm.id, org.id, req.params.alias));
    },
  );

  app.delete<{ Params: { realm: string; id: string; alias: string } }>(
    '/realms/:realm/organizations/:id/identity-providers/:alias',
    { schema: { tags, summary: "Unlink an identity provider from an organization (the provider stays; its kc.org.domain goes)", params: orgIdpParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'manage-realm');
      const org = await orgById(realm, req.params.id);
      await unlinkOrganizationProvider(store, actorOf(caller), realm.id, org.id, req.params.alias);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; userId: string } }>(
    '/realms/:realm/organizations/members/:userId/organizations',
    { schema: { tags, summary: 'The organizations a user belongs to', params: params({ userId: { type: 'string', maxLength: 64 } }), security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await realmFor(caller, req.params.realm, 'view-users');
      const user = await store.users.get(req.params.userId);
      if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
      return (await userOrganizations(store, { realmId: realm.id, user: user.id })).map(toOrganizationRepresentation);
    },
  );
}
