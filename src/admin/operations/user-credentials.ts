import crypto from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { OtpAlgorithm, OtpCredential, User, WebAuthnCredential } from '../../storage/types.js';
import { removeWebAuthn } from './webauthn.js';
import { NotFound, ValidationError } from '../validation.js';
import { cliActor, now, recordAdminEvent, type Actor } from './common.js';
import { sortableId } from '../../crypto/random.js';
import { removeOtp } from './otp.js';
import { requireUser } from './users.js';
import { providerEnabled } from '../../oauth/ldap/federation.js';
import { hasPassword } from '../../crypto/passwords.js';

/**
 * A user's credentials as administrators see and change them (Keycloak's UserResource credentials):
 * the password (when the user has one), and the TOTP authenticators, listed, renamed and removed.
 * Never a key: only labels, dates and settings leave this module.
 */

/** An authenticator without its key. */
export interface OtpSummary {
  id: string;
  label: string | null;
  algorithm: OtpAlgorithm;
  digits: number;
  period: number;
  /** Seconds since the epoch. */
  createdAt: number;
}

/** A security key without anything secret (it has nothing secret: its public key and counter). */
export interface WebAuthnSummary {
  id: string;
  label: string | null;
  /** Base64url of the raw credential id. */
  credentialId: string;
  /** Base64 of the COSE public key. */
  publicKey: string;
  alg: number;
  aaguid: string;
  signCount: number;
  attestationFormat: string;
  transports: string[];
  createdAt: number;
  /** Keycloak's webauthn-passwordless (a passkey that signs in alone), else webauthn (a second factor). */
  passwordless: boolean;
}

export function webauthnSummary(c: WebAuthnCredential): WebAuthnSummary {
  return { id: c.id, label: c.label, credentialId: c.credentialId.toString('base64url'), publicKey: c.publicKey.toString('base64'), alg: c.alg, aaguid: c.aaguid, signCount: c.signCount, attestationFormat: c.attestationFormat, transports: c.transports, createdAt: c.createdAt, passwordless: c.passwordless };
}

export interface UserCredentials {
  /** Absent for a user without a password (see hasPassword). */
  password?: { id: string; createdAt: number };
  otp: OtpSummary[];
  /** Security keys (Keycloak's webauthn credentials), oldest first. */
  webauthn: WebAuthnSummary[];
  /** The user's recovery codes (made on their account page), shown as one credential, as Keycloak does. */
  recoveryCodes?: { id: string; createdAt: number; total: number; remaining: number };
}

export function otpSummary(c: OtpCredential): OtpSummary {
  return { id: c.id, label: c.label, algorithm: c.algorithm, digits: c.digits, period: c.period, createdAt: c.createdAt };
}

/**
 * The id the password credential is shown under. Realmgate keeps the password hash on the user, not as
 * a credential row, so the id is derived from the user's: the same on every call and every node, and
 * never the id of an authenticator (those are random UUIDs; this one is a name-based, version 5 shape).
 */
