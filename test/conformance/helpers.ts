import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { basic, realmPath, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, runAuthorization, type FlowOptions, type FlowResult } from '../helpers/flow.js';

export const AUTH = realmPath('/protocol/openid-connect/auth');
export const TOKEN = realmPath('/protocol/openid-connect/token');
export const INTROSPECT = realmPath('/protocol/openid-connect/token/introspect');
export const USERINFO = realmPath('/protocol/openid-connect/userinfo');

/** RFC 6749 5.2 and 4.1.2.1: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ). */
export const ERROR_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;

/** RFC 6749 5.2, plus RFC 8628 3.5 (device flow) and temporarily_unavailable for a busy server. */
export const TOKEN_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'temporarily_unavailable',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
];

/** RFC 6749 4.1.2.1, plus the OpenID Connect Core 3.1.2.6 errors of prompt=none. */
export const AUTHORIZE_ERRORS = [
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'login_required',
  'consent_required',
  'interaction_required',
];

/** The test vector of RFC 7636 Appendix B. */
export const RFC7636_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
export const RFC7636_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

export function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A PKCE pair (RFC 7636 4.1, 4.2): a fresh 43-character verifier unless one is given. */
export function pkce(verifier = crypto.randomBytes(32).toString('base64url')): { verifier: string; challenge: string } {
  return { verifier, challenge: s256(verifier) };
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  refresh_expires_in: number;
  scope: string;
}

type Response = LightMyRequestResponse;

/**
 * Drives the test server as a relying party would: one browser (cookie jar) for the authorization
 * endpoint, HTTP Basic for the confidential client `web-app`, client_id + PKCE for `native-app`.
 */
export class Harness {
  readonly jar = new CookieJar();
  constructor(readonly ts: TestServer) {}

  get auth(): string {
    return basic(this.ts.client.id, this.ts.client.secret);
  }

  /** GET (or POST) the authorization endpoint with the default request of `authorizeQuery` plus `extra`. */
  authorize(extra: Record<string, string | undefined> = {}, method: 'GET' | 'POST' = 'GET'): Promise<Response> {
    return this.authorizeRaw(authorizeQuery(this.ts, extra), method);
  }

  /** The authorization endpoint with a query string (or form body) written by hand. */
  authorizeRaw(query: string, method: 'GET' | 'POST' = 'GET'): Promise<Response> {
    return method === 'GET'
      ? this.ts.app.inject({ method, url: `${AUTH}?${query}` })
      : this.ts.app.inject({ method, url: AUTH, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: query });
  }

  /** The whole authorization flow in this harness's browser (its SSO session skips pages after the first). */
  flow(query: Record<string, string | undefined> = {}, opts: Omit<FlowOptions, 'query'> = {}): Promise<FlowResult> {
    return runAuthorization(this.ts, { jar: this.jar, ...opts, query });
  }

  async code(query: Record<string, string | undefined> = {}): Promise<string> {
    const r = await this.flow(query);
    assert.ok(r.code, `no code: ${r.location.href}`);
    return r.code;
  }

  /** A code for the public client `native-app`, bound to `challenge`. */
  publicCode(challenge: string, query: Record<string, string | undefined> = {}): Promise<string> {
    return this.code({ client_id: this.ts.publicClient.id, redirect_uri: this.ts.publicClient.redirectUri, code_challenge: challenge, code_challenge_method: 'S256', ...query });
  }

  token(form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.tokenRaw(new URLSearchParams(form).toString(), headers);
  }

  tokenRaw(payload: string, headers: Record<string, string> = {}, url = TOKEN): Promise<Response> {
    return this.ts.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload });
  }

  exchange(code: string, extra: Record<string, string> = {}, authorization: string | null = this.auth): Promise<Response> {
    const form = { grant_type: 'authorization_code', code, redirect_uri: this.ts.client.redirectUri, ...extra };
    return this.token(form, authorization === null ? {} : { authorization });
  }

  /** The code exchange of the public client: client_id and code_verifier, no credentials. */
  publicExchange(code: string, verifier: string, extra: Record<string, string> = {}): Promise<Response> {
    return this.token({ grant_type: 'authorization_code', code, redirect_uri: this.ts.publicClient.redirectUri, client_id: this.ts.publicClient.id, code_verifier: verifier, ...extra });
  }

  async tokens(query: Record<string, string | undefined> = {}): Promise<TokenSet> {
    const res = await this.exchange(await this.code(query));
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  async publicTokens(): Promise<TokenSet> {
    const { verifier, challenge } = pkce();
    const res = await this.publicExchange(await this.publicCode(challenge), verifier);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  refresh(refreshToken: string, extra: Record<string, string> = {}, authorization: string | null = this.auth): Promise<Response> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, authorization === null ? {} : { authorization });
  }

  publicRefresh(refreshToken: string): Promise<Response> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: this.ts.publicClient.id });
  }

  /** Whether the authorization server still considers a token of web-app active (RFC 7662). */
  async active(token: string): Promise<boolean> {
    const res = await this.ts.app.inject({
      method: 'POST',
      url: INTROSPECT,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: this.auth },
      payload: new URLSearchParams({ token }).toString(),
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().active === true;
  }

  /** Whether a resource (UserInfo, OIDC Core 5.3) accepts an access token of any client with the openid scope. */
  async accepted(accessToken: string): Promise<boolean> {
    const res = await this.ts.app.inject({ method: 'GET', url: USERINFO, headers: { authorization: `Bearer ${accessToken}` } });
    assert.ok(res.statusCode === 200 || res.statusCode === 401, res.body);
    return res.statusCode === 200;
  }

  /** Client authentication failures are rate-limited per address (10 a minute): let the window pass. */
  forgetClientFailures(): void {
    this.ts.clock.advance(61);
  }
}

/** RFC 6749 5.1 / 5.2: JSON, never cached. */
export function assertNoStoreJson(res: Response): void {
  assert.match(String(res.headers['content-type']), /^application\/json(;|$)/);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['pragma'], 'no-cache');
}

/** RFC 6749 5.2: status, error code, the allowed characters of error_description, and the headers. */
export function assertTokenError(res: Response, status: number, error: string): { error: string; error_description?: string } {
  assert.equal(res.statusCode, status, res.body);
  assertNoStoreJson(res);
  const body = res.json();
  assert.equal(body.error, error, res.body);
  assert.ok(TOKEN_ERRORS.includes(body.error), `not an RFC error code: ${body.error}`);
  if (body.error_description !== undefined) assert.match(body.error_description, ERROR_DESCRIPTION);
  return body;
}

/** RFC 6749 4.1.2.1: an error sent back to the client, on the query of the redirect URI it asked for. */
export function redirectedError(res: Response, redirectUri: string): URLSearchParams {
  assert.equal(res.statusCode, 303, res.body);
  const location = String(res.headers.location);
  assert.ok(location.startsWith(redirectUri + (redirectUri.includes('?') ? '&' : '?')), location);
  const params = new URL(location).searchParams;
  assert.ok(params.get('error'), location);
  return params;
}

/** RFC 6749 3.1.2.4 / 4.1.2.1: the user is told, the user agent is not sent anywhere. */
export function assertNoRedirect(res: Response): void {
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.headers.location, undefined);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.doesNotMatch(res.body, /http-equiv\s*=\s*["']?refresh/i);
}
