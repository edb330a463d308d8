import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { hasAdminRole, mayCreateRealm, REALM_MANAGEMENT_ROLES, type AdminCaller, type AdminRole } from '../../admin/authorization.js';
import { selectLocale } from '../../i18n/locales.js';
import { callerOf } from './plugin.js';
import { unauthorized } from './errors.js';
import { security } from './schemas.js';

const ADMIN_ROLES = Object.keys(REALM_MANAGEMENT_ROLES) as AdminRole[];

/**
 * GET /admin/{realm}/console/whoami[?currentRealm=R] (keycloak-admin-client's `whoAmI.find`): who the
 * caller is and which admin roles they hold, as Keycloak's admin console asks at start. The token must be
 * one of `{realm}`, the realm the administrator signed in to (another realm's token: 401, as Keycloak,
 * which verifies the token against the path's realm). `realm_access` names one realm, `currentRealm` when
 * given (a master administrator's choice; a realm the caller may not administer, or that does not
 * exist, is not listed), else `{realm}`: the roles of that realm's realm-management client the caller
 * holds, with those Realmgate's authorization lets them imply (manage-users gives view-users, realm-admin
 * and master's `admin` give all), so that a console showing what `realm_access` allows shows what the
 * API would allow. `createRealm`: master's `admin` or `create-realm`. `locale`: the user's `locale`
 * attribute, else the browser's, among the realm's locales (English without internationalization).
 * `temporary`: the user's `is_temporary_admin` attribute (Keycloak's bootstrap admin; Realmgate's own
 * bootstrap admin is not temporary).
 */
export async function whoAmIRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.get<{ Params: { realm: string }; Querystring: { currentRealm?: string } }>(
    '/:realm/console/whoami',
    {
      schema: {
        tags: ['whoami'],
        summary: "Who the caller is and the admin roles they hold (Keycloak's admin console whoami)",
        params: { type: 'object', properties: { realm: { type: 'string', maxLength: 255 } }, required: ['realm'] },
        querystring: { type: 'object', properties: { currentRealm: { type: 'string', maxLength: 255 } } },
        security,
      },
    },
    async (req, reply) => {
      const caller = callerOf(req);
      if (caller.realmId !== req.params.realm) throw unauthorized(`the bearer token was not issued by realm ${req.params.realm}`);
      const [realm, user] = await Promise.all([services.store.realms.get(caller.realmId), services.store.users.get(caller.userId)]);
      // A service account's user, or a user deleted since the token was issued: the token's subject is
      // all there is (callerRoles gives such a caller no roles).
      const first = user?.firstName?.trim() ? user.firstName : null;
      const last = user?.lastName?.trim() ? user.lastName : null;
      const displayName = first || last ? [first, last].filter((s) => s !== null).join(' ') : (user?.username ?? caller.username ?? caller.userId);
      const target = req.query.currentRealm ?? caller.realmId;
      const access: Record<string, string[]> = {};
      const held = await heldRoles(services, caller, target);
      if (held.length > 0) access[target] = held;
      reply.header('cache-control', 'no-cache');
      return {
        userId: caller.userId,
        realm: caller.realmId,
        displayName,
        locale: realm ? selectLocale(realm, { user: user?.attributes.locale?.[0], acceptLanguage: req.headers['accept-language'] }) : 'en',
        createRealm: mayCreateRealm(caller),
        realm_access: access,
        temporary: user?.attributes.is_temporary_admin?.[0] === 'true',
      };
    },
  );
}

/** The admin roles the caller holds for `realmId`, none for a realm that does not exist. */
async function heldRoles(services: Services, caller: AdminCaller, realmId: string): Promise<string[]> {
  const roles = ADMIN_ROLES.filter((r) => hasAdminRole(caller, realmId, r));
  if (roles.length === 0) return roles;
  return (await services.cache.realm(realmId)) ? roles : [];
}
