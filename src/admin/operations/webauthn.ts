import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/config.js';
import type { Store } from '../../storage/store.js';
import { ConflictError, type Realm, type User, type WebAuthnCredential, type WebAuthnPolicy } from '../../storage/types.js';
import { randomToken, sortableId, tokenHash } from '../../crypto/random.js';
import { COSE_ALGORITHMS } from '../../crypto/cose-key.js';
import { verifyAssertion, verifyRegistration, WebAuthnError, type Expectations } from '../../oauth/webauthn.js';
import { now } from './common.js';

/**
 * WebAuthn security keys as a second factor (Keycloak's webauthn credentials, its webauthn-register
 * required action): the options a page hands to navigator.credentials, registering a key, checking an
 * assertion at sign-in, listing and removing keys. The checks themselves are src/oauth/webauthn.ts.
 */

/** At most this many keys per user (Keycloak sets no number; a form cannot add without bound). */
export const MAX_WEBAUTHN_PER_USER = 10;

/** Seconds a challenge stays usable when the policy sets no createTimeout. */
const CHALLENGE_SECONDS = 300;

/** create: a registration; get: a second factor; passkey: a passwordless sign-in (the login page's). */
export type ChallengePurpose = 'create' | 'get' | 'passkey';

/**
 * The policy of two-factor keys (webAuthnPolicy*) or of passwordless ones (webAuthnPolicyPasswordless*).
 * A passwordless key is the only factor: it must always verify its user (PIN, biometrics), whatever the
 * policy says, as Keycloak's passwordless authenticator checks the UV flag.
 */
export function policyOf(realm: Realm, passwordless = false): WebAuthnPolicy {
  return passwordless ? { ...realm.webAuthnPasswordlessPolicy, userVerificationRequirement: 'required' } : realm.webAuthnPolicy;
}

/** The RP ID: the policy's rpId, else the host of AUTH_URL (never the request's Host). */
export function rpIdOf(config: Pick<Config, 'authUrl'>, realm: Realm, passwordless = false): string {
  const p = policyOf(realm, passwordless);
  return p.rpId !== '' ? p.rpId : new URL(config.authUrl).hostname;
}

/** The origins clientDataJSON may name: AUTH_URL's, and the policy's extraOrigins. */
export function originsOf(config: Pick<Config, 'authUrl'>, realm: Realm, passwordless = false): string[] {
  return [new URL(config.authUrl).origin, ...policyOf(realm, passwordless).extraOrigins];
}

/** The user handle (WebAuthn 5.4.3 user.id): the user's id, as Keycloak sets it. */
export const userHandle = (user: Pick<User, 'id'>): Buffer => Buffer.from(user.id, 'utf8');

const challengeLifetime = (realm: Realm): number => {
  const timeout = Math.max(realm.webAuthnPolicy.createTimeout, realm.webAuthnPasswordlessPolicy.createTimeout);
  return timeout > 0 ? timeout + 30 : CHALLENGE_SECONDS;
};

/**
 * A new random challenge (32 bytes) for `boundTo` (an interaction, a browser session): only its SHA-256
 * is stored, single use, short-lived; a new one replaces the earlier one of the same binding and purpose.
 */
export async function issueChallenge(store: Store, realm: Realm, boundTo: string, purpose: ChallengePurpose, nowSeconds = now()): Promise<string> {
  const challenge = randomToken(32);
  await store.webauthn.putChallenge({ hash: tokenHash(challenge), realmId: realm.id, boundTo, purpose, expiresAt: nowSeconds + challengeLifetime(realm) });
  return challenge;
}

function expectations(store: Store, config: Pick<Config, 'authUrl'>, realm: Realm, boundTo: string, purpose: ChallengePurpose, nowSeconds: number, passwordless = false): Expectations {
  return {
    origins: originsOf(config, realm, passwordless),
    rpId: rpIdOf(config, realm, passwordless),
    userVerification: policyOf(realm, passwordless).userVerificationRequirement,
    consumeChallenge: (challenge) => store.webauthn.consumeChallenge({ hash: tokenHash(challenge), boundTo, purpose, now: nowSeconds }),
  };
}

