import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { unmanagedAttributes, userProfileConfig, userProfileMetadata } from '../../admin/operations/user-profile.js';
import { ValidationError } from '../../admin/validation.js';
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

  // keycloak-admin-client's users.getProfile (the Terraform provider's keycloak_realm_user_profile reads
  // it): the profile's configuration, Keycloak's UPConfig, under view-realm as Keycloak's.
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/users/profile',
    { schema: { tags, summary: "The user profile's configuration (Keycloak's UPConfig): Realmgate's fixed profile", params: realmParams, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'view-realm');
      reply.header('cache-control', 'no-cache');
      return userProfileConfig(realm);
    },
  );

  // users.updateProfile: the profile is fixed, so a change is refused in words (not a 404 that reads as
  // a missing realm), after the same role check as Keycloak's (manage-realm).
  app.put<{ Params: { realm: string } }>(
    '/realms/:realm/users/profile',
    { schema: { tags, summary: "Refused: Realmgate's user profile is fixed (400)", params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      throw new ValidationError(
        "Realmgate's user profile is fixed: username, email, firstName and lastName under its own rules, any other attribute unmanaged (ADMIN_EDIT); it cannot be changed",
      );
    },
  );

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
