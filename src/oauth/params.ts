import { OAuthError } from './errors.js';

/** Request parameters after the strict checks of RFC 6749 3.1 / 3.2: one value each, empty means absent. */
export type Params = Map<string, string>;

export type RawParams = Record<string, unknown> | null | undefined;

/** No OAuth parameter is this long (a JWT hint is ~1-2 KB); longer values are refused, not processed. */
export const MAX_PARAM_LENGTH = 8192;

/**
 * Reads the named parameters. A parameter sent more than once is invalid_request (RFC 6749 3.1, 3.2);
 * a parameter with an empty value is treated as omitted; parameters not named are ignored.
 */
export function readParams(raw: RawParams, names: readonly string[]): Params {
  const out: Params = new Map();
  if (!raw || typeof raw !== 'object') return out;
  for (const name of names) {
    if (!Object.hasOwn(raw, name)) continue;
    const v = raw[name];
    if (Array.isArray(v)) throw new OAuthError('invalid_request', `parameter ${name} is included more than once`);
    if (typeof v !== 'string') throw new OAuthError('invalid_request', `parameter ${name} is malformed`);
    if (v.length > MAX_PARAM_LENGTH) throw new OAuthError('invalid_request', `parameter ${name} is too long`);
    if (v !== '') out.set(name, v);
  }
  return out;
}

export function required(params: Params, name: string): string {
  const v = params.get(name);
  if (v === undefined) throw new OAuthError('invalid_request', `missing required parameter ${name}`);
  return v;
}
