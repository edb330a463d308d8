import type { User, UserAttributes } from '../../../storage/types.js';
import type { BruteForceStatus, ConsentSummary } from '../../operations/users.js';
import { ValidationError } from '../../validation.js';
import { asObject, optArray, optBoolean, optString, optStringArray } from '../read-json.js';

/** Keycloak 26's UserRepresentation (the fields Realmgate keeps). Times are milliseconds, as in Keycloak. */
export interface UserRepresentation {
  id: string;
  username: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  emailVerified: boolean;
  enabled: boolean;
  createdTimestamp: number;
  /** The user storage provider (LDAP) the user was imported from; absent for a local user (Keycloak's, brief representations too). */
  federationLink?: string;
  totp?: boolean;
  disableableCredentialTypes?: string[];
  requiredActions?: string[];
  /** Keycloak 26 leaves it out when the user has none (DefaultUserProfile.toRepresentation) and in brief representations. */
  attributes?: UserAttributes;
  notBefore?: number;
  access?: Record<string, boolean>;
}

/** `totp`: whether the user has an authenticator (Keycloak's UserRepresentation.totp, and then otp can be disabled). */
/** `canImpersonate`: access.impersonate, whether the caller may impersonate this user (src/admin/operations/impersonation.ts). */
export function toUserRepresentation(u: User, opts: { brief?: boolean; canManage?: boolean; canImpersonate?: boolean; totp?: boolean } = {}): UserRepresentation {
  const base: UserRepresentation = {
    id: u.id,
    username: u.username,
    ...(u.firstName ? { firstName: u.firstName } : {}),
    ...(u.lastName ? { lastName: u.lastName } : {}),
    ...(u.email ? { email: u.email } : {}),
    emailVerified: u.emailVerified,
    enabled: u.enabled,
    createdTimestamp: u.createdAt * 1000,
    ...(u.federationLink ? { federationLink: u.federationLink } : {}),
  };
  if (opts.brief) return base;
  const manage = opts.canManage ?? true;
  return {
    ...base,
    totp: opts.totp === true,
    disableableCredentialTypes: opts.totp === true ? ['otp'] : [],
    requiredActions: [...u.requiredActions],
    ...(Object.keys(u.attributes).length > 0 ? { attributes: u.attributes } : {}),
    notBefore: 0,
    access: { manageGroupMembership: manage, view: true, mapRoles: manage, impersonate: opts.canImpersonate === true, manage },
  };
}

export interface UserCreateInput {
  username: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  emailVerified?: boolean;
  enabled: boolean;
  /** The password of a `credentials` entry of type "password", if any. */
  password?: PasswordCredential;
  /** Keycloak's requiredActions as sent (the operation refuses any but UPDATE_PASSWORD and CONFIGURE_TOTP). */
  requiredActions?: string[];
  /** Paths of groups the new user joins (Keycloak's UserRepresentation.groups). */
  groups?: string[];
  /** As sent: the operation checks them (checkUserAttributes). */
  attributes?: UserAttributes;
}

/**
 * `attributes` as sent (checked by the operation), and the names a root field left absent takes from
 * them: Keycloak 26 (UserRepresentation.getRawAttributes) uses attributes.firstName and lastName when
 * the root fields are absent, and ignores attributes.username and email.
 */
function attributesOf(o: Record<string, unknown>): { attributes?: UserAttributes; firstName?: string; lastName?: string } {
  const a = o.attributes;
  if (a === undefined || a === null) return {};
  if (typeof a !== 'object' || Array.isArray(a)) throw new ValidationError('attributes must be an object of name -> list of strings');
  const first = (name: string): string | undefined => {
    const v = (a as Record<string, unknown>)[name];
    return Object.hasOwn(a, name) && Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  };
  const firstName = o.firstName === undefined || o.firstName === null ? first('firstName') : undefined;
  const lastName = o.lastName === undefined || o.lastName === null ? first('lastName') : undefined;
  return { attributes: a as UserAttributes, ...(firstName !== undefined ? { firstName } : {}), ...(lastName !== undefined ? { lastName } : {}) };
}

/** A password credential as sent: `temporary` true makes the user choose a new one at the next sign-in. */
export interface PasswordCredential {
  value: string;
  temporary: boolean;
}

