import type { BrowserSession, MapperOwnerType, ProtocolMapper } from '../storage/types.js';

/**
 * Keycloak's protocol mappers of OpenID Connect (custom claims), compiled once when a realm's mappers are
 * loaded (ConfigCache) and applied to each token. The checks of the admin doors live in
 * src/admin/operations/protocol-mappers.ts; this module holds what both sides share.
 */

export const ATTRIBUTE_MAPPER = 'oidc-usermodel-attribute-mapper';
export const HARDCODED_MAPPER = 'oidc-hardcoded-claim-mapper';
export const AUDIENCE_MAPPER = 'oidc-audience-mapper';
export const GROUP_MAPPER = 'oidc-group-membership-mapper';
export const PROPERTY_MAPPER = 'oidc-usermodel-property-mapper';
export const REALM_ROLE_MAPPER = 'oidc-usermodel-realm-role-mapper';
export const CLIENT_ROLE_MAPPER = 'oidc-usermodel-client-role-mapper';
export const SESSION_NOTE_MAPPER = 'oidc-usersessionmodel-note-mapper';

/** The mapper types Realmgate runs; any other is refused by the admin API and reported by the import. */
export const MAPPER_TYPES: readonly string[] = [ATTRIBUTE_MAPPER, PROPERTY_MAPPER, HARDCODED_MAPPER, AUDIENCE_MAPPER, GROUP_MAPPER, REALM_ROLE_MAPPER, CLIENT_ROLE_MAPPER, SESSION_NOTE_MAPPER];

/**
 * The notes of a browser session a session note mapper reads (Keycloak's user session notes): those
 * Realmgate keeps. IMPERSONATOR_ID and IMPERSONATOR_USERNAME (Keycloak's ImpersonationSessionNote) are set
 * when an administrator opened the session by impersonation, absent otherwise; AUTH_TIME is when the user
 * signed in (seconds). A token with no browser session (client credentials) has none.
 */
export const SESSION_NOTES: readonly string[] = ['IMPERSONATOR_ID', 'IMPERSONATOR_USERNAME', 'AUTH_TIME'];

/** A browser session's notes, as SESSION_NOTES names them. */
export function sessionNotes(session: BrowserSession | undefined): Readonly<Record<string, string>> {
  if (!session) return {};
  return {
    AUTH_TIME: String(session.authTime),
    ...(session.impersonator ? { IMPERSONATOR_ID: session.impersonator.userId, IMPERSONATOR_USERNAME: session.impersonator.username } : {}),
  };
}

/**
 * The user properties a property mapper reads (Keycloak's UserModel getters; since Keycloak 22 any other
 * name is refused). A first capital letter is accepted as Keycloak does ("Username", deprecated there).
 */
export const USER_PROPERTIES: readonly string[] = ['id', 'username', 'email', 'firstName', 'lastName', 'emailVerified', 'enabled'];

/** The property a user.attribute names, as Keycloak reads it (first letter in either case); undefined if none. */
export function userProperty(name: string): string | undefined {
  const lower = name.charAt(0).toLowerCase() + name.slice(1);
  return USER_PROPERTIES.includes(lower) ? lower : undefined;
}

/** The client role mapper's placeholder in claim.name and the role prefix: the client whose roles they are. */
export const CLIENT_ID_PLACEHOLDER = '${client_id}';

/**
 * Top-level claims no mapper may write: the protocol claims of RFC 7519, OIDC Core 2 and RFC 9068, the
 * members of an introspection answer (RFC 7662 2.2), and the claims Realmgate issues itself (the profile
 * and email claims, organization, roles and groups), so that a mapper can neither forge who a token is
 * for nor contradict what Realmgate derives from the user. Only the audience mapper adds to aud.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'azp', 'typ', 'scope', 'sid', 'nonce', 'at_hash', 'c_hash', 's_hash',
  'auth_time', 'acr', 'amr', 'cnf', 'client_id', 'session_state', 'active', 'token_type', 'username',
  'organization', 'realm_access', 'resource_access', 'groups',
  'preferred_username', 'name', 'given_name', 'family_name', 'email', 'email_verified',
]);

/**
 * The one reserved claim role mappers may write: `groups`, which MicroProfile JWT (Quarkus, Open Liberty,
 * Helidon) reads as the token's roles and Keycloak's microprofile-jwt scope fills with the realm roles.
 * Their roles join the group paths Realmgate's groups scope released, as in Keycloak (a role mapper adds to
 * a list already there).
 */
