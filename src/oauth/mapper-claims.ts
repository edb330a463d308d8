import type { Subject } from '../storage/types.js';
import type { UserRoles } from '../storage/repos/roles.js';
import { CLIENT_ID_PLACEHOLDER, mayWrite, type CompiledMapper, type TokenTarget } from './protocol-mappers.js';

/**
 * Applying compiled protocol mappers (src/oauth/protocol-mappers.ts) to the claims of a token, a UserInfo
 * answer or an introspection answer.
 */

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A group of the user as a mapper reads it. */
export interface MapperGroup {
  name: string;
  attributes: Record<string, string[]>;
}

/** What a property mapper and an attribute mapper read of the token's subject. */
export type MapperSubject = Pick<Subject, 'userId' | 'username' | 'email' | 'firstName' | 'lastName' | 'emailVerified' | 'enabled' | 'attributes'>;

/**
 * What a mapper reads about the user: the token's subject (its properties and attributes), and on demand
 * (at most once per response, only when a mapper needs them) each of the user's groups with its line of
 * ancestors from the top-level group down to it, and the user's effective roles (those of the role claims).
 */
export interface MapperInput {
  subject: MapperSubject;
  groupLines: () => Promise<ReadonlyArray<readonly MapperGroup[]>>;
  roles: () => Promise<UserRoles | undefined>;
  /** The notes of the token's browser session (src/oauth/protocol-mappers.ts sessionNotes); none without one. */
  sessionNotes?: () => Promise<Readonly<Record<string, string>>>;
}

/** Reads once for every token of one response. */
export function once<T>(read: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= read());
}

/** Keycloak's group attribute: the group's own values, else (or, aggregating, also) its parent's, up the line. */
function lineValues(line: readonly MapperGroup[], name: string, aggregate: boolean): string[] {
  const out: string[] = [];
  for (let i = line.length - 1; i >= 0; i--) {
    out.push(...(line[i]!.attributes[name] ?? []));
    if (out.length > 0 && !aggregate) break;
  }
  return out;
}

/**
 * Keycloak's user attribute (KeycloakModelUtils.resolveAttribute): the user's own values; a user without
 * any takes those of their first group (by name) that has some, through its ancestors; with
 * aggregate.attrs, the values of the user and of all their groups together, each once.
 */
async function attributeValues(name: string, aggregate: boolean, input: MapperInput): Promise<readonly string[]> {
  const own = input.subject.attributes[name] ?? [];
  if (own.length > 0 && !aggregate) return own;
  const lines = await input.groupLines();
  if (!aggregate) return lines.map((l) => lineValues(l, name, false)).find((v) => v.length > 0) ?? [];
  return [...new Set([...own, ...lines.flatMap((l) => lineValues(l, name, true))])];
}

/** Keycloak's ProtocolMapperUtils.getUserModelValue: the property as a string; none when it is null. */
function propertyValue(subject: MapperSubject, property: string): string | undefined {
  const v = property === 'id' ? subject.userId : subject[property as Exclude<keyof MapperSubject, 'attributes'>];
  return v === null || v === undefined ? undefined : String(v);
}

async function rawValues(m: CompiledMapper, input: MapperInput): Promise<readonly string[] | undefined> {
  switch (m.source.kind) {
    case 'attribute':
      return attributeValues(m.source.attribute, m.source.aggregate, input);
    case 'property': {
      const v = propertyValue(input.subject, m.source.property);
      return v === undefined ? [] : [v];
    }
    case 'realmRoles': {
      const prefix = m.source.prefix;
      return ((await input.roles())?.realm ?? []).map((r) => prefix + r);
    }
    case 'sessionNote': {
      const notes = input.sessionNotes ? await input.sessionNotes() : {};
      return Object.hasOwn(notes, m.source.note) ? [notes[m.source.note]!] : [];
    }
    case 'groups': {
      const lines = await input.groupLines();
      const fullPath = m.source.fullPath;
      return lines.map((line) => (fullPath ? `/${line.map((g) => g.name).join('/')}` : line[line.length - 1]!.name)).sort();
    }
    default:
      return undefined;
  }
}

