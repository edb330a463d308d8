import type { Client } from '../storage/types.js';
import type { Services } from '../services.js';
import { verifyClientSecret } from '../crypto/client-secrets.js';
import { OAuthError } from './errors.js';
import type { Params } from './params.js';

export interface BasicCredentials {
  clientId: string;
  secret: string;
}

/** Decodes application/x-www-form-urlencoded text ('+' is a space); undefined when malformed. */
function formDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * RFC 6749 2.3.1 / RFC 7617: Basic base64(urlencode(client_id) ':' urlencode(client_secret)).
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
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (clientId === undefined || secret === undefined || clientId === '' || clientId.includes('\0') || secret.includes('\0')) {
    throw new OAuthError('invalid_client', 'malformed Basic credentials');
  }
  return { clientId, secret };
}

const BAD_CLIENT = 'client authentication failed';

/**
 * Authenticates the client of a token request: confidential clients by HTTP Basic (the specification's
 * method) or, when registered for it, client_secret_post; public clients by client_id in the body
 * (RFC 6749 2.3, RFC 8252 8.4). Using two methods at once is invalid_request (RFC 6749 2.3).
 */
export async function authenticateClient(services: Services, realmId: string, authorization: string | undefined, params: Params, ip = ''): Promise<Client> {
  const basic = parseBasicAuth(authorization);
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (basic && bodySecret !== undefined) throw new OAuthError('invalid_request', 'the client must not use more than one authentication method');
  if (basic) {
    if (bodyId !== undefined && bodyId !== basic.clientId) throw new OAuthError('invalid_request', 'client_id does not match the authenticated client');
    return checkSecret(services, realmId, basic.clientId, basic.secret, 'client_secret_basic', ip);
  }
  if (bodySecret !== undefined) {
    // OIDC Core 9: client_secret_post, for clients registered with it; Basic stays the default.
    if (bodyId === undefined) throw new OAuthError('invalid_client', BAD_CLIENT);
    return checkSecret(services, realmId, bodyId, bodySecret, 'client_secret_post', ip);
  }
  if (bodyId !== undefined) {
    const client = await services.cache.client(realmId, bodyId);
    if (!client || !client.enabled) throw new OAuthError('invalid_client', BAD_CLIENT, { detail: 'unknown or disabled client' });
    if (!client.public) throw new OAuthError('invalid_client', 'this client must authenticate with HTTP Basic', { detail: 'confidential client without credentials' });
    return client;
  }
  throw new OAuthError('invalid_client', 'client authentication is required: use HTTP Basic');
}

async function checkSecret(services: Services, realmId: string, clientId: string, secret: string, method: Client['authMethod'], ip: string): Promise<Client> {
  // Guessing a client secret: after repeated failures the client is refused for a while from that
  // address, even with the right secret. Past a higher count from everywhere, it is refused from every
  // address that has itself failed lately, but never from one that has not: otherwise anyone could lock
  // a real client out of the token endpoint by sending bad secrets in its name.
  const { perAddress, perClient } = services.clientFailures;
  const keyAddress = `${realmId}\0${clientId}\0${ip}`;
  const keyClient = `${realmId}\0${clientId}`;
  const wait = perAddress.hasFailed(keyAddress) ? Math.max(perAddress.blockedFor(keyAddress), perClient.blockedFor(keyClient)) : 0;
  // RFC 6749 5.2: invalid_client stays a 401; Retry-After says when to try again.
  if (wait > 0) throw new OAuthError('invalid_client', 'too many failed authentication attempts: retry later', { retryAfter: Math.ceil(wait / 1000) });
  try {
    return await verifyClient(services, realmId, clientId, secret, method);
  } catch (err) {
    if (err instanceof OAuthError) {
      perAddress.fail(keyAddress);
      perClient.fail(keyClient);
    }
    throw err;
  }
}

async function verifyClient(services: Services, realmId: string, clientId: string, secret: string, method: Client['authMethod']): Promise<Client> {
  const client = await services.cache.client(realmId, clientId);
  if (!client || !client.enabled || client.public || !client.secretHash) {
    throw new OAuthError('invalid_client', BAD_CLIENT, { detail: client ? 'client disabled, public or without secret' : 'unknown client' });
  }
  if (client.authMethod !== method) {
    throw new OAuthError('invalid_client', method === 'client_secret_post' ? 'client_secret in the request body is not allowed for this client: use HTTP Basic' : BAD_CLIENT, {
      detail: `client registered for ${client.authMethod}`,
    });
  }
  if (!(await verifyClientSecret(client.secretHash, secret))) throw new OAuthError('invalid_client', BAD_CLIENT, { detail: 'wrong secret' });
  return client;
}
