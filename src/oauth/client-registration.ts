import type { Client, ClientJwtKeys } from '../storage/types.js';
import { checkRedirectUri, ValidationError } from '../admin/validation.js';

/**
 * Dynamic Client Registration (RFC 7591, RFC 7592; OpenID Connect Dynamic Client Registration 1.0):
 * client metadata read from untrusted JSON into the settings Realmgate clients have, and a stored client
 * written back as metadata. No storage, no HTTP: src/http/client-registration/ does those.
 */

/** RFC 7591 3.2.2 and RFC 6750 3.1 error codes this endpoint answers with. */
export type RegistrationErrorCode = 'invalid_redirect_uri' | 'invalid_client_metadata' | 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'server_error' | 'temporarily_unavailable';

export class RegistrationError extends Error {
  constructor(
    readonly error: RegistrationErrorCode,
    readonly description: string,
    readonly status: number = error === 'invalid_token' ? 401 : error === 'insufficient_scope' ? 403 : 400,
  ) {
    super(`${error}: ${description}`);
  }
}

const metadataError = (description: string): RegistrationError => new RegistrationError('invalid_client_metadata', description);

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** The grant types a registered client may ask for, and the client setting each one turns on. */
export const REGISTRABLE_GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'password'] as const;
export const REGISTRABLE_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'] as const;
type AuthMethod = (typeof REGISTRABLE_AUTH_METHODS)[number];

/** Bounds on lists of untrusted metadata: a client has a handful of URIs, not thousands. */
const MAX_URIS = 50;
const MAX_TEXT = 2048;

/** Client metadata after type checks and defaults (RFC 7591 2), before the realm-dependent checks of createClient. */
export interface RegistrationMetadata {
  redirectUris: string[];
  authMethod: AuthMethod;
  grantTypes: string[];
  name: string | undefined;
  /** Space-separated scopes as given; undefined: the realm's defaults. */
  scope: string | undefined;
  postLogoutRedirectUris: string[];
  idTokenAlg: string | undefined;
  backchannelLogoutUri: string | undefined;
  backchannelLogoutSessionRequired: boolean | undefined;
  frontchannelLogoutUri: string | undefined;
  frontchannelLogoutSessionRequired: boolean | undefined;
  dpopBoundAccessTokens: boolean;
  requirePushedAuthorizationRequests: boolean;
  requestObjectSigningAlg: string | undefined;
  jwksUri: string | undefined;
  /** An inline JWKS, as JSON text. */
  jwks: string | undefined;
  tokenEndpointAuthSigningAlg: string | undefined;
  /** RFC 7592 2.2: what an update names as the client's id and secret (absent at registration). */
  clientId: string | undefined;
  clientSecret: string | undefined;
}

type Json = Record<string, unknown>;

/** Convention 4: null and '' count as absent. */
function present(body: Json, key: string): unknown {
  const v = body[key];
  return v === null || v === '' ? undefined : v;
}

