import { requiredActionRoutes } from './required-actions.js';
import { localizationRoutes } from './localization.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { maySeeRealm } from '../../admin/authorization.js';
import type { Realm } from '../../storage/types.js';
import { adminErrorHandler, AdminHttpError, forbidden, notFound, sendAdminError } from './errors.js';
import { authenticateAdmin } from './authenticate.js';
import { realmRoutes } from './realms.js';
import { realmImportRoutes } from './realm-import.js';
import { clientRoutes } from './clients.js';
import { clientCertificateRoutes } from './client-certificates.js';
import { groupRoutes } from './groups.js';
import { roleRoutes } from './roles.js';
import { roleScopeRoutes } from './role-scopes.js';
import { initialAccessRoutes } from './initial-access.js';
import { realmInfoRoutes } from './realm-info.js';
import { realmMaintenanceRoutes } from './realm-maintenance.js';
import { protocolMapperRoutes } from './protocol-mappers.js';
import { evaluateScopeRoutes } from './evaluate-scopes.js';
import { clientScopeRoutes } from './client-scopes.js';
import { clientScopeLinkRoutes } from './client-scope-links.js';
import { userRoutes } from './users.js';
import { userProfileRoutes } from './user-profile.js';
import { userCredentialRoutes } from './user-credentials.js';
import { invitationRoutes } from './invitations.js';
import { organizationRoutes } from './organizations.js';
import { identityProviderRoutes } from './identity-providers.js';
import { componentRoutes } from './components.js';
import { sessionRoutes } from './sessions.js';
import { sessionStatsRoutes } from './session-stats.js';
import { serverInfoRoutes } from './server-info.js';
import { whoAmIRoutes } from './whoami.js';
import { clientPolicyRoutes } from './client-policies.js';
import { authenticationFlowRoutes } from './authentication-flows.js';
import { clientInstallationRoutes } from './client-installation.js';
import { ADMIN_PREFIX } from './prefix.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated admin API caller (set for every route under /auth/admin/realms). */
    adminCaller?: AdminCaller;
  }
}

/** Prefix of the admin REST API, as Keycloak's: {AUTH_URL}/auth/admin/realms/... */
export { ADMIN_PREFIX };

export interface AdminRouteOptions {
  services: Services;
}

/** The caller of an admin route (the preHandler has authenticated every request). */
export function callerOf(req: FastifyRequest): AdminCaller {
  if (!req.adminCaller) throw new AdminHttpError(401, 'HTTP 401 Unauthorized', 'a valid bearer token is required');
  return req.adminCaller;
}

/**
 * Loads the realm a route addresses. A caller that may not see the realm gets 403 whether or not it
 * exists (no probing of realm names); a master admin gets 404 for a missing one.
 */
export async function loadRealm(services: Services, caller: AdminCaller, realmId: string): Promise<Realm> {
  if (!maySeeRealm(caller, realmId)) throw forbidden();
  const realm = await services.store.realms.get(realmId);
  if (!realm) throw notFound(`realm ${realmId} not found`);
  return realm;
}

/** 201 Created with a Location whose last segment is the new resource's id (Keycloak's convention). */
export function created(services: Services, reply: FastifyReply, path: string): FastifyReply {
  return reply.code(201).header('location', `${services.config.authUrl}${ADMIN_PREFIX}/realms/${path}`).send();
}

/**
 * The admin API: bearer authentication of every request, Keycloak-shaped errors, JSON bodies that may be
 * empty, bare strings or `{}`. No CORS: browsers reach it only from the server's own console.
 * Each resource registers its routes from its own file (src/http/admin/<resource>.ts).
 */
export async function adminApi(app: FastifyInstance, opts: AdminRouteOptions): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(adminErrorHandler);
  // keycloak-admin-client sends `{}` or nothing on calls without a payload, and a bare JSON string for
  // some (an organization member's id): all are JSON documents, an empty body is no body.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      // keycloak-admin-client sends a string payload (an organization member's user id) unquoted, as
      // application/json: a bare identifier is passed on as a string; routes wanting an object refuse it.
      if (/^[A-Za-z0-9._-]{1,255}$/.test(text.trim())) return done(null, text.trim());
      done(Object.assign(new Error('the request body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body));
  app.addHook('preHandler', async (req) => {
    req.adminCaller = await authenticateAdmin(services, req);
    // A DELETE through a path ending in '/' is where an HTTP client lands when the last segment named a
    // thing "..", resolved away with the one before it (RFC 3986 5.2.4): DELETE .../roles/.. deleted the
    // realm. Names are refused as "." or ".." (checkPathSegment); this holds for any stored before that
    // rule. One call of keycloak-admin-client does end in '/': deleteRealmLocalizationTexts without a key
    // (DELETE .../localization/{locale}/), which deletes the locale's texts, as it means to.
    if (req.method === 'DELETE' && /\/(\?|$)/.test(req.url) && !/^\/auth\/admin\/realms\/[^/?]+\/localization\/[^/?]+\/(\?|$)/.test(req.url)) {
      throw new AdminHttpError(400, 'invalid_request', "a DELETE path must not end with '/' (a name \"..\" resolved away by the client?)");
    }
  });
  app.setNotFoundHandler((_req, reply) => sendAdminError(reply, 404, 'HTTP 404 Not Found', 'no such admin endpoint'));
  await app.register(realmRoutes, { services });
  await app.register(realmImportRoutes, { services });
  await app.register(clientRoutes, { services });
  await app.register(clientCertificateRoutes, { services });
  await app.register(roleRoutes, { services });
  await app.register(roleScopeRoutes, { services });
  await app.register(initialAccessRoutes, { services });
  await app.register(groupRoutes, { services });
  await app.register(realmInfoRoutes, { services });
  await app.register(realmMaintenanceRoutes, { services });
  await app.register(clientScopeRoutes, { services });
  await app.register(clientScopeLinkRoutes, { services });
  await app.register(protocolMapperRoutes, { services });
  await app.register(evaluateScopeRoutes, { services });
  await app.register(userRoutes, { services });
  await app.register(userProfileRoutes, { services });
  await app.register(userCredentialRoutes, { services });
  await app.register(organizationRoutes, { services });
  await app.register(invitationRoutes, { services });
  await app.register(identityProviderRoutes, { services });
  await app.register(componentRoutes, { services });
  await app.register(sessionRoutes, { services });
  await app.register(sessionStatsRoutes, { services });
  await app.register(serverInfoRoutes, { services });
  await app.register(whoAmIRoutes, { services });
  await app.register(clientPolicyRoutes, { services });
  await app.register(authenticationFlowRoutes, { services });
  await app.register(clientInstallationRoutes, { services });
  await app.register(requiredActionRoutes, { services });
  await app.register(localizationRoutes, { services });
}
