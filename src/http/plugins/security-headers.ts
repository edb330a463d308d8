import type { FastifyReply } from 'fastify';

// Pages load only their own stylesheet (and, later, scripts); nothing may frame them (RFC 6819 4.4.1.9).
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; base-uri 'none'; frame-ancestors 'none'";

/** Headers of every HTML page of the login flow. */
export function setPageHeaders(reply: FastifyReply): void {
  reply.header('content-type', 'text/html; charset=utf-8');
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  reply.header('content-security-policy', PAGE_CSP);
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-content-type-options', 'nosniff');
}

/**
 * The front-channel logout page's CSP: our pages' policy, plus the frames' origins (frame-src; an
 * origin comes from new URL(...).origin, so it holds no quote, space or semicolon) and its one inline
 * script by hash. Nothing else is loosened.
 */
export function frontchannelLogoutCsp(frameOrigins: readonly string[], scriptHash: string | undefined): string {
  const origins = [...new Set(frameOrigins)];
  return PAGE_CSP.replace("script-src 'self'", `script-src 'self'${scriptHash ? ` ${scriptHash}` : ''}`) + (origins.length > 0 ? `; frame-src ${origins.join(' ')}` : '');
}

/** RFC 6749 5.1: token responses and their errors must not be cached. */
export function setNoStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  reply.header('x-content-type-options', 'nosniff');
}
