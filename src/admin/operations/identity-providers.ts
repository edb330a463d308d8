import { defaultActions } from '../required-actions.js';
import { createHash, randomUUID } from 'node:crypto';
import { randomId, sortableId } from '../../crypto/random.js';
import { hasPassword, NO_PASSWORD_HASH } from '../../crypto/passwords.js';
import { groupsForNewUser } from './groups.js';
import type { Store } from '../../storage/store.js';
import { ConflictError, IDENTITY_PROVIDER_TYPES, type FederatedIdentity, type IdentityProvider, type IdentityProviderType, type RequiredAction, type User } from '../../storage/types.js';
import { openProviderSecret, sealProviderSecret } from '../../crypto/broker-secrets.js';
import { LIMITS, NotFound, USERNAME_RE, ValidationError, checkText, isLoopbackHost } from '../validation.js';
import { now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { applyProviderMappers } from './identity-provider-mappers.js';
import { grantDefaultRole } from './default-role.js';
import { FACEBOOK_FETCHED_FIELDS_RE, isOAuth2Only, MICROSOFT_TENANT_RE, vouchesForEmail, withSocialDefaults } from '../../oauth/social-providers.js';

/**
 * Identity brokering's administration: the realm's OpenID Connect providers (Keycloak's identity
 * providers, providerId oidc or keycloak-oidc, and its social providers google and github) and users' links to accounts at them (federated
 * identities). Every door (admin API, CLI, console, import) goes through these.
 */

/** The provider types (Keycloak's providerId) a door may name, for its own refusal before anything is read or stored. */
export const PROVIDER_TYPES: readonly string[] = IDENTITY_PROVIDER_TYPES;

/** What a door says of a provider (Keycloak's IdentityProviderRepresentation, typed). */
export interface ProviderFields {
  alias?: string;
  providerId?: string;
  displayName?: string | null;
  enabled?: boolean;
  hideOnLogin?: boolean;
  trustEmail?: boolean;
  linkOnly?: boolean;
  organizationId?: string | null;
  /** Keycloak's config map; clientSecret in it is sealed apart ("**********", Keycloak's mask, keeps the stored one). */
  config?: Record<string, string>;
}

/** What Keycloak's admin API shows instead of a stored secret, and takes back as "unchanged". */
export const SECRET_MASK = '**********';

export const SECRET_STAYS = "config.clientSecret must be given again (the CLI: --client-secret-stdin) to move config.tokenUrl to another host: the stored one is sent only to the token endpoint's host it was given for";

/** A URL's origin (scheme, host, port): who receives what is sent to it. A path of the same host (a tenant's, a realm's) is the same receiver. */
function originOf(url: string | undefined): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

const ALIAS_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const MAX_CONFIG_ENTRIES = 100;
const MAX_CONFIG_VALUE = 4096;
const URL_KEYS = ['authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'logoutUrl', 'emailUrl'] as const;
const FLAG_KEYS = ['validateSignature', 'useJwksUrl', 'pkceEnabled', 'disableUserInfo', 'disableNonce', 'loginHint', 'kc.org.broker.redirect.mode.email-matches', 'backchannelSupported', 'hideOnLoginPage'];
export const CLIENT_AUTH_METHODS = ['client_secret_post', 'client_secret_basic'] as const;
/** The config keys a domain of the provider's organization is kept in (Keycloak 26 organizations). */
export const ORG_DOMAIN_KEY = 'kc.org.domain';
export const ORG_REDIRECT_KEY = 'kc.org.broker.redirect.mode.email-matches';
export const ORG_EXCLUDED_KEY = 'kc.org.excluded.domains';

/**
 * An endpoint at the provider: an absolute https URL, or http on a loopback host (RFC 6749 3.2: the token
 * endpoint is reached over TLS; the same rule as Realmgate's own redirect URIs). No user info, no fragment.
 */
export function checkProviderUrl(key: string, value: string): void {
  checkText(`config.${key}`, value, 2048);
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ValidationError(`config.${key} must be an absolute URL`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) throw new ValidationError(`config.${key} must be an https URL (http only on a loopback host)`);
  if (u.username || u.password) throw new ValidationError(`config.${key} must not carry a user name or password`);
  if (u.hash) throw new ValidationError(`config.${key} must not have a fragment`);
}

function checkConfig(config: Record<string, string>): void {
  const entries = Object.entries(config);
  if (entries.length > MAX_CONFIG_ENTRIES) throw new ValidationError(`config may have at most ${MAX_CONFIG_ENTRIES} entries`);
  for (const [k, v] of entries) {
    checkText('a config key', k, 255);
    if (typeof v !== 'string') throw new ValidationError(`config.${k} must be a string`);
    if (v.length > MAX_CONFIG_VALUE) throw new ValidationError(`config.${k} must have at most ${MAX_CONFIG_VALUE} characters`);
  }
  for (const f of FLAG_KEYS) if (config[f] !== undefined && config[f] !== '' && config[f] !== 'true' && config[f] !== 'false') throw new ValidationError(`config.${f} must be "true" or "false"`);
  for (const k of ['authorizationUrl', 'tokenUrl', 'clientId'] as const) if (!config[k]) throw new ValidationError(`an OpenID Connect provider needs config.${k}`);
  for (const k of URL_KEYS) if (config[k]) checkProviderUrl(k, config[k]);
  checkText('config.clientId', config.clientId!, 255);
  const method = config.clientAuthMethod || 'client_secret_post';
  if (!(CLIENT_AUTH_METHODS as readonly string[]).includes(method)) {
    throw new ValidationError(`config.clientAuthMethod ${JSON.stringify(method)} is not supported (Realmgate authenticates to a provider with ${CLIENT_AUTH_METHODS.join(' or ')})`);
  }
  if (config.pkceMethod && config.pkceMethod !== 'S256' && config.pkceMethod !== 'plain') throw new ValidationError('config.pkceMethod must be S256 or plain');
  if (config.validateSignature === 'true') {
    if (config.useJwksUrl === 'false') throw new ValidationError('config.validateSignature needs the provider\'s keys from its jwksUrl (config.useJwksUrl "true"): Realmgate does not keep a provider\'s public key itself');
    if (!config.jwksUrl) throw new ValidationError('config.validateSignature "true" needs config.jwksUrl');
  }
  if (config.defaultScope) checkText('config.defaultScope', config.defaultScope, 1024);
  if (config.issuer) checkText('config.issuer', config.issuer, 2048);
}

/** The organization a provider belongs to: one of the realm's, and its domain one of the organization's (or ANY). */
async function checkOrganization(store: Store, realmId: string, organizationId: string | null, config: Record<string, string>): Promise<void> {
  if (organizationId === null) return;
  const org = await store.organizationAdmin.get(organizationId);
  if (!org || org.realmId !== realmId) throw new ValidationError(`organizationId: there is no organization ${JSON.stringify(organizationId)} in the realm`);
  const domain = config[ORG_DOMAIN_KEY];
  if (domain && domain !== 'ANY') {
    if (!org.domains.some((d) => d.name.toLowerCase() === domain.toLowerCase())) throw new ValidationError(`config.${ORG_DOMAIN_KEY}: ${JSON.stringify(domain)} is not a domain of the organization ${org.alias} (or ANY)`);
  }
}

/**
 * Checks a provider from any door and returns it ready to store, its secret sealed. `existing`: the
 * stored provider a replacement keeps the id, creation time and (when the secret is left out or masked)
 * secret of.
 */
export async function checkProvider(store: Store, realmId: string, fields: ProviderFields, existing?: IdentityProvider): Promise<IdentityProvider> {
  const alias = fields.alias ?? existing?.alias ?? '';
  if (!ALIAS_RE.test(alias)) throw new ValidationError('alias must be 1 to 255 letters, digits, ".", "_" or "-", starting with a letter or digit (it is part of the provider\'s redirect URI)');
  if (existing && alias !== existing.alias) throw new ValidationError('an identity provider\'s alias cannot change (the provider has its redirect URI registered): create another one');
  const providerId = fields.providerId ?? existing?.providerId ?? 'oidc';
  if (!(IDENTITY_PROVIDER_TYPES as readonly string[]).includes(providerId)) {
    throw new ValidationError(`providerId ${JSON.stringify(providerId)} is not supported (Realmgate brokers to OpenID Connect providers and these social ones: ${IDENTITY_PROVIDER_TYPES.join(', ')})`);
  }
  const { clientSecret, ...given } = fields.config ?? {};
  // A social provider's endpoints and defaults where the config names none (src/oauth/social-providers.ts).
  const config = withSocialDefaults(providerId, given);
  if (isOAuth2Only(providerId)) {
    // Another address of the provider (a GitHub Enterprise Server, another Azure cloud): the endpoints
    // are made by appending paths to them.
    for (const key of ['baseUrl', 'apiUrl'] as const) {
      if (!given[key]) continue;
      checkProviderUrl(key, given[key]);
      if (new URL(given[key]).search) throw new ValidationError(`config.${key} must not have a query`);
    }
  }
  if (providerId === 'microsoft' && given.tenantId?.trim() && !MICROSOFT_TENANT_RE.test(given.tenantId.trim())) {
    throw new ValidationError('config.tenantId must be a tenant id, one of its domains, common, organizations or consumers (letters, digits, "." and "-")');
  }
  if (providerId === 'facebook' && given.fetchedFields?.trim() && !FACEBOOK_FETCHED_FIELDS_RE.test(given.fetchedFields.trim())) {
    throw new ValidationError('config.fetchedFields must be Graph API field names, comma-separated (letters, digits, "_", ".", ",", "{}", "()")');
  }
  checkConfig(config);
  if (config.hostedDomain !== undefined) checkText('config.hostedDomain', config.hostedDomain, 1024);
  const displayName = fields.displayName === undefined ? (existing?.displayName ?? null) : fields.displayName;
  if (displayName !== null) checkText('displayName', displayName, 255);
  const organizationId = fields.organizationId === undefined ? (existing?.organizationId ?? null) : fields.organizationId || null;
  await checkOrganization(store, realmId, organizationId, config);
  let sealedClientSecret = existing?.sealedClientSecret ?? null;
  const kept = clientSecret === undefined || clientSecret === SECRET_MASK;
  // The stored secret goes only to the token endpoint it was given for: otherwise whoever may change the
  // provider (manage-realm) could point tokenUrl at a host of theirs and read the secret off the next
  // sign-in, a secret no administrator is ever shown again (as user-storage.ts's sameDirectory).
  if (kept && sealedClientSecret !== null && existing && originOf(existing.config.tokenUrl) !== originOf(config.tokenUrl)) throw new ValidationError(SECRET_STAYS);
  if (!kept) {
    checkText('config.clientSecret', clientSecret, 1024);
    sealedClientSecret = clientSecret === '' ? null : await sealProviderSecret(store, realmId, alias, clientSecret);
  }
  if (sealedClientSecret === null) throw new ValidationError('an OpenID Connect provider needs config.clientSecret (Realmgate authenticates to it as a confidential client)');
  return {
    id: existing?.id ?? randomUUID(),
    realmId,
    alias,
    providerId: providerId as IdentityProviderType,
    displayName,
    enabled: fields.enabled ?? existing?.enabled ?? true,
    hideOnLogin: fields.hideOnLogin ?? existing?.hideOnLogin ?? config.hideOnLoginPage === 'true',
    trustEmail: fields.trustEmail ?? existing?.trustEmail ?? false,
    linkOnly: fields.linkOnly ?? existing?.linkOnly ?? false,
    organizationId,
    config,
    sealedClientSecret,
    createdAt: existing?.createdAt ?? now(),
  };
}

const providerPath = (alias: string): string => `identity-provider/instances/${alias}`;

export async function listIdentityProviders(store: Store, realmId: string): Promise<IdentityProvider[]> {
  await requireRealm(store, realmId);
  return store.identityProviders.list(realmId);
}

export async function requireIdentityProvider(store: Store, realmId: string, alias: string): Promise<IdentityProvider> {
  await requireRealm(store, realmId);
  const p = await store.identityProviders.get(realmId, alias);
  if (!p) throw new NotFound(`identity provider ${alias} does not exist in realm ${realmId}`);
  return p;
}

export async function createIdentityProvider(store: Store, actor: Actor, realmId: string, fields: ProviderFields): Promise<IdentityProvider> {
  await requireRealm(store, realmId);
  const p = await checkProvider(store, realmId, fields);
  await store.identityProviders.create(p);
  await recordAdminEvent(store, actor, { realmId, operation: 'CREATE', resourceType: 'IDENTITY_PROVIDER', resourcePath: providerPath(p.alias), representation: { ...fields, config: { ...fields.config, clientSecret: undefined } } });
  return p;
}

/**
 * Changes a provider. `replace` (Keycloak's PUT): what is left out takes its default; otherwise (the
 * CLI's update) what is left out is kept. The secret is kept unless a new one is given.
 */
export async function updateIdentityProvider(store: Store, actor: Actor, realmId: string, alias: string, fields: ProviderFields, opts: { replace?: boolean } = {}): Promise<IdentityProvider> {
  const existing = await requireIdentityProvider(store, realmId, alias);
  const merged: ProviderFields = opts.replace
    ? { alias, ...fields }
    : {
        alias,
        providerId: fields.providerId ?? existing.providerId,
        displayName: fields.displayName === undefined ? existing.displayName : fields.displayName,
        enabled: fields.enabled ?? existing.enabled,
        hideOnLogin: fields.hideOnLogin ?? existing.hideOnLogin,
        trustEmail: fields.trustEmail ?? existing.trustEmail,
        linkOnly: fields.linkOnly ?? existing.linkOnly,
        organizationId: fields.organizationId === undefined ? existing.organizationId : fields.organizationId,
        config: { ...existing.config, ...fields.config },
      };
  const base = opts.replace ? { ...existing, displayName: null, organizationId: null, enabled: true, hideOnLogin: false, trustEmail: false, linkOnly: false } : existing;
  const p = await checkProvider(store, realmId, merged, base);
  await store.identityProviders.update(p);
  await recordAdminEvent(store, actor, { realmId, operation: 'UPDATE', resourceType: 'IDENTITY_PROVIDER', resourcePath: providerPath(alias), representation: { ...merged, config: { ...merged.config, clientSecret: undefined } } });
  return p;
}

/** Deletes a provider and every user's link to it (their local accounts stay). */
export async function deleteIdentityProvider(store: Store, actor: Actor, realmId: string, alias: string): Promise<void> {
  await requireRealm(store, realmId);
  if (!(await store.identityProviders.delete(realmId, alias))) throw new NotFound(`identity provider ${alias} does not exist in realm ${realmId}`);
  await recordAdminEvent(store, actor, { realmId, operation: 'DELETE', resourceType: 'IDENTITY_PROVIDER', resourcePath: providerPath(alias) });
}

/** The provider's client secret, opened (the broker's token request; an export with secrets). */
export async function providerSecret(store: Store, p: IdentityProvider): Promise<string | undefined> {
  return p.sealedClientSecret ? openProviderSecret(store, p.realmId, p.alias, p.sealedClientSecret) : undefined;
}

/**
 * OpenID Connect Discovery 1.0 4: the provider's endpoints from its issuer's metadata, as Keycloak's
 * "import from URL" fills them. The issuer in the document must be the one asked for (4.3).
 */
export async function discoverProvider(issuer: string, fetchImpl: typeof fetch = fetch): Promise<Record<string, string>> {
  checkProviderUrl('issuer', issuer);
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let doc: Record<string, unknown>;
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(10_000), redirect: 'error', headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as Record<string, unknown>;
  } catch (err) {
    throw new ValidationError(`could not read ${url}: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || doc.issuer !== issuer) throw new ValidationError(`${url} names the issuer ${JSON.stringify((doc as { issuer?: unknown } | null)?.issuer)}, not ${JSON.stringify(issuer)} (OpenID Connect Discovery 4.3)`);
  const out: Record<string, string> = { issuer };
  const take = (key: string, from: string): void => {
    if (typeof doc[from] === 'string') out[key] = doc[from] as string;
  };
  take('authorizationUrl', 'authorization_endpoint');
  take('tokenUrl', 'token_endpoint');
  take('userInfoUrl', 'userinfo_endpoint');
  take('jwksUrl', 'jwks_uri');
  take('logoutUrl', 'end_session_endpoint');
  if (out.jwksUrl) Object.assign(out, { validateSignature: 'true', useJwksUrl: 'true' });
  for (const k of URL_KEYS) if (out[k]) checkProviderUrl(k, out[k]);
  return out;
}

// ---- Users' links (Keycloak's federated identities) ----

export async function listFederatedIdentities(store: Store, user: User): Promise<FederatedIdentity[]> {
  return store.identityProviders.links(user.id);
}

/** Links the user to an account at a provider (Keycloak's POST /users/{id}/federated-identity/{alias}). */
export async function linkFederatedIdentity(store: Store, actor: Actor, user: User, alias: string, account: { userId: string; userName?: string | null }): Promise<FederatedIdentity> {
  await requireIdentityProvider(store, user.realmId, alias);
  checkText('the provider\'s user id', account.userId, 255);
  if (account.userId === '') throw new ValidationError('a federated identity needs the user id at the provider');
  if (account.userName) checkText('the provider\'s user name', account.userName, 255);
  const link: FederatedIdentity = { realmId: user.realmId, identityProvider: alias, federatedUserId: account.userId, federatedUsername: account.userName || null, userId: user.id, createdAt: now() };
  await store.identityProviders.link(link);
  await recordAdminEvent(store, actor, { realmId: user.realmId, operation: 'CREATE', resourceType: 'USER', resourcePath: `users/${user.id}/federated-identity/${alias}`, representation: { identityProvider: alias, userId: account.userId, userName: account.userName ?? null } });
  return link;
}

export async function unlinkFederatedIdentity(store: Store, actor: Actor, user: User, alias: string): Promise<void> {
  if (!(await store.identityProviders.unlink(user.id, alias))) throw new NotFound(`user ${user.username} has no link to identity provider ${alias}`);
  await recordAdminEvent(store, actor, { realmId: user.realmId, operation: 'DELETE', resourceType: 'USER', resourcePath: `users/${user.id}/federated-identity/${alias}` });
}

/**
 * The user's own unlinking (the account page; Keycloak's account console "Linked accounts"). Refused for
 * the only way in of a user without a password, as Keycloak refuses it: they could never sign in again.
 */
export async function unlinkOwnAccount(store: Store, user: User, alias: string, o: { ip?: string } = {}): Promise<'removed' | 'last' | 'none'> {
  const links = await store.identityProviders.links(user.id);
  if (!links.some((l) => l.identityProvider === alias)) return 'none';
  if (!hasPassword(user.passwordHash) && links.length === 1) return 'last';
  if (!(await store.identityProviders.unlink(user.id, alias))) return 'none';
  await store.events.record({ id: sortableId(), time: now(), realmId: user.realmId, type: 'REMOVE_FEDERATED_IDENTITY', outcome: 'success', userId: user.id, username: user.username, clientId: 'account', ip: o.ip ?? null, reason: `unlinked from identity provider ${alias} by the user` });
  return 'removed';
}

/**
 * Keycloak 26 organizations' "redirect when email domain matches": the provider of an organization that
 * signs in the users of an email's domain (its kc.org.domain, or ANY of the organization's domains), when
 * it has the redirect mode on. Hidden providers count (organizations usually hide theirs); link-only and
 * disabled ones do not.
 */
export async function routedProvider(store: Store, realmId: string, username: string): Promise<IdentityProvider | undefined> {
  const m = /^[^@\s]+@([^@\s]+)$/.exec(username.trim());
  if (!m) return undefined;
  const domain = m[1]!.toLowerCase();
  const candidates = (await store.identityProviders.list(realmId)).filter(routesByEmail);
  // A provider named for the domain first; then one for ANY domain of its organization.
  candidates.sort((a, b) => Number(a.config[ORG_DOMAIN_KEY] === 'ANY') - Number(b.config[ORG_DOMAIN_KEY] === 'ANY'));
  for (const p of candidates) {
    const d = p.config[ORG_DOMAIN_KEY]!;
    if (d !== 'ANY' && d.toLowerCase() !== domain) continue;
    const org = await store.organizationAdmin.get(p.organizationId!);
    if (!org || !org.enabled) continue;
    if (d !== 'ANY') return p;
    if (org.domains.some((x) => x.name.toLowerCase() === domain) && !excluded(p, domain)) return p;
  }
  return undefined;
}

/** Keycloak's kc.org.excluded.domains (comma-separated; "*.d" is any subdomain of d): domains of an ANY provider's organization it does not take. */
function excluded(p: IdentityProvider, domain: string): boolean {
  return (p.config[ORG_EXCLUDED_KEY] ?? '').split(',').map((x) => x.trim().toLowerCase()).some((x) => x !== '' && (x.startsWith('*.') ? domain.endsWith(x.slice(1)) : x === domain));
}

/** A provider that signs in the users of its organization's email domain (Keycloak's redirect mode). */
export const routesByEmail = (p: IdentityProvider): boolean => p.enabled && !p.linkOnly && p.organizationId !== null && p.config[ORG_REDIRECT_KEY] === 'true' && !!p.config[ORG_DOMAIN_KEY];

// ---- Sign-in through a provider (src/oauth/broker.ts checks the provider's answer; this decides the local user) ----

/** Who the provider says signed in (src/oauth/broker.ts BrokeredIdentity). */
export interface ProviderAccount {
  id: string;
  username: string;
  email: string | undefined;
  firstName: string | undefined;
  lastName: string | undefined;
  /** The provider's verified claims, for its mappers (identity-provider-mappers.ts); undefined: the claim mappers do nothing. */
  claims?: Record<string, unknown>;
  /** The email was typed by the user on the review page, not given by the provider: never trusted as verified. */
  emailTyped?: boolean;
}

export type BrokeredUser =
  /** The account was linked to this user before (or just now, to a new user: `created`). */
  | { kind: 'linked'; user: User }
  | { kind: 'created'; user: User }
  /**
   * A local user has this email (or, without one, this username) already: the person must prove they own
   * it (its password) before the provider's account is linked to it (Keycloak's "Account already exists").
   */
  | { kind: 'existing'; user: User; by: 'email' | 'username' }
  /** The provider only links accounts (linkOnly), or the linked user is disabled. */
  | { kind: 'refused'; reason: string };

/** A provider's email counts as verified: the provider is trusted for emails (trustEmail) and its type vouches for them (not Microsoft's). */
const emailTrusted = (p: IdentityProvider): boolean => p.trustEmail && vouchesForEmail(p.providerId);

/** The new user's username: the provider's (preferred_username, email, sub: Keycloak's order) that Realmgate accepts. */
function localUsername(p: IdentityProvider, a: ProviderAccount): string {
  for (const c of [a.username, a.email, a.id]) if (c && USERNAME_RE.test(c)) return c.toLowerCase();
  return `${p.alias}-${createHash('sha256').update(a.id).digest('hex').slice(0, 16)}`.toLowerCase();
}

/**
 * The local user of an account at a provider (Keycloak's first broker login, default flow): the user it
 * is linked to; else, when no local user has its email or username, a new user (no password: they sign
 * in through the provider) linked to it, a member of the provider's organization and of the realm's
 * default groups; else the existing user, to be linked once its owner proves it (linkAfterSignIn). The
 * email is verified only when the provider is trusted for it (trustEmail). syncMode FORCE updates the
 * names and email at every sign-in.
 */
/**
 * The provider's email for syncMode FORCE to give the user; undefined (the user keeps theirs) when another
 * user of the realm has it and the realm refuses duplicate emails (duplicateEmailsAllowed off, checkEmailFree's rule).
 */
async function emailToSync(store: Store, p: IdentityProvider, user: User, email: string | undefined): Promise<string | undefined> {
  if (!email || email.toLowerCase() === (user.email ?? '').toLowerCase()) return email;
  const realm = await store.realms.get(p.realmId);
  if (realm && !realm.duplicateEmailsAllowed && (await store.users.findByEmail(p.realmId, email, 2)).some((u) => u.id !== user.id)) return undefined;
  return email;
}

/**
 * The user the account is linked to, if it is. syncMode FORCE brings its names and email up to date, and
 * the provider's mappers apply (FORCE and LEGACY ones), in one transaction.
 */
async function linkedUser(store: Store, p: IdentityProvider, a: ProviderAccount): Promise<BrokeredUser | undefined> {
  const link = await store.identityProviders.findLink(p.realmId, p.alias, a.id);
  if (!link) return undefined;
  const user = await store.users.get(link.userId);
  if (!user || !user.enabled) return { kind: 'refused', reason: 'the linked user is disabled' };
  await store.transaction(async (tx) => {
    if (p.config.syncMode === 'FORCE') {
      const patch = { email: (await emailToSync(tx, p, user, a.email)) ?? user.email, firstName: a.firstName ?? user.firstName, lastName: a.lastName ?? user.lastName };
      if (patch.email !== user.email || patch.firstName !== user.firstName || patch.lastName !== user.lastName) {
        await tx.users.update(user.id, { ...patch, ...(patch.email !== user.email ? { emailVerified: emailTrusted(p) } : {}) });
      }
    }
    await applyProviderMappers(tx, p, user.id, { created: false, claims: a.claims });
  });
  return { kind: 'linked', user: (await store.users.get(user.id)) ?? user };
}

export async function brokeredUser(store: Store, p: IdentityProvider, a: ProviderAccount, again = false): Promise<BrokeredUser> {
  const linked = await linkedUser(store, p, a);
  if (linked) return linked;
  if (p.linkOnly) return { kind: 'refused', reason: 'the provider only links accounts that signed in otherwise first (linkOnly)' };
  const email = a.email && a.email.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(a.email) ? a.email : undefined;
  if (email) {
    const [byEmail] = await store.userAdmin.search(p.realmId, { email, exact: true, max: 1 });
    // A user made with its link in one transaction by a concurrent first sign-in of this account is linked.
    if (byEmail) return (await linkedUser(store, p, a)) ?? { kind: 'existing', user: byEmail, by: 'email' };
  }
  const username = localUsername(p, a);
  const byName = await store.users.findByUsername(p.realmId, username);
  if (byName) return (await linkedUser(store, p, a)) ?? { kind: 'existing', user: byName, by: 'username' };
  const id = randomId();
  const t = now();
  const groups = await groupsForNewUser(store, p.realmId, []);
  try {
    const realm = await requireRealm(store, p.realmId);
    await newBrokeredUser(store, p, a, { id, username, email, groups: groups.map((g) => g.id), t, requiredActions: defaultActions(realm), defaultRoleId: realm.defaultRoleId });
  } catch (err) {
    // The same account signing in twice at once (two tabs), or a user of that name made meanwhile: the
    // loser's transaction wrote nothing; looking again finds the winner's link or the existing user.
    if (err instanceof ConflictError && !again) return brokeredUser(store, p, a, true);
    throw err;
  }
  const user = await store.users.get(id);
  return { kind: 'created', user: user! };
}

async function newBrokeredUser(store: Store, p: IdentityProvider, a: ProviderAccount, u: { id: string; username: string; email: string | undefined; groups: string[]; t: number; requiredActions: RequiredAction[]; defaultRoleId: string | null }): Promise<void> {
  const { id, username, email, t } = u;
  const name = (v: string | undefined): string | null => (v && v.length <= LIMITS.personName && !/[\x00-\x1f\x7f]/.test(v) ? v : null);
  await store.transaction(async (tx) => {
    await tx.users.create({
      id,
      realmId: p.realmId,
      username,
      email: email ?? null,
      firstName: name(a.firstName),
      lastName: name(a.lastName),
      emailVerified: email !== undefined && !a.emailTyped && emailTrusted(p),
      passwordHash: NO_PASSWORD_HASH,
      now: t,
      organizationIds: p.organizationId ? [p.organizationId] : [],
      requiredActions: u.requiredActions,
    });
    for (const g of u.groups) await tx.groups.addMember(g, id);
    await grantDefaultRole(tx, u, id);
    await tx.identityProviders.link({ realmId: p.realmId, identityProvider: p.alias, federatedUserId: a.id, federatedUsername: a.username.slice(0, 255), userId: id, createdAt: t });
    // Every mapper applies to a user the provider made (Keycloak's importNewUser), with the user.
    await applyProviderMappers(tx, p, id, { created: true, claims: a.claims });
  });
}

/**
 * Links the account to a user who just proved they own the local account (its password, and its
 * authenticator when it has one), after the provider's account met an existing one; a member of the
 * provider's organization from then on. The provider's FORCE and LEGACY mappers apply as at a later
 * sign-in (the user was not made by the provider), from the claims kept with the pending link; all in one
 * transaction. A ConflictError when the account was linked meanwhile.
 */
export async function linkAfterSignIn(store: Store, p: IdentityProvider, user: User, a: { id: string; username: string; claims?: Record<string, unknown> }): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.identityProviders.link({ realmId: p.realmId, identityProvider: p.alias, federatedUserId: a.id, federatedUsername: a.username.slice(0, 255), userId: user.id, createdAt: now() });
    if (p.organizationId && !(await tx.organizationAdmin.isMember(p.organizationId, user.id))) await tx.users.addMembership(user.id, p.organizationId);
    await applyProviderMappers(tx, p, user.id, { created: false, claims: a.claims });
  });
}
