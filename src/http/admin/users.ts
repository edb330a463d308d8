import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { hasAdminRole } from '../../admin/authorization.js';
import {
  bruteForceStatus,
  changeUsername,
  checkUsernameChange,
  countUsers,
  createUser,
  deleteUser,
  logoutUser,
  listUsers,
  resetPassword,
  revokeConsent,
  unlockUser,
  updateUser,
  userConsents,
  userSessions,
} from '../../admin/operations/users.js';
import {
  readPasswordCredential,
  readUserCreate,
  readUserUpdate,
  toBruteForceRepresentation,
  toConsentRepresentation,
  toUserRepresentation,
} from '../../admin/keycloak/representations/user.js';
import { toSessionRepresentation } from '../../admin/keycloak/representations/session.js';
import { userSearchFilters } from '../../admin/keycloak/search-query.js';
import type { UserQuery } from '../../storage/repos/user-admin.js';
import { NotFound, ValidationError } from '../../admin/validation.js';
import type { User } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { recordAdminEvent, requireRealm } from '../../admin/operations/common.js';
import { usersWithOtp } from '../../admin/operations/user-credentials.js';
import { listFederatedIdentities, listIdentityProviders } from '../../admin/operations/identity-providers.js';
import { toFederatedIdentityRepresentation } from '../../admin/keycloak/representations/identity-provider.js';
import { actorOf, mappingGuard, requireRole } from './authenticate.js';
import { sendActionsEmail } from '../../admin/operations/action-emails.js';
import { sendVerifyEmail } from '../../admin/operations/email-verification.js';
import { MailError } from '../../mail/mailer.js';
import { AdminHttpError, forbidden } from './errors.js';
import { ImpersonationForbidden, impersonateUser, mayImpersonateUser, notImpersonatable } from '../../admin/operations/impersonation.js';
import { setSessionCookies } from '../cookies.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, created201, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['users'];
export const userParams = params({ id: { type: 'string', maxLength: 64 } });

/** Keycloak's user query parameters (UsersResource.getUsers). */
const userQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 255 },
    username: { type: 'string', maxLength: 255 },
    email: { type: 'string', maxLength: 320 },
    firstName: { type: 'string', maxLength: 255 },
    lastName: { type: 'string', maxLength: 255 },
    q: { type: 'string', maxLength: 4096, description: "Keycloak's attribute search: space-separated name:value pairs (quote a part holding spaces), every one must match" },
    enabled: { type: 'boolean' },
    exact: { type: 'boolean' },
    briefRepresentation: { type: 'boolean' },
    first: { type: 'integer', minimum: 0 },
    max: { type: 'integer', minimum: 0, maximum: 1000 },
  },
} as const;

interface UserQueryString {
  search?: string;
  username?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  q?: string;
  enabled?: boolean;
  exact?: boolean;
  briefRepresentation?: boolean;
  first?: number;
  max?: number;
}

export type UserReq = { Params: { realm: string; id: string } };

/** The realm (visible to the caller, holding `role`) and the user with this id in it, else 404. */
export async function userTarget(services: Services, caller: AdminCaller, realmId: string, id: string, role: 'view-users' | 'manage-users'): Promise<User> {
  const realm = await loadRealm(services, caller, realmId);
  requireRole(caller, realm.id, role);
  const user = await services.store.users.get(id);
  if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
  return user;
}

/** The filters of a search or count: Keycloak's fields, then its `q` pairs (which win, as Keycloak puts them last). */
function filtersOf(q: UserQueryString): UserQuery {
  const fields = { search: q.search, username: q.username, email: q.email, firstName: q.firstName, lastName: q.lastName, enabled: q.enabled, exact: q.exact };
  return { ...fields, ...userSearchFilters(q.q) };
}

