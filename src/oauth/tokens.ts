import type { Client, Realm, RefreshChain, Subject } from '../storage/types.js';
import { claimScopes } from './scopes.js';
import { isSigningAlg } from '../crypto/keystore.js';
import type { NewToken } from '../storage/repos/tokens.js';
import { realmBase, type Services } from '../services.js';
import crypto from 'node:crypto';
import { randomToken, tokenHash } from '../crypto/random.js';
import { signRefreshJwt, type RefreshKeys } from '../crypto/refresh-jwt.js';
import { addMapperClaims, once, type MapperInput } from './mapper-claims.js';
import { sessionNotes } from './protocol-mappers.js';
import { tokenRoles } from './role-scope.js';
import type { UserRoles } from '../storage/repos/roles.js';

/** The specification's token response, in Keycloak's shape. */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: number;
  refresh_token: string;
  /** RFC 9449 5: DPoP when the access token is bound to a proof's key. */
  token_type: 'Bearer' | 'DPoP';
  'not-before-policy': number;
  session_state: string;
  scope: string;
  /** OpenID Connect Core 3.1.3.3: present when the openid scope was granted. */
  id_token?: string;
}

/**
 * OIDC Core 3.1.3.6: at_hash is the left half of the hash of the access token, with the hash of the
 * signing algorithm (SHA-256 for RS256 and ES256; SHA-512 for Ed25519, as implementations agree).
 */
