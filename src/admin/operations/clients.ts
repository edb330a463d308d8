import type { Store } from '../../storage/store.js';
import { createPublicKey } from 'node:crypto';
import { NO_BACKCHANNEL_LOGOUT, NO_FRONTCHANNEL_LOGOUT, type BackchannelLogoutSettings, type FrontchannelLogoutSettings, type Client, type ClientAuthMethod, type ClientJwtKeys, type TokenExchangeRefresh, REQUEST_OBJECT_REQUIRED, type RequestObjectRequired, type Realm, type ClientScopeDefaults, type RotatedSecret } from '../../storage/types.js';
import { defaultScopesOf } from '../../oauth/scopes.js';
import { certificateKey, parseJwks, publicKeyOf } from '../../oauth/client-keys.js';
import { ASSERTION_ALGS, isAssertionAlg } from '../../oauth/client-assertion.js';
import type { ClientPatch } from '../../storage/repos/clients.js';
import { DEFAULT_SCOPES } from '../../storage/repos/realms.js';
import { generateClientSecret, hashClientSecret } from '../../crypto/client-secrets.js';
import { checkPathSegment, checkRedirectUri, checkWebOrigin, NotFound, parseScopeList, ValidationError } from '../validation.js';
import { REALM_MANAGEMENT } from '../authorization.js';
import { now, recordAdminEvent, requireRealm, cliActor, type Actor } from './common.js';
import { ensureServiceAccount, findServiceAccount } from './service-accounts.js';
import { isSigningAlg } from '../../crypto/keystore.js';
import { ensureSigningKey } from './keys.js';
import { atNextSecond, checkNotBefore } from './realms.js';

/** The secret methods a confidential client accepts unless its operator restricts it (RFC 6749 2.3.1). */
export const DEFAULT_AUTH_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/**
 * A list of methods, each given once or as a comma/space-separated list ("basic,post" style input):
 * client_secret_basic and/or client_secret_post (Keycloak's client-secret), or private_key_jwt alone
 * (Keycloak's client-jwt: one authenticator per client, as in Keycloak).
 */
export function checkAuthMethods(input: readonly string[]): ClientAuthMethod[] {
  const list = [...new Set(input.flatMap((m) => m.split(/[\s,]+/)).filter((m) => m !== ''))];
  if (list.length === 0) throw new ValidationError('give at least one authentication method');
  for (const m of list) {
    if (m !== 'private_key_jwt' && !(DEFAULT_AUTH_METHODS as readonly string[]).includes(m)) {
      throw new ValidationError(`the authentication method must be client_secret_basic, client_secret_post or private_key_jwt, not ${JSON.stringify(m)}`);
    }
  }
  if (list.includes('private_key_jwt') && list.length > 1) throw new ValidationError('private_key_jwt is a method of its own: a client authenticates with a signed JWT or with its secret, not both');
  return list as ClientAuthMethod[];
}

/** The client authenticates with a signed JWT (private_key_jwt, Keycloak's client-jwt): it has no secret. */
export function usesJwt(methods: readonly string[]): boolean {
  return methods.includes('private_key_jwt');
}

/** Changes to a client's signed-JWT keys (Keycloak's attributes); absent fields stay, '' or null clears one. */
export type ClientJwtKeysChange = { [K in keyof ClientJwtKeys]?: ClientJwtKeys[K] | '' };

export const NO_JWT_KEYS: ClientJwtKeys = Object.freeze({ useJwksUrl: false, jwksUrl: null, useJwksString: false, jwksString: null, certificate: null, publicKey: null, signingAlg: null, maxExp: null });

/** Keycloak allows more; an assertion's id is kept this long at most, so it stays bounded. */
const MAX_ASSERTION_MAX_EXP = 3600;

/**
 * A client's JWKS URL: an absolute http(s) URL without user information or fragment, at most 2048
 * characters. Set by administrators only; fetched with no redirects, a timeout and a size limit
 * (docs/security.md: SSRF).
 */
export function checkJwksUrl(url: string): string {
  return checkAdminUrl(url, 'the JWKS URL');
}