const ROLE_MAPPER_CLAIMS: ReadonlySet<string> = new Set(['groups']);

/** Whether a mapper of this type may write this top-level claim. */
export function mayWrite(type: string, topClaim: string): boolean {
  if (!RESERVED_CLAIMS.has(topClaim)) return true;
  return (type === REALM_ROLE_MAPPER || type === CLIENT_ROLE_MAPPER) && ROLE_MAPPER_CLAIMS.has(topClaim);
}

/** Keycloak's jsonType.label values; absent means the value as it is (a string). */
export const JSON_TYPES: readonly string[] = ['String', 'long', 'int', 'boolean', 'JSON'];

/** A converter returns undefined for a value it cannot convert: that value is left out of the claim. */
export type Converter = (value: string) => unknown;

const INTEGER = /^[+-]?\d{1,19}$/;

const CONVERTERS: Record<string, Converter> = {
  String: (v) => v,
  // JSON numbers beyond 2^53 lose digits in most readers: such a value is left out rather than changed.
  long: (v) => (INTEGER.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : undefined),
  int: (v) => (INTEGER.test(v) && Number(v) >= -(2 ** 31) && Number(v) < 2 ** 31 ? Number(v) : undefined),
  // As Java's Boolean.valueOf, which Keycloak uses: "true" in any case is true, anything else false.
  boolean: (v) => v.toLowerCase() === 'true',
  JSON: (v) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return undefined;
    }
  },
};

export function converterOf(jsonType: string | undefined): Converter | undefined {
  if (jsonType === undefined || jsonType === '') return CONVERTERS.String;
  return Object.hasOwn(CONVERTERS, jsonType) ? CONVERTERS[jsonType] : undefined;
}

/**
 * Keycloak's claim.name: dots nest ("address.country" is {"address": {"country": ...}}), a backslash
 * escapes the next character ("a\.b" is the one claim "a.b"). Returns undefined for an empty component,
 * and for __proto__, which a JavaScript object cannot hold as a claim.
 */
