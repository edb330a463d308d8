import { nowSeconds } from '../clock.js';
import { randomToken, tokenHash } from '../crypto/random.js';
import type { Services } from '../services.js';
import type { Client } from '../storage/types.js';
import type { PushedParams } from '../storage/repos/pushed-requests.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError } from './errors.js';
import { readParams, type RawParams } from './params.js';
import { UntrustedRequestObject, carriesRequestObject, verifyRequestObject } from './authorize/request-object.js';
import { AUTHORIZE_PARAMETERS, AuthorizePageError, checkAuthorizationRequest, checkClientAndRedirect } from './authorize/checks.js';
import { msg } from '../i18n/translator.js';

/** RFC 9126 2.2: the request_uri is a URN of this form with a random reference. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** Seconds a client refused by a cap is told to wait (Retry-After). */
const CAP_RETRY_AFTER = 60;

export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

/** The hash under which a request_uri's pushed request is stored; undefined when it is not one of ours. */
export function requestUriHash(requestUri: string): string | undefined {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
  const reference = requestUri.slice(REQUEST_URI_PREFIX.length);
  return /^[A-Za-z0-9_-]{43}$/.test(reference) ? tokenHash(reference) : undefined;
}

/**
 * Bounded storage (issue 11): each pushed request is a row until it expires. A public client's may be
 * pushed by anyone, so they are capped per client address (as device codes are); a confidential client
 * authenticated itself, its backend may push for all its users from one address: capped per client.
 * Both under the overall cap. A request past a cap is refused, nothing already pushed is evicted.
 */
async function checkCaps(services: Services, client: Client, ip: string | undefined, now: number): Promise<void> {
  let where: string | undefined;
  const perClient = services.config.maxPushedRequestsPerClient;
  if (!client.public && (await services.store.pushedRequests.countPendingOf(client.realmId, client.clientId, now, perClient)) >= perClient) where = 'for this client';
  else {
    const cap = await services.parCaps.exceeded(client.public ? ip : undefined, now);
    if (cap) where = cap === 'address' ? 'from this address' : 'on this server';
  }
  // RFC 9126 2.3: 429 when the client sends too many requests.
  if (where) throw new OAuthError('temporarily_unavailable', `too many pending pushed authorization requests ${where}, try again later`, { status: 429, retryAfter: CAP_RETRY_AFTER });
}

/** The authorization request's parameters of a PAR body, once validated: the named ones and resource. */
function pushedParams(raw: Record<string, unknown>, clientId: string): PushedParams {
  const out: PushedParams = {};
  for (const name of AUTHORIZE_PARAMETERS) {
    const v = raw[name];
    if (typeof v === 'string' && v !== '') out[name] = v;
  }
  const resource = raw.resource;
  if (typeof resource === 'string' || (Array.isArray(resource) && resource.every((r) => typeof r === 'string'))) out.resource = resource;
  out.client_id = clientId;
  return out;
}

/** RFC 9126 3: a pushed request object; its parameters, once verified, are what is pushed. Errors in JSON. */
async function pushedRequestObject(services: Services, realmId: string, client: Client, jwt: unknown): Promise<Record<string, unknown>> {
  let verified;
  try {
    verified = await verifyRequestObject(services, realmId, client, jwt);
  } catch (err) {
    if (err instanceof UntrustedRequestObject) throw new OAuthError('invalid_request_object', err.message);
    throw err;
  }
  if (verified.problem) throw new OAuthError('invalid_request_object', verified.problem);
  return verified.params;
}

/**
 * RFC 9126 2: the pushed authorization request endpoint. The client authenticates as at the token
 * endpoint (2: same methods, same rules); the body is validated exactly as the authorization endpoint
 * validates a request (2.1, checkClientAndRedirect and checkAuthorizationRequest), its errors answered in
 * JSON (2.3); the parameters are stored under the hash of a new request_uri (2.2).
 */
