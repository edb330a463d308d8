import type { Store } from '../../storage/store.js';
import type { Realm, User, UserAttributes } from '../../storage/types.js';
import { LDAP_ENTRY_DN, LDAP_ID, attributeMapping } from '../../oauth/ldap/federation.js';
import { LIMITS, NotFound } from '../validation.js';
import { requireRealm } from './common.js';

/**
 * Keycloak's user profile, as far as Realmgate has one. Realmgate keeps no per-realm user profile
 * configuration (no declared attributes of an operator's, no validators or permissions to edit): a user
 * has Keycloak's four root attributes (username, email, firstName, lastName) under the rules every door
 * applies (src/admin/validation.ts, src/admin/operations/users.ts), and any other attribute is unmanaged,
 * kept as Keycloak 26 keeps unmanaged attributes: administrators read and change them, the user neither
 * sees nor changes them (Keycloak's unmanagedAttributePolicy ADMIN_EDIT). This is that profile in
 * Keycloak's UPConfig shape, from which its metadata (UserProfileMetadata) is derived.
 */

/** Keycloak's UPConfig attribute, the fields Realmgate fills. */
export interface UPAttribute {
  name: string;
  displayName: string;
  validations: Record<string, Record<string, unknown>>;
  permissions: { view: string[]; edit: string[] };
  required?: { roles: string[] };
  multivalued: boolean;
  group?: string;
}

export interface UPGroup {
  name: string;
  displayHeader: string;
  displayDescription: string;
}

export interface UPConfig {
  attributes: UPAttribute[];
  groups: UPGroup[];
  unmanagedAttributePolicy: 'ADMIN_EDIT';
}

/** Keycloak's UserProfileAttributeMetadata. */
export interface AttributeMetadata {
  name: string;
  displayName: string;
  required: boolean;
  readOnly: boolean;
  validators: Record<string, Record<string, unknown>>;
  multivalued: boolean;
  group?: string;
  annotations?: Record<string, unknown>;
}

/** Keycloak's UserProfileMetadata. */
export interface UserProfileMetadata {
  attributes: AttributeMetadata[];
  groups: Array<UPGroup & { annotations?: Record<string, unknown> }>;
}

const both = { view: ['admin', 'user'], edit: ['admin', 'user'] };

/** The realm's user profile in Keycloak's UPConfig shape: Keycloak's default profile, with Realmgate's limits. */
export function userProfileConfig(realm: Pick<Realm, 'registrationEmailAsUsername'>): UPConfig {
  return {
    attributes: [
      {
        name: 'username',
        displayName: '${username}',
        // USERNAME_RE: a letter or digit first, then letters, digits, '.', '_', '@', '+', '-' (stored in lower case).
        validations: { length: { min: 1, max: LIMITS.username }, 'username-prohibited-characters': {}, 'up-username-not-idn-homograph': {} },
        permissions: both,
        multivalued: false,
      },
      {
        name: 'email',
        displayName: '${email}',
        validations: { email: {}, length: { max: LIMITS.email } },
        ...(realm.registrationEmailAsUsername ? { required: { roles: ['admin', 'user'] } } : {}),
        permissions: both,
        multivalued: false,
      },
      { name: 'firstName', displayName: '${firstName}', validations: { length: { max: LIMITS.personName }, 'person-name-prohibited-characters': {} }, permissions: both, multivalued: false },
      { name: 'lastName', displayName: '${lastName}', validations: { length: { max: LIMITS.personName }, 'person-name-prohibited-characters': {} }, permissions: both, multivalued: false },
    ],
    groups: [{ name: 'user-metadata', displayHeader: 'User metadata', displayDescription: 'Attributes, which refer to user metadata' }],
    unmanagedAttributePolicy: 'ADMIN_EDIT',
  };
}

/**
 * Keycloak's GET users/profile/metadata: the profile's attributes as the admin API's user forms see them
 * (the context of an administrator and a user not yet created). `required` when the admin must give it
 * (the username; the email too when the email is the username, and the username then read-only: it is
 * the email).
 */
export async function userProfileMetadata(store: Store, realmId: string): Promise<UserProfileMetadata> {
  const realm = await requireRealm(store, realmId);
  const config = userProfileConfig(realm);
  return {
    attributes: config.attributes.map((a) => {
      const emailAsUsername = realm.registrationEmailAsUsername && a.name === 'username';
      return {
        name: a.name,
        displayName: a.displayName,
        required: a.name === 'username' ? !emailAsUsername : (a.required?.roles.includes('admin') ?? false),
        readOnly: emailAsUsername || !a.permissions.edit.includes('admin'),
        validators: a.validations,
        multivalued: a.multivalued,
        ...(a.group !== undefined ? { group: a.group } : {}),
      };
    }),
    groups: config.groups,
  };
}

/**
 * Keycloak's account context of the metadata (GET /account?userProfileMetadata=true, what its account
 * console builds the personal info form from): what the user sees of their profile and may change
 * through the account API, by the rules of its update (src/http/account/profile.ts): the username only
 * where the realm lets users change it (and it is not the email), nothing of a user whose profile comes
 * from a user directory (LDAP).
 */
export function accountProfileMetadata(realm: Pick<Realm, 'registrationEmailAsUsername' | 'editUsernameAllowed'>, user: Pick<User, 'federationLink'>): UserProfileMetadata {
  const config = userProfileConfig(realm);
  const federated = Boolean(user.federationLink);
  return {
    attributes: config.attributes
      .filter((a) => a.permissions.view.includes('user'))
      .map((a) => {
        const username = a.name === 'username';
        const fixedUsername = username && (!realm.editUsernameAllowed || realm.registrationEmailAsUsername);
        return {
          name: a.name,
          displayName: a.displayName,
          required: username ? !realm.registrationEmailAsUsername : (a.required?.roles.includes('user') ?? false),
          readOnly: federated || fixedUsername || !a.permissions.edit.includes('user'),
          validators: a.validations,
          multivalued: a.multivalued,
          ...(a.group !== undefined ? { group: a.group } : {}),
        };
      }),
    groups: config.groups,
  };
}

/**
 * The attributes the profile declares for this user: the root ones, and for a user imported from an LDAP
 * provider those the provider declares for its users, as Keycloak's LDAP provider decorates the profile
 * (LDAP_ID, LDAP_ENTRY_DN, createTimestamp, modifyTimestamp, and the model attributes of its
 * user-attribute-ldap-mappers). A user unlinked from its provider declares only the root ones.
 */
async function declaredAttributes(store: Store, user: User): Promise<Set<string>> {
  const declared = new Set(['username', 'email', 'firstName', 'lastName']);
  const p = user.federationLink ? await store.userStorage.get(user.realmId, user.federationLink) : undefined;
  if (p) {
    for (const name of [LDAP_ID, LDAP_ENTRY_DN, 'createTimestamp', 'modifyTimestamp']) declared.add(name);
    for (const e of attributeMapping(p).extra) declared.add(e.model);
  }
  return declared;
}

/**
 * Keycloak's GET users/{id}/unmanagedAttributes: the user's attributes that the profile does not declare
 * (Realmgate's policy is ADMIN_EDIT, so they are always returned), each with its values.
 */
export async function unmanagedAttributes(store: Store, input: { realmId: string; userId: string }): Promise<UserAttributes> {
  await requireRealm(store, input.realmId);
  const user = await store.users.get(input.userId);
  if (!user || user.realmId !== input.realmId) throw new NotFound('User not found');
  const declared = await declaredAttributes(store, user);
  return Object.fromEntries(Object.entries(user.attributes).filter(([name, values]) => !declared.has(name) && values.length > 0));
}