export function parseClaimPath(name: string): string[] | undefined {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < name.length; i++) {
    const ch = name[i]!;
    if (ch === '\\' && i + 1 < name.length) current += name[++i];
    else if (ch === '.') {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.every((p) => p !== '' && p !== '__proto__') ? parts : undefined;
}

/** Where a mapper's claim goes: Keycloak's flags, "true" or not. */
interface Targets {
  access: boolean;
  id: boolean;
  userinfo: boolean;
  introspection: boolean;
}

export type TokenTarget = keyof Targets;

type Source =
  | { kind: 'attribute'; attribute: string; aggregate: boolean }
  | { kind: 'property'; property: string }
  | { kind: 'value'; value: unknown }
  | { kind: 'groups'; fullPath: boolean }
  | { kind: 'sessionNote'; note: string }
  | { kind: 'audience'; audience: string }
  | { kind: 'realmRoles'; prefix: string }
  // clientId undefined: every client the user has roles of, each under claim.name with ${client_id} replaced.
  | { kind: 'clientRoles'; clientId: string | undefined; prefix: string };

/** A mapper ready to apply: its config parsed once. */
export interface CompiledMapper {
  readonly ownerType: MapperOwnerType;
  readonly owner: string;
  readonly type: string;
  /** The claim path; a client role mapper's parts may hold ${client_id}, replaced as it applies. */
  readonly path: readonly string[];
  readonly source: Source;
  readonly multivalued: boolean;
  readonly convert: Converter;
  readonly targets: Targets;
}

/**
 * Keycloak's flags: access.token.claim and id.token.claim are on only when "true"; userinfo.token.claim,
 * when absent, follows id.token.claim, and introspection.token.claim follows access.token.claim (Keycloak's
 * backwards-compatible defaults).
 */
function targetsOf(config: Record<string, string>): Targets {
  const on = (k: string): boolean | undefined => (config[k] === undefined ? undefined : config[k] === 'true');
  const access = on('access.token.claim') ?? false;
  const id = on('id.token.claim') ?? false;
  return { access, id, userinfo: on('userinfo.token.claim') ?? id, introspection: on('introspection.token.claim') ?? access };
}

function sourceOf(m: ProtocolMapper): Source | undefined {
  const c = m.config;
  switch (m.type) {
    case ATTRIBUTE_MAPPER:
      return c['user.attribute'] ? { kind: 'attribute', attribute: c['user.attribute'], aggregate: c['aggregate.attrs'] === 'true' } : undefined;
    case PROPERTY_MAPPER: {
      const property = userProperty(c['user.attribute'] ?? '');
      return property ? { kind: 'property', property } : undefined;
    }
    case REALM_ROLE_MAPPER:
      return { kind: 'realmRoles', prefix: c['usermodel.realmRoleMapping.rolePrefix'] ?? '' };
    case CLIENT_ROLE_MAPPER:
      return { kind: 'clientRoles', clientId: c['usermodel.clientRoleMapping.clientId'] || undefined, prefix: c['usermodel.clientRoleMapping.rolePrefix'] ?? '' };
    case HARDCODED_MAPPER: {
      const value = c['claim.value'] === undefined ? undefined : converterOf(c['jsonType.label'])?.(c['claim.value']);
      return value === undefined ? undefined : { kind: 'value', value };
    }
    case GROUP_MAPPER:
      // Keycloak's default is the full path.
      return { kind: 'groups', fullPath: c['full.path'] !== 'false' };
    case SESSION_NOTE_MAPPER: {
      const note = c['user.session.note'];
      return note !== undefined && SESSION_NOTES.includes(note) ? { kind: 'sessionNote', note } : undefined;
    }
    case AUDIENCE_MAPPER: {
      // Keycloak: the client's id, else the custom audience.
      const audience = c['included.client.audience'] || c['included.custom.audience'];
      return audience ? { kind: 'audience', audience } : undefined;
    }
    default:
      return undefined;
  }
}

/** Compiles a stored mapper; undefined when it cannot give a claim (an unknown type, a missing setting). */
export function compileMapper(m: ProtocolMapper): CompiledMapper | undefined {
  const source = sourceOf(m);
  if (!source) return undefined;
  const convert = source.kind === 'value' || source.kind === 'groups' || source.kind === 'audience' ? CONVERTERS.String : converterOf(m.config['jsonType.label']);
  // Every claim needs its claim.name (the group mapper's Keycloak default, groups, is Realmgate's own claim).
  const path = source.kind === 'audience' ? [] : parseClaimPath(m.config['claim.name'] ?? '');
  if (!convert || !path || (path.length > 0 && !mayWrite(m.type, path[0]!))) return undefined;
  const targets = targetsOf(m.config);
  // Keycloak's audience mapper writes tokens only: userinfo has no aud.
  if (source.kind === 'audience') targets.userinfo = false;
  return { ownerType: m.ownerType, owner: m.owner, type: m.type, path, source, multivalued: m.config.multivalued === 'true', convert, targets };
}

const NONE: readonly CompiledMapper[] = Object.freeze([]);

/** A realm's mappers, compiled and indexed by owner. */
export class RealmMappers {
  private readonly byClient = new Map<string, CompiledMapper[]>();
  private readonly byScope = new Map<string, CompiledMapper[]>();
  readonly none: boolean;

  constructor(mappers: readonly ProtocolMapper[]) {
    for (const m of mappers) {
      const c = compileMapper(m);
      if (!c) continue;
      const index = c.ownerType === 'client' ? this.byClient : this.byScope;
      const list = index.get(c.owner);
      if (list) list.push(c);
      else index.set(c.owner, [c]);
    }
    this.none = this.byClient.size === 0 && this.byScope.size === 0;
  }

  /**
   * The mappers a token applies, as Keycloak: those of the client scopes it releases, then the client's
   * own (applied last, so that a client's mapper of the same claim wins).
   */
  select(clientId: string, releasedScopes: readonly string[]): readonly CompiledMapper[] {
    if (this.none) return NONE;
    const out: CompiledMapper[] = [];
    for (const s of releasedScopes) out.push(...(this.byScope.get(s) ?? []));
    out.push(...(this.byClient.get(clientId) ?? []));
    return out;
  }
}

export const NO_MAPPERS = new RealmMappers([]);