/** Keycloak's mapAttributeValue: a list when multivalued, else the first value; unconvertible values left out. */
function mappedValue(m: CompiledMapper, values: readonly string[] | undefined): unknown {
  if (!values || values.length === 0) return undefined;
  if (!m.multivalued) return m.convert(values[0]!);
  const out = values.map(m.convert).filter((v) => v !== undefined);
  return out.length > 0 ? out : undefined;
}

async function claimValue(m: CompiledMapper, input: MapperInput): Promise<unknown> {
  // A hard-coded JSON object or list is compiled once for every token: each token gets its own copy, or a
  // mapper nesting into it (claim.name "ext.tenant") would write one user's value into the next one's token.
  if (m.source.kind === 'value') return typeof m.source.value === 'object' && m.source.value !== null ? structuredClone(m.source.value) : m.source.value;
  return mappedValue(m, await rawValues(m, input));
}

const replaceClientId = (text: string, clientId: string): string => text.split(CLIENT_ID_PLACEHOLDER).join(clientId);

/**
 * Keycloak's client role mapper: the roles of the configured client, or of every client the user has roles
 * of, each under claim.name with ${client_id} replaced by that client (one part of the path: a client id
 * with dots is not split) and with the prefix's ${client_id} replaced too (when every client's roles map).
 * A path whose top claim becomes a reserved one (a client named sub), or that would hold __proto__, is left out.
 */
async function writeClientRoles(claims: Record<string, unknown>, m: CompiledMapper, source: { clientId: string | undefined; prefix: string }, input: MapperInput): Promise<void> {
  const roles = (await input.roles())?.clients ?? {};
  const clients = source.clientId !== undefined ? [source.clientId] : Object.keys(roles).sort();
  for (const clientId of clients) {
    const own = Object.hasOwn(roles, clientId) ? roles[clientId]! : [];
    const prefix = source.clientId !== undefined ? source.prefix : replaceClientId(source.prefix, clientId);
    const value = mappedValue(m, own.map((r) => prefix + r));
    const path = m.path.map((p) => replaceClientId(p, clientId));
    if (value !== undefined && !path.includes('__proto__') && mayWrite(m.type, path[0]!)) setClaim(claims, path, value, true);
  }
}

/**
 * Writes the value at the claim path; an intermediate claim that is not an object is left as it is. With
 * `join` (role mappers, as Keycloak's AbstractUserRoleMappingMapper), a list joins a list already there.
 */
function setClaim(claims: Record<string, unknown>, path: readonly string[], value: unknown, join = false): void {
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
  const leaf = path[path.length - 1]!;
  const existing = Object.hasOwn(node, leaf) ? node[leaf] : undefined;
  if (join && Array.isArray(existing) && Array.isArray(value)) node[leaf] = [...existing, ...value.filter((v) => !existing.includes(v))];
  else node[leaf] = value;
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
    if (m.source.kind === 'clientRoles') {
      await writeClientRoles(claims, m, m.source, input);
      continue;
    }
    const value = await claimValue(m, input);
    if (value !== undefined) setClaim(claims, m.path, value, m.source.kind === 'realmRoles');
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
 * introspection.token.claim is "false" (the leaf of a nested claim; aud stays as issued). A client role
 * mapper of every client wrote one claim per client the user had roles of when the token was issued: the
 * clients of the token's own resource_access (the same roles, read at the same time).
 */
export function withoutIntrospectionHidden(claims: Record<string, unknown>, mappers: readonly CompiledMapper[]): Record<string, unknown> {
  const hidden = mappers.filter((m) => m.targets.access && !m.targets.introspection && m.path.length > 0);
  if (hidden.length === 0) return claims;
  const out = structuredClone(claims);
  const issuedFor = isObject(claims.resource_access) ? Object.keys(claims.resource_access) : [];
  for (const m of hidden) {
    const clients = m.source.kind !== 'clientRoles' ? [undefined] : m.source.clientId !== undefined ? [m.source.clientId] : issuedFor;
    for (const clientId of clients) {
      const path = clientId === undefined ? m.path : m.path.map((p) => replaceClientId(p, clientId));
      // Never a claim the mapper could not have written (a client named sub).
      if (!mayWrite(m.type, path[0]!)) continue;
      let node: unknown = out;
      for (const key of path.slice(0, -1)) node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
      if (isObject(node)) delete node[path[path.length - 1]!];
    }
  }
  return out;
}
