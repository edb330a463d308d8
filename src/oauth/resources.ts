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
