import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { nowSeconds } from '../clock.js';
import { brokerValue } from '../crypto/broker-secrets.js';
import { safeEqual } from '../crypto/random.js';
import { realmBase, type Services } from '../services.js';
import type { IdentityProvider, Interaction, Realm } from '../storage/types.js';
import { providerSecret } from '../admin/operations/identity-providers.js';
import { msg, type Text } from '../i18n/translator.js';
import { hostedDomains, isOAuth2Only } from './social-providers.js';

/**
 * Identity brokering, the protocol side: Realmgate is an OpenID Connect relying party of the provider
 * (OIDC Core 3.1, the authorization code flow). What a sign-in at a provider must remember (state, nonce,
 * PKCE verifier) is derived from the pending request and the provider (src/crypto/broker-secrets.ts), so
 * the pending request is all that is stored; the state also names the request, so the callback finds it,
 * and the request is bound to the browser (a callback from another browser is refused: RFC 6749 10.12).
 */

/** Where the provider sends the user back (Keycloak's path, so a provider registered for Keycloak needs no change). */
export function brokerRedirectUri(services: Pick<Services, 'config'>, realmId: string, alias: string): string {
  return `${realmBase(services.config, realmId)}/broker/${encodeURIComponent(alias)}/endpoint`;
}

/** The provider's scope: its defaultScope (Keycloak's "openid" when empty), with openid always in it; the OAuth 2.0 providers' (GitHub, Microsoft, Facebook, Bitbucket) as set: no OpenID Connect there. */
function scopeOf(p: IdentityProvider): string {
  if (isOAuth2Only(p.providerId)) return p.config.defaultScope ?? '';
  const scopes = (p.config.defaultScope ?? '').split(/\s+/).filter((s) => s !== '');
  if (!scopes.includes('openid')) scopes.unshift('openid');
  return scopes.join(' ');
}

const pkceOn = (p: IdentityProvider): boolean => p.config.pkceEnabled === 'true';
const nonceOff = (p: IdentityProvider): boolean => p.config.disableNonce === 'true' || isOAuth2Only(p.providerId);

/**
 * What a sign-in at a provider is started for: a pending request (an application's sign-in), or a link
 * asked for on the account page (an id of its own, no parameters). Its id names it in the state.
 */
export type BrokerRequest = Pick<Interaction, 'id'> & { params: Pick<Interaction['params'], 'loginHint' | 'prompt'> };

/** The authorization request to the provider (OIDC Core 3.1.2.1; RFC 7636 with PKCE on). */
export async function providerAuthorizationUrl(services: Services, realm: Realm, p: IdentityProvider, ia: BrokerRequest, opts: { loginHint?: string } = {}): Promise<string> {
  const url = new URL(p.config.authorizationUrl!);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', p.config.clientId!);
  q.set('redirect_uri', brokerRedirectUri(services, realm.id, p.alias));
  q.set('scope', scopeOf(p));
  q.set('state', `${ia.id}.${await brokerValue(services.store, 'state', realm.id, ia.id, p.alias)}`);
  // No nonce for a provider that does not return it (Keycloak's disableNonce: LinkedIn), nor for one without OpenID Connect.
  if (!nonceOff(p)) q.set('nonce', await brokerValue(services.store, 'nonce', realm.id, ia.id, p.alias));
  if (pkceOn(p)) {
    const verifier = await brokerValue(services.store, 'pkce', realm.id, ia.id, p.alias);
    const plain = p.config.pkceMethod === 'plain';
    q.set('code_challenge', plain ? verifier : createHash('sha256').update(verifier).digest('base64url'));
    q.set('code_challenge_method', plain ? 'plain' : 'S256');
  }
  // An email routed to its organization's provider goes along as login_hint (as Keycloak's organizations).
  if (opts.loginHint) q.set('login_hint', opts.loginHint);
  else if (p.config.loginHint === 'true' && ia.params.loginHint) q.set('login_hint', ia.params.loginHint);
  if (ia.params.prompt?.includes('login')) q.set('prompt', 'login');
  // Google's hd: its account chooser offers only accounts of the hosted domain (the ID token's hd claim is
  // what is checked, in checkIdToken), as Keycloak's Google provider sends it.
  if (p.providerId === 'google' && p.config.hostedDomain) q.set('hd', p.config.hostedDomain);
  return url.toString();
}

