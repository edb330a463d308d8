import type { Client } from '../storage/types.js';
import { OAuthError } from './errors.js';
import { MAX_PARAM_LENGTH, type RawParams } from './params.js';

/**
 * RFC 8707 2: the `resource` parameter, which may be given more than once (unlike other OAuth
 * parameters, so it is read here rather than by readParams). Empty values count as absent.
 */
export function readResources(raw: RawParams): string[] {
  if (!raw || typeof raw !== 'object' || !Object.hasOwn(raw, 'resource')) return [];
  const v = raw.resource;
  const list = Array.isArray(v) ? v : [v];
  if (list.length > 20) throw new OAuthError('invalid_request', 'too many resource parameters');
  const out: string[] = [];
  for (const r of list) {
    if (typeof r !== 'string') throw new OAuthError('invalid_request', 'parameter resource is malformed');
    if (r.length > MAX_PARAM_LENGTH) throw new OAuthError('invalid_request', 'parameter resource is too long');
    if (r !== '' && !out.includes(r)) out.push(r);
  }
  return out;
}

function isAbsoluteWithoutFragment(uri: string): boolean {
  try {
    new URL(uri);
  } catch {
    return false;
  }
  return !uri.includes('#');
}

/**
 * RFC 8707 2: each resource is an absolute URI without a fragment, and one this client may ask for: one
 * of the audiences its operator gave it (`client create|update --audience`). Anything else is
 * invalid_target, before anything is issued or consumed.
 */
export function checkResources(resources: readonly string[], client: Client): void {
  for (const r of resources) {
    if (!isAbsoluteWithoutFragment(r)) throw new OAuthError('invalid_target', 'resource must be an absolute URI without a fragment');
    if (!client.audiences.includes(r)) throw new OAuthError('invalid_target', 'the client may not ask for this resource');
  }
}

/** What a grant's resources may weigh together: they ride in each of its refresh tokens. */
const MAX_BOUND_RESOURCES_LENGTH = 2048;

/**
 * The resources of a request that starts a grant (the authorization request, the device authorization
 * request), which bind it (RFC 8707 2.1): each checked as checkResources does, and all of them together
 * short enough to ride in every refresh token of the grant.
 */
export function readBoundResources(raw: RawParams, client: Client): string[] {
  const resources = readResources(raw);
  checkResources(resources, client);
  if (resources.join('').length > MAX_BOUND_RESOURCES_LENGTH) throw new OAuthError('invalid_target', 'the resources are too long together');
  return resources;
}

/**
 * The resources an access token is for, under a grant bound to `bound` (RFC 8707 2.1: the resources of
 * the authorization request apply to the whole grant). An unbound grant (no resource at the request
 * that started it, or a password grant) gives what was asked for: aud then follows
 * accessTokenAudience. A bound grant gives what was asked for when each is one of its resources (2.2:
 * a token request may narrow, never widen), else all of them; resources the operator has since taken
 * from the client are dropped, and a grant left with none is refused rather than widened to every
 * audience of the client. `requested` has passed checkResources.
 */
export function grantResources(requested: readonly string[], bound: readonly string[], client: Client): string[] {
  if (bound.length === 0) return [...requested];
  const allowed = bound.filter((r) => client.audiences.includes(r));
  const extra = requested.find((r) => !allowed.includes(r));
  if (extra !== undefined) throw new OAuthError('invalid_target', 'the resource was not named when this grant was authorized');
  if (requested.length > 0) return [...requested];
  if (allowed.length === 0) throw new OAuthError('invalid_target', 'the client may no longer ask for the resources of this grant');
  return allowed;
}
