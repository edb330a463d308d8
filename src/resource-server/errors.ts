import { DPOP_ALGS } from './dpop-proof.js';

/**
 * RFC 6750 3.1 errors as a resource server answers them: the HTTP status, the `WWW-Authenticate`
 * challenge and a small JSON body.
 */
export interface BearerError {
  /** 400 invalid_request, 401 invalid_token (or no error code at all), 403 insufficient_scope, 503 when the issuer cannot be reached. */
  status: 400 | 401 | 403 | 503;
  /** Absent when the request carried no bearer token at all (RFC 6750 3.1: no error code then). */
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'temporarily_unavailable' | 'invalid_dpop_proof';
  /** RFC 9449 7.1: the challenge is DPoP's (the token or proof was DPoP's, or a DPoP-bound token came as Bearer). */
  scheme?: 'DPoP';
  description?: string;
  /** For insufficient_scope: the scopes the resource needs (RFC 6750 3). */
  scope?: string;
}

/** The value of the `WWW-Authenticate` header for an error, e.g. `Bearer realm="api", error="invalid_token"`. */
export function bearerChallenge(err: BearerError, realm?: string): string {
  const params: string[] = [];
  if (realm) params.push(`realm="${quoted(realm)}"`);
  // A 503 is not an authentication failure: the challenge only names the scheme.
  if (err.error && err.status !== 503) params.push(`error="${err.error}"`);
  if (err.description && err.status !== 503) params.push(`error_description="${quoted(err.description)}"`);
  if (err.scope) params.push(`scope="${quoted(err.scope)}"`);
  // RFC 9449 7.1: a DPoP challenge names the algorithms a proof may use.
  if (err.scheme === 'DPoP') return `DPoP ${[...params, `algs="${DPOP_ALGS.join(' ')}"`].join(', ')}`;
  return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
}

/** The JSON body sent with an error (the same fields as the challenge, as RFC 6749 5.2 names them). */
export function errorBody(err: BearerError): Record<string, string> {
  const body: Record<string, string> = {};
  if (err.error) body.error = err.error;
  if (err.description) body.error_description = err.description;
  if (err.scope) body.scope = err.scope;
  return body;
}

// RFC 6750 3: the attribute values are limited to printable ASCII without '"' and '\'.
function quoted(s: string): string {
  return s.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '?');
}

export function noToken(): BearerError {
  return { status: 401 };
}

export function invalidRequest(description: string): BearerError {
  return { status: 400, error: 'invalid_request', description };
}

export function invalidToken(description: string): BearerError {
  return { status: 401, error: 'invalid_token', description };
}

export function invalidDpop(error: 'invalid_token' | 'invalid_dpop_proof', description: string): BearerError {
  return { status: 401, error, description, scheme: 'DPoP' };
}

export function insufficientScope(description: string, scope: string): BearerError {
  return { status: 403, error: 'insufficient_scope', description, scope };
}

export function unavailable(description: string): BearerError {
  return { status: 503, error: 'temporarily_unavailable', description };
}