function passwordOf(o: Record<string, unknown>): PasswordCredential | undefined {
  const creds = optArray(o, 'credentials');
  if (creds === undefined || creds.length === 0) return undefined;
  if (creds.length > 1) throw new ValidationError('give at most one credential');
  return readPasswordCredential(creds[0]);
}

/** A CredentialRepresentation of type password: `{type: "password", value, temporary}` (temporary absent: false, as in Keycloak). */
export function readPasswordCredential(body: unknown): PasswordCredential {
  const c = asObject(body, 'credential');
  const type = optString(c, 'type') ?? 'password';
  if (type !== 'password') throw new ValidationError('only password credentials are supported');
  const value = optString(c, 'value');
  if (value === undefined) throw new ValidationError('the credential has no value');
  return { value, temporary: optBoolean(c, 'temporary') === true };
}

export function readUserCreate(body: unknown): UserCreateInput {
  const o = asObject(body, 'user');
  const username = optString(o, 'username');
  if (username === undefined) throw new ValidationError('username is required');
  const email = optString(o, 'email');
  const fromAttributes = attributesOf(o);
  const firstName = optString(o, 'firstName') ?? fromAttributes.firstName;
  const lastName = optString(o, 'lastName') ?? fromAttributes.lastName;
  const emailVerified = optBoolean(o, 'emailVerified');
  const password = passwordOf(o);
  const requiredActions = optStringArray(o, 'requiredActions');
  const groups = optStringArray(o, 'groups');
  return {
    username,
    ...(fromAttributes.attributes !== undefined ? { attributes: fromAttributes.attributes } : {}),
    ...(groups !== undefined && groups.length > 0 ? { groups } : {}),
    ...(email ? { email } : {}),
    ...(firstName ? { firstName } : {}),
    ...(lastName ? { lastName } : {}),
    ...(emailVerified !== undefined ? { emailVerified } : {}),
    enabled: optBoolean(o, 'enabled') ?? false,
    ...(password !== undefined ? { password } : {}),
    ...(requiredActions !== undefined ? { requiredActions } : {}),
  };
}

/** A PUT body: fields absent stay as they are (Keycloak merges the representation into the user). */
export function readUserUpdate(body: unknown): {
  username?: string;
  password?: PasswordCredential;
  changes: { email?: string | null; firstName?: string | null; lastName?: string | null; emailVerified?: boolean; enabled?: boolean; requiredActions?: string[]; attributes?: UserAttributes };
} {
  const o = asObject(body ?? {}, 'user');
  const username = optString(o, 'username');
  const email = optString(o, 'email');
  const enabled = optBoolean(o, 'enabled');
  const emailVerified = optBoolean(o, 'emailVerified');
  const fromAttributes = attributesOf(o);
  const names: { firstName?: string | null; lastName?: string | null } = {};
  for (const key of ['firstName', 'lastName'] as const) {
    const v = optString(o, key) ?? fromAttributes[key];
    if (o[key] !== undefined || v !== undefined) names[key] = v === undefined || v === '' ? null : v;
  }
  // Keycloak: a list replaces the user's required actions ([] clears them); absent leaves them.
  const requiredActions = optStringArray(o, 'requiredActions');
  const password = passwordOf(o);
  return {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    changes: {
      ...(o.email !== undefined ? { email: email === undefined || email === '' ? null : email } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
      ...(emailVerified !== undefined ? { emailVerified } : {}),
      ...(requiredActions !== undefined ? { requiredActions } : {}),
      // Keycloak 26 (UserResource.updateUser): present, the set replaces the user's ({} clears it); absent, they stay.
      ...(fromAttributes.attributes !== undefined ? { attributes: fromAttributes.attributes } : {}),
      ...names,
    },
  };
}

export function toConsentRepresentation(c: ConsentSummary): { clientId: string; grantedClientScopes: string[]; createdDate: number; lastUpdatedDate: number } {
  return { clientId: c.clientId, grantedClientScopes: c.scopes, createdDate: c.createdAt * 1000, lastUpdatedDate: c.lastUpdatedAt * 1000 };
}

/** Keycloak's brute-force status of a user: lastFailure in milliseconds; the address is not kept per user. */
export function toBruteForceRepresentation(s: BruteForceStatus): { numFailures: number; disabled: boolean; lastIPFailure: string; lastFailure: number } {
  return { numFailures: s.numFailures, disabled: s.disabled, lastIPFailure: 'n/a', lastFailure: s.lastFailure * 1000 };
}
