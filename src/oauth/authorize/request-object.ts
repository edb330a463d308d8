import { compactVerify, decodeProtectedHeader, errors } from 'jose';
import type { Services } from '../../services.js';
import { realmBase } from '../../services.js';
import type { Client } from '../../storage/types.js';
import { ASSERTION_ALGS, ASSERTION_LEEWAY, isAssertionAlg } from '../client-assertion.js';
import { ClientKeysUnavailable, keySource } from '../client-keys.js';
import { readParams, type RawParams } from '../params.js';
import { AuthorizePageError } from './checks.js';
import { msg } from '../../i18n/translator.js';

/**
 * The algorithms a request object may be signed with: those of private_key_jwt, asymmetric only. Never
 * 'none' (RFC 9101 10.1, choice of algorithms: an unsigned object proves nothing about its sender) and never HMAC (client
 * secrets are stored only as hashes).
 */
export const REQUEST_OBJECT_ALGS = ASSERTION_ALGS;

/** A request object is a few hundred bytes to a few KB; a larger one is refused before any parsing. */
export const MAX_REQUEST_OBJECT_LENGTH = 16 * 1024;

/**
 * A request object that cannot be trusted at all (not a JWT, not signed by the client's key, an
 * algorithm refused): its redirect_uri is not the client's word, so the user is told on a page.
 */
export class UntrustedRequestObject extends Error {}

/** A request object signed by the client: its parameters, and a problem with its claims if any. */
export interface VerifiedRequestObject {
  /** The effective authorization request: the object's claims as parameters, client_id the outer one. */
  params: Record<string, unknown>;
  /**
   * Why the object is refused though its signature is the client's (iss, client_id, aud, exp, nbf,
   * nested request/request_uri): answered as invalid_request_object at the object's own redirect_uri,
   * once that is verified (RFC 9101 6.3, 7; it was signed by the client, so it is not an open redirect).
   */
  problem: string | undefined;
}

/**
 * RFC 9101 6.3 (and OIDC Core 6.1): the authorization server uses only the parameters inside the request
 * object; every parameter sent beside it except client_id is ignored. The single place where a request
 * object's claims become the request's parameters, so any new parameter is taken from the object alone.
 */
export function effectiveParameters(claims: Record<string, unknown>, clientId: string): Record<string, unknown> {
  // A JWT's own claims (iss, aud, exp...) come along: they name no authorization parameter, so are unread.
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(claims)) {
    // JSON.parse makes "__proto__" an own member; assigned, it would set the object's prototype.
    if (name === '__proto__') continue;
    // OIDC Core 6.1: max_age is a JSON number in a request object. Anything else stays what it is: an
    // array is several values (RFC 8707 resource; any other parameter refuses it), an object, a boolean
    // or null is refused as malformed when read.
    out[name] = typeof v === 'number' ? String(v) : v;
  }
  out.client_id = clientId;
  return out;
}

/**
 * Verifies a request object against the client's registered keys (the key sources of private_key_jwt:
 * jwks.url, jwks.string, certificate, public key) and the algorithm its request.object.signature.alg
 * names. Throws UntrustedRequestObject when the signature cannot be verified.
 *
 * Keycloak's rules kept: client_id is required in the object and must be the client's (its
 * AuthzEndpointRequestObjectParser); exp is checked when present but not required (Keycloak requires it
 * only through its secure-request-object client policy); jti is not single-use (Keycloak does not record
 * it either): an object is bound to its redirect_uri, state and PKCE challenge, which a replay cannot use.
 */
