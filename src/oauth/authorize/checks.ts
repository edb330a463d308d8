import { maxAuthAge, requiredActionSetting } from '../../admin/required-actions.js';
import { APP_INITIATED_ACTIONS, type AppInitiatedAction, type Client, type Realm, type Scope, type AuthorizationParams } from '../../storage/types.js';
import { OAuthError, safeDescription } from '../errors.js';
import { readParams, type RawParams } from '../params.js';
import { checkRequestedScopes, parseScope } from '../scopes.js';
import { readBoundResources } from '../resources.js';
import { normalizeLocale } from '../../i18n/locales.js';
import { ENGLISH, msg, type Msg } from '../../i18n/translator.js';

/**
 * An error the authorization endpoint must not send to the client: shown to the user instead, in the
 * page's language. Its `message` is the description in English (a pushed request's error_description, par.ts).
 */
export class AuthorizePageError extends Error {
  constructor(
    readonly title: Msg,
    readonly description: Msg,
  ) {
    super(ENGLISH.t(description.key, ...description.args));
  }
}

export const AUTHORIZE_PARAMETERS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'response_mode',
  'prompt',
  'max_age',
  'login_hint',
  'ui_locales',
  'display',
  'kc_action',
  'kc_idp_hint',
  'kc_locale',
  'dpop_jkt',
] as const;

// OIDC Core 3.1.2.1, and `create` from Initiating User Registration via OpenID Connect 1.0 (4.1): start
// on the registration page (Keycloak's answer to it when the realm does not allow registration: an
// error page).
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account', 'create']);

/** RFC 6749 4.1.1 and 3.1.2.4: client_id and redirect_uri first; their errors are never redirected. */
export async function checkClientAndRedirect(
  raw: RawParams,
  loadClient: (clientId: string) => Promise<Client | undefined>,
): Promise<{ client: Client; redirectUri: string }> {
  let clientId: string | undefined;
  let redirectUri: string | undefined;
  try {
    const p = readParams(raw, ['client_id', 'redirect_uri']);
    clientId = p.get('client_id');
    redirectUri = p.get('redirect_uri');
  } catch {
    throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestDuplicateClientMessage'));
  }
  if (clientId === undefined) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestNoClientIdMessage'));
  const client = await loadClient(clientId);
  if (!client || !client.enabled) throw new AuthorizePageError(msg('unknownApplicationTitle'), msg('clientNotRegisteredMessage'));
  if (redirectUri === undefined) throw new AuthorizePageError(msg('invalidRequestTitle'), msg('requestNoRedirectUriMessage'));
  if (!redirectUriAllowed(client.redirectUris, redirectUri)) {
    throw new AuthorizePageError(msg('invalidRedirectUriTitle'), msg('invalidRedirectUriMessage'));
  }
  // Registration refuses such URIs now (checkRedirectUri); one stored before that is not redirected to,
  // since it cannot be sent in a Location header as it is.
  if (!isEmittableUri(redirectUri)) {
    throw new AuthorizePageError(msg('invalidRedirectUriTitle'), msg('redirectUriUnusableMessage'));
  }
  return { client, redirectUri };
}

/** A URI that can go into a Location header unchanged: visible ASCII only (RFC 9110 10.2.2, RFC 3986), no fragment. */
export function isEmittableUri(uri: string): boolean {
  return /^[\x21-\x7e]+$/.test(uri) && !uri.includes('#');
}

const LOOPBACK_IP = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

/**
 * RFC 9700 4.1.3: redirect URIs are compared as exact strings. The one exception is RFC 8252 7.3: for
 * a loopback IP literal (127.0.0.1 or [::1], not "localhost") any port is allowed, the rest of the URI
 * still matching exactly.
 */
export function redirectUriAllowed(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const req = LOOPBACK_IP.exec(requested);
  if (!req || (req[2] !== undefined && Number(req[2]) > 65535)) return false;
  return registered.some((r) => {
    const reg = LOOPBACK_IP.exec(r);
    return reg !== null && reg[1] === req[1] && (reg[3] ?? '') === (req[3] ?? '');
  });
}