export function atHash(accessToken: string, alg: string): string {
  const digest = crypto.createHash(alg === 'EdDSA' ? 'sha512' : 'sha256').update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** A fresh refresh token: the value for the client, the hash for the database. */
export interface MintedRefreshToken extends NewToken {
  value: string;
}

/** What a refresh token says about its chain. */
export interface RefreshSubject {
  chainId: string;
  clientId: string;
  userId: string;
  sessionId: string;
  /** The scopes granted to the chain (a narrower refresh request does not narrow the grant). */
  scopes: readonly string[];
  chainMaxExpiresAt: number;
  /** RFC 8707 2.1: the resources the grant is bound to (empty or absent: none). */
  resources?: readonly string[];
  /** RFC 9449 5: the key thumbprint a public client's chain is bound to, carried in its refresh tokens as cnf.jkt. */
  dpopJkt?: string | null | undefined;
}

/**
 * A refresh token lives for the realm's idle lifetime, but never past the end of its chain
 * (specification, Limits: every refresh starts a fresh period; chains last 6 to 24 months). It is a JWT
 * signed with the realm's HMAC key, shaped like Keycloak's (typ Refresh, or Offline for an offline_access
 * chain) plus the chain and its generation; the database still stores only its hash.
 */
export function mintRefreshToken(input: { realm: Realm; keys: RefreshKeys; issuer: string; chain: RefreshSubject; gen: number; now: number }): MintedRefreshToken {
  const { realm, chain, now } = input;
  const expiresAt = Math.min(now + realm.refreshIdleLifetime, chain.chainMaxExpiresAt);
  const value = signRefreshJwt(input.keys, {
    iss: input.issuer,
    aud: input.issuer,
    sub: chain.userId,
    typ: chain.scopes.includes('offline_access') ? 'Offline' : 'Refresh',
    azp: chain.clientId,
    sid: chain.sessionId,
    scope: chain.scopes.join(' '),
    iat: now,
    exp: expiresAt,
    // 128 random bits: the token is unique even when two are minted in the same second.
    jti: randomToken(16),
    chain: chain.chainId,
    gen: input.gen,
    ...(chain.resources && chain.resources.length > 0 ? { resource: [...chain.resources] } : {}),
    ...(chain.dpopJkt ? { cnf: { jkt: chain.dpopJkt } } : {}),
  });
  return { value, hash: tokenHash(value), expiresAt };
}

/**
 * The standard claims of the profile scope that Keycloak's default mappers take from user attributes
 * (claim -> attribute), each the attribute's first value.
 */
const PROFILE_ATTRIBUTE_CLAIMS: ReadonlyArray<readonly [string, string]> = [
  ['nickname', 'nickname'],
  ['middle_name', 'middleName'],
  ['picture', 'picture'],
  ['website', 'website'],
  ['gender', 'gender'],
  ['birthdate', 'birthdate'],
  ['zoneinfo', 'zoneinfo'],
  ['locale', 'locale'],
  ['profile', 'profile'],
];

/** OIDC Core 5.1.1 address members -> the attributes Keycloak's address mapper reads (street for street_address). */
const ADDRESS_ATTRIBUTES: ReadonlyArray<readonly [string, string]> = [
  ['formatted', 'formatted'],
  ['street_address', 'street'],
  ['locality', 'locality'],
  ['region', 'region'],
  ['postal_code', 'postal_code'],
  ['country', 'country'],
];

function firstValue(attributes: Subject['attributes'], name: string): string | undefined {
  return Object.hasOwn(attributes, name) ? attributes[name]![0] : undefined;
}

/** The claims of profile, phone and address that come from the user's attributes (Keycloak's default client scopes). */
function attributeClaims(claims: Record<string, unknown>, attributes: Subject['attributes'], scopes: readonly string[]): void {
  if (scopes.includes('profile')) {
    for (const [claim, name] of PROFILE_ATTRIBUTE_CLAIMS) {
      const v = firstValue(attributes, name);
      if (v !== undefined) claims[claim] = v;
    }
    // OIDC Core 5.1: updated_at is a number of seconds (Keycloak's current mapper: jsonType long); another value is left out.
    const updatedAt = firstValue(attributes, 'updatedAt');
    if (updatedAt !== undefined && /^\d{1,15}$/.test(updatedAt)) claims.updated_at = Number(updatedAt);
  }
  if (scopes.includes('phone')) {
    const phone = firstValue(attributes, 'phoneNumber');
    if (phone !== undefined) claims.phone_number = phone;
    // Keycloak's mapper has jsonType boolean: "true" in any case is true, any other value false.
    const verified = firstValue(attributes, 'phoneNumberVerified');
    if (verified !== undefined) claims.phone_number_verified = verified.toLowerCase() === 'true';
  }
  if (scopes.includes('address')) {
    const address = Object.fromEntries(ADDRESS_ATTRIBUTES.flatMap(([member, name]) => {
      const v = firstValue(attributes, name);
      return v !== undefined ? [[member, v]] : [];
    }));
    // OIDC Core 5.1.1: the members present; no address claim for a user without any.
    if (Object.keys(address).length > 0) claims.address = address;
  }
}

/**
 * Claims about the user that the scopes release (OIDC Core 5.4): profile gives preferred_username and,
 * where known, name, given_name and family_name; email gives email and email_verified. The user's
 * attributes add the other standard claims of profile, phone and address (attributeClaims).
 */
export function scopedClaims(subject: Subject, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes('profile')) {
    claims.preferred_username = subject.username;
    const name = [subject.firstName, subject.lastName].filter((n): n is string => !!n).join(' ');
    if (name) claims.name = name;
    if (subject.firstName) claims.given_name = subject.firstName;
    if (subject.lastName) claims.family_name = subject.lastName;
  }
  if (scopes.includes('email') && subject.email) {
    claims.email = subject.email;
    claims.email_verified = subject.emailVerified;
  }
  // Most users have none: a refresh for them looks no further (their row's '{}' was not even parsed, mappers.attributesOf).
  if (Object.keys(subject.attributes).length > 0) attributeClaims(claims, subject.attributes, scopes);
  return claims;
}

/**
 * Keycloak's role claims: realm_access.roles and resource_access.<client id>.roles, when the user has any
 * that a token of the client with these scopes may carry (src/oauth/role-scope.ts).
 */
export async function roleClaims(services: Services, realmId: string, userId: string, client: Client, scopes: readonly string[]): Promise<Record<string, unknown>> {
  return roleClaimsOf(await tokenRoles(services, realmId, userId, client, scopes));
}