/** The pending request a callback's state names; undefined when the state is not one Realmgate made for this provider. */
export async function interactionOfState(services: Services, realmId: string, alias: string, state: string | undefined): Promise<string | undefined> {
  if (!state) return undefined;
  const dot = state.indexOf('.');
  if (dot <= 0 || state.length > 200) return undefined;
  const id = state.slice(0, dot);
  const mac = await brokerValue(services.store, 'state', realmId, id, alias);
  return safeEqual(state.slice(dot + 1), mac) ? id : undefined;
}

/** Who the provider says signed in (Keycloak's BrokeredIdentityContext). */
export interface BrokeredIdentity {
  /** The provider's sub. */
  id: string;
  /** preferred_username, else email, else sub (as Keycloak's OIDC provider). */
  username: string;
  email: string | undefined;
  firstName: string | undefined;
  lastName: string | undefined;
  /**
   * The verified claims for the provider's mappers: the ID token's, then the UserInfo's for the names the
   * ID token does not have (Keycloak's AbstractClaimMapper looks in the ID token first). Untrusted shapes:
   * the mappers read them defensively (src/admin/operations/identity-provider-mappers.ts).
   */
  claims: Record<string, unknown>;
}

/** A sign-in at the provider that did not come through: what the user is told, and what the log gets. */
export class BrokerError extends Error {
  constructor(
    readonly userMessage: Text,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const jwksByUrl = new Map<string, JWTVerifyGetKey>();
/** Forgets the identity providers' fetched key sets (the admin API's clear-keys-cache): each is fetched again when next needed. */
export function forgetProviderKeys(): void {
  jwksByUrl.clear();
}
/** Forgets the key set fetched from one provider's JWKS URL (the admin API's reload-keys); true when one was cached. */
export function forgetProviderKeysAt(jwksUrl: string): boolean {
  return jwksByUrl.delete(jwksUrl);
}
function remoteKeys(url: string): JWTVerifyGetKey {
  let k = jwksByUrl.get(url);
  if (!k) {
    // jose caches the set and refetches it at most every 30 s for an unknown kid (a provider's key rotation).
    k = createRemoteJWKSet(new URL(url), { timeoutDuration: 10_000 });
    if (jwksByUrl.size >= 1000) jwksByUrl.delete(jwksByUrl.keys().next().value!);
    jwksByUrl.set(url, k);
  }
  return k;
}

const FAILED = msg('identityProviderAuthenticationFailedMessage');

async function postForm(url: string, body: URLSearchParams, headers: Record<string, string>): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new BrokerError(FAILED, `token endpoint unreachable: ${(err as Error).message}`);
  }
  const text = await res.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BrokerError(FAILED, `token endpoint answered ${res.status} without JSON`);
  }
  // GitHub answers a refused code with 200 and an error member (RFC 6749 5.2 says 400): refused all the same.
  if (!res.ok || typeof json !== 'object' || json === null || typeof (json as { error?: unknown }).error === 'string') {
    const e = (json as { error?: unknown } | null)?.error;
    throw new BrokerError(FAILED, `token endpoint answered ${res.status}${typeof e === 'string' ? ` ${e.slice(0, 100)}` : ''}`);
  }
  return json as Record<string, unknown>;
}