/**
 * Keycloak's request.object.required (RFC 9101 request objects): a request object ("request only"), a pushed request
 * ("request_uri only": request_uri values are only ours, from PAR), or either. A pushed request counts as
 * a request object: the PAR endpoint refuses a "request only" client's push without one.
 */
function enforceRequestObjectRequired(client: Client, via: { pushed?: boolean; requestObject?: boolean }): void {
  const mode = client.requestObjectRequired;
  if (mode === 'not required') return;
  const ok = mode === 'request_uri only' ? via.pushed : via.pushed || via.requestObject;
  if (!ok) throw new OAuthError('invalid_request', `this client must send its authorization requests as ${mode === 'request only' ? 'a request object (request)' : mode === 'request_uri only' ? 'a pushed request (request_uri)' : 'a request object or a pushed request'} (RFC 9101)`);
}

const PKCE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/** The remaining checks of RFC 6749 4.1.1 and RFC 7636 4.3; their errors go back to the client. */
export function checkAuthorizationRequest(
  raw: RawParams,
  input: { client: Client; redirectUri: string; realm: Realm; realmScopes: Map<string, Scope>; pushed?: boolean; requestObject?: boolean },
): AuthorizationParams {
  const p = readParams(raw, AUTHORIZE_PARAMETERS);
  // RFC 9126 6 (Keycloak's require.pushed.authorization.requests): such a client's requests come only
  // by request_uri, never with their parameters in the front channel.
  if (input.client.requirePushedAuthorizationRequests && !input.pushed) throw new OAuthError('invalid_request', 'this client must push its authorization requests (RFC 9126): use request_uri');
  enforceRequestObjectRequired(input.client, input);
  const responseType = p.get('response_type');
  if (responseType === undefined) throw new OAuthError('invalid_request', 'missing required parameter response_type');
  if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
  const responseMode = p.get('response_mode');
  if (responseMode !== undefined && !isResponseMode(responseMode)) throw new OAuthError('invalid_request', 'response_mode must be query, fragment or form_post');

  // RFC 6749 4.1.2.1: a client whose code flow the operator switched off may not use it.
  if (!input.client.standardFlowEnabled) throw new OAuthError('unauthorized_client', 'the authorization code flow is not enabled for this client');
  const scopes = parseScope(p.get('scope'));
  checkRequestedScopes(scopes, input.client, input.realmScopes);
  // RFC 8707 2: a resource the client may not ask for is refused here already; those it may are bound to
  // the grant (2.1: they apply to the whole authorization grant), so its tokens can name no other.
  const resources = readBoundResources(raw, input.client);

  const challenge = p.get('code_challenge');
  const method = p.get('code_challenge_method');
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthError('invalid_request', 'code_challenge_method without code_challenge');
    // RFC 9700 2.1.1 / RFC 8252 8.1: public clients must use PKCE; others when their operator asks for it.
    if (input.client.public || input.client.pkceMethod === 'S256') throw new OAuthError('invalid_request', 'this client must use PKCE (code_challenge with S256)');
  } else {
    // RFC 7636 4.2, 4.3: plain is refused (RFC 9700 2.1.1); omitting the method means plain.
    if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
    if (!PKCE_CHALLENGE.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge is malformed');
  }

  // OIDC Core 3.1.2.1: prompt is a space-separated list; none may not be combined with another value.
  const prompt = (p.get('prompt') ?? '').split(' ').filter((x) => x !== '');
  for (const v of prompt) if (!PROMPTS.has(v)) throw new OAuthError('invalid_request', 'prompt has a value that is not supported');
  if (prompt.includes('none') && prompt.length > 1) throw new OAuthError('invalid_request', 'prompt=none cannot be combined with other values');
  const maxAgeRaw = p.get('max_age');
  if (maxAgeRaw !== undefined && !/^\d{1,10}$/.test(maxAgeRaw)) throw new OAuthError('invalid_request', 'max_age must be a number of seconds');
  const loginHint = p.get('login_hint');
  // Keycloak's kc_idp_hint: an unknown alias is ignored (the login page is shown), as Keycloak does.
  const idpHint = p.get('kc_idp_hint');
  // OIDC Core 3.1.2.1: ui_locales, the client's preferred languages for the pages (a space-separated
  // list of BCP 47 tags, most preferred first); tags that are none, and a list past 255 characters, are
  // ignored, as a hint may be. Keycloak's kc_locale: the language the user chose (keycloak-js sends
  // ui_locales). display is accepted and ignored.
  const uiLocales = readUiLocales(p.get('ui_locales'));
  const kcLocale = p.get('kc_locale');
  const locale = kcLocale !== undefined ? normalizeLocale(kcLocale) : undefined;
  // Keycloak's application-initiated actions: the user does the action now, then the flow goes on.
  // Keycloak's kc_action is `<action>` or `<action>:<parameter>` (idp_link:<provider alias>, delete_credential:<credential id>).
  const kcActionRaw = p.get('kc_action');
  const colon = kcActionRaw?.indexOf(':') ?? -1;
  const kcAction = kcActionRaw !== undefined && colon >= 0 ? kcActionRaw.slice(0, colon) : kcActionRaw;
  const kcActionParameter = kcActionRaw !== undefined && colon >= 0 ? kcActionRaw.slice(colon + 1) : undefined;
  if (kcActionParameter !== undefined && ((kcAction !== 'idp_link' && kcAction !== 'delete_credential') || kcActionParameter.length === 0 || kcActionParameter.length > 255)) {
    throw new OAuthError('invalid_request', 'kc_action takes a parameter only as idp_link:<identity provider alias> or delete_credential:<credential id>');
  }
  if (kcAction !== undefined && !(APP_INITIATED_ACTIONS as readonly string[]).includes(kcAction)) {
    throw new OAuthError('invalid_request', `kc_action must be one of ${APP_INITIATED_ACTIONS.join(', ')}`);
  }
  // A disabled action is not asked of anyone (Keycloak refuses it as kc_action too).
  if (kcAction !== undefined && !requiredActionSetting(input.realm, kcAction as AppInitiatedAction).enabled) throw new OAuthError('invalid_request', `kc_action ${kcAction} is disabled in this realm`);
  if (kcAction !== undefined && prompt.includes('none')) throw new OAuthError('invalid_request', 'kc_action needs the user: it cannot be combined with prompt=none');
  // RFC 9449 10: the thumbprint (RFC 7638, SHA-256: 43 base64url characters) of the key the code
  // exchange must prove.
  const dpopJkt = p.get('dpop_jkt');
  if (dpopJkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(dpopJkt)) throw new OAuthError('invalid_request', 'dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters)');
  // Keycloak's "maximum age of authentication" of an application-initiated action (the action's
  // max_auth_age, 300 s unless configured): a session signed in longer ago signs in again before the
  // action (a password or an authenticator is not changed on an old session alone); a smaller max_age wins.
  const actionAge = kcAction !== undefined ? maxAuthAge(input.realm, kcAction as AppInitiatedAction) : undefined;
  const maxAge = actionAge !== undefined ? Math.min(maxAgeRaw !== undefined ? Number(maxAgeRaw) : actionAge, actionAge) : maxAgeRaw !== undefined ? Number(maxAgeRaw) : undefined;

  return {
    ...(prompt.length > 0 ? { prompt } : {}),
    ...(maxAge !== undefined ? { maxAge } : {}),
    ...(kcAction !== undefined ? { kcAction: kcAction as AppInitiatedAction } : {}),
    ...(kcActionParameter !== undefined ? { kcActionParameter } : {}),
    ...(loginHint !== undefined && loginHint.length <= 255 ? { loginHint } : {}),
    ...(idpHint !== undefined && idpHint !== '' && idpHint.length <= 255 ? { idpHint } : {}),
    ...(uiLocales !== undefined ? { uiLocales } : {}),
    ...(locale !== undefined ? { locale } : {}),
    clientId: input.client.clientId,
    redirectUri: input.redirectUri,
    scopes,
    state: p.get('state'),
    codeChallenge: challenge,
    codeChallengeMethod: challenge === undefined ? undefined : 'S256',
    nonce: p.get('nonce'),
    ...(responseMode !== undefined && responseMode !== 'query' ? { responseMode } : {}),
    ...(resources.length > 0 ? { resources } : {}),
    ...(dpopJkt !== undefined ? { dpopJkt } : {}),
  };
}