const descriptor = (c: WebAuthnCredential): { type: 'public-key'; id: string; transports?: string[] } => ({ type: 'public-key', id: c.credentialId.toString('base64url'), ...(c.transports.length > 0 ? { transports: c.transports } : {}) });

const policyValue = (v: string): string | undefined => (v === 'not specified' || v === '' ? undefined : v);

/** PublicKeyCredentialCreationOptions (WebAuthn 5.4) as JSON, binary members base64url (the page's script decodes them). */
export function creationOptions(config: Pick<Config, 'authUrl'>, realm: Realm, user: User, challenge: string, existing: readonly WebAuthnCredential[], passwordless = false): Record<string, unknown> {
  const p = policyOf(realm, passwordless);
  // A passwordless key must be discoverable (a resident key): the sign-in names no user.
  const resident = passwordless || p.requireResidentKey === 'Yes' ? { residentKey: 'required', requireResidentKey: true } : p.requireResidentKey === 'No' ? { residentKey: 'discouraged', requireResidentKey: false } : {};
  const attachment = policyValue(p.authenticatorAttachment);
  const uv = policyValue(p.userVerificationRequirement);
  const attestation = policyValue(p.attestationConveyancePreference);
  return {
    rp: { id: rpIdOf(config, realm, passwordless), name: p.rpEntityName || realm.id },
    user: { id: userHandle(user).toString('base64url'), name: user.username, displayName: [user.firstName, user.lastName].filter(Boolean).join(' ') || user.username },
    challenge,
    pubKeyCredParams: p.signatureAlgorithms.map((a) => ({ type: 'public-key', alg: COSE_ALGORITHMS[a as keyof typeof COSE_ALGORITHMS] })).filter((x) => x.alg !== undefined),
    ...(p.createTimeout > 0 ? { timeout: p.createTimeout * 1000 } : {}),
    // 5.4 excludeCredentials: the same authenticator is not registered twice for the user.
    excludeCredentials: existing.map(descriptor),
    authenticatorSelection: { ...(attachment ? { authenticatorAttachment: attachment } : {}), ...resident, ...(uv ? { userVerification: uv } : {}) },
    ...(attestation ? { attestation } : {}),
  };
}

/**
 * PublicKeyCredentialRequestOptions (WebAuthn 5.5): allowCredentials are the user's keys; for a
 * passwordless sign-in none (the authenticator offers its discoverable credentials for the RP ID).
 */
export function requestOptions(config: Pick<Config, 'authUrl'>, realm: Realm, challenge: string, keys: readonly WebAuthnCredential[], passwordless = false): Record<string, unknown> {
  const p = policyOf(realm, passwordless);
  const uv = policyValue(p.userVerificationRequirement);
  return {
    challenge,
    rpId: rpIdOf(config, realm, passwordless),
    allowCredentials: passwordless ? [] : keys.map(descriptor),
    ...(uv ? { userVerification: uv } : {}),
    ...(p.createTimeout > 0 ? { timeout: p.createTimeout * 1000 } : {}),
  };
}

/** A base64url field of the form (what the page's script posts), bounded; undefined when absent or malformed. */
export function b64uField(v: string | undefined, max = 16_384): Buffer | undefined {
  if (v === undefined || v.length === 0 || v.length > max || !/^[A-Za-z0-9_-]+$/.test(v)) return undefined;
  return Buffer.from(v, 'base64url');
}

/** An optional base64url field: undefined when absent or empty, null when malformed (refused, never taken as absent). */
export function optionalB64u(v: string | undefined, max: number): Buffer | null | undefined {
  if (v === undefined || v === '') return undefined;
  return b64uField(v, max) ?? null;
}

