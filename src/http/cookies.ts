import crypto from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import type { Services } from '../services.js';
import { randomToken, safeEqual, tokenHash } from '../crypto/random.js';
import { nowSeconds } from '../clock.js';
import type { BrowserSession } from '../storage/types.js';

export const SESSION_COOKIE = 'RG_SESSION';
export const BROWSER_COOKIE = 'RG_BROWSER';

function realmPath(realmId: string): string {
  return `/auth/realms/${encodeURIComponent(realmId)}/`;
}

/**
 * Behind https at the root of its origin, cookies carry the `__Host-` prefix (RFC 6265bis 4.1.3.2): the
 * browser accepts them only with Secure, Path=/ and no Domain, so a sibling subdomain cannot set or
 * shadow them ("cookie tossing"). Path=/ would share one cookie between realms, so the realm goes into
 * the name instead. Over plain http (development) the prefix is impossible, and when AUTH_URL has a path
 * of its own the cookies stay scoped to the realm's path so other applications on the origin do not
 * receive them; there the CSRF tokens' server key is what stops a forged form (see formCsrf).
 */
function hostPrefixed(config: Config): boolean {
  const u = new URL(config.authUrl);
  return u.protocol === 'https:' && u.pathname === '/';
}

export function realmCookieName(config: Config, realmId: string, base: string): string {
  return hostPrefixed(config) ? `__Host-${base}.${realmId}` : base;
}

function cookieOptions(config: Config, realmId: string): { path: string; httpOnly: true; sameSite: 'lax'; secure: boolean } {
  return { path: hostPrefixed(config) ? '/' : realmPath(realmId), httpOnly: true, sameSite: 'lax', secure: config.authUrl.startsWith('https:') };
}

/** The value of one of the realm's cookies (`base` is SESSION_COOKIE or BROWSER_COOKIE). */
export function readRealmCookie(req: FastifyRequest, config: Config, realmId: string, base: string): string | undefined {
  const v = req.cookies[realmCookieName(config, realmId, base)];
  return typeof v === 'string' && v.length > 0 && v.length < 200 ? v : undefined;
}

/** HttpOnly, SameSite=Lax, scoped to the realm, and Secure whenever the server is reached over https. */
export function setRealmCookie(reply: FastifyReply, config: Config, realmId: string, base: string, value: string, maxAge?: number): void {
  reply.setCookie(realmCookieName(config, realmId, base), value, { ...cookieOptions(config, realmId), ...(maxAge !== undefined ? { maxAge } : {}) });
}

export function clearRealmCookie(reply: FastifyReply, config: Config, realmId: string, base: string): void {
  reply.clearCookie(realmCookieName(config, realmId, base), cookieOptions(config, realmId));
}

/** The browser's binding secret for pending requests (created on first visit); returns its hash. */
export function ensureBrowserBinding(req: FastifyRequest, reply: FastifyReply, config: Config, realmId: string): string {
  let value = readRealmCookie(req, config, realmId, BROWSER_COOKIE);
  if (!value) {
    value = randomToken(24);
    setRealmCookie(reply, config, realmId, BROWSER_COOKIE, value);
  }
  return tokenHash(value);
}

/**
 * CSRF token of a form that exists before any pending request (device code entry, logout, account):
 * HMAC-SHA256 under the deployment's form key (a server secret, src/crypto/form-key.ts) over the form's
 * purpose and the browser's binding cookie. Without the key, knowing or choosing the cookie is not
 * enough to compute a token (issue 12).
 */
export async function formCsrf(services: Services, purpose: string, bindingHash: string): Promise<string> {
  const key = await services.formKey.get();
  return crypto.createHmac('sha256', key).update(`${purpose}\0${bindingHash}`).digest('base64url');
}

/** Checks such a form's token against the binding cookie of the request, in constant time. */
export async function checkFormCsrf(req: FastifyRequest, services: Services, realmId: string, purpose: string, token: unknown): Promise<boolean> {
  const cookie = readRealmCookie(req, services.config, realmId, BROWSER_COOKIE);
  if (!cookie || typeof token !== 'string') return false;
  const expected = await formCsrf(services, purpose, tokenHash(cookie));
  return safeEqual(token, expected);
}

/**
 * The session-state cookie that the session-status iframe reads (Keycloak's KEYCLOAK_SESSION). Its value
 * is only the browser session's id: the `sid` / `session_state` every client already receives in its
 * tokens, worthless as a credential (sessions are found by the hash of RG_SESSION's secret, never by
 * id). Not HttpOnly, since the iframe's script reads it; SameSite=None behind https so that the iframe
 * can read it inside another site's page; over plain http browsers refuse SameSite=None without Secure,
 * so it is Lax there (status checks then work for same-site applications only, as with Keycloak).
 */
export const SESSION_STATE_COOKIE = 'RG_SESSION_STATE';

export function setSessionStateCookie(reply: FastifyReply, config: Config, realmId: string, sessionId: string, maxAge?: number): void {
  const secure = config.authUrl.startsWith('https:');
  reply.setCookie(SESSION_STATE_COOKIE, sessionId, { path: realmPath(realmId), httpOnly: false, sameSite: secure ? 'none' : 'lax', secure, ...(maxAge !== undefined ? { maxAge } : {}) });
}

/**
 * The cookies of a new SSO session (its secret, and its id for session status checks). As Keycloak's
 * KEYCLOAK_IDENTITY: a remembered session's ("Remember me" ticked) outlive the browser, with Max-Age until
 * the session ends; any other's are browser-session cookies, gone when the browser closes.
 */
export function setSessionCookies(reply: FastifyReply, config: Config, session: { id: string; realmId: string; expiresAt: number; rememberMe?: boolean }, secret: string, now: number): void {
  const maxAge = session.rememberMe ? Math.max(session.expiresAt - now, 1) : undefined;
  setRealmCookie(reply, config, session.realmId, SESSION_COOKIE, secret, maxAge);
  setSessionStateCookie(reply, config, session.realmId, session.id, maxAge);
}

export function clearSessionStateCookie(reply: FastifyReply, config: Config, realmId: string): void {
  const secure = config.authUrl.startsWith('https:');
  reply.clearCookie(SESSION_STATE_COOKIE, { path: realmPath(realmId), httpOnly: false, sameSite: secure ? 'none' : 'lax', secure });
}

/** This browser's active session in the realm (its session cookie), if any. */
export async function browserSession(services: Services, req: FastifyRequest, realmId: string, now = nowSeconds(services.clock)): Promise<BrowserSession | undefined> {
  const secret = readRealmCookie(req, services.config, realmId, SESSION_COOKIE);
  return secret ? services.store.sessions.findActive(realmId, tokenHash(secret), now) : undefined;
}
