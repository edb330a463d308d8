import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { unmanagedAttributes, userProfileMetadata } from '../../admin/operations/user-profile.js';
import { requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { params, realmParams, security } from './schemas.js';

const tags = ['users'];

/**
 * Keycloak's user profile as the admin API reads it (UserProfileResource's metadata, UserResource's
 * unmanagedAttributes), from Realmgate's fixed profile (src/admin/operations/user-profile.ts).
 */
export async function userProfileRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  // Keycloak asks any admin role of the realm (requireAnyAdminRole): loadRealm's check.
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/users/profile/metadata',
    { schema: { tags, summary: "The user profile's metadata (Keycloak's UserProfileMetadata): the attributes an admin's user form shows, their validators, and the groups", params: realmParams, security } },
    async (req) => {
      const realm = await loadRealm(services, callerOf(req), req.params.realm);
      return userProfileMetadata(store, realm.id);
    },
  );

  app.get<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/users/:id/unmanagedAttributes',
    { schema: { tags, summary: "The user's attributes that the user profile does not declare (all but an LDAP provider's own, for its users)", params: params({ id: { type: 'string', maxLength: 64 } }), security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-users');
      return unmanagedAttributes(store, { realmId: realm.id, userId: req.params.id });
    },
  );
}