function text(body: Json, key: string): string | undefined {
  const v = present(body, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw metadataError(`${key} must be a string`);
  if (v.length > MAX_TEXT) throw metadataError(`${key} is longer than ${MAX_TEXT} characters`);
  return v;
}

function flag(body: Json, key: string): boolean | undefined {
  const v = present(body, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw metadataError(`${key} must be true or false`);
  return v;
}

function list(body: Json, key: string, error: 'invalid_redirect_uri' | 'invalid_client_metadata' = 'invalid_client_metadata'): string[] | undefined {
  const v = present(body, key);
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new RegistrationError(error, `${key} must be an array of strings`);
  if (v.length > MAX_URIS) throw new RegistrationError(error, `${key} has more than ${MAX_URIS} entries`);
  return [...new Set(v as string[])];
}

/** Redirect URIs under the rules every client's are checked by (src/admin/validation.ts), as RFC 7591's error. */
function uris(body: Json, key: string, error: 'invalid_redirect_uri' | 'invalid_client_metadata'): string[] {
  const values = list(body, key, error) ?? [];
  try {
    return values.map(checkRedirectUri);
  } catch (err) {
    if (err instanceof ValidationError) throw new RegistrationError(error, `${key}: ${err.message}`);
    throw err;
  }
}

/**
 * Reads client metadata (RFC 7591 2, OIDC Registration 2) from a JSON body: types strictly, defaults
 * filled in, grant and response types consistent (RFC 7591 2.1). Metadata Realmgate does not know is
 * ignored (RFC 7591 2: "MUST ignore"). Values the client operations check (scope names, URL forms,
 * algorithms, keys) are checked there, when the client is created or changed.
 */
export function readMetadata(body: unknown): RegistrationMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the client metadata must be a JSON object');
  const b = body as Json;

  const method = text(b, 'token_endpoint_auth_method') ?? 'client_secret_basic';
  if (!(REGISTRABLE_AUTH_METHODS as readonly string[]).includes(method)) {
    throw metadataError(`token_endpoint_auth_method ${JSON.stringify(method.slice(0, 64))} is not supported: use one of ${REGISTRABLE_AUTH_METHODS.join(', ')}`);
  }
  const authMethod = method as AuthMethod;

  const grantTypes = list(b, 'grant_types') ?? ['authorization_code'];
  if (grantTypes.length === 0) throw metadataError('grant_types must name at least one grant type');
  for (const g of grantTypes) {
    if (g === DEVICE_GRANT) throw metadataError(`${DEVICE_GRANT} is not a per-client setting here: leave it out (see docs/client-registration.md)`);
    if (!(REGISTRABLE_GRANTS as readonly string[]).includes(g)) throw metadataError(`grant type ${JSON.stringify(g.slice(0, 64))} is not supported: use ${REGISTRABLE_GRANTS.join(', ')}`);
  }
  if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code') && !grantTypes.includes('password')) {
    throw metadataError('refresh_token needs a grant that issues refresh tokens: authorization_code or password');
  }
  if (authMethod === 'none' && grantTypes.includes('client_credentials')) throw metadataError('client_credentials needs a client that authenticates: not token_endpoint_auth_method none');

  // RFC 7591 2.1: authorization_code goes with the "code" response type, and "code" with it.
  const code = grantTypes.includes('authorization_code');
  const responseTypes = list(b, 'response_types') ?? (code ? ['code'] : []);
  for (const r of responseTypes) if (r !== 'code') throw metadataError(`response type ${JSON.stringify(r.slice(0, 64))} is not supported: only code`);
  if (code !== responseTypes.includes('code')) throw metadataError('grant_types and response_types disagree (RFC 7591 2.1): authorization_code goes with the response type code');

  const redirectUris = uris(b, 'redirect_uris', 'invalid_redirect_uri');
  if (code && redirectUris.length === 0) throw new RegistrationError('invalid_redirect_uri', 'redirect_uris must name at least one redirect URI for the authorization_code grant');

  const jwksUri = text(b, 'jwks_uri');
  const jwksValue = present(b, 'jwks');
  if (jwksValue !== undefined && (typeof jwksValue !== 'object' || Array.isArray(jwksValue))) throw metadataError('jwks must be a JSON Web Key Set object');
  const jwks = jwksValue === undefined ? undefined : JSON.stringify(jwksValue);
  // RFC 7591 2: "MUST NOT both be present in the same request or response".
  if (jwksUri !== undefined && jwks !== undefined) throw metadataError('give jwks_uri or jwks, not both');
  if (authMethod === 'private_key_jwt' && jwksUri === undefined && jwks === undefined) throw metadataError('private_key_jwt needs the client\'s public keys: jwks_uri or jwks');

  return {
    redirectUris,
    authMethod,
    grantTypes,
    name: text(b, 'client_name'),
    scope: text(b, 'scope'),
    postLogoutRedirectUris: uris(b, 'post_logout_redirect_uris', 'invalid_client_metadata'),
    idTokenAlg: text(b, 'id_token_signed_response_alg'),
    backchannelLogoutUri: text(b, 'backchannel_logout_uri'),
    backchannelLogoutSessionRequired: flag(b, 'backchannel_logout_session_required'),
    frontchannelLogoutUri: text(b, 'frontchannel_logout_uri'),
    frontchannelLogoutSessionRequired: flag(b, 'frontchannel_logout_session_required'),
    dpopBoundAccessTokens: flag(b, 'dpop_bound_access_tokens') ?? false,
    requirePushedAuthorizationRequests: flag(b, 'require_pushed_authorization_requests') ?? false,
    requestObjectSigningAlg: text(b, 'request_object_signing_alg'),
    jwksUri,
    jwks,
    tokenEndpointAuthSigningAlg: text(b, 'token_endpoint_auth_signing_alg'),
    clientId: text(b, 'client_id'),
    clientSecret: text(b, 'client_secret'),
  };
}

/** The client settings the metadata sets (every one: an update replaces them all, RFC 7592 2.2). */
export interface RegistrationSettings {
  public: boolean;
  /** Absent for a public client. */
  authMethods: string[] | undefined;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  name: string | null;
  standardFlowEnabled: boolean;
  directAccessGrantsEnabled: boolean;
  serviceAccountsEnabled: boolean;
  idTokenAlg: string;
  backchannelLogout: { url: string | null; sessionRequired: boolean };
  frontchannelLogout: { enabled: boolean; url: string | null; sessionRequired: boolean };
  dpopBoundAccessTokens: boolean;
  requirePushedAuthorizationRequests: boolean;
  requestObjectSignatureAlg: string | null;
  jwtKeys: { useJwksUrl: boolean; jwksUrl: string | ''; useJwksString: boolean; jwksString: string | ''; signingAlg: string | '' };
}