/** RFC 6749 2.3.1: client_secret_basic sends the form-urlencoded id and secret in HTTP Basic. */
const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** OIDC Core 3.1.3.7: the ID token's checks. The signature is checked against the provider's JWKS when validateSignature is on. */
async function checkIdToken(services: Services, p: IdentityProvider, idToken: string, nonce: string | undefined): Promise<JWTPayload> {
  const clientId = p.config.clientId!;
  let claims: JWTPayload;
  try {
    if (p.config.validateSignature === 'true') {
      const r = await jwtVerify(idToken, remoteKeys(p.config.jwksUrl!), {
        audience: clientId,
        ...(p.config.issuer ? { issuer: p.config.issuer } : {}),
        currentDate: new Date(services.clock.nowMs()),
        clockTolerance: 60,
      });
      claims = r.payload;
    } else {
      // 3.1.3.7 item 6: received straight from the token endpoint over TLS, the signature may go unchecked;
      // the claims are checked all the same.
      claims = decodeJwt(idToken);
      const now = nowSeconds(services.clock);
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(clientId)) throw new Error('the ID token is not for this client (aud)');
      if (p.config.issuer && claims.iss !== p.config.issuer) throw new Error('the ID token has another issuer');
      if (typeof claims.exp !== 'number' || claims.exp + 60 < now) throw new Error('the ID token has expired');
    }
  } catch (err) {
    throw new BrokerError(FAILED, `ID token refused: ${(err as Error).message}`);
  }
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (aud.length > 1 && claims.azp !== clientId) throw new BrokerError(FAILED, 'ID token refused: several audiences and azp is not this client');
  // OIDC Core 3.1.3.7 item 11: a nonce sent must come back. Without one (disableNonce), the ID token is
  // still this request's: it comes from the token endpoint for the code the state tied to this browser.
  if (nonce !== undefined && (typeof claims.nonce !== 'string' || !safeEqual(claims.nonce, nonce))) throw new BrokerError(FAILED, 'ID token refused: the nonce is not the one sent');
  if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255) throw new BrokerError(FAILED, 'ID token refused: no usable sub');
  // Google restricted to hosted domains: the hd parameter only steers the account chooser, so the ID
  // token's hd claim (the account's Google Workspace domain; none for a personal account) must be one of
  // them (https://developers.google.com/identity/openid-connect/openid-connect#hd-param).
  const domains = hostedDomains(p);
  if (domains) {
    const hd = typeof claims.hd === 'string' ? claims.hd.toLowerCase() : undefined;
    if (hd === undefined) throw new BrokerError(FAILED, "ID token refused: no hd claim, and the provider accepts accounts of its hosted domains only");
    if (!domains.includes(hd)) throw new BrokerError(FAILED, `ID token refused: hd ${JSON.stringify(hd.slice(0, 100))} is not one of the provider's hosted domains`);
  }
  return claims;
}

/** OIDC Core 5.3: the UserInfo response, whose sub must be the ID token's (5.3.2). */
async function userInfo(p: IdentityProvider, accessToken: string, sub: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(p.config.userInfoUrl!, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new BrokerError(FAILED, `userinfo endpoint unreachable: ${(err as Error).message}`);
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.includes('json')) throw new BrokerError(FAILED, `userinfo endpoint answered ${res.status} ${type.slice(0, 60)}`);
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || body.sub !== sub) throw new BrokerError(FAILED, 'userinfo refused: its sub is not the ID token\'s');
  return body;
}

const text = (v: unknown, max = 255): string | undefined => (typeof v === 'string' && v.trim() !== '' && v.length <= max ? v.trim() : undefined);

/**
 * The callback: the provider's answer to the authorization request is exchanged at its token endpoint
 * (with the PKCE verifier when on), the ID token checked, the UserInfo read when the provider has one,
 * and the identity returned. The code must be one the provider issued for this request: the state named
 * it, and the nonce in the ID token proves the token was minted for it.
 */