/**
 * OAuth 2.0 Multiple Response Type Encoding Practices 2.1 (query, fragment) and OAuth 2.0 Form Post
 * Response Mode 2 (form_post): how the authorization response reaches the client.
 */
export type ResponseMode = 'query' | 'fragment' | 'form_post';

export function isResponseMode(v: string): v is ResponseMode {
  return v === 'query' || v === 'fragment' || v === 'form_post';
}

/**
 * The mode an early error is delivered in: the requested one when it is a single valid value, else
 * the default of the code flow, query (Multiple Response Types 2.1).
 */
export function responseModeOf(raw: RawParams): ResponseMode {
  const v = raw && typeof raw === 'object' ? raw.response_mode : undefined;
  return typeof v === 'string' && isResponseMode(v) ? v : 'query';
}

/** An authorization response on its way to the client: a redirect, or a form the browser posts. */
export type ClientResponse =
  | { mode: 'query' | 'fragment'; location: string }
  | { mode: 'form_post'; action: string; fields: Record<string, string> };

/**
 * Builds the authorization response in the requested mode. The out-of-band alias always uses the query:
 * its code page is ours and reads the query on the server.
 */
export function clientResponse(appUrl: string, redirectUri: string, params: Record<string, string | undefined>, mode: ResponseMode = 'query'): ClientResponse {
  if (mode === 'query' || redirectUri === OOB_REDIRECT_URI) return { mode: 'query', location: clientRedirect(appUrl, redirectUri, params) };
  if (params.error_description !== undefined) params = { ...params, error_description: safeDescription(params.error_description) };
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined) fields[k] = v;
  if (mode === 'form_post') return { mode, action: redirectUri, fields };
  // Registered redirect URIs never carry a fragment (RFC 6749 3.1.2), so ours is the only one.
  return { mode, location: `${redirectUri}#${new URLSearchParams(fields).toString().replace(/\+/g, '%20')}` };
}

