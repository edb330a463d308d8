import type { Services } from '../services.js';
import type { Client, Realm } from '../storage/types.js';
import { realmBase } from '../services.js';
import { readParams, type RawParams } from '../oauth/params.js';
import { OAuthError } from '../oauth/errors.js';
import { isEmittableUri } from '../oauth/authorize/checks.js';
import { msg, type Text } from '../i18n/translator.js';

/** Why a logout request is refused: `text` in the reader's language for the page, `message` in English for the log. */
export class LogoutError extends Error {
  constructor(readonly text: Text) {
    super(String(text));
  }
}

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
    if (!claims || claims.typ !== 'ID' || typeof claims.aud !== 'string') throw new LogoutError(msg('logoutHintNotIdToken'));
    if (clientId !== undefined && clientId !== claims.aud) throw new LogoutError(msg('logoutHintClientMismatch'));
    clientId = claims.aud;
    hintSid = typeof claims.sid === 'string' ? claims.sid : undefined;
  }
  const client = clientId !== undefined ? await services.cache.client(realm.id, clientId) : undefined;
  if (clientId !== undefined && (!client || !client.enabled)) throw new LogoutError(msg('logoutUnknownApplication'));
  const uri = p.get('post_logout_redirect_uri');
  if (uri !== undefined) {
    if (!client) throw new LogoutError(msg('logoutRedirectNeedsClient'));
    if (!client.postLogoutRedirectUris.includes(uri)) throw new LogoutError(msg('logoutRedirectNotRegistered'));
    if (!isEmittableUri(uri)) throw new LogoutError(msg('logoutRedirectUnusable'));
  }
  return { client, postLogoutRedirectUri: uri, state: p.get('state'), hintSid };
}
