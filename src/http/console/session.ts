import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { MASTER_REALM } from '../../admin/authorization.js';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT } from '../../admin/operations/console.js';
import { verifyAccessToken } from '../../oauth/access-tokens.js';
import { handleTokenRequest } from '../../oauth/token-endpoint.js';
import { randomToken, safeEqual, tokenHash } from '../../crypto/random.js';
import { callerFromClaims } from '../admin/authenticate.js';
import { formCsrf } from '../cookies.js';

export const CONSOLE_PATH = '/auth/admin/console';
// The console's own cookies: the tokens of the admin's sign-in, a CSRF binding, and the pending login.
const ACCESS = 'RG_CONSOLE_AT';
const REFRESH = 'RG_CONSOLE_RT';
const BINDING = 'RG_CONSOLE_BIND';
const LOGIN = 'RG_CONSOLE_LOGIN';

export function callbackUri(services: Services): string {
  return `${services.config.authUrl}${CONSOLE_CALLBACK_PATH}`;
}

function cookieOptions(services: Services, sameSite: 'strict' | 'lax'): { path: string; httpOnly: true; sameSite: 'strict' | 'lax'; secure: boolean } {
  return { path: CONSOLE_PATH, httpOnly: true, sameSite, secure: services.config.authUrl.startsWith('https:') };
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  const v = req.cookies[name];
  return typeof v === 'string' && v.length > 0 && v.length < 8192 ? v : undefined;
}

/**
 * Starts the admin's sign-in: RFC 6749 4.1 with PKCE (RFC 7636 S256), state and nonce, the verifier
 * kept in an HttpOnly cookie of the console path only. Returns the authorization URL.
 */
export function startLogin(services: Services, reply: FastifyReply): string {
  const state = randomToken(24);
  const verifier = randomToken(32);
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  // Lax: the callback arrives as a top-level navigation from the login pages.
  reply.setCookie(LOGIN, `${state}.${verifier}`, { ...cookieOptions(services, 'lax'), maxAge: 600 });
  const q = new URLSearchParams({
    client_id: CONSOLE_CLIENT,
    redirect_uri: callbackUri(services),
    response_type: 'code',
    scope: 'openid profile',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return `/auth/realms/${MASTER_REALM}/protocol/openid-connect/auth?${q.toString()}`;
}

function storeTokens(services: Services, reply: FastifyReply, tokens: { access_token: string; refresh_token?: string }): void {
  reply.setCookie(ACCESS, tokens.access_token, cookieOptions(services, 'strict'));
  if (tokens.refresh_token) reply.setCookie(REFRESH, tokens.refresh_token, cookieOptions(services, 'strict'));
}

/**
 * The callback: the state must match the pending login's (RFC 6749 10.12), then the code is exchanged
 * with the verifier through the token endpoint's own logic. Returns false when the response is not ours.
 */
export async function finishLogin(services: Services, req: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>): Promise<boolean> {
  const pending = cookie(req, LOGIN);
  reply.clearCookie(LOGIN, cookieOptions(services, 'lax'));
  const [state, verifier] = pending?.split('.') ?? [];
  if (!state || !verifier || typeof query.state !== 'string' || !safeEqual(query.state, state) || typeof query.code !== 'string') return false;
  const tokens = await handleTokenRequest(services, {
    realmId: MASTER_REALM,
    authorization: undefined,
    body: { grant_type: 'authorization_code', code: query.code, redirect_uri: callbackUri(services), client_id: CONSOLE_CLIENT, code_verifier: verifier },
    ip: req.ip,
  });
  storeTokens(services, reply, tokens as { access_token: string; refresh_token?: string });
  reply.setCookie(BINDING, randomToken(24), cookieOptions(services, 'strict'));
  return true;
}

export function clearSession(services: Services, reply: FastifyReply): void {
  for (const name of [ACCESS, REFRESH, BINDING]) reply.clearCookie(name, cookieOptions(services, 'strict'));
}

/**
 * The signed-in admin, from the access token in the console's cookie, verified as the admin API
 * verifies bearer tokens (so a disabled admin or a not-before push ends console access too). An expired
 * access token is renewed once with the refresh token (RFC 6749 6).
 */
export async function consoleCaller(services: Services, req: FastifyRequest, reply: FastifyReply): Promise<AdminCaller | undefined> {
  const realm = await services.cache.realm(MASTER_REALM);
  if (!realm) return undefined;
  const access = cookie(req, ACCESS);
  const claims = access ? await verifyAccessToken(services, realm, access) : undefined;
  if (claims) return callerFromClaims(services, realm.id, claims, req.ip);
  const refresh = cookie(req, REFRESH);
  if (!refresh) return undefined;
  try {
    const tokens = (await handleTokenRequest(services, {
      realmId: MASTER_REALM,
      authorization: undefined,
      body: { grant_type: 'refresh_token', refresh_token: refresh, client_id: CONSOLE_CLIENT },
      ip: req.ip,
    })) as { access_token: string; refresh_token?: string };
    const renewed = await verifyAccessToken(services, realm, tokens.access_token);
    if (!renewed) return undefined;
    storeTokens(services, reply, tokens);
    return callerFromClaims(services, realm.id, renewed, req.ip);
  } catch {
    return undefined;
  }
}

/** The CSRF token of the console's forms: HMAC under the server's form key over the binding cookie. */
export async function consoleCsrf(services: Services, req: FastifyRequest): Promise<string> {
  const binding = cookie(req, BINDING) ?? '';
  return formCsrf(services, 'admin-console', tokenHash(binding));
}

export async function checkConsoleCsrf(services: Services, req: FastifyRequest, token: unknown): Promise<boolean> {
  if (!cookie(req, BINDING) || typeof token !== 'string') return false;
  return safeEqual(token, await consoleCsrf(services, req));
}