/** Reads state for an error redirect even when other parameters are broken (RFC 6749 4.1.2.1). */
export function stateOf(raw: RawParams): string | undefined {
  const v = raw && typeof raw === 'object' ? raw.state : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Keycloak's out-of-band redirect URI: the code is shown on `{APP_URL}/authentication_code`. */
export const OOB_REDIRECT_URI = 'urn:ietf:wg:oauth:2.0:oob';

/** Where the authorization response goes: the redirect URI, or the code display page for the OOB alias. */
export function clientRedirect(appUrl: string, redirectUri: string, params: Record<string, string | undefined>): string {
  // RFC 6749 4.1.2.1: error_description may only use %x20-21 / %x23-5B / %x5D-7E.
  if (params.error_description !== undefined) params = { ...params, error_description: safeDescription(params.error_description) };
  return redirectWith(redirectUri === OOB_REDIRECT_URI ? `${appUrl}/authentication_code` : redirectUri, params);
}

/**
 * Appends response parameters to the registered redirect URI, keeping its own query intact
 * (RFC 6749 3.1.2: the query component must be retained).
 */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const parts: string[] = [];
  // An unpaired surrogate (which encodeURIComponent refuses) goes back as U+FFFD, as UTF-8 decoding would.
  const encode = (s: string): string => encodeURIComponent(s.replace(/\p{Cs}/gu, '\uFFFD'));
  for (const [k, v] of Object.entries(params)) if (v !== undefined) parts.push(`${encode(k)}=${encode(v)}`);
  if (parts.length === 0) return redirectUri;
  const sep = redirectUri.includes('?') ? (redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&') : '?';
  return redirectUri + sep + parts.join('&');
}

/** ui_locales as kept with the request: its tags, normalized, or undefined when it has none. */
function readUiLocales(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.length > 255) return undefined;
  const tags = raw
    .split(' ')
    .map((t) => normalizeLocale(t))
    .filter((t): t is string => t !== undefined);
  return tags.length > 0 ? tags.join(' ') : undefined;
}