/** navigator.credentials.get()'s response as the pages' script posts it (form fields, base64url), each bounded. */
export function assertionFields(field: (name: string) => string | undefined): { credentialId: Buffer | undefined; clientDataJSON: Buffer | undefined; authenticatorData: Buffer | undefined; signature: Buffer | undefined; userHandle: Buffer | null | undefined } {
  return {
    credentialId: b64uField(field('credential_id'), 1400),
    clientDataJSON: b64uField(field('client_data_json')),
    authenticatorData: b64uField(field('authenticator_data')),
    signature: b64uField(field('signature'), 2048),
    userHandle: optionalB64u(field('user_handle'), 128),
  };
}

const TRANSPORTS = new Set(['usb', 'nfc', 'ble', 'internal', 'hybrid', 'smart-card']);

/** The transports the browser reported (getTransports()), as a comma-separated field: known names only. */
export function transportsField(v: string | undefined): string[] {
  return [...new Set((v ?? '').split(',').map((t) => t.trim()).filter((t) => TRANSPORTS.has(t)))].slice(0, 6);
}

async function event(store: Store, user: User, type: 'UPDATE_CREDENTIAL' | 'REMOVE_CREDENTIAL' | 'LOGIN_ERROR', reason: string, o: { ip?: string | undefined; clientId?: string | undefined }, outcome: 'success' | 'failure' = 'success'): Promise<void> {
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type, outcome, userId: user.id, username: user.username, clientId: o.clientId ?? null, ip: o.ip ?? null, reason });
}

/** Keycloak's rule for a device name (its userLabel): at most 255 characters, no control characters. */
export function checkKeyLabel(label: string): string | undefined {
  const l = label.trim();
  if (l.length > 255 || /[\x00-\x1f\x7f]/.test(l)) return 'The name must have at most 255 characters and no control characters.';
  return undefined;
}

/**
 * Registers a security key from navigator.credentials.create()'s response (WebAuthn 7.1), bound to the
 * challenge given to `boundTo`, and ends the webauthn-register required action. Returns why it is
 * refused, in words for the page.
 */
export async function registerWebAuthn(
  store: Store,
  config: Pick<Config, 'authUrl'>,
  input: { realm: Realm; user: User; boundTo: string; clientDataJSON?: Buffer | undefined; attestationObject?: Buffer | undefined; transports: string[]; label: string; ip?: string; clientId?: string; nowSeconds?: number; passwordless?: boolean },
): Promise<string | undefined> {
  const passwordless = input.passwordless === true;
  const action = passwordless ? 'webauthn-register-passwordless' : 'webauthn-register';
  const t = input.nowSeconds ?? now();
  if (!input.clientDataJSON || !input.attestationObject) return 'Your browser sent no security key. Try again.';
  const badLabel = checkKeyLabel(input.label);
  if (badLabel) return badLabel;
  const existing = await store.webauthn.list(input.user.id);
  if (existing.length >= MAX_WEBAUTHN_PER_USER) return `You have ${MAX_WEBAUTHN_PER_USER} security keys already: remove one first.`;
  const p = policyOf(input.realm, passwordless);
  let created;
  try {
    created = await verifyRegistration(
      { clientDataJSON: input.clientDataJSON, attestationObject: input.attestationObject },
      {
        ...expectations(store, config, input.realm, input.boundTo, 'create', t, passwordless),
        algorithms: p.signatureAlgorithms.map((a) => COSE_ALGORITHMS[a as keyof typeof COSE_ALGORITHMS]).filter((a) => a !== undefined),
        attestation: p.attestationConveyancePreference,
        acceptableAaguids: p.acceptableAaguids,
      },
    );
  } catch (err) {
    if (!(err instanceof WebAuthnError)) throw err;
    await event(store, input.user, 'LOGIN_ERROR', `security key not registered: ${err.detail}`, input, 'failure');
    return err.message;
  }
  if (existing.some((c) => c.credentialId.equals(created.credentialId))) return 'This security key is registered already.';
  const label = input.label.trim();
  const credential: WebAuthnCredential = {
    id: randomUUID(),
    realmId: input.user.realmId,
    userId: input.user.id,
    label: label === '' ? null : label,
    credentialId: created.credentialId,
    publicKey: created.publicKeyCose,
    alg: created.alg,
    aaguid: created.aaguid,
    signCount: created.signCount,
    attestationFormat: created.attestationFormat,
    transports: input.transports,
    createdAt: t,
    passwordless,
  };
  try {
    await store.webauthn.create(credential);
  } catch (err) {
    if (err instanceof ConflictError) return 'This security key is registered already.';
    throw err;
  }
  if (input.user.requiredActions.includes(action)) await store.users.update(input.user.id, { requiredActions: input.user.requiredActions.filter((a) => a !== action) });
  await event(store, input.user, 'UPDATE_CREDENTIAL', `credential_type ${passwordless ? 'webauthn-passwordless' : 'webauthn'}: security key ${credential.label ?? credential.id} registered`, input);
  return undefined;
}

