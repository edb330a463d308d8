import type { Services } from '../../services.js';
import type { KeyStore } from '../../crypto/keystore.js';
import type { Client, Realm, RefreshChain, User } from '../../storage/types.js';
import type { Role } from '../../storage/repos/roles.js';
import { nowSeconds } from '../../clock.js';
import { randomId } from '../../crypto/random.js';
import { buildTokenResponse } from '../../oauth/tokens.js';
import { claimScopes, defaultScopesOf } from '../../oauth/scopes.js';
import { compileMapper } from '../../oauth/protocol-mappers.js';
import { subjectOfUser } from '../../storage/repos/mappers.js';
import { userInfoClaims } from '../../oidc/userinfo.js';
import { limitToScope } from '../../oauth/role-scope.js';

/**
 * Keycloak's client scope evaluation (ClientScopeEvaluateResource, the console's "Client scopes >
 * Evaluate"): what a client's tokens would carry for a user and a scope parameter, computed by the same
 * code that issues them, with nothing stored, signed or recorded.
 */

/** Who and what an example is for. */
export interface ExampleInput {
  realm: Realm;
  client: Client;
  user: User;
  /** The scope parameter as given (space-separated; absent or blank: none). */
  scope: string | undefined;
}

/**
 * The scopes a token request with this scope parameter would be granted: the requested scopes the realm
 * has and the client may ask for, in the order asked, each once (Keycloak ignores the others, where the
 * token endpoint refuses them); none of those: the client's default scopes, as a password grant without
 * `scope` gets them (offline_access is never granted unasked).
 */
export async function evaluatedScopes(services: Services, realmId: string, client: Client, scope: string | undefined): Promise<string[]> {
  const realmScopes = (await services.cache.realmScopes(realmId)) ?? new Map();
  const out: string[] = [];
  for (const s of (scope ?? '').split(/\s+/)) {
    if (s !== '' && realmScopes.has(s) && client.scopes.includes(s) && !out.includes(s)) out.push(s);
  }
  return out.length > 0 ? out : defaultScopesOf(client).filter((s) => s !== 'offline_access');
}

/**
 * The organization the user's tokens would name: their one organization; of several, the first the
 * organization page lists (by name), since an example has no one to choose; none without one.
 */
async function exampleOrganization(services: Services, userId: string): Promise<string | null> {
  const orgs = await services.store.users.organizations(userId);
  return orgs[0]?.alias ?? null;
}

/**
 * The claims of the access token and (with openid) the ID token the token endpoint would issue, from
 * buildTokenResponse itself: its signer is swapped for one that keeps the claims, so the example can
 * never drift from a real token. The chain and session it is given exist nowhere (sid and jti name
 * nothing); the refresh token is never minted.
 */
async function exampleClaims(services: Services, input: ExampleInput, scopes: string[]): Promise<{ access: Record<string, unknown>; id?: Record<string, unknown> }> {
  const { realm, client, user } = input;
  const signed: Array<Record<string, unknown>> = [];
  const keys = Object.create(services.keys) as KeyStore;
  keys.sign = async (_realmId, payload) => {
    signed.push({ ...payload });
    return 'example';
  };
  const now = nowSeconds(services.clock);
  const chain: RefreshChain = {
    id: randomId(),
    realmId: realm.id,
    clientId: client.clientId,
    userId: user.id,
    organizationId: '',
    scopes,
    sessionId: randomId(),
    authTime: now,
    createdAt: now,
    maxExpiresAt: now + realm.refreshMaxLifetime,
    revokedAt: null,
    dpopJkt: null,
  };
  const subject = { ...subjectOfUser(user), organizationAlias: await exampleOrganization(services, user.id) };
  const refresh = { value: '', hash: '', expiresAt: now + realm.refreshIdleLifetime };
  await buildTokenResponse({ ...services, keys }, { realm, client, chain, subject, scopes, refresh, now });
  const access = signed.find((c) => c.typ !== 'ID')!;
  const id = signed.find((c) => c.typ === 'ID');
  if (id) {
    // at_hash is the hash of the signed access token, and there is none (Keycloak's example has none either).
    delete id.at_hash;
  }
  return id ? { access, id } : { access };
}

/** scopes with openid, which an ID token and a UserInfo answer need (Keycloak's examples have no such condition). */
function withOpenid(scopes: string[]): string[] {
  return scopes.includes('openid') ? scopes : ['openid', ...scopes];
}

/** The claims of the access token the client would get for the user with this scope parameter. */
export async function exampleAccessToken(services: Services, input: ExampleInput): Promise<Record<string, unknown>> {
  const scopes = await evaluatedScopes(services, input.realm.id, input.client, input.scope);
  return (await exampleClaims(services, input, scopes)).access;
}

/** The claims of the ID token the client would get for the user with this scope parameter, openid added if missing. */
export async function exampleIdToken(services: Services, input: ExampleInput): Promise<Record<string, unknown>> {
  const scopes = withOpenid(await evaluatedScopes(services, input.realm.id, input.client, input.scope));
  return (await exampleClaims(services, input, scopes)).id!;
}