/** Keycloak's UsersResource and UserResource: users, their password, sessions, consents and lockout. */
export async function userRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  const target = (caller: AdminCaller, realmId: string, id: string, role: 'view-users' | 'manage-users'): Promise<User> => userTarget(services, caller, realmId, id, role);

  app.get<{ Params: { realm: string }; Querystring: UserQueryString }>(
    '/realms/:realm/users',
    { schema: { tags, summary: 'Search users (search over username and email, or by field, or by attribute with q=name:value; exact; paged)', params: realmParams, querystring: userQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-users');
      const q = req.query;
      const users = await listUsers(store, { realmId: realm.id, ...filtersOf(q), first: q.first, max: q.max ?? 100 });
      const canManage = hasAdminRole(caller, realm.id, 'manage-users');
      // In a list, access.impersonate is the role alone (as Keycloak's); reading one user also checks
      // the user's own admin roles against the caller's (mayImpersonateUser).
      const canImpersonate = hasAdminRole(caller, realm.id, 'impersonation');
      // Keycloak's full representation says whether each user has an authenticator: one query for the page.
      const otp = q.briefRepresentation ? new Set<string>() : await usersWithOtp(store, users.map((u) => u.id));
      return users.map((u) => toUserRepresentation(u, { brief: q.briefRepresentation, canManage, canImpersonate: canImpersonate && notImpersonatable(u) === undefined, totp: otp.has(u.id) }));
    },
  );

  app.get<{ Params: { realm: string }; Querystring: UserQueryString }>(
    '/realms/:realm/users/count',
    { schema: { tags, summary: 'Count users matching the same filters as the search', params: realmParams, querystring: userQuery, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'query-users');
      const q = req.query;
      return countUsers(store, { realmId: realm.id, ...filtersOf(q) });
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/users',
    { schema: { tags, summary: 'Create a user, with a password credential if given', params: realmParams, body: anyObject, response: created201, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-users');
      const input = readUserCreate(req.body);
      // Keycloak creates users without credentials: such a user has no password (none is listed, none
      // verifies) until an administrator sets one or the user sets one through an action email.
      const password = input.password?.value;
      // Keycloak: a temporary password credential adds UPDATE_PASSWORD to the requiredActions sent.
      const { id } = await createUser(
        store,
        {
          realmId: realm.id,
          username: input.username,
          password,
          ...(input.email ? { email: input.email } : {}),
          ...(input.firstName ? { firstName: input.firstName } : {}),
          ...(input.lastName ? { lastName: input.lastName } : {}),
          ...(input.emailVerified !== undefined ? { emailVerified: input.emailVerified } : {}),
          enabled: input.enabled,
          ...(input.requiredActions !== undefined ? { requiredActions: input.requiredActions } : {}),
          temporary: input.password?.temporary === true,
          ...(input.groups ? { groups: input.groups } : {}),
          ...(input.attributes !== undefined ? { attributes: input.attributes } : {}),
        },
        actorOf(caller),
        mappingGuard(caller),
      );
      services.cache.clear();
      return created(services, reply, `${encodeURIComponent(realm.id)}/users/${id}`);
    },
  );

  app.get<UserReq>('/realms/:realm/users/:id', { schema: { tags, summary: 'Read a user', params: userParams, security } }, async (req) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'view-users');
    const rep = toUserRepresentation(user, { canManage: hasAdminRole(caller, user.realmId, 'manage-users'), canImpersonate: await mayImpersonateUser(store, caller, user), totp: (await usersWithOtp(store, [user.id])).has(user.id) });
    // Keycloak's UserResource.getUser: a realm with identity providers shows the user's links.
    if ((await listIdentityProviders(store, user.realmId)).length === 0) return rep;
    return { ...rep, federatedIdentities: (await listFederatedIdentities(store, user)).map(toFederatedIdentityRepresentation) };
  });

  app.put<UserReq>('/realms/:realm/users/:id', { schema: { tags, summary: 'Update a user: email, names, emailVerified, enabled (disabling ends sessions and revokes tokens), requiredActions (UPDATE_PASSWORD, CONFIGURE_TOTP), attributes (the whole set; absent: unchanged)', params: userParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
    const { username, password, changes } = readUserUpdate(req.body);
    // Keycloak's editUsernameAllowed: checked before anything changes, applied after the rest.
    const realm = username !== undefined && username.toLowerCase() !== user.username ? await requireRealm(store, user.realmId) : undefined;
    if (realm) await checkUsernameChange(store, { realm, user, username: username! });
    await updateUser(store, { realmId: user.realmId, user: user.id, ...changes }, actorOf(caller));
    if (realm) {
      const renamed = await changeUsername(store, { realm, user, username: username! });
      await recordAdminEvent(store, actorOf(caller), { realmId: user.realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${user.id}`, representation: { username: renamed, previousUsername: user.username } });
    }
    // Keycloak's user update only adds UPDATE_PASSWORD for a temporary credential (never removes it):
    // the requiredActions sent decide otherwise.
    if (password !== undefined) await resetPassword(store, { realmId: user.realmId, user: user.id, password: password.value, ...(password.temporary ? { temporary: true } : {}), nowSeconds: nowSeconds(services.clock) }, actorOf(caller));
    return reply.code(204).send();
  });

  app.delete<UserReq>('/realms/:realm/users/:id', { schema: { tags, summary: 'Delete a user with their sessions, tokens, consents and memberships', params: userParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
    await deleteUser(store, { realmId: user.realmId, user: user.id }, actorOf(caller));
    return reply.code(204).send();
  });

  app.put<UserReq>(
    '/realms/:realm/users/:id/reset-password',
    { schema: { tags, summary: "Set a user's password (a CredentialRepresentation of type password; temporary: true requires UPDATE_PASSWORD); ends their sessions", params: userParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
      // Keycloak: temporary true requires UPDATE_PASSWORD at the next sign-in; false or absent removes it.
      const credential = readPasswordCredential(req.body);
      await resetPassword(store, { realmId: user.realmId, user: user.id, password: credential.value, temporary: credential.temporary, nowSeconds: nowSeconds(services.clock) }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.put<UserReq & { Querystring: { lifespan?: number; client_id?: string; redirect_uri?: string }; Body: unknown }>(
    '/realms/:realm/users/:id/execute-actions-email',
    {
      schema: {
        tags,
        summary: 'Mail the user a link to do required actions (UPDATE_PASSWORD, CONFIGURE_TOTP, VERIFY_EMAIL), then go to redirect_uri (one of client_id\'s); lifespan in seconds',
        params: userParams,
        querystring: {
          type: 'object',
          properties: { lifespan: { type: 'integer', minimum: 1 }, client_id: { type: 'string', maxLength: 255 }, redirect_uri: { type: 'string', maxLength: 2048 } },
        },
        body: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 } },
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
      await mailing('execute actions email', () => sendActionsEmail(services, { realmId: user.realmId, user: user.id, actions: req.body, ...linkOptions(req.query), ip: req.ip, log: req.log }, actorOf(caller)));
      return reply.code(204).send();
    },
  );

  app.put<UserReq & { Querystring: { lifespan?: number; client_id?: string; redirect_uri?: string } }>(
    '/realms/:realm/users/:id/send-verify-email',
    {
      schema: {
        tags,
        summary: "Mail the user a link that verifies their email (Keycloak's send-verify-email), then go to redirect_uri (one of client_id's); lifespan in seconds",
        params: userParams,
        querystring: {
          type: 'object',
          properties: { lifespan: { type: 'integer', minimum: 1 }, client_id: { type: 'string', maxLength: 255 }, redirect_uri: { type: 'string', maxLength: 2048 } },
        },
        response: noContent204,
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
      await mailing('verify email', () => sendVerifyEmail(services, { realmId: user.realmId, user: user.id, ...linkOptions(req.query), ip: req.ip, log: req.log }, actorOf(caller)));
      return reply.code(204).send();
    },
  );

  app.get<UserReq>('/realms/:realm/users/:id/sessions', { schema: { tags, summary: "A user's live browser sessions", params: userParams, security } }, async (req) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'view-users');
    return (await userSessions(store, { realmId: user.realmId, user: user.id })).map((s) => toSessionRepresentation(s));
  });

  app.post<UserReq>('/realms/:realm/users/:id/logout', { schema: { tags, summary: 'End every session of the user and revoke their refresh tokens', params: userParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
    await logoutUser(store, { realmId: user.realmId, user: user.id }, actorOf(caller));
    return reply.code(204).send();
  });

  // Keycloak's UserResource.impersonate. keycloak-admin-client sends { user, realm } as the body; the
  // path says both, so the body is not read. The session's cookies go to whoever made the call: Keycloak's
  // admin console, in the administrator's browser, then opens `redirect` signed in as the user.
  app.post<UserReq>(
    '/realms/:realm/users/:id/impersonation',
    {
      schema: {
        tags,
        summary:
          "Sign in as the user: a new session of the user (its cookies set in this response) and the realm's account page to open; needs the impersonation role and every admin role the user holds; an admin of the same realm is signed out of their own session there first",
        params: userParams,
        response: { 200: { type: 'object', required: ['sameRealm', 'redirect'], properties: { sameRealm: { type: 'boolean' }, redirect: { type: 'string' } } } },
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      let result;
      try {
        result = await impersonateUser(services, { realmId: realm.id, userId: req.params.id }, caller, actorOf(caller));
      } catch (err) {
        if (err instanceof ImpersonationForbidden) throw forbidden(err.message);
        throw err;
      }
      setSessionCookies(reply, services.config, result.session, result.secret, nowSeconds(services.clock));
      return { sameRealm: result.sameRealm, redirect: result.redirect };
    },
  );

  app.get<UserReq>('/realms/:realm/users/:id/consents', { schema: { tags, summary: 'The scopes the user granted, per client', params: userParams, security } }, async (req) => {
    const caller = callerOf(req);
    const user = await target(caller, req.params.realm, req.params.id, 'view-users');
    return (await userConsents(store, { realmId: user.realmId, user: user.id })).map(toConsentRepresentation);
  });

  app.delete<{ Params: { realm: string; id: string; client: string } }>(
    '/realms/:realm/users/:id/consents/:client',
    { schema: { tags, summary: "Withdraw the user's consent to a client and revoke the client's tokens for the user", params: params({ id: { type: 'string', maxLength: 64 }, client: { type: 'string', maxLength: 255 } }), response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
      await revokeConsent(store, { realmId: user.realmId, user: user.id, clientId: req.params.client }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  app.get<UserReq>(
    '/realms/:realm/attack-detection/brute-force/users/:id',
    { schema: { tags: ['attack-detection'], summary: "A user's failed-login count and lockout", params: userParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'view-users');
      return toBruteForceRepresentation(await bruteForceStatus(store, { realmId: user.realmId, user: user.id }));
    },
  );

  app.delete<UserReq>(
    '/realms/:realm/attack-detection/brute-force/users/:id',
    { schema: { tags: ['attack-detection'], summary: 'Clear the lockout of a user', params: userParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await target(caller, req.params.realm, req.params.id, 'manage-users');
      await unlockUser(store, { realmId: user.realmId, user: user.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );
}

/** The query of the mailing endpoints (Keycloak's): the link's lifespan, and where it leads after. */
function linkOptions(q: { lifespan?: number; client_id?: string; redirect_uri?: string }): { lifespan?: number; clientId?: string; redirectUri?: string } {
  return { ...(q.lifespan !== undefined ? { lifespan: q.lifespan } : {}), ...(q.client_id ? { clientId: q.client_id } : {}), ...(q.redirect_uri ? { redirectUri: q.redirect_uri } : {}) };
}

/**
 * Sends a mail for the admin API. Keycloak answers 500 "Failed to send <what>" when the mail server did
 * not take it; that failure is not Realmgate's own, so 502, with the reason (which names no secret).
 */
async function mailing(what: string, send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (err) {
    if (err instanceof MailError) throw new AdminHttpError(502, 'HTTP 502 Bad Gateway', `Failed to send ${what}: ${err.message}`);
    throw err;
  }
}