export async function verifyRequestObject(services: Services, realmId: string, client: Client, jwt: unknown): Promise<VerifiedRequestObject> {
  if (typeof jwt !== 'string' || jwt.length > MAX_REQUEST_OBJECT_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(jwt)) {
    throw new UntrustedRequestObject('the request object is not a signed JWT of an acceptable size (RFC 9101 4)');
  }
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw new UntrustedRequestObject('the request object\'s header is not valid');
  }
  const configured = client.requestObjectSignatureAlg;
  const allowed = configured ? [configured].filter(isAssertionAlg) : [...REQUEST_OBJECT_ALGS];
  // An empty list would let jose accept any algorithm: refuse first ('none' configured, or an unknown one).
  if (typeof alg !== 'string' || allowed.length === 0 || !allowed.includes(alg)) {
    throw new UntrustedRequestObject(`the request object must be signed with ${allowed.length > 0 ? allowed.join(', ') : 'an asymmetric algorithm'} (unsigned and HMAC request objects are refused)`);
  }
  const source = keySource(client.jwtKeys);
  if (!source) throw new UntrustedRequestObject('the application has no registered keys to verify its request object with');
  let payload: Uint8Array;
  try {
    const key = services.clientKeys.resolver(source);
    ({ payload } = await compactVerify(jwt, key as Parameters<typeof compactVerify>[1], { algorithms: allowed }));
  } catch (err) {
    if (err instanceof ClientKeysUnavailable) throw new UntrustedRequestObject('the application\'s keys could not be read');
    if (err instanceof errors.JOSEError || err instanceof TypeError) throw new UntrustedRequestObject('the request object\'s signature could not be verified with the application\'s keys');
    throw err;
  }
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch {
    throw new UntrustedRequestObject('the request object\'s claims are not JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new UntrustedRequestObject('the request object\'s claims are not a JSON object');
  const c = claims as Record<string, unknown>;
  return { params: effectiveParameters(c, client.clientId), problem: claimsProblem(services, realmId, client, c) };
}

/** RFC 9101 4, 5, 6.3 and OIDC Core 6.1: the checks of a signed request object's claims. */
function claimsProblem(services: Services, realmId: string, client: Client, c: Record<string, unknown>): string | undefined {
  // RFC 9101 5: client_id outside must be the object's client_id (Keycloak requires the claim).
  if (c.client_id !== client.clientId) return 'the request object\'s client_id must be the client_id of the request';
  // RFC 9101 4: iss, when present, is the client.
  if (c.iss !== undefined && c.iss !== client.clientId) return 'the request object\'s iss must be the client_id';
  // RFC 9101 4: aud is the authorization server's issuer identifier.
  const issuer = realmBase(services.config, realmId);
  const aud = c.aud;
  if (!(aud === issuer || (Array.isArray(aud) && aud.includes(issuer)))) return `the request object's aud must be ${issuer}`;
  const now = Math.floor(services.clock.nowMs() / 1000);
  if (c.exp !== undefined && (typeof c.exp !== 'number' || c.exp + ASSERTION_LEEWAY <= now)) return 'the request object has expired';
  if (c.nbf !== undefined && (typeof c.nbf !== 'number' || c.nbf - ASSERTION_LEEWAY > now)) return 'the request object is not valid yet (nbf)';
  // RFC 9101 4 / OIDC Core 6.1: a request object does not nest request or request_uri.
  if (Object.hasOwn(c, 'request') || Object.hasOwn(c, 'request_uri')) return 'the request object must not contain request or request_uri';
  return undefined;
}

/** Whether a request carries a request object: a request parameter, an empty one counting as absent. */
export function carriesRequestObject(raw: RawParams): boolean {
  return !!raw && typeof raw === 'object' && Object.hasOwn(raw, 'request') && raw.request !== '';
}

/**
 * OIDC Core 6.1 / RFC 9101 5 at the authorization endpoint: undefined when the request carries no
 * request object. Before its signature is verified nothing in it is trusted, so every failure up to
 * there is an AuthorizePageError (a page, never a redirect).
 */
export async function takeRequestObject(services: Services, realmId: string, raw: RawParams): Promise<VerifiedRequestObject | undefined> {
  if (!raw || typeof raw !== 'object' || !carriesRequestObject(raw)) return undefined;
  // RFC 9101 5: request and request_uri are not sent together.
  if (Object.hasOwn(raw, 'request_uri')) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestObjectAndUriMessage'));
  if (Array.isArray(raw.request)) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestObjectManyMessage'));
  let clientId;
  try {
    clientId = readParams(raw, ['client_id']).get('client_id');
  } catch {
    throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestDuplicateClientIdMessage'));
  }
  // RFC 9101 5: client_id is required beside the request object.
  if (clientId === undefined) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestNoClientIdMessage'));
  const client = await services.cache.client(realmId, clientId);
  if (!client || !client.enabled) throw new AuthorizePageError(msg('unknownApplicationTitle'), msg('clientNotRegisteredMessage'));
  try {
    return await verifyRequestObject(services, realmId, client, raw.request);
  } catch (err) {
    if (err instanceof UntrustedRequestObject) throw new AuthorizePageError(msg('invalidRequestObjectTitle'), msg('requestObjectRefusedMessage', err.message));
    throw err;
  }
}
