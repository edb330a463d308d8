/**
 * One error type for the protocol core. `error` and `description` reach the client; `detail` only the
 * log. RFC 6749 5.2: every error is 400 except invalid_client, which is 401 when the client tried to
 * authenticate through the Authorization header.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 8628 3.5
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  // RFC 8707 2
  | 'invalid_target'
  // RFC 9449 5
  | 'invalid_dpop_proof'
  // RFC 9101 7 / OIDC Core 3.1.2.6
  | 'invalid_request_object'
  | 'request_uri_not_supported';

export class OAuthError extends Error {
  readonly status: number;
  readonly detail: string | undefined;
  /** Seconds, sent as Retry-After (a rate limit). */
  readonly retryAfter: number | undefined;
  /** The user the refused grant belongs to, when it is known (the failure event names them); never sent. */
  readonly userId: string | undefined;

  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    opts: { status?: number; detail?: string; retryAfter?: number; userId?: string } = {},
  ) {
    super(`${error}: ${description}`);
    this.status = opts.status ?? (error === 'invalid_client' ? 401 : error === 'server_error' ? 500 : 400);
    this.detail = opts.detail;
    this.retryAfter = opts.retryAfter;
    this.userId = opts.userId;
  }
}

/** RFC 6749 5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. */
export function safeDescription(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '?');
}