function roleClaimsOf(roles: UserRoles | undefined): Record<string, unknown> {
  if (!roles) return {};
  const claims: Record<string, unknown> = {};
  if (roles.realm.length > 0) claims.realm_access = { roles: roles.realm };
  const clients = Object.entries(roles.clients);
  if (clients.length > 0) claims.resource_access = Object.fromEntries(clients.map(([c, r]) => [c, { roles: r }]));
  return claims;
}

/**
 * The `groups` claim (the paths of the user's groups, "/parent/child", as Keycloak's group membership
 * mapper writes it with its default "full group path"), when the `groups` scope is granted: Grafana,
 * Argo CD, Kubernetes' OIDC authenticator and mod_auth_openidc's `Require claim groups:` read it. The
 * scope exists in a realm only where an operator creates it (a client scope named `groups`).
 */
export async function groupClaims(services: Services, userId: string, scopes: readonly string[]): Promise<Record<string, unknown>> {
  if (!scopes.includes('groups')) return {};
  return { groups: await services.store.groups.userGroupPaths(userId) };
}

/**
 * The aud of an access token: the RFC 8707 resources asked for; otherwise every audience the client was
 * given (`client create|update --audience`); otherwise the realm's audience (`account` by default).
 */
export function accessTokenAudience(realm: Realm, client: Client, resources: readonly string[] | undefined): string | string[] {
  const list = resources && resources.length > 0 ? resources : client.audiences;
  if (list.length === 0) return realm.accessTokenAudience;
  return list.length === 1 ? list[0]! : [...list];
}

/** What the mappers of a token read about its user: the attributes it carries, the groups and its roles (in the client's scope) on demand. */
function mapperInputOf(services: Services, subject: Subject, roles: () => Promise<UserRoles | undefined>, sessionId?: string | null): MapperInput {
  const input: MapperInput = { subject, groupLines: once(() => services.store.groups.userGroupLines(subject.userId)), roles };
  // Read only when a session note mapper applies (never on a realm without one: the refresh's hot path).
  if (sessionId) input.sessionNotes = once(async () => sessionNotes(await services.store.sessions.get(sessionId)));
  return input;
}

/**
 * Adds the claims of the protocol mappers of the client and of the released scopes meant for one target
 * (a token of the client credentials grant, a UserInfo answer); a cache hit when the realm has none.
 */
export async function addProtocolMapperClaims(
  services: Services,
  claims: Record<string, unknown>,
  o: { realmId: string; clientId: string; client: Client | undefined; released: readonly string[]; subject: Subject; target: 'access' | 'userinfo'; sessionId?: string | null },
): Promise<void> {
  const mappers = (await services.cache.protocolMappers(o.realmId)).select(o.clientId, o.released);
  if (mappers.length > 0) await addMapperClaims(claims, mappers, o.target, mapperInputOf(services, o.subject, once(() => tokenRoles(services, o.realmId, o.subject.userId, o.client, o.released)), o.sessionId));
}

/**
 * RFC 9449 5: a public client's refresh chain is bound to the key of the proof it started with (each
 * refresh must prove that key); a confidential client's is not (it authenticates), only its access tokens are.
 */
export function chainBinding(client: Client, dpopJkt: string | undefined): string | null {
  return client.public && dpopJkt ? dpopJkt : null;
}

/** RFC 9449 6.1: the confirmation claim of an access token bound to a DPoP key; nothing when unbound. */
export function dpopConfirmation(jkt: string | undefined): { cnf?: { jkt: string } } {
  return jkt ? { cnf: { jkt } } : {};
}