/** The UserInfo answer to an access token of the client for the user with this scope parameter, openid added if missing. */
export async function exampleUserInfo(services: Services, input: ExampleInput): Promise<Record<string, unknown>> {
  const { realm, client, user } = input;
  const scopes = withOpenid(await evaluatedScopes(services, realm.id, client, input.scope));
  const org = await exampleOrganization(services, user.id);
  return userInfoClaims(services, { realmId: realm.id, user, client, clientId: client.clientId, scopes, organization: org ? [org] : undefined });
}

/** Keycloak's ProtocolMapperEvaluationRepresentation. */
export interface ProtocolMapperEvaluation {
  mapperId: string;
  mapperName: string;
  containerId: string;
  containerName: string;
  containerType: 'client' | 'client-scope';
  protocolMapper: string;
}

const ATTRIBUTE = 'oidc-usermodel-attribute-mapper';

/**
 * The claims Realmgate writes itself for its standard scopes (src/oauth/tokens.ts scopedClaims,
 * groupClaims), named as the default mappers of Keycloak's client scopes of the same names. The role and
 * organization claims, which Realmgate writes whatever the scopes, belong to no scope and are not listed.
 */
const BUILT_IN: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  profile: [
    ['username', ATTRIBUTE],
    ['full name', 'oidc-full-name-mapper'],
    ['given name', ATTRIBUTE],
    ['family name', ATTRIBUTE],
    ['middle name', ATTRIBUTE],
    ['nickname', ATTRIBUTE],
    ['profile', ATTRIBUTE],
    ['picture', ATTRIBUTE],
    ['website', ATTRIBUTE],
    ['gender', ATTRIBUTE],
    ['birthdate', ATTRIBUTE],
    ['zoneinfo', ATTRIBUTE],
    ['locale', ATTRIBUTE],
    ['updated at', ATTRIBUTE],
  ],
  email: [
    ['email', ATTRIBUTE],
    ['email verified', 'oidc-usermodel-property-mapper'],
  ],
  phone: [
    ['phone number', ATTRIBUTE],
    ['phone number verified', ATTRIBUTE],
  ],
  address: [['address', 'oidc-address-mapper']],
  groups: [['groups', 'oidc-group-membership-mapper']],
};

/**
 * The protocol mappers a token of the client would apply with this scope parameter, in the order they
 * apply: for each scope whose claims it releases (openid implies the default profile and email), its
 * built-in claims (mapperId `builtin:<scope>:<name>`) and its own mappers, then the client's own mappers
 * (applied last: theirs win). A stored mapper that cannot give a claim (a setting missing) is left out,
 * as tokens leave it out.
 */
export async function effectiveMappers(services: Services, input: Omit<ExampleInput, 'user'>): Promise<ProtocolMapperEvaluation[]> {
  const { realm, client } = input;
  const released = claimScopes(await evaluatedScopes(services, realm.id, client, input.scope), client);
  const stored = (await services.store.protocolMappers.listRealm(realm.id)).filter((m) => compileMapper(m) !== undefined);
  const out: ProtocolMapperEvaluation[] = [];
  for (const scope of released) {
    const container = { containerId: scope, containerName: scope, containerType: 'client-scope' as const };
    for (const [name, type] of Object.hasOwn(BUILT_IN, scope) ? BUILT_IN[scope]! : []) out.push({ mapperId: `builtin:${scope}:${name.replace(/ /g, '-')}`, mapperName: name, ...container, protocolMapper: type });
    for (const m of stored) if (m.ownerType === 'scope' && m.owner === scope) out.push({ mapperId: m.id, mapperName: m.name, ...container, protocolMapper: m.type });
  }
  for (const m of stored) {
    if (m.ownerType === 'client' && m.owner === client.clientId) {
      out.push({ mapperId: m.id, mapperName: m.name, containerId: client.clientId, containerName: '', containerType: 'client', protocolMapper: m.type });
    }
  }
  return out;
}

/**
 * Keycloak's evaluated scope mappings of a role container (the realm, or a client), for a client and a
 * scope parameter (ClientScopeEvaluateScopeMappingsResource): the roles of the container that the
 * client's tokens with those scopes may carry (granted), or the others (not granted). A client with
 * fullScopeAllowed is granted every role; a limited one the roles in its scope (src/oauth/role-scope.ts).
 */
export async function grantedRoles(services: Services, input: { realmId: string; client: Client; scope: string | undefined; roleClientId: string; granted: boolean }): Promise<Role[]> {
  const all = await services.store.roles.list(input.realmId, input.roleClientId);
  if (input.client.fullScopeAllowed) return input.granted ? all : [];
  const scopes = await evaluatedScopes(services, input.realmId, input.client, input.scope);
  const asHeld = input.roleClientId === '' ? { realm: all.map((r) => r.name), clients: {} } : { realm: [], clients: { [input.roleClientId]: all.map((r) => r.name) } };
  const inScope = limitToScope(asHeld, input.client, scopes, await services.cache.roleScopes(input.realmId));
  const kept = new Set(input.roleClientId === '' ? (inScope?.realm ?? []) : (inScope?.clients[input.roleClientId] ?? []));
  return all.filter((r) => kept.has(r.name) === input.granted);
}
