import type { Services } from '../services.js';
import type { Client, Realm } from '../storage/types.js';
import { realmBase } from '../services.js';
import { readParams, type RawParams } from '../oauth/params.js';
import { OAuthError } from '../oauth/errors.js';
import { isEmittableUri } from '../oauth/authorize/checks.js';

export class LogoutError extends Error {}

export interface LogoutRequest {
  client: Client | undefined;
  /** Verified against the client's registered post-logout redirect URIs. */
  postLogoutRedirectUri: string | undefined;
  state: string | undefined;
  /** The session the id_token_hint was issued for, when the hint was valid. */
  hintSid: string | undefined;
}

/**
 * OpenID Connect RP-Initiated Logout 1.0, section 2: validates the request. The post-logout redirect
 * URI must be registered for the client named by id_token_hint or client_id; nothing is redirected
 * otherwise.
 */
export async function parseLogoutRequest(services: Services, realm: Realm, raw: RawParams): Promise<LogoutRequest> {
  let p;
  try {
    p = readParams(raw, ['id_token_hint', 'post_logout_redirect_uri', 'state', 'client_id']);
  } catch (err) {
    if (err instanceof OAuthError) throw new LogoutError(err.description);
    throw err;
  }
  let clientId = p.get('client_id');
  let hintSid: string | undefined;
  const hint = p.get('id_token_hint');
  if (hint !== undefined) {
    // An expired id token is still a fine hint of who is logging out (RP-Initiated Logout 2).
    const claims = hint.length <= 8192 ? await services.keys.verify(realm.id, hint, { issuer: realmBase(services.config, realm.id), nowSeconds: 0 }) : undefined;
    if (!claims || claims.typ !== 'ID' || typeof claims.aud !== 'string') throw new LogoutError('The id_token_hint is not an ID token of this realm.');
    if (clientId !== undefined && clientId !== claims.aud) throw new LogoutError('client_id does not match the id_token_hint.');
    clientId = claims.aud;
    hintSid = typeof claims.sid === 'string' ? claims.sid : undefined;
  }
  const client = clientId !== undefined ? await services.cache.client(realm.id, clientId) : undefined;
  if (clientId !== undefined && (!client || !client.enabled)) throw new LogoutError('The application is not registered with this server.');
  const uri = p.get('post_logout_redirect_uri');
  if (uri !== undefined) {
    if (!client) throw new LogoutError('post_logout_redirect_uri needs id_token_hint or client_id.');
    if (!client.postLogoutRedirectUris.includes(uri)) throw new LogoutError('The address to return to after logout is not registered for this application.');
    if (!isEmittableUri(uri)) throw new LogoutError('The address registered to return to after logout cannot be used. Its administrator must register it again.');
  }
  return { client, postLogoutRedirectUri: uri, state: p.get('state'), hintSid };
}