export async function buildTokenResponse(
  services: Services,
  input: {
    realm: Realm;
    client: Client;
    chain: RefreshChain;
    subject: Subject;
    scopes: string[];
    refresh: MintedRefreshToken;
    now: number;
    nonce?: string | null;
    /** RFC 8707 resources of this token request, already checked against the client's audiences. */
    resources?: string[];
    /** RFC 9449: the access token is bound to this key thumbprint (cnf.jkt, RFC 7800 3.1). */
    dpopJkt?: string | undefined;
  },
): Promise<TokenResponse> {
  const { realm, client, chain, subject, scopes, now } = input;
  // With openid, the claims of Keycloak's default client scopes come without being asked for.
  const released = claimScopes(scopes, client);
  const scope = scopes.join(' ');
  const iss = realmBase(services.config, realm.id);
  const claims: Record<string, unknown> = {
    iss,
    sub: subject.userId,
    aud: accessTokenAudience(realm, client, input.resources),
    azp: chain.clientId,
    typ: 'Bearer',
    exp: now + realm.accessTokenLifetime,
    iat: now,
    // The chain's id prefixes jti, so that introspection can tell when the chain has been revoked.
    jti: `${chain.id}.${randomToken(12)}`,
    scope,
    sid: chain.sessionId,
    // Keycloak's organization claim: a list of the aliases of the selected organization; a user of no
    // organization (a realm where membership is not required) gets no claim, as in Keycloak.
    ...(subject.organizationAlias ? { organization: [subject.organizationAlias] } : {}),
    ...dpopConfirmation(input.dpopJkt),
  };
  const groups = await groupClaims(services, subject.userId, scopes);
  // The roles are read once for the role claims and for mappers that read them.
  const roles = once(() => tokenRoles(services, realm.id, subject.userId, client, scopes));
  Object.assign(claims, scopedClaims(subject, released), roleClaimsOf(await roles()), groups);
  // Keycloak's protocol mappers of the client and of the released scopes (a cache hit when the realm has none).
  const mappers = (await services.cache.protocolMappers(realm.id)).select(client.clientId, released);
  const mapperInput = mappers.length > 0 ? mapperInputOf(services, subject, roles, chain.sessionId) : undefined;
  if (mapperInput) await addMapperClaims(claims, mappers, 'access', mapperInput, { narrowed: (input.resources?.length ?? 0) > 0 });
  // RFC 9068 2.1, 2.2: header typ at+jwt and the client_id claim.
  if (realm.accessTokenFormat === 'rfc9068') claims.client_id = client.clientId;
  const accessToken = await services.keys.sign(realm.id, claims, undefined, realm.accessTokenFormat === 'rfc9068' ? { typ: 'at+jwt' } : {});
  let idToken: string | undefined;
  if (scopes.includes('openid')) {
    // OIDC Registration 2: id_token_signed_response_alg, RS256 unless the client chose another, so that
    // a realm signing its access tokens with ES256 or EdDSA still serves RS256-only relying parties.
    const idAlg = isSigningAlg(client.idTokenAlg) ? client.idTokenAlg : 'RS256';
    // OIDC Core 2 and 12.2: the same iss, sub, aud, azp and auth_time on refresh; nonce only at login.
    const idClaims: Record<string, unknown> = {
      iss,
      sub: subject.userId,
      aud: chain.clientId,
      azp: chain.clientId,
      typ: 'ID',
      exp: now + realm.accessTokenLifetime,
      iat: now,
      auth_time: chain.authTime,
      ...(input.nonce ? { nonce: input.nonce } : {}),
      at_hash: atHash(accessToken, idAlg),
      sid: chain.sessionId,
      ...scopedClaims(subject, released),
      ...groups,
    };
    if (mapperInput) await addMapperClaims(idClaims, mappers, 'id', mapperInput);
    idToken = await services.keys.sign(realm.id, idClaims, idAlg);
  }
  return {
    access_token: accessToken,
    expires_in: realm.accessTokenLifetime,
    refresh_expires_in: Math.max(0, input.refresh.expiresAt - now),
    refresh_token: input.refresh.value,
    token_type: input.dpopJkt ? 'DPoP' : 'Bearer',
    'not-before-policy': realm.notBefore,
    session_state: chain.sessionId,
    scope,
    ...(idToken ? { id_token: idToken } : {}),
  };
}
