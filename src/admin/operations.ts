import type { Store } from '../storage/store.js';
import type { Client, Organization, Realm } from '../storage/types.js';
import { REALM_DEFAULTS, CODE_LIFETIME_RANGE } from '../config/defaults.js';
import { DEFAULT_SCOPES, type RealmSettings } from '../storage/repos/realms.js';
import { generateSigningKey, isSigningAlg } from '../crypto/keystore.js';
import { hashPassword } from '../crypto/passwords.js';
import { generateClientSecret, hashClientSecret } from '../crypto/client-secrets.js';
import { randomId } from '../crypto/random.js';
import { checkName, checkRedirectUri, parseScopeList, ValidationError } from './validation.js';

/** Administrative operations shared by the CLI and the demo set-up. Each validates its input first. */

function now(): number {
  return Math.floor(Date.now() / 1000);
}

async function requireRealm(store: Store, realmId: string): Promise<Realm> {
  const realm = await store.realms.get(realmId);
  if (!realm) throw new ValidationError(`realm ${realmId} does not exist`);
  return realm;
}

export function checkRealmSettings(s: Partial<RealmSettings>): void {
  const positive = (name: string, v: number | undefined, max: number): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > max)) throw new ValidationError(`${name} must be a whole number of seconds from 1 to ${max}`);
  };
  if (s.codeLifetime !== undefined && (!Number.isInteger(s.codeLifetime) || s.codeLifetime < CODE_LIFETIME_RANGE.min || s.codeLifetime > CODE_LIFETIME_RANGE.max)) {
    throw new ValidationError(`the code lifetime must be from ${CODE_LIFETIME_RANGE.min} to ${CODE_LIFETIME_RANGE.max} seconds`);
  }
  positive('the access token lifetime', s.accessTokenLifetime, 366 * 86_400);
  positive('the refresh idle lifetime', s.refreshIdleLifetime, 5 * 366 * 86_400);
  positive('the refresh chain maximum', s.refreshMaxLifetime, 10 * 366 * 86_400);
  positive('the SSO session lifetime', s.ssoSessionLifetime, 366 * 86_400);
  positive('the number of login failures', s.maxLoginFailures, 1000);
  positive('the lockout time', s.lockoutSeconds, 86_400);
  positive('the longest lockout time', s.maxLockoutSeconds, 30 * 86_400);
  if (s.signingAlg !== undefined && !isSigningAlg(s.signingAlg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
}

export async function createRealm(store: Store, input: { id: string; displayName?: string; settings?: Partial<RealmSettings> }): Promise<Realm> {
  checkName('realm name', input.id);
  const settings: RealmSettings = { ...REALM_DEFAULTS, ...input.settings };
  checkRealmSettings(settings);
  const t = now();
  const realm = await store.realms.create({ id: input.id, displayName: input.displayName ?? null, settings, now: t });
  const alg = isSigningAlg(settings.signingAlg) ? settings.signingAlg : 'RS256';
  await store.keys.insert(await generateSigningKey(realm.id, alg, t));
  return realm;
}

export async function createOrganization(store: Store, input: { realmId: string; alias: string; name?: string }): Promise<Organization> {
  await requireRealm(store, input.realmId);
  checkName('organization alias', input.alias);
  const org: Organization = { id: randomId(), realmId: input.realmId, alias: input.alias, name: input.name ?? input.alias };
  await store.organizations.create({ ...org, now: now() });
  return org;
}

export async function createUser(
  store: Store,
  input: { realmId: string; username: string; password: string; email?: string; orgAliases?: string[] },
): Promise<{ id: string }> {
  await requireRealm(store, input.realmId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,254}$/.test(input.username)) {
    throw new ValidationError("username must be 1-255 letters, digits, '.', '_', '@', '+' or '-'");
  }
  if (input.password.length < 8) throw new ValidationError('the password must have at least 8 characters');
  if (input.password.length > 1024) throw new ValidationError('the password must have at most 1024 characters');
  if (input.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new ValidationError(`${JSON.stringify(input.email)} is not an email address`);
  const orgIds: string[] = [];
  for (const alias of input.orgAliases ?? []) {
    const org = await store.organizations.findByAlias(input.realmId, alias);
    if (!org) throw new ValidationError(`organization ${alias} does not exist in realm ${input.realmId}`);
    orgIds.push(org.id);
  }
  const id = randomId();
  await store.users.create({
    id,
    realmId: input.realmId,
    username: input.username.toLowerCase(),
    email: input.email ?? null,
    passwordHash: await hashPassword(input.password),
    now: now(),
    organizationIds: [...new Set(orgIds)],
  });
  return { id };
}

export async function createClient(
  store: Store,
  input: {
    realmId: string;
    clientId: string;
    redirectUris: string[];
    secret?: string;
    scopes?: string;
    public?: boolean;
    name?: string;
    authMethod?: string;
    postLogoutRedirectUris?: string[];
  },
): Promise<{ client: Client; secret: string | undefined; generated: boolean }> {
  await requireRealm(store, input.realmId);
  // RFC 6749 A.1: client-id = *VSCHAR (%x20-7E).
  if (!/^[\x20-\x7E]{1,255}$/.test(input.clientId) || input.clientId.trim() !== input.clientId) {
    throw new ValidationError('client id must be 1-255 printable ASCII characters, without leading or trailing spaces');
  }
  if (input.redirectUris.length === 0) throw new ValidationError('a client needs at least one --redirect-uri');
  for (const uri of input.redirectUris) checkRedirectUri(uri);
  const realmScopes = new Set((await store.realms.scopes(input.realmId)).map((s) => s.name));
  const scopes = input.scopes !== undefined ? parseScopeList(input.scopes) : DEFAULT_SCOPES.map((s) => s.name);
  for (const s of scopes) if (!realmScopes.has(s)) throw new ValidationError(`scope ${s} is not defined in realm ${input.realmId}`);
  if (input.public && input.secret !== undefined) throw new ValidationError('a public client has no secret: leave out --secret');
  for (const uri of input.postLogoutRedirectUris ?? []) checkRedirectUri(uri);
  const authMethod = input.public ? 'none' : (input.authMethod ?? 'client_secret_basic');
  if (authMethod !== 'none' && authMethod !== 'client_secret_basic' && authMethod !== 'client_secret_post') {
    throw new ValidationError('the authentication method must be client_secret_basic or client_secret_post');
  }
  if (input.public && input.authMethod !== undefined && input.authMethod !== 'none') throw new ValidationError('a public client does not authenticate: leave out --auth-method');
  let secret: string | undefined;
  let generated = false;
  let secretHash: string | null = null;
  if (!input.public) {
    if (input.secret !== undefined) {
      if (input.secret.length === 0 || input.secret.length > 512) throw new ValidationError('the client secret must have 1 to 512 characters');
      secret = input.secret;
    } else {
      secret = generateClientSecret();
      generated = true;
    }
    secretHash = await hashClientSecret(secret, { generated });
  }
  const client: Client = {
    realmId: input.realmId,
    clientId: input.clientId,
    name: input.name ?? null,
    secretHash,
    public: Boolean(input.public),
    enabled: true,
    redirectUris: [...new Set(input.redirectUris)],
    scopes,
    createdAt: now(),
    authMethod,
    postLogoutRedirectUris: [...new Set(input.postLogoutRedirectUris ?? [])],
  };
  await store.clients.create({ ...client, now: client.createdAt });
  return { client, secret, generated };
}

/** Adds a new active signing key; the previous one stays published until its tokens have expired. */
export async function rotateKeys(store: Store, input: { realmId: string; alg?: string }): Promise<{ kid: string; alg: string }> {
  const realm = await requireRealm(store, input.realmId);
  const alg = input.alg ?? realm.signingAlg;
  if (!isSigningAlg(alg)) throw new ValidationError('the signing algorithm must be RS256, ES256 or EdDSA');
  const t = now();
  const key = await generateSigningKey(realm.id, alg, t);
  await store.keys.rotate(key, t);
  if (alg !== realm.signingAlg) await store.realms.update(realm.id, { signingAlg: alg });
  return { kid: key.kid, alg };
}

/** Every token issued before `at` (seconds) is refused from now on; 0 clears the policy. */
export async function revokeBefore(store: Store, input: { realmId: string; at: number }): Promise<void> {
  await requireRealm(store, input.realmId);
  if (!Number.isSafeInteger(input.at) || input.at < 0) throw new ValidationError('the time must be a non-negative number of seconds');
  await store.realms.update(input.realmId, { notBefore: input.at });
}