/** An inline JWKS: JSON, public keys only, each one a key node can import. Returns it as given. */
export function checkJwksString(text: string): string {
  let jwks;
  try {
    jwks = parseJwks(text);
    for (const k of jwks.keys) createPublicKey({ key: k as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch (err) {
    throw new ValidationError(`jwks.string: ${(err as Error).message.replace(/^the JWKS/, 'the JWKS')}`);
  }
  if (jwks.keys.length === 0) throw new ValidationError('jwks.string: the JWKS has no keys');
  return text;
}

/** Keycloak's jwt.credential.certificate (base64 DER; PEM accepted): stored as base64 DER. */
export function checkJwtCertificate(text: string): string {
  try {
    certificateKey(text);
  } catch (err) {
    throw new ValidationError(`jwt.credential.certificate: ${(err as Error).message}`);
  }
  const pem = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(text);
  return (pem ? pem[1]! : text).replace(/\s+/g, '');
}

/** Keycloak's jwt.credential.public.key (base64 DER SubjectPublicKeyInfo; PEM accepted): stored as base64 DER. */
export function checkJwtPublicKey(text: string): string {
  try {
    return publicKeyOf(text).export({ type: 'spki', format: 'der' }).toString('base64');
  } catch (err) {
    throw new ValidationError(`jwt.credential.public.key: ${(err as Error).message}`);
  }
}

/** Applies a change to a client's JWT keys, each value checked; null when nothing is left set. */
export function applyJwtKeys(current: ClientJwtKeys | null, change: ClientJwtKeysChange | undefined): ClientJwtKeys | null {
  if (!change) return current;
  const out: ClientJwtKeys = { ...(current ?? NO_JWT_KEYS) };
  const text = (v: string | null | '' | undefined, check: (s: string) => string): string | null | undefined => (v === undefined ? undefined : v === null || v === '' ? null : check(v));
  const url = text(change.jwksUrl, checkJwksUrl);
  if (url !== undefined) out.jwksUrl = url;
  const jwks = text(change.jwksString, checkJwksString);
  if (jwks !== undefined) out.jwksString = jwks;
  const cert = text(change.certificate, checkJwtCertificate);
  if (cert !== undefined) out.certificate = cert;
  const publicKey = text(change.publicKey, checkJwtPublicKey);
  if (publicKey !== undefined) out.publicKey = publicKey;
  const alg = text(change.signingAlg, (a) => {
    if (!isAssertionAlg(a)) throw new ValidationError(`token.endpoint.auth.signing.alg must be one of ${ASSERTION_ALGS.join(', ')} (asymmetric: client secrets are stored as hashes, so HMAC cannot be verified), not ${JSON.stringify(a)}`);
    return a;
  });
  if (alg !== undefined) out.signingAlg = alg;
  if (change.useJwksUrl !== undefined && change.useJwksUrl !== '') out.useJwksUrl = change.useJwksUrl;
  if (change.useJwksString !== undefined && change.useJwksString !== '') out.useJwksString = change.useJwksString;
  if (change.maxExp !== undefined) {
    if (change.maxExp === null || change.maxExp === '') out.maxExp = null;
    else if (!Number.isInteger(change.maxExp) || change.maxExp < 1 || change.maxExp > MAX_ASSERTION_MAX_EXP) throw new ValidationError(`token.endpoint.auth.signing.max.exp must be a whole number of seconds from 1 to ${MAX_ASSERTION_MAX_EXP}`);
    else out.maxExp = change.maxExp;
  }
  const empty = !out.useJwksUrl && !out.useJwksString && out.jwksUrl === null && out.jwksString === null && out.certificate === null && !out.publicKey && out.signingAlg === null && out.maxExp === null;
  return empty ? null : out;
}

function checkIdTokenAlg(alg: string): string {
  if (!isSigningAlg(alg)) throw new ValidationError('the ID token algorithm must be RS256, ES256 or EdDSA');
  return alg;
}

/**
 * An audience an access token may name: a name (another client's id, as Keycloak writes it) or an
 * absolute URI without fragment (RFC 8707 2: only those may be asked for with `resource`).
 */
export function checkAudience(aud: string): string {
  if (aud.length === 0 || aud.length > 255 || /[\s\x00-\x1f\x7f]/.test(aud)) throw new ValidationError(`audience ${JSON.stringify(aud)} must be 1-255 characters without spaces`);
  if (aud.includes(':')) {
    let u: URL;
    try {
      u = new URL(aud);
    } catch {
      throw new ValidationError(`audience ${aud} looks like a URI but is not an absolute one`);
    }
    if (aud.includes('#') || !u.protocol) throw new ValidationError(`audience ${aud} must not contain a fragment (RFC 8707 2)`);
  }
  return aud;
}

/** Keycloak's limit on a client attribute's value is far above this; a URL is not a document. */
const MAX_ADMIN_URL = 2048;

/**
 * A back-channel logout URL (OpenID Connect Back-Channel Logout 1.0, 2.2): an absolute http or https URL
 * without fragment (the spec's rule) and without user information (fetch refuses it). Plain http is
 * allowed for any host, as in Keycloak: the request is server to server, often on an internal network,
 * and what it carries is a signed, short-lived token, no credential. It is set by administrators only and
 * is the only place a logout token is ever sent (docs/security.md: SSRF).
 */
export function checkBackchannelLogoutUrl(url: string): string {
  return checkAdminUrl(url, 'the back-channel logout URL', 'Back-Channel Logout 2.2');
}

/**
 * A front-channel logout URL (OpenID Connect Front-Channel Logout 1.0, 2: "MUST NOT include any fragment
 * component"), under the back-channel URL's rules: the browser loads it in an iframe of our logout page,
 * whose CSP frame-src names its origin. The spec's wish that it share scheme, host and port with a
 * redirect URI is not enforced (Keycloak does not either).
 */
export function checkFrontchannelLogoutUrl(url: string): string {
  return checkAdminUrl(url, 'the front-channel logout URL', 'Front-Channel Logout 2');
}

/**
 * A URL an administrator gives the server to call or to have a browser load (logout URLs, a client's JWKS
 * URL): absolute http(s) with a host, at most 2048 characters, no spaces, controls, user information,
 * fragment or Keycloak placeholder. `name` starts the refusal ("the JWKS URL ..."); `fragmentRule` names the
 * rule forbidding a fragment, when a specification has one.
 */
function checkAdminUrl(url: string, name: string, fragmentRule?: string): string {
  const refuse = (why: string): never => {
    throw new ValidationError(`${name} ${JSON.stringify(url.length > 80 ? `${url.slice(0, 80)}...` : url)} ${why}`);
  };
  if (url.length > MAX_ADMIN_URL) refuse(`is longer than ${MAX_ADMIN_URL} characters`);
  if (/[\s\x00-\x1f\x7f-\x9f]/.test(url)) refuse('contains spaces or control characters');
  // Keycloak's ${application.session.host} (its old adapters' per-node URL) names no host here.
  if (url.includes('${')) refuse('contains a Keycloak placeholder (${...}): register the full URL');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return refuse('is not an absolute URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') refuse('must be an http or https URL');
  if (!/^https?:\/\/[^/?#]/i.test(url) || u.hostname === '') refuse('has no host');
  if (url.includes('#')) refuse(fragmentRule ? `must not contain a fragment (${fragmentRule})` : 'must not contain a fragment');
  if (u.username !== '' || u.password !== '') refuse('must not contain user information (user@host)');
  return url;
}

/** Back-channel logout settings as given (absent fields: the current or default ones); url '' or null removes it. */
export type BackchannelLogoutChange = { url?: string | null; sessionRequired?: boolean; revokeOfflineTokens?: boolean };

function applyBackchannel(current: BackchannelLogoutSettings, change: BackchannelLogoutChange | undefined): BackchannelLogoutSettings {
  if (!change) return current;
  const url = change.url === undefined ? current.url : change.url === null || change.url === '' ? null : checkBackchannelLogoutUrl(change.url);
  return { url, sessionRequired: change.sessionRequired ?? current.sessionRequired, revokeOfflineTokens: change.revokeOfflineTokens ?? current.revokeOfflineTokens };
}

/** Front-channel logout settings as given (absent fields: the current or default ones); url '' or null removes it. */
export type FrontchannelLogoutChange = { enabled?: boolean; url?: string | null; sessionRequired?: boolean };

function applyFrontchannel(current: FrontchannelLogoutSettings, change: FrontchannelLogoutChange | undefined): FrontchannelLogoutSettings {
  if (!change) return current;
  const url = change.url === undefined ? current.url : change.url === null || change.url === '' ? null : checkFrontchannelLogoutUrl(change.url);
  return { enabled: change.enabled ?? current.enabled, url, sessionRequired: change.sessionRequired ?? current.sessionRequired };
}

function checkName(name: string): string {
  if (name.length > 255 || /[\x00-\x1f\x7f]/.test(name)) throw new ValidationError('the client name must have at most 255 characters, no control characters');
  return name;
}

async function checkScopes(store: Store, realmId: string, value: string): Promise<string[]> {
  const realmScopes = new Set((await store.realms.scopes(realmId)).map((s) => s.name));
  const scopes = parseScopeList(value);
  for (const s of scopes) if (!realmScopes.has(s)) throw new ValidationError(`scope ${s} is not defined in realm ${realmId}`);
  return scopes;
}

/**
 * The realm's scopes for new clients (Keycloak's defaultDefaultClientScopes and
 * defaultOptionalClientScopes; openid, which every new client gets, left out): the built-in scopes, all
 * default, until the realm sets its own. A scope deleted since is left out.
 */
export function realmScopeDefaults(realm: Pick<Realm, 'clientScopeDefaults'>, realmScopes: readonly string[]): ClientScopeDefaults {
  const set = realm.clientScopeDefaults ?? { default: DEFAULT_SCOPES.map((s) => s.name), optional: [] };
  const keep = (list: string[]): string[] => list.filter((s) => s !== 'openid' && realmScopes.includes(s));
  return { default: keep(set.default), optional: keep(set.optional).filter((s) => !set.default.includes(s)) };
}

/**
 * A client's scopes from its default and optional lists: `scopes` holds both, `optionalScopes` the
 * optional ones (a scope in both lists is a default one). openid is never optional.
 */
function scopeLists(defaults: readonly string[], optional: readonly string[]): { scopes: string[]; optionalScopes: string[] } {
  if (optional.includes('openid')) throw new ValidationError('openid cannot be an optional scope: it is how a client asks for OpenID Connect');
  const optionalScopes = [...new Set(optional)].filter((s) => !defaults.includes(s));
  return { scopes: [...new Set([...defaults, ...optionalScopes])], optionalScopes };
}

/** The flows and protocol settings a client is created with and an operator may change later. */
export interface ClientProtocolSettings {
  /** Authorization code flow; on by default. */
  standardFlowEnabled?: boolean;
  /** Password grant (RFC 6749 4.3); off by default. */
  directAccessGrantsEnabled?: boolean;
  /** client_credentials for a service-account user (RFC 6749 4.4); off by default. */
  serviceAccountsEnabled?: boolean;
  /** 'S256' requires PKCE of a confidential client too. */
  pkceMethod?: '' | 'S256';
  /** Exact origins, or "+" for the origins of the redirect URIs (Keycloak's webOrigins). */
  webOrigins?: string[];
  /** Back-Channel Logout 1.0 (Keycloak's backchannel.logout.* attributes); default none. */
  backchannelLogout?: BackchannelLogoutChange;
  /** RFC 9126 6: only pushed authorization requests (Keycloak's require.pushed.authorization.requests); default off. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 8693 token exchange (Keycloak's standard.token.exchange.enabled); default off. */
  standardTokenExchange?: boolean;
  /** Keycloak's standard.token.exchange.enableRefreshRequestedTokenType; default NO. */
  tokenExchangeRefresh?: TokenExchangeRefresh;
  /** RFC 9449: the token endpoint requires a DPoP proof (Keycloak's dpop.bound.access.tokens); default off. */
  dpopBoundAccessTokens?: boolean;
  /** RFC 9101 (Keycloak's request.object.required); default 'not required'. */
  requestObjectRequired?: RequestObjectRequired;
  /** Keycloak's request.object.signature.alg: an algorithm, 'none', or null/'any' for any asymmetric one. */
  requestObjectSignatureAlg?: string | null;
  /** Front-Channel Logout 1.0 (Keycloak's frontchannelLogout and frontchannel.logout.* attributes); default off. */
  frontchannelLogout?: FrontchannelLogoutChange;
  /** private_key_jwt: the client's keys (Keycloak's client-jwt attributes). */
  jwtKeys?: ClientJwtKeysChange;
  /** Keycloak's fullScopeAllowed: tokens carry every role of their user (default); false: only those in the client's scope. */
  fullScopeAllowed?: boolean;
}

export interface NewClient extends ClientProtocolSettings {
  realmId: string;
  clientId: string;
  redirectUris: string[];
  secret?: string;
  /**
   * The secret's hash, made beforehand (an import hashes outside its transaction, or restores a
   * Realmgate export's hash): stored as it is, instead of `secret`.
   */
  secretHash?: string;
  /** Space-separated default scopes; absent: the realm's scopes for new clients (and openid). */
  scopes?: string;
  /** Space-separated optional scopes (granted only when asked for); absent: the realm's, when `scopes` is absent too. */
  optionalScopes?: string;
  public?: boolean;
  name?: string;
  /** One method (older callers) or several; default both secret methods. */
  authMethod?: string;
  authMethods?: string[];
  postLogoutRedirectUris?: string[];
  idTokenAlg?: string;
  audiences?: string[];
}

/**
 * Every check of createClient that needs no database (all but the realm and its scopes), with the
 * values normalised: an import runs it on each entry before it changes anything.
 */
export function checkNewClient(input: NewClient): {
  standardFlow: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  webOrigins: string[];
  authMethods: ClientAuthMethod[];
  name: string | null;
  idTokenAlg: string;
  audiences: string[];
  backchannelLogout: BackchannelLogoutSettings;
  frontchannelLogout: FrontchannelLogoutSettings;
  jwtKeys: ClientJwtKeys | null;
} {
  // RFC 6749 A.1: client-id = *VSCHAR (%x20-7E).
  if (!/^[\x20-\x7E]{1,255}$/.test(input.clientId) || input.clientId.trim() !== input.clientId) {
    throw new ValidationError('client id must be 1-255 printable ASCII characters, without leading or trailing spaces');
  }
  // The client id is the {id} of the admin API's client paths.
  checkPathSegment('the client id', input.clientId);
  const standardFlow = input.standardFlowEnabled ?? true;
  if (standardFlow && input.redirectUris.length === 0) throw new ValidationError('a client needs at least one --redirect-uri');
  const redirectUris = input.redirectUris.map(checkRedirectUri);
  if (input.public && (input.secret !== undefined || input.secretHash !== undefined)) throw new ValidationError('a public client has no secret: leave out --secret');
  if (input.secret !== undefined && input.secretHash !== undefined) throw new ValidationError('give a secret or its hash, not both');
  const postLogoutRedirectUris = (input.postLogoutRedirectUris ?? []).map(checkRedirectUri);
  const webOrigins = [...new Set((input.webOrigins ?? []).map(checkWebOrigin))];
  if (input.public && input.serviceAccountsEnabled) throw new ValidationError('a public client cannot have a service account: it has no secret to authenticate with');
  const requested = [...(input.authMethod !== undefined ? [input.authMethod] : []), ...(input.authMethods ?? [])];
  if (input.public && requested.some((m) => m !== 'none')) throw new ValidationError('a public client does not authenticate: leave out --auth-method');
  const authMethods: ClientAuthMethod[] = input.public ? ['none'] : requested.length > 0 ? checkAuthMethods(requested) : [...DEFAULT_AUTH_METHODS];
  if (input.secret !== undefined && (input.secret.length === 0 || input.secret.length > 512)) throw new ValidationError('the client secret must have 1 to 512 characters');
  if (usesJwt(authMethods) && input.secret !== undefined) throw new ValidationError('a client authenticating with a signed JWT (private_key_jwt) has no secret: leave out --secret');
  return {
    standardFlow,
    redirectUris: [...new Set(redirectUris)],
    postLogoutRedirectUris: [...new Set(postLogoutRedirectUris)],
    webOrigins,
    authMethods,
    name: input.name !== undefined ? checkName(input.name) : null,
    idTokenAlg: input.idTokenAlg !== undefined ? checkIdTokenAlg(input.idTokenAlg) : 'RS256',
    audiences: [...new Set((input.audiences ?? []).map(checkAudience))],
    backchannelLogout: applyBackchannel(NO_BACKCHANNEL_LOGOUT, input.backchannelLogout),
    frontchannelLogout: applyFrontchannel(NO_FRONTCHANNEL_LOGOUT, input.frontchannelLogout),
    jwtKeys: applyJwtKeys(null, input.jwtKeys),
  };
}

export async function createClient(store: Store, input: NewClient, actor: Actor = cliActor()): Promise<{ client: Client; secret: string | undefined; generated: boolean }> {
  const realm = await requireRealm(store, input.realmId);
  const checked = checkNewClient(input);
  const realmDefaults = realmScopeDefaults(realm, (await store.realms.scopes(input.realmId)).map((s) => s.name));
  const { scopes, optionalScopes } = scopeLists(
    input.scopes !== undefined ? await checkScopes(store, input.realmId, input.scopes) : ['openid', ...realmDefaults.default],
    input.optionalScopes !== undefined ? await checkScopes(store, input.realmId, input.optionalScopes) : input.scopes === undefined ? realmDefaults.optional : [],
  );
  let secret: string | undefined;
  let generated = false;
  let secretHash: string | null = null;
  if (!input.public && !usesJwt(checked.authMethods)) {
    if (input.secretHash !== undefined) {
      secretHash = input.secretHash;
    } else {
      if (input.secret !== undefined) {
        secret = input.secret;
      } else {
        secret = generateClientSecret();
        generated = true;
      }
      secretHash = await hashClientSecret(secret, { generated });
    }
  }
  const client: Client = {
    realmId: input.realmId,
    clientId: input.clientId,
    name: checked.name,
    secretHash,
    public: Boolean(input.public),
    enabled: true,
    redirectUris: checked.redirectUris,
    scopes,
    optionalScopes,
    createdAt: now(),
    authMethod: checked.authMethods[0]!,
    authMethods: checked.authMethods,
    postLogoutRedirectUris: checked.postLogoutRedirectUris,
    standardFlowEnabled: checked.standardFlow,
    directAccessGrantsEnabled: Boolean(input.directAccessGrantsEnabled),
    serviceAccountsEnabled: Boolean(input.serviceAccountsEnabled),
    pkceMethod: input.pkceMethod ?? '',
    idTokenAlg: checked.idTokenAlg,
    audiences: checked.audiences,
    webOrigins: checked.webOrigins,
    backchannelLogout: checked.backchannelLogout,
    requirePushedAuthorizationRequests: Boolean(input.requirePushedAuthorizationRequests),
    standardTokenExchange: Boolean(input.standardTokenExchange),
    tokenExchangeRefresh: input.tokenExchangeRefresh ?? 'NO',
    dpopBoundAccessTokens: Boolean(input.dpopBoundAccessTokens),
    requestObjectRequired: checkRequestObjectRequired(input.requestObjectRequired) ?? 'not required',
    requestObjectSignatureAlg: checkRequestObjectAlg(input.requestObjectSignatureAlg) ?? null,
    frontchannelLogout: checked.frontchannelLogout,
    jwtKeys: checked.jwtKeys,
    fullScopeAllowed: input.fullScopeAllowed !== false,
    rotatedSecret: null,
    notBefore: 0,
  };
  await store.clients.create({ ...client, now: client.createdAt });
  await ensureSigningKey(store, { realmId: client.realmId, alg: client.idTokenAlg });
  if (client.serviceAccountsEnabled) {
    // A client deleted earlier under the same id left its service account disabled.
    const sa = await ensureServiceAccount(store, client);
    if (!sa.enabled) await store.users.update(sa.id, { enabled: true });
  }
  await recordAdminEvent(store, actor, { realmId: client.realmId, operation: 'CREATE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}`, representation: { ...client, secretHash: undefined, rotatedSecret: undefined } });
  return { client, secret, generated };
}

/** What an operator may change on a client (the admin API's PUT, the console's form). */
export interface ClientChanges extends ClientProtocolSettings {
  name?: string | null;
  enabled?: boolean;
  public?: boolean;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  /** The default scopes, replacing them (the optional ones stay unless given too). */
  scopes?: string[];
  /** The optional scopes, replacing them. */
  optionalScopes?: string[];
  /** A confidential client's methods, as --auth-method takes them (checked by checkAuthMethods). */
  authMethods?: string[];
  /** clientAuthenticatorType "client-secret" without methods: a client-jwt client goes back to both secret methods. */
  secretAuthenticator?: boolean;
  /** The methods attribute said private_key_jwt without clientAuthenticatorType: fine for a client-jwt client only. */
  expectJwt?: boolean;
  /** Keycloak's client notBefore (epoch seconds; 0 clears it): checked as the realm's (checkNotBefore). */
  notBefore?: number;
}

async function requireClient(store: Store, realmId: string, clientId: string): Promise<Client> {
  await requireRealm(store, realmId);
  const client = await store.clients.get(realmId, clientId);
  if (!client) throw new NotFound(`client ${clientId} does not exist in realm ${realmId}`);
  return client;
}

/**
 * Applies admin changes to a client (the admin API's PUT: lists replaced whole), through the same checks
 * and the same write as updateClient. Turning a confidential client public drops its secret; turning a
 * public client confidential generates one (returned, shown once).
 */
export async function changeClient(store: Store, input: { realmId: string; clientId: string; changes: ClientChanges }, actor: Actor = cliActor()): Promise<{ client: Client; secret?: string }> {
  const c = input.changes;
  const set = (v: string[] | undefined): ListChange | undefined => (v ? { set: v } : undefined);
  const update: ClientUpdate = { realmId: input.realmId, clientId: input.clientId };
  if (c.name !== undefined) update.name = c.name;
  if (c.enabled !== undefined) update.enabled = c.enabled;
  if (c.public !== undefined) update.public = c.public;
  if (c.redirectUris) update.redirectUris = set(c.redirectUris)!;
  if (c.postLogoutRedirectUris) update.postLogoutRedirectUris = set(c.postLogoutRedirectUris)!;
  if (c.scopes) update.scopes = c.scopes.join(' ');
  if (c.optionalScopes) update.optionalScopes = c.optionalScopes.join(' ');
  if (c.webOrigins) update.webOrigins = set(c.webOrigins)!;
  if (c.authMethods) update.authMethods = c.authMethods;
  if (c.backchannelLogout) update.backchannelLogout = c.backchannelLogout;
  if (c.frontchannelLogout) update.frontchannelLogout = c.frontchannelLogout;
  if (c.jwtKeys) update.jwtKeys = c.jwtKeys;
  if (c.secretAuthenticator && !c.authMethods) update.secretAuthenticator = true;
  if (c.notBefore !== undefined) update.notBefore = c.notBefore;
  if (c.expectJwt) {
    const current = await requireClient(store, input.realmId, input.clientId);
    if (!usesJwt(current.authMethods)) throw new ValidationError('the secret methods attribute names client_secret_basic and client_secret_post only: a signed JWT (private_key_jwt) is clientAuthenticatorType "client-jwt"');
  }
  for (const k of ['standardFlowEnabled', 'directAccessGrantsEnabled', 'serviceAccountsEnabled', 'pkceMethod', 'requirePushedAuthorizationRequests', 'standardTokenExchange', 'tokenExchangeRefresh', 'dpopBoundAccessTokens', 'requestObjectRequired', 'requestObjectSignatureAlg', 'fullScopeAllowed'] as const) {
    if (c[k] !== undefined) Object.assign(update, { [k]: c[k] });
  }
  return applyClientUpdate(store, update, actor);
}

export async function setClientEnabled(store: Store, input: { realmId: string; clientId: string; enabled: boolean }, actor: Actor = cliActor()): Promise<Client> {
  return (await changeClient(store, { realmId: input.realmId, clientId: input.clientId, changes: { enabled: input.enabled } }, actor)).client;
}

/** The longest a rotation may keep the previous secret valid: 30 days. */
export const MAX_KEEP_PREVIOUS_SECONDS = 30 * 86_400;

/**
 * How long to keep the previous secret, as given on the command line or in the console: whole seconds, or
 * a number with s, m, h or d (`90m`, `24h`, `7d`); 0 or `no`: not at all.
 */
export function parseKeepPrevious(text: string): number {
  if (text.trim() === 'no') return 0;
  const m = /^\s*(\d{1,9})\s*([smhd]?)\s*$/.exec(text);
  if (!m) throw new ValidationError(`keep the previous secret for: ${JSON.stringify(text)} is not a duration (seconds, or a number with s, m, h or d: 90m, 24h, 7d)`);
  return checkKeepPrevious(Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as '' | 's' | 'm' | 'h' | 'd']);
}

export function checkKeepPrevious(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > MAX_KEEP_PREVIOUS_SECONDS) {
    throw new ValidationError(`the previous secret may be kept for 0 to ${MAX_KEEP_PREVIOUS_SECONDS} seconds (30 days), not ${seconds}`);
  }
  return seconds;
}

/**
 * Replaces a confidential client's secret with a new generated one and returns it. Without
 * `keepPreviousSeconds` the old secret (and any previous one an earlier rotation kept) is refused from the
 * next request on (by this process at once, by others within the cache window): the answer to a leaked
 * secret. With it, the old secret stays valid that much longer beside the new one (Keycloak's rotated
 * secret), so that an application's instances can move to the new secret one by one without a failed
 * request; a previous secret kept by an earlier rotation is dropped (one previous secret at most).
 */
export async function rotateClientSecret(
  store: Store,
  input: { realmId: string; clientId: string; keepPreviousSeconds?: number; /** Epoch seconds (a server's clock); default the system's. */ now?: number },
  actor: Actor = cliActor(),
): Promise<{ secret: string; previousValidUntil: number | null }> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.public || client.clientId === REALM_MANAGEMENT) throw new ValidationError(`client ${client.clientId} has no secret`);
  const keep = checkKeepPrevious(input.keepPreviousSeconds ?? 0);
  const at = input.now ?? now();
  const rotatedSecret = keep > 0 && client.secretHash ? { hash: client.secretHash, expiresAt: at + keep } : null;
  const secret = generateClientSecret();
  await store.clients.update(input.realmId, input.clientId, { secretHash: await hashClientSecret(secret, { generated: true }), rotatedSecret });
  await recordAdminEvent(store, actor, {
    realmId: input.realmId,
    operation: 'ACTION',
    resourceType: 'CLIENT',
    resourcePath: `clients/${client.clientId}/client-secret`,
    ...(rotatedSecret ? { representation: { previousSecretValidUntil: rotatedSecret.expiresAt } } : {}),
  });
  return { secret, previousValidUntil: rotatedSecret?.expiresAt ?? null };
}

/** The client's previous secret, if a rotation kept it and it has not expired yet. */
export function previousSecretOf(client: Client, nowSeconds: number = now()): RotatedSecret | null {
  return client.rotatedSecret && client.rotatedSecret.expiresAt > nowSeconds ? client.rotatedSecret : null;
}

/**
 * Refuses the client's previous secret from now on (Keycloak's "invalidate rotated secret"), once every
 * instance of the application uses the new one. True when there was one still valid.
 */
export async function invalidatePreviousSecret(store: Store, input: { realmId: string; clientId: string; now?: number }, actor: Actor = cliActor()): Promise<boolean> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.public || client.clientId === REALM_MANAGEMENT) throw new ValidationError(`client ${client.clientId} has no secret`);
  const had = previousSecretOf(client, input.now ?? now()) !== null;
  if (client.rotatedSecret) await store.clients.update(input.realmId, input.clientId, { rotatedSecret: null });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}/client-secret/rotated` });
  return had;
}

/**
 * Keycloak's client "push not-before" (its Revocation tab's *Set to now* and *Push*): every token issued to
 * the client until now is refused, as the realm's push does for the realm (pushNotBefore: the boundary is
 * the next second, and this returns once it has begun). The client's other tokens, and other clients',
 * stay. Returns the new notBefore.
 */
export async function pushClientNotBefore(
  store: Store,
  input: { realmId: string; clientId: string; nowMs: () => number; sleep?: (ms: number) => Promise<void> },
  actor: Actor = cliActor(),
): Promise<number> {
  return atNextSecond(input, (at) => changeClient(store, { realmId: input.realmId, clientId: input.clientId, changes: { notBefore: at } }, actor));
}

/** Deletes a client, its roles and its service account; its refresh chains are revoked. */
export async function deleteClient(store: Store, input: { realmId: string; clientId: string }, actor: Actor = cliActor()): Promise<void> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.clientId === REALM_MANAGEMENT) throw new ValidationError(`${REALM_MANAGEMENT} holds the admin roles and cannot be deleted`);
  await store.clients.delete(input.realmId, input.clientId, now());
  await store.roles.deleteForClient(input.realmId, input.clientId);
  const sa = await findServiceAccount(store, client);
  if (sa) await store.users.update(sa.id, { enabled: false });
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'CLIENT', resourcePath: `clients/${client.clientId}` });
}

/** A list setting: replaced whole, or items added and removed (in that order). */
export interface ListChange {
  set?: string[];
  add?: string[];
  remove?: string[];
}

function applyList(current: readonly string[], change: ListChange | undefined, check: (v: string) => unknown): string[] | undefined {
  if (!change || (change.set === undefined && !change.add?.length && !change.remove?.length)) return undefined;
  // A check may normalise its value (an IDN host in ASCII form, an origin without a slash): keep what it returns.
  const norm = (v: string): string => {
    const r = check(v);
    return typeof r === 'string' ? r : v;
  };
  const set = change.set?.map(norm);
  const add = (change.add ?? []).map(norm);
  const removed = new Set(change.remove ?? []);
  for (const v of removed) if (![...(set ?? current), ...add].includes(v)) throw new ValidationError(`${v} is not in the list`);
  return [...new Set([...(set ?? current), ...add])].filter((v) => !removed.has(v));
}

export interface ClientUpdate {
  realmId: string;
  clientId: string;
  /** A string names the client; null clears the name. */
  name?: string | null;
  redirectUris?: ListChange;
  postLogoutRedirectUris?: ListChange;
  /** Space-separated default scopes, replacing the current ones (the optional ones stay, unless named here: then they become default ones). */
  scopes?: string;
  /** Space-separated optional scopes (Keycloak's optionalClientScopes: granted only when asked for), replacing the current ones. */
  optionalScopes?: string;
  enabled?: boolean;
  authMethods?: string[];
  idTokenAlg?: string;
  audiences?: ListChange;
  standardFlowEnabled?: boolean;
  directAccessGrantsEnabled?: boolean;
  serviceAccountsEnabled?: boolean;
  pkceMethod?: '' | 'S256';
  webOrigins?: ListChange;
  /** Public (no secret: it is dropped) or confidential (a secret is generated, returned once). */
  public?: boolean;
  /** Back-Channel Logout 1.0 settings; absent fields stay, url '' or null removes the URL. */
  backchannelLogout?: BackchannelLogoutChange;
  /** RFC 9126 6: the authorization endpoint takes only pushed requests of this client. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 8693: the client may exchange tokens (Keycloak's standard.token.exchange.enabled). */
  standardTokenExchange?: boolean;
  /** Keycloak's standard.token.exchange.enableRefreshRequestedTokenType. */
  tokenExchangeRefresh?: TokenExchangeRefresh;
  /** RFC 9449: the token endpoint takes only requests of this client with a DPoP proof. */
  dpopBoundAccessTokens?: boolean;
  /** RFC 9101: Keycloak's request.object.required. */
  requestObjectRequired?: RequestObjectRequired;
  /** Keycloak's request.object.signature.alg; null or 'any': any asymmetric algorithm. */
  requestObjectSignatureAlg?: string | null;
  /** Front-Channel Logout 1.0 settings; absent fields stay, url '' or null removes the URL. */
  frontchannelLogout?: FrontchannelLogoutChange;
  /** private_key_jwt keys; absent fields stay. */
  jwtKeys?: ClientJwtKeysChange;
  /** Keycloak's fullScopeAllowed. */
  fullScopeAllowed?: boolean;
  /** A client using private_key_jwt goes back to the secret methods (its other methods stay). */
  secretAuthenticator?: boolean;
  /** Keycloak's client notBefore (epoch seconds; 0 clears it): checked as the realm's (checkNotBefore). */
  notBefore?: number;
}

/** Web origins compare in their normalized form (no trailing slash); "+" stays as it is. */
function normalizeOrigins(change: ListChange | undefined): ListChange | undefined {
  if (!change) return undefined;
  const norm = (v: string): string => {
    try {
      return checkWebOrigin(v);
    } catch {
      return v;
    }
  };
  return {
    ...(change.set ? { set: change.set.map(checkWebOrigin) } : {}),
    ...(change.add ? { add: change.add.map(checkWebOrigin) } : {}),
    ...(change.remove ? { remove: change.remove.map(norm) } : {}),
  };
}

/**
 * Changes a client's settings; what is absent stays as it is. Every value is checked as createClient
 * checks it, and the client keeps at least one redirect URI. Running servers see the change within their
 * cache time (REALMGATE_CACHE_TTL_MS).
 */
export async function updateClient(store: Store, input: ClientUpdate, actor: Actor = cliActor()): Promise<Client> {
  return (await applyClientUpdate(store, input, actor)).client;
}

/** updateClient, with the secret a change generated (a client going back from a signed JWT to a secret it never had), shown once. */
export async function updateClientShowingSecret(store: Store, input: ClientUpdate, actor: Actor = cliActor()): Promise<{ client: Client; secret?: string }> {
  return applyClientUpdate(store, input, actor);
}

/** The one path of every client change (CLI, admin API, console): checks, the write, the admin event. */
async function applyClientUpdate(store: Store, input: ClientUpdate, actor: Actor): Promise<{ client: Client; secret?: string }> {
  const client = await requireClient(store, input.realmId, input.clientId);
  if (client.clientId === REALM_MANAGEMENT) throw new ValidationError(`${REALM_MANAGEMENT} holds the admin roles and cannot be changed`);
  const patch: ClientPatch = {};
  if (input.name !== undefined) patch.name = input.name === null || input.name === '' ? null : checkName(input.name);
  const redirectUris = applyList(client.redirectUris, input.redirectUris, checkRedirectUri);
  if (redirectUris) patch.redirectUris = redirectUris;
  const postLogout = applyList(client.postLogoutRedirectUris, input.postLogoutRedirectUris, checkRedirectUri);
  if (postLogout) patch.postLogoutRedirectUris = postLogout;
  if (input.scopes !== undefined || input.optionalScopes !== undefined) {
    const defaults = input.scopes !== undefined ? await checkScopes(store, input.realmId, input.scopes) : defaultScopesOf(client);
    const optional = input.optionalScopes !== undefined ? await checkScopes(store, input.realmId, input.optionalScopes) : client.optionalScopes;
    Object.assign(patch, scopeLists(defaults, optional));
  }
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  const isPublic = input.public ?? client.public;
  if (input.authMethods !== undefined) {
    if (isPublic) throw new ValidationError('a public client does not authenticate: it has no --auth-method');
    patch.authMethods = checkAuthMethods(input.authMethods);
  }
  if (input.secretAuthenticator && !patch.authMethods && !isPublic && usesJwt(client.authMethods)) patch.authMethods = [...DEFAULT_AUTH_METHODS];
  if (input.idTokenAlg !== undefined) patch.idTokenAlg = checkIdTokenAlg(input.idTokenAlg);
  const audiences = applyList(client.audiences, input.audiences, checkAudience);
  if (audiences) patch.audiences = audiences;
  const webOrigins = applyList(client.webOrigins, normalizeOrigins(input.webOrigins), checkWebOrigin);
  if (webOrigins) patch.webOrigins = webOrigins;
  if (input.backchannelLogout) patch.backchannelLogout = applyBackchannel(client.backchannelLogout, input.backchannelLogout);
  if (input.frontchannelLogout) patch.frontchannelLogout = applyFrontchannel(client.frontchannelLogout, input.frontchannelLogout);
  if (input.jwtKeys) patch.jwtKeys = applyJwtKeys(client.jwtKeys, input.jwtKeys);
  if (input.notBefore !== undefined) {
    checkNotBefore(input.notBefore, { current: client.notBefore });
    patch.notBefore = input.notBefore;
  }
  for (const k of ['standardFlowEnabled', 'directAccessGrantsEnabled', 'serviceAccountsEnabled', 'pkceMethod', 'requirePushedAuthorizationRequests', 'standardTokenExchange', 'tokenExchangeRefresh', 'dpopBoundAccessTokens', 'requestObjectRequired', 'requestObjectSignatureAlg', 'fullScopeAllowed'] as const) {
    if (input[k] !== undefined) Object.assign(patch, { [k]: input[k] });
  }
  if (input.requestObjectRequired !== undefined) patch.requestObjectRequired = checkRequestObjectRequired(input.requestObjectRequired);
  if (input.requestObjectSignatureAlg !== undefined) patch.requestObjectSignatureAlg = checkRequestObjectAlg(input.requestObjectSignatureAlg);
  if (isPublic && (input.serviceAccountsEnabled ?? client.serviceAccountsEnabled)) {
    throw new ValidationError('a public client cannot have a service account: it has no secret to authenticate with');
  }
  if ((input.standardFlowEnabled ?? client.standardFlowEnabled) && (patch.redirectUris ?? client.redirectUris).length === 0) {
    throw new ValidationError('the authorization code flow needs at least one redirect URI');
  }
  // Public <-> confidential: the secret goes, or a new one comes (shown once, stored as a hash).
  let secret: string | undefined;
  if (input.public === true && !client.public) {
    Object.assign(patch, { public: true, secretHash: null, rotatedSecret: null, authMethods: ['none'] });
  } else if (input.public === false && client.public) {
    const methods = patch.authMethods ?? [...DEFAULT_AUTH_METHODS];
    if (usesJwt(methods)) Object.assign(patch, { public: false, authMethods: methods });
    else {
      secret = generateClientSecret();
      Object.assign(patch, { public: false, secretHash: await hashClientSecret(secret, { generated: true }), authMethods: methods });
    }
  } else if (!isPublic && patch.authMethods && !usesJwt(patch.authMethods) && !client.secretHash) {
    // From a signed JWT back to a secret: a client that never had one gets one (returned, shown once).
    secret = generateClientSecret();
    patch.secretHash = await hashClientSecret(secret, { generated: true });
  }
  await store.clients.update(input.realmId, input.clientId, patch);
  if (patch.idTokenAlg !== undefined) await ensureSigningKey(store, { realmId: input.realmId, alg: patch.idTokenAlg });
  const updated = await store.clients.get(input.realmId, input.clientId);
  if (!updated) throw new ValidationError(`client ${input.clientId} was deleted meanwhile`);
  if (updated.serviceAccountsEnabled) await ensureServiceAccount(store, updated);
  await recordAdminEvent(store, actor, { realmId: updated.realmId, operation: 'UPDATE', resourceType: 'CLIENT', resourcePath: `clients/${updated.clientId}`, representation: { ...updated, secretHash: undefined, rotatedSecret: undefined } });
  return secret !== undefined ? { client: updated, secret } : { client: updated };
}

/** Keycloak's request.object.required: one of its four values, exactly as it stores them. */
/** Whether `v` is one of Keycloak's request.object.required values, exactly as Keycloak spells it. */
export function isRequestObjectRequired(v: string): v is RequestObjectRequired {
  return (REQUEST_OBJECT_REQUIRED as readonly string[]).includes(v);
}

export function checkRequestObjectRequired(v: string | undefined): RequestObjectRequired | undefined {
  if (v === undefined) return undefined;
  if (!isRequestObjectRequired(v)) throw new ValidationError(`request.object.required must be one of: ${REQUEST_OBJECT_REQUIRED.map((x) => `"${x}"`).join(', ')}`);
  return v as RequestObjectRequired;
}

/**
 * Keycloak's request.object.signature.alg: an asymmetric algorithm, "none" (kept as imported; Realmgate
 * verifies every request object, so such a client's are refused), or "any"/null/'' for any asymmetric one.
 */
export function checkRequestObjectAlg(v: string | null | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  if (v === null || v === '' || v === 'any') return null;
  if (v !== 'none' && !isAssertionAlg(v)) throw new ValidationError(`request.object.signature.alg must be "any", "none" or one of ${ASSERTION_ALGS.join(', ')}`);
  return v;
}
