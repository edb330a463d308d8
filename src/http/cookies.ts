import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';
import { randomToken, safeEqual, tokenHash } from '../crypto/random.js';

export const SESSION_COOKIE = 'RG_SESSION';
export const BROWSER_COOKIE = 'RG_BROWSER';

function realmPath(realmId: string): string {
  return `/auth/realms/${encodeURIComponent(realmId)}/`;
}

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const v = req.cookies[name];
  return typeof v === 'string' && v.length > 0 && v.length < 200 ? v : undefined;
}

/** HttpOnly, SameSite=Lax, scoped to the realm, and Secure whenever the server is reached over https. */
export function setRealmCookie(reply: FastifyReply, config: Config, realmId: string, name: string, value: string, maxAge?: number): void {
  reply.setCookie(name, value, {
    path: realmPath(realmId),
    httpOnly: true,
    sameSite: 'lax',
    secure: config.authUrl.startsWith('https:'),
    ...(maxAge !== undefined ? { maxAge } : {}),
  });
}

export function clearRealmCookie(reply: FastifyReply, config: Config, realmId: string, name: string): void {
  reply.clearCookie(name, { path: realmPath(realmId), httpOnly: true, sameSite: 'lax', secure: config.authUrl.startsWith('https:') });
}

/** The browser's binding secret for pending requests (created on first visit); returns its hash. */
export function ensureBrowserBinding(req: FastifyRequest, reply: FastifyReply, config: Config, realmId: string): string {
  let value = readCookie(req, BROWSER_COOKIE);
  if (!value) {
    value = randomToken(24);
    setRealmCookie(reply, config, realmId, BROWSER_COOKIE, value);
  }
  return tokenHash(value);
}

/**
 * CSRF token of a form that exists before any pending request (device code entry, logout, account):
 * derived from the browser's binding cookie, which another site can neither read nor set.
 */
export function formCsrf(purpose: string, bindingHash: string): string {
  return tokenHash(`${purpose}-form:${bindingHash}`);
}

/** Checks such a form's token against the binding cookie of the request, in constant time. */
export function checkFormCsrf(req: FastifyRequest, purpose: string, token: unknown): boolean {
  const cookie = readCookie(req, BROWSER_COOKIE);
  if (!cookie || typeof token !== 'string') return false;
  const expected = formCsrf(purpose, tokenHash(cookie));
  return token.length === expected.length && safeEqual(token, expected);
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

export function setSessionStateCookie(reply: FastifyReply, config: Config, realmId: string, sessionId: string, maxAge: number): void {
  const secure = config.authUrl.startsWith('https:');
  reply.setCookie(SESSION_STATE_COOKIE, sessionId, { path: realmPath(realmId), httpOnly: false, sameSite: secure ? 'none' : 'lax', secure, maxAge });
}

export function clearSessionStateCookie(reply: FastifyReply, config: Config, realmId: string): void {
  const secure = config.authUrl.startsWith('https:');
  reply.clearCookie(SESSION_STATE_COOKIE, { path: realmPath(realmId), httpOnly: false, sameSite: secure ? 'none' : 'lax', secure });
}