export function settingsOf(m: RegistrationMetadata): RegistrationSettings {
  const isPublic = m.authMethod === 'none';
  return {
    public: isPublic,
    authMethods: isPublic ? undefined : [m.authMethod],
    redirectUris: m.redirectUris,
    postLogoutRedirectUris: m.postLogoutRedirectUris,
    name: m.name ?? null,
    standardFlowEnabled: m.grantTypes.includes('authorization_code'),
    directAccessGrantsEnabled: m.grantTypes.includes('password'),
    serviceAccountsEnabled: m.grantTypes.includes('client_credentials'),
    idTokenAlg: m.idTokenAlg ?? 'RS256',
    backchannelLogout: { url: m.backchannelLogoutUri ?? null, sessionRequired: m.backchannelLogoutSessionRequired ?? true },
    frontchannelLogout: { enabled: m.frontchannelLogoutUri !== undefined, url: m.frontchannelLogoutUri ?? null, sessionRequired: m.frontchannelLogoutSessionRequired ?? true },
    dpopBoundAccessTokens: m.dpopBoundAccessTokens,
    requirePushedAuthorizationRequests: m.requirePushedAuthorizationRequests,
    requestObjectSignatureAlg: m.requestObjectSigningAlg ?? null,
    jwtKeys: {
      useJwksUrl: m.jwksUri !== undefined,
      jwksUrl: m.jwksUri ?? '',
      useJwksString: m.jwks !== undefined,
      jwksString: m.jwks ?? '',
      signingAlg: m.tokenEndpointAuthSigningAlg ?? '',
    },
  };
}

/**
 * The default and optional scopes a registration's `scope` names: openid always (every Realmgate client
 * may ask for it), the others default ones, except those the client has as optional already (an update
 * sending back the scope a read returned keeps them optional).
 */
export function scopeSplit(scope: string, currentOptional: readonly string[] = []): { scopes: string; optionalScopes: string } {
  const names = [...new Set(['openid', ...scope.split(' ').filter((s) => s !== '')])];
  return { scopes: names.filter((s) => !currentOptional.includes(s)).join(' '), optionalScopes: names.filter((s) => currentOptional.includes(s)).join(' ') };
}

/** RFC 7591 3.2.1: the client's metadata as stored, defaults filled in (no secret, no registration fields). */
export function metadataOf(client: Client): Record<string, unknown> {
  const grantTypes = [
    ...(client.standardFlowEnabled ? ['authorization_code'] : []),
    ...(client.directAccessGrantsEnabled ? ['password'] : []),
    // Both issue refresh tokens; client_credentials does not (Keycloak's default too).
    ...(client.standardFlowEnabled || client.directAccessGrantsEnabled ? ['refresh_token'] : []),
    ...(client.serviceAccountsEnabled ? ['client_credentials'] : []),
  ];
  const keys: ClientJwtKeys | null = client.jwtKeys;
  let jwks: unknown;
  if (keys?.useJwksString && keys.jwksString) {
    try {
      jwks = JSON.parse(keys.jwksString);
    } catch {
      jwks = undefined;
    }
  }
  const out: Record<string, unknown> = {
    client_id: client.clientId,
    client_id_issued_at: client.createdAt,
    ...(client.name !== null ? { client_name: client.name } : {}),
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.public ? 'none' : client.authMethods[0],
    grant_types: grantTypes,
    response_types: client.standardFlowEnabled ? ['code'] : [],
    scope: client.scopes.join(' '),
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenAlg,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
  };
  if (client.backchannelLogout.url) Object.assign(out, { backchannel_logout_uri: client.backchannelLogout.url, backchannel_logout_session_required: client.backchannelLogout.sessionRequired });
  if (client.frontchannelLogout.enabled && client.frontchannelLogout.url) {
    Object.assign(out, { frontchannel_logout_uri: client.frontchannelLogout.url, frontchannel_logout_session_required: client.frontchannelLogout.sessionRequired });
  }
  if (client.requestObjectSignatureAlg) out.request_object_signing_alg = client.requestObjectSignatureAlg;
  if (keys?.useJwksUrl && keys.jwksUrl) out.jwks_uri = keys.jwksUrl;
  else if (jwks !== undefined) out.jwks = jwks;
  if (keys?.signingAlg) out.token_endpoint_auth_signing_alg = keys.signingAlg;
  // RFC 7591 3.2.1: REQUIRED when a secret was issued; 0: it does not expire.
  if (!client.public && client.secretHash) out.client_secret_expires_at = 0;
  return out;
}
