import type { Subject } from '../storage/types.js';
import type { CompiledMapper, TokenTarget } from './protocol-mappers.js';

/**
 * Applying compiled protocol mappers (src/oauth/protocol-mappers.ts) to the claims of a token, a UserInfo
 * answer or an introspection answer.
 */

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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
