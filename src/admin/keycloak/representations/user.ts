import type { User } from '../../../storage/types.js';
import type { BruteForceStatus, ConsentSummary, UserUpdate } from '../../operations/users.js';
import { ValidationError } from '../../validation.js';
import { asObject, optArray, optBoolean, optString, optStringArray } from '../read-json.js';

/** Keycloak 26's UserRepresentation (the fields Realmgate keeps). Times are milliseconds, as in Keycloak. */
export interface UserRepresentation {
  id: string;
  username: string;
  email?: string;
  emailVerified: boolean;
  enabled: boolean;
  createdTimestamp: number;
  totp?: boolean;
  disableableCredentialTypes?: string[];
  requiredActions?: string[];
  notBefore?: number;
  access?: Record<string, boolean>;
}

export function toUserRepresentation(u: User, opts: { brief?: boolean; canManage?: boolean } = {}): UserRepresentation {
  const base: UserRepresentation = {
    id: u.id,
    username: u.username,
    ...(u.email ? { email: u.email } : {}),
    emailVerified: false,
    enabled: u.enabled,
    createdTimestamp: u.createdAt * 1000,
  };
  if (opts.brief) return base;
  const manage = opts.canManage ?? true;
  return {
    ...base,
    totp: false,
    disableableCredentialTypes: [],
    requiredActions: [],
    notBefore: 0,
    access: { manageGroupMembership: manage, view: true, mapRoles: manage, impersonate: false, manage },
  };
}

export interface UserCreateInput {
  username: string;
  email?: string;
  enabled: boolean;
  /** The password of a `credentials` entry of type "password", if any. */
  password?: string;
  /** Keycloak's `temporary` flag: Realmgate has no required actions, so a temporary password is refused. */
  organizations?: string[];
}

function passwordOf(o: Record<string, unknown>): string | undefined {
  const creds = optArray(o, 'credentials');
  if (creds === undefined || creds.length === 0) return undefined;
  if (creds.length > 1) throw new ValidationError('give at most one credential');
  return readPasswordCredential(creds[0]);
}

/** A CredentialRepresentation of type password: `{type: "password", value, temporary}`. */
export function readPasswordCredential(body: unknown): string {
  const c = asObject(body, 'credential');
  const type = optString(c, 'type') ?? 'password';
  if (type !== 'password') throw new ValidationError('only password credentials are supported');
  const value = optString(c, 'value');
  if (value === undefined) throw new ValidationError('the credential has no value');
  // Keycloak makes the user change a temporary password at the next login; Realmgate has no such
  // required action, so accepting it would silently give the user a permanent password.
  if (optBoolean(c, 'temporary') === true) throw new ValidationError('temporary passwords are not supported: send "temporary": false');
  return value;
}

export function readUserCreate(body: unknown): UserCreateInput {
  const o = asObject(body, 'user');
  const username = optString(o, 'username');
  if (username === undefined) throw new ValidationError('username is required');
  const email = optString(o, 'email');
  const password = passwordOf(o);
  return { username, ...(email ? { email } : {}), enabled: optBoolean(o, 'enabled') ?? false, ...(password !== undefined ? { password } : {}) };
}

/** A PUT body: fields absent stay as they are (Keycloak merges the representation into the user). */
export function readUserUpdate(body: unknown, realmId: string, userId: string): UserUpdate & { password?: string } {
  const o = asObject(body, 'user');
  const username = optString(o, 'username');
  const email = optString(o, 'email');
  const enabled = optBoolean(o, 'enabled');
  optStringArray(o, 'requiredActions');
  const password = passwordOf(o);
  return {
    realmId,
    user: userId,
    ...(username !== undefined ? { username } : {}),
    ...(o.email !== undefined ? { email: email === undefined || email === '' ? null : email } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
    ...(password !== undefined ? { password } : {}),
  };
}

export function toConsentRepresentation(c: ConsentSummary): { clientId: string; grantedClientScopes: string[]; createdDate: number; lastUpdatedDate: number } {
  return { clientId: c.clientId, grantedClientScopes: c.scopes, createdDate: c.createdAt * 1000, lastUpdatedDate: c.lastUpdatedAt * 1000 };
}

/** Keycloak's brute-force status of a user: lastFailure in milliseconds; the address is not kept per user. */
export function toBruteForceRepresentation(s: BruteForceStatus): { numFailures: number; disabled: boolean; lastIPFailure: string; lastFailure: number } {
  return { numFailures: s.numFailures, disabled: s.disabled, lastIPFailure: 'n/a', lastFailure: s.lastFailure * 1000 };
}