export type AssertionOutcome = { ok: true; credential: WebAuthnCredential } | { ok: false; message: string; detail: string; cloned: boolean };

/**
 * Checks navigator.credentials.get()'s response (WebAuthn 7.2) against the user's keys (allowCredentials:
 * a key of another user, or unknown, is refused) and the challenge given to `boundTo`; on success the
 * key's counter moves on (once: of two assertions with one counter, one wins).
 */
export async function checkWebAuthnAssertion(
  store: Store,
  config: Pick<Config, 'authUrl'>,
  input: { realm: Realm; user: User; boundTo: string; credentialId?: Buffer | undefined; clientDataJSON?: Buffer | undefined; authenticatorData?: Buffer | undefined; signature?: Buffer | undefined; userHandle?: Buffer | null | undefined; nowSeconds?: number },
): Promise<AssertionOutcome> {
  const t = input.nowSeconds ?? now();
  const e = expectations(store, config, input.realm, input.boundTo, 'get', t);
  if (!input.credentialId || !input.clientDataJSON || !input.authenticatorData || !input.signature || input.userHandle === null) {
    // Whatever was sent, the challenge is spent: a second try gets a new one.
    return { ok: false, message: 'Your browser sent no security key response. Try again.', detail: 'incomplete assertion', cloned: false };
  }
  // 7.2 steps 5-6: the credential is one of the user's two-factor keys (allowCredentials).
  const keys = await store.webauthn.list(input.user.id, 'two-factor');
  const credential = keys.find((k) => k.credentialId.equals(input.credentialId!));
  if (!credential) {
    return { ok: false, message: 'This security key is not registered for your account.', detail: 'credential id not among the user\'s keys', cloned: false };
  }
  try {
    const { signCount } = await verifyAssertion(
      { clientDataJSON: input.clientDataJSON, authenticatorData: input.authenticatorData, signature: input.signature, userHandle: input.userHandle ?? undefined },
      { publicKeyCose: credential.publicKey, storedSignCount: credential.signCount, expectedUserHandle: userHandle(input.user) },
      e,
    );
    if (!(await store.webauthn.advanceCounter(credential.id, credential.signCount, signCount))) {
      return { ok: false, message: 'Your security key was not accepted. Try again.', detail: 'the signature counter moved meanwhile (a concurrent assertion)', cloned: signCount !== 0 };
    }
    return { ok: true, credential: { ...credential, signCount } };
  } catch (err) {
    if (!(err instanceof WebAuthnError)) throw err;
    return { ok: false, message: err.message, detail: err.detail, cloned: err.cloned };
  }
}

/**
 * The user id a userHandle may name: Realmgate's handles are a user id's UTF-8 bytes (at most 64), and no
 * user id holds invalid UTF-8 or a control character. Anything else names nobody and is never looked up
 * (PostgreSQL refuses a NUL in a query: a handle of one zero byte was a 500, found by the fuzz, 2026-11-29).
 */
function handleUserId(handle: Buffer | null | undefined): string | undefined {
  if (!handle || handle.length === 0 || handle.length > 64) return undefined;
  let id: string;
  try {
    id = new TextDecoder('utf-8', { fatal: true }).decode(handle);
  } catch {
    return undefined;
  }
  return /[\x00-\x1f\x7f]/.test(id) ? undefined : id;
}

