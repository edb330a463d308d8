import type { Client, ClientAuthMethod } from '../storage/types.js';
import { isClientId, type Services } from '../services.js';
import { verifyClientSecret } from '../crypto/client-secrets.js';
import { OAuthError } from './errors.js';
import { nowSeconds } from '../clock.js';
import { metrics } from '../metrics.js';
import { readParams, type Params, type RawParams } from './params.js';
import { JWT_BEARER_ASSERTION, assertedClientId, verifyAssertion } from './client-assertion.js';

export interface BasicCredentials {
  /** The credentials form-decoded as RFC 6749 2.3.1 says (the raw ones when they do not decode). */
  clientId: string;
  secret: string;
  /** As sent, when that differs from the decoded form (RFC 7617: curl, Authlib and others send them raw). */
  raw?: { clientId: string; secret: string };
}

/** Decodes application/x-www-form-urlencoded text ('+' is a space); undefined when malformed. */
function formDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

const usable = (id: string, secret: string): boolean => id !== '' && !id.includes('\0') && !secret.includes('\0');

/**
 * HTTP Basic client credentials. RFC 6749 2.3.1 says base64(urlencode(client_id) ':' urlencode(secret));
 * many clients (curl -u, Authlib, requests) send RFC 7617's plain base64(id ':' secret). Both readings
 * split at the first colon (an encoded id has none; RFC 7617 2 forbids one in a user-id); the raw
 * reading is kept when it differs, and tried when the decoded one does not match.
 * Returns undefined when there is no Basic header, throws invalid_client when it is malformed.
 */
export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=._~-]*)[ ]*$/i.exec(header);
  if (!m) {
    if (/^Basic\b/i.test(header)) throw new OAuthError('invalid_client', 'malformed Basic credentials');
    return undefined;
  }
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
  const raw = { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  const clientId = formDecode(raw.clientId);
  const secret = formDecode(raw.secret);
  const form = clientId !== undefined && secret !== undefined && usable(clientId, secret) ? { clientId, secret } : undefined;
  const rawOk = usable(raw.clientId, raw.secret);
  if (form) return rawOk && (raw.clientId !== form.clientId || raw.secret !== form.secret) ? { ...form, raw } : form;
  if (rawOk) return raw;
  throw new OAuthError('invalid_client', 'malformed Basic credentials');
}

const BAD_CLIENT = 'client authentication failed';

/**
 * Authenticates the client of a token request: confidential clients by HTTP Basic or client_secret_post
 * (both accepted unless the operator restricted the client to one) or by a signed JWT (private_key_jwt,
 * RFC 7523 2.2, when `params` holds client_assertion), public clients by client_id in the body (RFC 6749
 * 2.3, RFC 8252 8.4). Using two methods at once is invalid_request (RFC 6749 2.3). `body` is the raw
 * request body, read only for a client assertion (its client_assertion_type).
 */
export async function authenticateClient(services: Services, realmId: string, authorization: string | undefined, params: Params, ip = '', body?: RawParams): Promise<Client> {
  const assertion = params.get('client_assertion');
  if (assertion !== undefined) return authenticateByAssertion(services, realmId, authorization, params, assertion, body, ip);
  const basic = parseBasicAuth(authorization);
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (basic && bodySecret !== undefined) throw new OAuthError('invalid_request', 'the client must not use more than one authentication method');
  if (basic) {
    if (bodyId !== undefined && bodyId !== basic.clientId && bodyId !== basic.raw?.clientId) throw new OAuthError('invalid_request', 'client_id does not match the authenticated client');
    return checkSecret(services, realmId, basic, 'client_secret_basic', ip);
  }
  if (bodySecret !== undefined) {
    if (bodyId === undefined) throw new OAuthError('invalid_client', BAD_CLIENT);
    return checkSecret(services, realmId, { clientId: bodyId, secret: bodySecret }, 'client_secret_post', ip);
  }
  if (bodyId !== undefined) {
    const client = await services.cache.client(realmId, bodyId);
    if (!client || !client.enabled) throw new OAuthError('invalid_client', BAD_CLIENT, { detail: 'unknown or disabled client' });
    if (!client.public) throw new OAuthError('invalid_client', 'this client must authenticate with its secret', { detail: 'confidential client without credentials' });
    return client;
  }
  throw new OAuthError('invalid_client', 'client authentication is required: use HTTP Basic or client_secret_post');
}