export function passwordCredentialId(userId: string): string {
  const h = crypto.createHash('sha256').update(`realmgate password credential\0${userId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The id the recovery codes are shown under (derived, as the password's). */
export function recoveryCodesCredentialId(userId: string): string {
  return passwordCredentialId(`recovery codes\0${userId}`);
}

/** Keycloak's rule for a device name (its userLabel): at most 255 characters, no control characters; blank: none. */
export function checkOtpLabel(label: string): string | null {
  const trimmed = label.trim();
  if (trimmed.length > 255) throw new ValidationError('the label must have at most 255 characters');
  if (/[\x00-\x1f\x7f]/.test(trimmed)) throw new ValidationError('the label must not contain control characters');
  return trimmed === '' ? null : trimmed;
}

/** The password (when the user has one, dated when it was set) and the authenticators, oldest first. */
export async function userCredentials(store: Store, input: { realmId: string; user: string }): Promise<UserCredentials> {
  const user = await requireUser(store, input.realmId, input.user);
  const codes = await store.recoveryCodes.summary(user.id);
  return {
    ...(hasPassword(user.passwordHash) ? { password: { id: passwordCredentialId(user.id), createdAt: user.passwordChangedAt } } : {}),
    otp: (await store.otp.list(user.id)).map(otpSummary),
    webauthn: (await store.webauthn.list(user.id)).map(webauthnSummary),
    ...(codes ? { recoveryCodes: { id: recoveryCodesCredentialId(user.id), ...codes } } : {}),
  };
}

/** The users of `userIds` who have an authenticator (one query, for a listing). */
export async function usersWithOtp(store: Store, userIds: readonly string[]): Promise<Set<string>> {
  return store.userAdmin.withOtp(userIds);
}

/** One authenticator of the user, by id, else 404 (the password: 400, it is not one). */
async function requireOtp(store: Store, user: User, credentialId: string, doing: string): Promise<OtpSummary> {
  if (credentialId === passwordCredentialId(user.id)) {
    throw new ValidationError(`the password credential cannot be ${doing}: reset the password instead`);
  }
  const found = (await store.otp.list(user.id)).find((c) => c.id === credentialId);
  if (!found) throw new NotFound('Credential not found');
  return otpSummary(found);
}

/** Removes one authenticator (Keycloak's DELETE /users/{id}/credentials/{credentialId}); audited twice: an admin event, and REMOVE_TOTP for the user. */
export async function removeUserCredential(store: Store, input: { realmId: string; user: string; credentialId: string }, actor: Actor = cliActor()): Promise<OtpSummary> {
  const user = await requireUser(store, input.realmId, input.user);
  const otp = await requireOtp(store, user, input.credentialId, 'removed');
  if (!(await removeOtp(store, user, otp.id, { ...(actor.ip ? { ip: actor.ip } : {}), by: `an administrator (${actor.via}${actor.username ? ` ${actor.username}` : ''})` }))) throw new NotFound('Credential not found');
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/credentials/${otp.id}`, representation: { type: 'otp', userLabel: otp.label } });
  return otp;
}

/**
 * Removes a credential by Keycloak's DELETE: the user's recovery codes when the id is theirs (all of them:
 * the user can make new ones on their account page), else an authenticator (removeUserCredential).
 */
export async function removeAnyUserCredential(store: Store, input: { realmId: string; user: string; credentialId: string }, actor: Actor = cliActor()): Promise<void> {
  const user = await requireUser(store, input.realmId, input.user);
  const key = (await store.webauthn.list(user.id)).find((k) => k.id === input.credentialId);
  if (key) {
    await removeUserWebAuthn(store, user, key, actor);
    return;
  }
  if (input.credentialId !== recoveryCodesCredentialId(user.id)) {
    await removeUserCredential(store, input, actor);
    return;
  }
  if (!(await store.recoveryCodes.summary(user.id))) throw new NotFound('Credential not found');
  await store.recoveryCodes.deleteAll(user.id);
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type: 'REMOVE_TOTP', outcome: 'success', userId: user.id, username: user.username, ip: actor.ip ?? null, reason: `recovery codes removed by an administrator (${actor.via}${actor.username ? ` ${actor.username}` : ''})` });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/credentials/${input.credentialId}`, representation: { type: 'recovery-authn-codes' } });
}

/** Removes a security key; audited twice: an admin event, and REMOVE_CREDENTIAL (credential_type webauthn) for the user. */
export async function removeUserWebAuthn(store: Store, user: User, key: Pick<WebAuthnCredential, 'id' | 'label' | 'passwordless'>, actor: Actor = cliActor()): Promise<void> {
  if (!(await removeWebAuthn(store, user, key.id, { ...(actor.ip ? { ip: actor.ip } : {}), by: `an administrator (${actor.via}${actor.username ? ` ${actor.username}` : ''})` }))) throw new NotFound('Credential not found');
  await recordAdminEvent(store, actor, { realmId: user.realmId, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/credentials/${key.id}`, representation: { type: key.passwordless ? 'webauthn-passwordless' : 'webauthn', userLabel: key.label } });
}