/** The enabled user of the realm whom `userHandle` names, when `credentialId` is one of their passkeys. */
export async function passkeyOwner(store: Store, realm: Realm, handle: Buffer | null | undefined, credentialId: Buffer | undefined): Promise<User | undefined> {
  const id = handleUserId(handle);
  if (id === undefined || !credentialId) return undefined;
  const user = await store.users.get(id);
  if (!user || user.realmId !== realm.id || !user.enabled) return undefined;
  const keys = await store.webauthn.list(user.id, 'passwordless');
  return keys.some((k) => k.credentialId.equals(credentialId)) ? user : undefined;
}

/**
 * A passwordless sign-in (Keycloak's webauthn-passwordless): no user was named, so the userHandle the
 * discoverable credential returns names them (7.2 step 6: required here), and the credential must be one
 * of that user's passwordless keys; user verification is required. `user` is undefined when nobody of the
 * realm is named (nothing to count a failure against).
 */
export async function checkPasswordlessAssertion(
  store: Store,
  config: Pick<Config, 'authUrl'>,
  input: { realm: Realm; boundTo: string; credentialId?: Buffer | undefined; clientDataJSON?: Buffer | undefined; authenticatorData?: Buffer | undefined; signature?: Buffer | undefined; userHandle?: Buffer | null | undefined; nowSeconds?: number },
): Promise<{ user: User | undefined; outcome: AssertionOutcome }> {
  const refused = (detail: string, user?: User): { user: User | undefined; outcome: AssertionOutcome } => ({ user, outcome: { ok: false, message: 'This passkey was not accepted. Try again, or sign in with your password.', detail, cloned: false } });
  if (!input.userHandle || input.userHandle.length === 0) return refused('no userHandle (a passkey returns one)');
  const id = handleUserId(input.userHandle);
  if (id === undefined) return refused('userHandle names no enabled user of the realm');
  const user = await store.users.get(id);
  if (!user || user.realmId !== input.realm.id || !user.enabled) return refused('userHandle names no enabled user of the realm');
  const key = (await store.webauthn.list(user.id, 'passwordless')).find((k) => input.credentialId && k.credentialId.equals(input.credentialId));
  if (!key) return refused('credential id not among the user\'s passwordless keys');
  if (!input.clientDataJSON || !input.authenticatorData || !input.signature) return refused('incomplete assertion', user);
  const t = input.nowSeconds ?? now();
  try {
    const { signCount } = await verifyAssertion(
      { clientDataJSON: input.clientDataJSON, authenticatorData: input.authenticatorData, signature: input.signature, userHandle: input.userHandle },
      { publicKeyCose: key.publicKey, storedSignCount: key.signCount, expectedUserHandle: userHandle(user) },
      expectations(store, config, input.realm, input.boundTo, 'passkey', t, true),
    );
    if (!(await store.webauthn.advanceCounter(key.id, key.signCount, signCount))) return refused('the signature counter moved meanwhile (a concurrent assertion)', user);
    return { user, outcome: { ok: true, credential: { ...key, signCount } } };
  } catch (err) {
    if (!(err instanceof WebAuthnError)) throw err;
    return { user, outcome: { ok: false, message: err.message, detail: err.detail, cloned: err.cloned } };
  }
}

/** Removes one key; false when the user has no such one. Audited as Keycloak's REMOVE_CREDENTIAL (credential_type webauthn). */
export async function removeWebAuthn(store: Store, user: User, id: string, o: { ip?: string; clientId?: string; by?: string } = {}): Promise<boolean> {
  const key = (await store.webauthn.list(user.id)).find((k) => k.id === id);
  if (!key || !(await store.webauthn.delete(user.id, id))) return false;
  await event(store, user, 'REMOVE_CREDENTIAL', `credential_type ${key.passwordless ? 'webauthn-passwordless' : 'webauthn'}: security key ${id} removed${o.by ? ` by ${o.by}` : ''}`, o);
  return true;
}