export async function handlePushedAuthorizationRequest(
  services: Services,
  input: { realmId: string; authorization: string | undefined; body: RawParams; ip?: string },
): Promise<PushedAuthorizationResponse> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
  const body = input.body && typeof input.body === 'object' ? input.body : {};
  const auth = readParams(body, ['client_id', 'client_secret', 'client_assertion']);
  const client = await authenticateClient(services, realm.id, input.authorization, auth, input.ip ?? '', body);
  // RFC 9126 2.1: request_uri MUST NOT be in a pushed request.
  if (Object.hasOwn(body, 'request_uri')) throw new OAuthError('invalid_request', 'request_uri must not be pushed (RFC 9126 2.1)');
  // The client is the authenticated one (with HTTP Basic, client_id in the body is optional).
  const withObject = carriesRequestObject(body);
  const raw = withObject ? await pushedRequestObject(services, realm.id, client, body.request) : { ...body, client_id: client.clientId };
  if (client.requestObjectRequired === 'request only' && !withObject) throw new OAuthError('invalid_request', 'this client must send its authorization requests as a request object (request)');
  let redirectUri: string;
  try {
    ({ redirectUri } = await checkClientAndRedirect(raw, async (id) => (id === client.clientId ? client : undefined)));
  } catch (err) {
    // At the authorization endpoint this is a page; here the client itself asks, and is answered (2.3).
    if (err instanceof AuthorizePageError) throw new OAuthError('invalid_request', err.message);
    throw err;
  }
  const realmScopes = (await services.cache.realmScopes(realm.id)) ?? new Map();
  checkAuthorizationRequest(raw, { client, redirectUri, realm, realmScopes, pushed: true });

  const now = nowSeconds(services.clock);
  await checkCaps(services, client, input.ip, now);
  // 256 bits: the request_uri is a bearer reference to the request (RFC 9126 7.1: not guessable).
  const reference = randomToken(32);
  const expiresIn = realm.parRequestUriLifespan;
  await services.store.pushedRequests.create({
    hash: tokenHash(reference),
    realmId: realm.id,
    clientId: client.clientId,
    params: pushedParams(raw, client.clientId),
    ip: input.ip ?? null,
    now,
    expiresAt: now + expiresIn,
  });
  return { request_uri: `${REQUEST_URI_PREFIX}${reference}`, expires_in: expiresIn };
}

/**
 * RFC 9126 4: an authorization request by reference. Returns the pushed parameters, which then stand for
 * the request: every other parameter sent is ignored (client_id must still name the client that pushed
 * it). Undefined when the request carries no request_uri. The request_uri is used up here: Keycloak's
 * behaviour, and what section 4 says authorization servers SHOULD do (a reload of this URL is not
 * allowed; the sign-in pages that follow reload freely). An unknown, expired, used or other client's
 * request_uri throws AuthorizePageError: no redirect URI is verified then, so the user is told on a page.
 */
export async function takePushedRequest(services: Services, realmId: string, raw: RawParams): Promise<RawParams | undefined> {
  if (!raw || typeof raw !== 'object' || !Object.hasOwn(raw, 'request_uri')) return undefined;
  let p;
  try {
    p = readParams(raw, ['client_id', 'request_uri']);
  } catch {
    throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestDuplicatePushedMessage'));
  }
  const requestUri = p.get('request_uri');
  if (requestUri === undefined) return undefined;
  const clientId = p.get('client_id');
  // RFC 9126 4: client_id is required with request_uri (RFC 9101 5).
  if (clientId === undefined) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestNoClientIdMessage'));
  const client = await services.cache.client(realmId, clientId);
  if (!client || !client.enabled) throw new AuthorizePageError(msg('unknownApplicationTitle'), msg('clientNotRegisteredMessage'));
  // OIDC Core 3.1.2.6 / RFC 9101 5.2: request_uri naming a Request Object elsewhere (a URL to fetch) is not
  // supported; only this server's pushed requests are. No redirect_uri is verified: a page.
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) throw new AuthorizePageError(msg('unsupportedRequestTitle'), msg('requestUriNotSupportedMessage'));
  const hash = requestUriHash(requestUri);
  const params = hash ? await services.store.pushedRequests.consume(hash, realmId, client.clientId, nowSeconds(services.clock)) : undefined;
  if (!params) throw new AuthorizePageError(msg('pushedRequestExpiredTitle'), msg('pushedRequestExpiredMessage'));
  return params;
}