async function checkSecret(services: Services, realmId: string, creds: BasicCredentials, method: ClientAuthMethod, ip: string): Promise<Client> {
  // Basic credentials sent raw may name the client differently from their decoded reading.
  let clientId = creds.clientId;
  let secrets = creds.raw ? [creds.secret, creds.raw.secret] : [creds.secret];
  if (creds.raw && creds.raw.clientId !== creds.clientId && !(await services.cache.client(realmId, creds.clientId))) {
    clientId = creds.raw.clientId;
    secrets = [creds.raw.secret];
  }
  // Guessing a client secret: after repeated failures the client is refused for a while from that
  // address, even with the right secret. Past a higher count from everywhere, it is refused from every
  // address that has itself failed lately, but never from one that has not: otherwise anyone could lock
  // a real client out of the token endpoint by sending bad secrets in its name.
  // The limiters' keys hold the client id as sent. One that names no client (over 255 characters, not
  // VSCHAR) is counted under '' instead: each new 8 KB id would otherwise be kept, twice, until evicted.
  const { perAddress, perClient } = services.clientFailures;
  const counted = isClientId(clientId) ? clientId : '';
  const keyAddress = `${realmId}\0${counted}\0${ip}`;
  const keyClient = `${realmId}\0${counted}`;
  const wait = perAddress.hasFailed(keyAddress) ? Math.max(perAddress.blockedFor(keyAddress), perClient.blockedFor(keyClient)) : 0;
  // RFC 6749 5.2: invalid_client stays a 401; Retry-After says when to try again.
  if (wait > 0) throw new OAuthError('invalid_client', 'too many failed authentication attempts: retry later', { retryAfter: Math.ceil(wait / 1000) });
  try {
    return await verifyClient(services, realmId, clientId, secrets, method);
  } catch (err) {
    if (err instanceof OAuthError) {
      perAddress.fail(keyAddress);
      perClient.fail(keyClient);
    }
    throw err;
  }
}

async function verifyClient(services: Services, realmId: string, clientId: string, secrets: string[], method: ClientAuthMethod): Promise<Client> {
  const client = await services.cache.client(realmId, clientId);
  if (!client || !client.enabled || client.public || !client.secretHash) {
    throw new OAuthError('invalid_client', BAD_CLIENT, { detail: client ? 'client disabled, public or without secret' : 'unknown client' });
  }
  if (!client.authMethods.includes(method)) {
    const allowed = client.authMethods.includes('client_secret_basic') ? 'use HTTP Basic' : 'send client_id and client_secret in the request body';
    throw new OAuthError('invalid_client', `${method === 'client_secret_post' ? 'client_secret in the request body' : 'HTTP Basic'} is not allowed for this client: ${allowed}`, {
      detail: `client restricted to ${client.authMethods.join(', ')}`,
    });
  }
  if (await verifyClientSecret(client.secretHash, secrets)) return client;
  // The previous secret, which a rotation keeps valid for a while beside the new one (Keycloak's rotated
  // secret), until it expires or an administrator invalidates it.
  const previous = client.rotatedSecret;
  if (previous && previous.expiresAt > nowSeconds(services.clock) && (await verifyClientSecret(previous.hash, secrets))) {
    metrics.previousSecretUsed.inc({ realm: realmId, client: clientId });
    return client;
  }
  throw new OAuthError('invalid_client', BAD_CLIENT, { detail: 'wrong secret' });
}

/**
 * private_key_jwt (RFC 7523 2.2 and 3, OpenID Connect Core 1.0 9): the client proves itself with a JWT
 * signed by one of its keys. Failures count in the same limiters as wrong secrets (checkSecret), under
 * the client id the assertion names, so that guessing is limited the same way. Kept apart from
 * checkSecret so that the secret path does no more work than before.
 */
async function authenticateByAssertion(services: Services, realmId: string, authorization: string | undefined, params: Params, assertion: string, body: RawParams, ip: string): Promise<Client> {
  // RFC 6749 2.3: one method per request.
  if (authorization !== undefined && /^Basic\b/i.test(authorization)) throw new OAuthError('invalid_request', 'the client must not use more than one authentication method');
  if (params.get('client_secret') !== undefined) throw new OAuthError('invalid_request', 'the client must not use more than one authentication method');
  const type = readParams(body, ['client_assertion_type']).get('client_assertion_type');
  // RFC 7521 4.2: client_assertion_type is required with client_assertion.
  if (type === undefined) throw new OAuthError('invalid_request', 'missing required parameter client_assertion_type');
  if (type !== JWT_BEARER_ASSERTION) throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
  const { perAddress, perClient } = services.clientFailures;
  let keys: { address: string; client: string } | undefined;
  try {
    const clientId = assertedClientId(assertion, params.get('client_id'));
    const counted = isClientId(clientId) ? clientId : '';
    keys = { address: `${realmId}\0${counted}\0${ip}`, client: `${realmId}\0${counted}` };
    const wait = perAddress.hasFailed(keys.address) ? Math.max(perAddress.blockedFor(keys.address), perClient.blockedFor(keys.client)) : 0;
    if (wait > 0) throw new OAuthError('invalid_client', 'too many failed authentication attempts: retry later', { retryAfter: Math.ceil(wait / 1000) });
    const client = await services.cache.client(realmId, clientId);
    if (!client || !client.enabled || client.public) throw new OAuthError('invalid_client', BAD_CLIENT, { detail: client ? 'client disabled or public' : 'unknown client' });
    await verifyAssertion(services, realmId, client, assertion);
    return client;
  } catch (err) {
    if (err instanceof OAuthError && err.error === 'invalid_client' && err.retryAfter === undefined) {
      // An assertion naming no client is counted under '' as an unknown id is.
      const k = keys ?? { address: `${realmId}\0\0${ip}`, client: `${realmId}\0` };
      perAddress.fail(k.address);
      perClient.fail(k.client);
    }
    throw err;
  }
}
