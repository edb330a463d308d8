import type { Client, Realm } from '../../storage/types.js';
import type { Services } from '../../services.js';
import type { Params, RawParams } from '../params.js';
import type { TokenResponse } from '../tokens.js';

export interface GrantContext {
  services: Services;
  realm: Realm;
  client: Client;
  params: Params;
  /** RFC 8707 resources of the request, checked against the client's audiences. */
  resources: string[];
  /** The request's parameters as sent, for those that may repeat (RFC 8693 audience). */
  raw?: RawParams;
  /** The caller's address, for the audit log. */
  ip: string | null;
  /** The caller's User-Agent: a session the grant starts keeps it (the account page, the admin API's sessions). */
  userAgent: string | undefined;
  /** RFC 9449: the thumbprint of the key of the request's valid DPoP proof; absent: no proof. */
  dpopJkt?: string;
}

/** RFC 6749 4.4.3: a client_credentials response has no refresh token (and no session). */
export type ServiceTokenResponse = Omit<TokenResponse, 'refresh_token' | 'session_state' | 'id_token'>;

/** One grant type: its name, the parameters it reads (its allowlist), and its handler. */
export interface Grant {
  grantType: string;
  parameters: readonly string[];
  handle(ctx: GrantContext): Promise<TokenResponse | ServiceTokenResponse>;
}
