import type { MapperOwnerType, ProtocolMapper, Subject } from '../storage/types.js';

/**
 * Keycloak's protocol mappers of OpenID Connect (custom claims), compiled once when a realm's mappers are
 * loaded (ConfigCache) and applied to each token. The checks of the admin doors live in
 * src/admin/operations/protocol-mappers.ts; this module holds what both sides share.
 */

export const ATTRIBUTE_MAPPER = 'oidc-usermodel-attribute-mapper';
export const HARDCODED_MAPPER = 'oidc-hardcoded-claim-mapper';
export const AUDIENCE_MAPPER = 'oidc-audience-mapper';
export const GROUP_MAPPER = 'oidc-group-membership-mapper';

/** The mapper types Realmgate runs; any other is refused by the admin API and reported by the import. */
export const MAPPER_TYPES: readonly string[] = [ATTRIBUTE_MAPPER, HARDCODED_MAPPER, AUDIENCE_MAPPER, GROUP_MAPPER];

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

/** Keycloak's jsonType.label values; absent means the value as it is (a string). */
export const JSON_TYPES: readonly string[] = ['String', 'long', 'int', 'boolean', 'JSON'];

/** A converter returns undefined for a value it cannot convert: that value is left out of the claim. */
type Converter = (value: string) => unknown;

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
  | { kind: 'attribute'; attribute: string }
  | { kind: 'value'; value: unknown }
  | { kind: 'groups'; fullPath: boolean }
  | { kind: 'audience'; audience: string };

/** A mapper ready to apply: its config parsed once. */
export interface CompiledMapper {
  readonly ownerType: MapperOwnerType;
  readonly owner: string;
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
      return c['user.attribute'] ? { kind: 'attribute', attribute: c['user.attribute'] } : undefined;
    case HARDCODED_MAPPER: {
      const value = c['claim.value'] === undefined ? undefined : converterOf(c['jsonType.label'])?.(c['claim.value']);
      return value === undefined ? undefined : { kind: 'value', value };
    }
    case GROUP_MAPPER:
      // Keycloak's default is the full path.
      return { kind: 'groups', fullPath: c['full.path'] !== 'false' };
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
  const convert = source.kind === 'attribute' ? converterOf(m.config['jsonType.label']) : CONVERTERS.String;
  const path = source.kind === 'audience' ? [] : parseClaimPath(m.config['claim.name'] ?? (source.kind === 'groups' ? 'groups' : ''));
  if (!convert || !path || (path.length > 0 && RESERVED_CLAIMS.has(path[0]!))) return undefined;
  const targets = targetsOf(m.config);
  // Keycloak's audience mapper writes tokens only: userinfo has no aud.
  if (source.kind === 'audience') targets.userinfo = false;
  return { ownerType: m.ownerType, owner: m.owner, path, source, multivalued: m.config.multivalued === 'true', convert, targets };
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

/** What a mapper reads about the user; the group paths are read at most once, when a group mapper applies. */
export interface MapperInput {
  subject: Pick<Subject, 'attributes'>;
  groupPaths: () => Promise<string[]>;
}

/** Reads the group paths once for every token of one response. */
export function onceGroupPaths(read: () => Promise<string[]>): () => Promise<string[]> {
  let p: Promise<string[]> | undefined;
  return () => (p ??= read());
}

async function rawValues(m: CompiledMapper, input: MapperInput): Promise<readonly string[] | undefined> {
  switch (m.source.kind) {
    case 'attribute':
      return input.subject.attributes[m.source.attribute];
    case 'groups': {
      const paths = await input.groupPaths();
      return m.source.fullPath ? paths : paths.map((p) => p.slice(p.lastIndexOf('/') + 1));
    }
    default:
      return undefined;
  }
}

/** Keycloak's mapAttributeValue: a list when multivalued, else the first value; unconvertible values left out. */
async function claimValue(m: CompiledMapper, input: MapperInput): Promise<unknown> {
  if (m.source.kind === 'value') return m.source.value;
  const values = await rawValues(m, input);
  if (!values || values.length === 0) return undefined;
  if (!m.multivalued) return m.convert(values[0]!);
  const out = values.map(m.convert).filter((v) => v !== undefined);
  return out.length > 0 ? out : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Writes the value at the claim path; an intermediate claim that is not an object is left as it is. */
function setClaim(claims: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = claims;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (next === undefined) {
      const created: Record<string, unknown> = {};
      node[key] = created;
      node = created;
    } else if (isObject(next)) node = next;
    else return;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Applies the mappers meant for `target` to the claims; returns the audiences the audience mappers add
 * (the caller decides how they join aud).
 */
export async function applyMappers(claims: Record<string, unknown>, mappers: readonly CompiledMapper[], target: TokenTarget, input: MapperInput): Promise<string[]> {
  const audiences: string[] = [];
  for (const m of mappers) {
    if (!m.targets[target]) continue;
    if (m.source.kind === 'audience') {
      if (!audiences.includes(m.source.audience)) audiences.push(m.source.audience);
      continue;
    }
    const value = await claimValue(m, input);
    if (value !== undefined) setClaim(claims, m.path, value);
  }
  return audiences;
}

/**
 * Adds the claims of the mappers meant for `target`. Their audiences join aud, except in a token narrowed
 * to RFC 8707 resources: the client asked for a token for those resources only, and another audience
 * would widen it.
 */
export async function addMapperClaims(
  claims: Record<string, unknown>,
  mappers: readonly CompiledMapper[],
  target: TokenTarget,
  input: MapperInput,
  opts: { narrowed?: boolean } = {},
): Promise<void> {
  const extra = await applyMappers(claims, mappers, target, input);
  if (extra.length > 0 && !opts.narrowed && claims.aud !== undefined) claims.aud = withAudiences(claims.aud as string | string[], extra);
}

/** aud with the audiences of mappers added (no duplicates); one value stays a string, as before. */
export function withAudiences(aud: string | string[], extra: readonly string[]): string | string[] {
  if (extra.length === 0) return aud;
  const list = typeof aud === 'string' ? [aud] : [...aud];
  for (const a of extra) if (!list.includes(a)) list.push(a);
  return list.length === 1 ? list[0]! : list;
}

/**
 * The claims an introspection answer leaves out: those of the access token's mappers whose
 * introspection.token.claim is "false" (the leaf of a nested claim; aud stays as issued).
 */
export function withoutIntrospectionHidden(claims: Record<string, unknown>, mappers: readonly CompiledMapper[]): Record<string, unknown> {
  const hidden = mappers.filter((m) => m.targets.access && !m.targets.introspection && m.path.length > 0);
  if (hidden.length === 0) return claims;
  const out = structuredClone(claims);
  for (const m of hidden) {
    let node: unknown = out;
    for (const key of m.path.slice(0, -1)) node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    if (isObject(node)) delete node[m.path[m.path.length - 1]!];
  }
  return out;
}
