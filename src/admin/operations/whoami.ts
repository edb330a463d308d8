import type { Store } from '../../storage/store.js';
import { hasAdminRole, mayCreateRealm, REALM_MANAGEMENT_ROLES, type AdminCaller, type AdminRole } from '../authorization.js';
import { selectLocale } from '../../i18n/locales.js';

const ADMIN_ROLES = Object.keys(REALM_MANAGEMENT_ROLES) as AdminRole[];

/** Keycloak's WhoAmI (its admin console's whoami). */
export interface WhoAmI {
  userId: string;
  realm: string;
  displayName: string;
  locale: string;
  createRealm: boolean;
  realm_access: Record<string, string[]>;
  temporary: boolean;
}

/**
 * Who the caller is and which admin roles they hold. `realm_access` names one realm, `target` (the
 * caller's own unless a master administrator asks about another; one the caller may not administer, or
 * that does not exist, is left out): the roles of its realm-management client the caller holds, with
 * those Realmgate's authorization lets them imply (manage-users gives view-users, realm-admin and master's
 * `admin` give all), so that a console showing what `realm_access` allows shows what the API would allow.
 * `displayName`: first and last name, else the username; `locale`: the user's `locale` attribute, else the
 * browser's, among the realm's locales (English without internationalization); `temporary`: the user's
 * `is_temporary_admin` attribute (Keycloak's temporary bootstrap admin; Realmgate's own is not temporary).
 */
export async function whoAmI(store: Store, caller: AdminCaller, input: { target: string; acceptLanguage: string | undefined }): Promise<WhoAmI> {
  // A service account's user, or a user deleted since the token was issued: the token says the rest.
  const [realm, user] = await Promise.all([store.realms.get(caller.realmId), store.users.get(caller.userId)]);
  const first = user?.firstName?.trim() ? user.firstName : null;
  const last = user?.lastName?.trim() ? user.lastName : null;
  const displayName = first || last ? [first, last].filter((s) => s !== null).join(' ') : (user?.username ?? caller.username ?? caller.userId);
  const held = ADMIN_ROLES.filter((r) => hasAdminRole(caller, input.target, r));
  const exists = held.length > 0 && (input.target === caller.realmId ? realm !== undefined : (await store.realms.get(input.target)) !== undefined);
  return {
    userId: caller.userId,
    realm: caller.realmId,
    displayName,
    locale: realm ? selectLocale(realm, { user: user?.attributes.locale?.[0], acceptLanguage: input.acceptLanguage }) : 'en',
    createRealm: mayCreateRealm(caller),
    realm_access: exists ? { [input.target]: held } : {},
    temporary: user?.attributes.is_temporary_admin?.[0] === 'true',
  };
}