/**
 * The security keys a reference names: its id, else those labelled so (exactly); a label two share is
 * refused (give the id), as for authenticators.
 */
export async function findUserWebAuthn(store: Store, input: { realmId: string; user: string; ref: string }): Promise<WebAuthnSummary> {
  const user = await requireUser(store, input.realmId, input.user);
  const all = (await store.webauthn.list(user.id)).map(webauthnSummary);
  const byId = all.find((c) => c.id === input.ref);
  if (byId) return byId;
  const byLabel = all.filter((c) => c.label === input.ref);
  if (byLabel.length > 1) throw new ValidationError(`${byLabel.length} security keys of ${user.username} are labelled ${JSON.stringify(input.ref)}: give the id`);
  if (byLabel.length === 0) throw new NotFound(`user ${user.username} has no security key with the id or label ${JSON.stringify(input.ref)}`);
  return byLabel[0]!;
}

/** Renames an authenticator (Keycloak's PUT .../credentials/{credentialId}/userLabel); a blank label removes it. */
export async function renameUserCredential(store: Store, input: { realmId: string; user: string; credentialId: string; label: string }, actor: Actor = cliActor()): Promise<{ id: string; label: string | null }> {
  const user = await requireUser(store, input.realmId, input.user);
  const label = checkOtpLabel(input.label);
  const key = (await store.webauthn.list(user.id)).find((k) => k.id === input.credentialId);
  if (key) {
    if (!(await store.webauthn.rename(user.id, key.id, label))) throw new NotFound('Credential not found');
    await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${user.id}/credentials/${key.id}/userLabel`, representation: { userLabel: label } });
    return { id: key.id, label };
  }
  const otp = await requireOtp(store, user, input.credentialId, 'renamed');
  if (!(await store.otp.rename(user.id, otp.id, label))) throw new NotFound('Credential not found');
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${user.id}/credentials/${otp.id}/userLabel`, representation: { userLabel: label } });
  return { ...otp, label };
}

/**
 * The authenticators a reference names: its id, else those labelled so (exactly). A label two share is
 * refused (give the id): removing the wrong one would lock a user out of a device they still use.
 */
export async function findUserOtp(store: Store, input: { realmId: string; user: string; ref: string }): Promise<OtpSummary> {
  const user = await requireUser(store, input.realmId, input.user);
  const all = (await store.otp.list(user.id)).map(otpSummary);
  const byId = all.find((c) => c.id === input.ref);
  if (byId) return byId;
  const byLabel = all.filter((c) => c.label === input.ref);
  if (byLabel.length > 1) throw new ValidationError(`${byLabel.length} authenticators of ${user.username} are labelled ${JSON.stringify(input.ref)}: give the id`);
  if (byLabel.length === 0) throw new NotFound(`user ${user.username} has no authenticator with the id or label ${JSON.stringify(input.ref)}`);
  return byLabel[0]!;
}

/** Removes every authenticator of the user, each audited as one removal; returns those removed. */
export async function removeAllUserOtp(store: Store, input: { realmId: string; user: string }, actor: Actor = cliActor()): Promise<OtpSummary[]> {
  const user = await requireUser(store, input.realmId, input.user);
  const removed: OtpSummary[] = [];
  for (const c of await store.otp.list(user.id)) removed.push(await removeUserCredential(store, { realmId: input.realmId, user: user.id, credentialId: c.id }, actor));
  return removed;
}

/**
 * Keycloak's configured-user-storage-credential-types: the credential types a user storage provider
 * checks for this user instead of Realmgate: `password` for a user of an enabled LDAP provider (every
 * sign-in binds to the directory, src/oauth/ldap/federation.ts), none for anyone else.
 */
export async function userStorageCredentialTypes(store: Store, input: { realmId: string; user: string }): Promise<string[]> {
  const user = await requireUser(store, input.realmId, input.user);
  if (!user.federationLink) return [];
  const p = await store.userStorage.get(user.realmId, user.federationLink);
  return p && providerEnabled(p) ? ['password'] : [];
}