export async function providerIdentity(services: Services, realm: Realm, p: IdentityProvider, ia: Pick<Interaction, 'id'>, answer: { code?: string; error?: string; errorDescription?: string }): Promise<BrokeredIdentity> {
  if (answer.error) {
    const cancelled = answer.error === 'access_denied';
    throw new BrokerError(cancelled ? msg('identityProviderCancelledMessage') : FAILED, `the provider answered ${answer.error.slice(0, 100)}${answer.errorDescription ? `: ${answer.errorDescription.slice(0, 200)}` : ''}`);
  }
  if (!answer.code || answer.code.length > 4096) throw new BrokerError(FAILED, 'the provider sent no code');
  const secret = await providerSecret(services.store, p);
  if (secret === undefined) throw new BrokerError(FAILED, 'the provider\'s client secret does not open (REALMGATE_KEY_SECRET changed?)');
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: answer.code, redirect_uri: brokerRedirectUri(services, realm.id, p.alias) });
  if (pkceOn(p)) form.set('code_verifier', await brokerValue(services.store, 'pkce', realm.id, ia.id, p.alias));
  const headers: Record<string, string> = {};
  if (p.config.clientAuthMethod === 'client_secret_basic') headers.authorization = basic(p.config.clientId!, secret);
  else {
    form.set('client_id', p.config.clientId!);
    form.set('client_secret', secret);
  }
  const tokens = await postForm(p.config.tokenUrl!, form, headers);
  if (p.providerId === 'github') return githubIdentity(p, tokens);
  if (p.providerId === 'microsoft') return microsoftIdentity(p, tokens);
  if (p.providerId === 'facebook') return facebookIdentity(p, tokens);
  if (p.providerId === 'bitbucket') return bitbucketIdentity(p, tokens);
  if (typeof tokens.id_token !== 'string') throw new BrokerError(FAILED, 'the token response has no id_token (is openid in the provider\'s scope?)');
  const nonce = nonceOff(p) ? undefined : await brokerValue(services.store, 'nonce', realm.id, ia.id, p.alias);
  const idClaims: Record<string, unknown> = { ...(await checkIdToken(services, p, tokens.id_token, nonce)) };
  const claims: Record<string, unknown> = { ...idClaims };
  let mapperClaims = idClaims;
  if (p.config.userInfoUrl && p.config.disableUserInfo !== 'true' && typeof tokens.access_token === 'string') {
    const info = await userInfo(p, tokens.access_token, claims.sub as string);
    Object.assign(claims, info, { sub: claims.sub });
    mapperClaims = { ...info, ...idClaims };
  }
  const sub = claims.sub as string;
  const email = text(claims.email, 320);
  return {
    id: sub,
    username: text(claims.preferred_username) ?? email ?? sub,
    email,
    firstName: text(claims.given_name),
    lastName: text(claims.family_name),
    claims: mapperClaims,
  };
}

/** A GET of a provider's JSON API with the access token (GitHub's: it requires a User-Agent). */
async function getJson(url: string, accessToken: string, what: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Realmgate' }, redirect: 'error', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new BrokerError(FAILED, `${what} unreachable: ${(err as Error).message}`);
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.includes('json')) throw new BrokerError(FAILED, `${what} answered ${res.status} ${type.slice(0, 60)}`);
  return res.json().catch(() => undefined);
}

/**
 * GitHub (an OAuth 2.0 provider: no ID token) as Keycloak's GitHubIdentityProvider reads it: the account
 * is the user API's answer to the access token the token endpoint gave (over TLS, for this code, this
 * client and, with PKCE, this browser's verifier): its numeric id is the link, its login the username,
 * its name the first and last names (split at the first space), its email the public one, else the
 * primary one of the user's emails (the user:email scope) when GitHub has verified it (Keycloak takes it
 * either way; here an unverified address never reaches trustEmail). The whole user object goes to the mappers.
 */
async function githubIdentity(p: IdentityProvider, tokens: Record<string, unknown>): Promise<BrokeredIdentity> {
  const { user, id } = await apiAccount(p, tokens, 'the user API');
  let email = text(user.email, 320);
  if (email === undefined && p.config.emailUrl) {
    const emails = await getJson(p.config.emailUrl, tokens.access_token as string, 'the emails API');
    const primary = Array.isArray(emails) ? (emails as Array<Record<string, unknown>>).find((e) => e !== null && typeof e === 'object' && e.primary === true && e.verified === true) : undefined;
    email = text(primary?.email, 320);
  }
  return { id, username: text(user.login) ?? email ?? id, email, ...splitName(text(user.name)), claims: { ...user, sub: id } };
}

/**
 * An OAuth 2.0 provider's account: its user API's answer to the access token the token endpoint gave
 * (over TLS, for this code, this client and, with PKCE, this browser's verifier), with an id.
 */
async function apiAccount(p: IdentityProvider, tokens: Record<string, unknown>, what: string, idField = 'id'): Promise<{ user: Record<string, unknown>; id: string }> {
  if (typeof tokens.access_token !== 'string' || tokens.access_token === '') throw new BrokerError(FAILED, 'the token response has no access_token');
  const profile = await getJson(p.config.userInfoUrl!, tokens.access_token, what);
  if (!profile || typeof profile !== 'object' || Array.isArray(profile)) throw new BrokerError(FAILED, `${what} answered no user`);
  const user = profile as Record<string, unknown>;
  if (user.error !== undefined && user.error !== null) throw new BrokerError(FAILED, `${what} answered an error`);
  const raw = user[idField];
  const id = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : text(raw);
  if (id === undefined) throw new BrokerError(FAILED, `${what} answered a user without an ${idField}`);
  return { user, id };
}

