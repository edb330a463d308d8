import type { Services } from '../../services.js';
import type { Store } from '../../storage/store.js';
import { realmBase } from '../../services.js';
import type { BrowserSession, User } from '../../storage/types.js';
import type { UserRoles } from '../../storage/repos/roles.js';
import type { AdminCaller } from '../authorization.js';
import { hasAdminRole, MASTER_REALM, MASTER_ROLES, mayMapRole, REALM_MANAGEMENT, REALM_MANAGEMENT_ROLES } from '../authorization.js';
import { NotFound, ValidationError } from '../validation.js';
import { createBrowserSession } from '../../oauth/authorize/interaction.js';
import { logoutSession } from '../../oidc/end-session.js';
import { NO_PASSWORD } from './service-accounts.js';
import { recordAdminEvent, type Actor } from './common.js';

/** The caller may not impersonate this user (the admin API's 403, the console's Forbidden page). */
export class ImpersonationForbidden extends Error {}

/**
 * Whether `caller` may sign in as a user of `realmId` who holds `target`: Keycloak's rule (the realm's
 * `impersonation` role, which realm-admin and master's admin imply) and one of Realmgate's own: the caller
 * must hold every administrator role the user holds (the rule of mayMapRole). Keycloak lets an holder of
 * `impersonation` alone become a realm-admin, and so do whatever a realm-admin may; here impersonation
 * gives no power the caller does not already have.
 */
export function mayImpersonate(caller: AdminCaller, realmId: string, target: UserRoles): boolean {
  if (!hasAdminRole(caller, realmId, 'impersonation')) return false;
  const adminRoles = (target.clients[REALM_MANAGEMENT] ?? []).filter((name) => Object.hasOwn(REALM_MANAGEMENT_ROLES, name)).map((name) => ({ realmId, clientId: REALM_MANAGEMENT, name }));
  if (realmId === MASTER_REALM) adminRoles.push(...target.realm.filter((name) => Object.hasOwn(MASTER_ROLES, name)).map((name) => ({ realmId, clientId: '', name })));
  return adminRoles.every((role) => mayMapRole(caller, role));
}

/** Why this user cannot be impersonated by anyone (Keycloak's 400s), or undefined. */
export function notImpersonatable(user: User): string | undefined {
  if (!user.enabled) return 'User is disabled';
  if (user.passwordHash === NO_PASSWORD) return 'Service accounts cannot be impersonated';
  return undefined;
}

/** What access.impersonate and the console's button say: whether `caller` may impersonate this user now. */
export async function mayImpersonateUser(store: Store, caller: AdminCaller, user: User): Promise<boolean> {
  return notImpersonatable(user) === undefined && mayImpersonate(caller, user.realmId, await store.roles.userRoles(user.id));
}

export interface Impersonation {
  /** The caller's own session in this realm was ended first (Keycloak's sameRealm). */
  sameRealm: boolean;
  /** Where the browser goes next: the realm's account page, signed in as the user. */
  redirect: string;
  /** The new session, and the secret its cookie carries. */
  session: BrowserSession;
  secret: string;
}

/**
 * Keycloak's UserResource.impersonate: a new browser session of the user in their realm, marked with the
 * administrator who started it; the caller sets its cookies in the administrator's browser, which is then
 * signed in as the user to every application of the realm (single sign-on) until that session ends. An
 * administrator of the same realm is first signed out of their own session there (a browser holds one
 * session per realm). Recorded as an IMPERSONATE event of the user (stored whatever the realm's settings)
 * and as an admin event.
 */
export async function impersonateUser(services: Services, input: { realmId: string; userId: string }, caller: AdminCaller, actor: Actor): Promise<Impersonation> {
  const { store } = services;
  const realm = await store.realms.get(input.realmId);
  if (!realm) throw new NotFound(`realm ${input.realmId} does not exist`);
  if (!hasAdminRole(caller, realm.id, 'impersonation')) throw new ImpersonationForbidden(`this needs the impersonation role of realm ${realm.id}`);
  const user = await store.users.get(input.userId);
  if (!user || user.realmId !== realm.id) throw new NotFound('User not found');
  if (!mayImpersonate(caller, realm.id, await store.roles.userRoles(user.id))) throw new ImpersonationForbidden(`${user.username} holds administrator roles you do not hold: you may not impersonate them`);
  const refused = notImpersonatable(user);
  if (refused) throw new ValidationError(refused);

  let sameRealm = false;
  if (caller.realmId === realm.id && caller.sessionId !== undefined) {
    sameRealm = true;
    const own = await store.sessions.get(caller.sessionId);
    if (own && own.realmId === realm.id && own.userId === caller.userId) await logoutSession(services, realm.id, own, 'signed out to impersonate a user');
  }
  const impersonator = { userId: caller.userId, username: caller.username ?? caller.userId, realmId: caller.realmId };
  const { session, secret } = await createBrowserSession(services, realm, user.id, { impersonator, ...(actor.ip ? { from: { ip: actor.ip, userAgent: undefined } } : {}) });
  await services.audit.record({
    realmId: realm.id,
    type: 'IMPERSONATE',
    outcome: 'success',
    clientId: null,
    userId: user.id,
    username: user.username,
    ip: caller.ip,
    reason: `session ${session.id} started by ${impersonator.username} of realm ${impersonator.realmId}`,
  });
  await recordAdminEvent(store, actor, { realmId: realm.id, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/impersonation` });
  return { sameRealm, redirect: `${realmBase(services.config, realm.id)}/account`, session, secret };
}