const looksLikeEmail = (v: string | undefined): v is string => v !== undefined && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v);

/**
 * Microsoft (Keycloak's MicrosoftIdentityProvider, an OAuth 2.0 provider): the account is Microsoft
 * Graph's /me. Its id is the link; the email is mail, else the userPrincipalName when it is an address
 * (not a guest's); the username that email, else the id; givenName and surname the names. Graph's mail is whatever the
 * account's tenant wrote there, checked by nobody (the "nOAuth" takeovers of 2023): it is kept, but never
 * as verified, whatever trustEmail says (vouchesForEmail), and an existing user with that address is still
 * asked for their password before a link (brokeredUser's "existing").
 */
async function microsoftIdentity(p: IdentityProvider, tokens: Record<string, unknown>): Promise<BrokeredIdentity> {
  const { user, id } = await apiAccount(p, tokens, 'Microsoft Graph');
  // A guest's userPrincipalName (alice_example.com#EXT#@contoso.onmicrosoft.com) names no mailbox.
  const upn = text(user.userPrincipalName, 320);
  const mail = text(user.mail, 320);
  const email = looksLikeEmail(mail) ? mail : looksLikeEmail(upn) && !upn.includes('#EXT#') ? upn : undefined;
  return { id, username: email ?? id, email, firstName: text(user.givenName), lastName: text(user.surname), claims: { ...user, sub: id } };
}

/**
 * Facebook (Keycloak's FacebookIdentityProvider, an OAuth 2.0 provider): the account is the Graph API's
 * /me with the fields asked for. Its id is the link; the username is the email (Facebook gives only an
 * address it has confirmed, and none when there is none), else the id; first_name and last_name the names.
 */
async function facebookIdentity(p: IdentityProvider, tokens: Record<string, unknown>): Promise<BrokeredIdentity> {
  const { user, id } = await apiAccount(p, tokens, 'the Graph API');
  const email = text(user.email, 320);
  return { id, username: text(user.username) ?? email ?? id, email, firstName: text(user.first_name), lastName: text(user.last_name), claims: { ...user, sub: id } };
}

/** A name split at its first space: first name, last name (GitHub's and Bitbucket's one-field names). */
function splitName(name: string | undefined): { firstName: string | undefined; lastName: string | undefined } {
  const space = name?.indexOf(' ') ?? -1;
  return { firstName: name === undefined ? undefined : space < 0 ? name : name.slice(0, space), lastName: name === undefined || space < 0 ? undefined : text(name.slice(space + 1)) };
}

/**
 * Bitbucket Cloud (Keycloak's BitbucketIdentityProvider, an OAuth 2.0 provider): the account is the API's
 * /2.0/user (its type must be "user"); its account_id is the link (as Keycloak links it), its username (or,
 * since Bitbucket stopped giving usernames, its nickname) the username, display_name the names (split at
 * the first space). The email is the primary one of /2.0/user/emails when Bitbucket has confirmed it
 * (Keycloak takes the first address listed, confirmed or not).
 */
async function bitbucketIdentity(p: IdentityProvider, tokens: Record<string, unknown>): Promise<BrokeredIdentity> {
  const { user, id } = await apiAccount(p, tokens, 'the Bitbucket API', 'account_id');
  if (user.type !== 'user') throw new BrokerError(FAILED, 'the Bitbucket API answered no user');
  let email: string | undefined;
  if (p.config.emailUrl) {
    const emails = await getJson(p.config.emailUrl, tokens.access_token as string, 'the emails API');
    const values = emails !== null && typeof emails === 'object' ? (emails as { values?: unknown }).values : undefined;
    const primary = Array.isArray(values) ? (values as Array<Record<string, unknown>>).find((e) => e !== null && typeof e === 'object' && e.is_primary === true && e.is_confirmed === true) : undefined;
    email = text(primary?.email, 320);
  }
  return { id, username: text(user.username) ?? text(user.nickname) ?? email ?? id, email, ...splitName(text(user.display_name)), claims: { ...user, sub: id } };
}
