/**
 * Helpers of the fuzz suite's browser-facing properties: cookie jars with or without a session, CSRF
 * tokens right and wrong, cookie headers, credentials and request bodies.
 */
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { CookieJar } from '../helpers/flow.js';
import { bodyFor, bodyKind, contentType, junk, rawBytes, serialization, XSS, type Pair } from './arbitraries.js';
import { FUZZ_PASSWORD } from './constants.js';
import { realmPath, type FuzzServer, type PoolUser } from './harness.js';

export const AUTH = realmPath('/protocol/openid-connect/auth');
export const CLIENTS = ['web-app', 'native-app', 'rp', 'oob', 'post-app'] as const;
export const PKCE_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
export const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'];

export type Browser = 'fresh' | PoolUser;
export const browser = fc.constantFrom<Browser>('fresh', 'fresh', 'solo', 'multi', 'loner');

/** The fuzz's cookie jar for one run: a new browser, or a copy of a signed-in one. */
export async function browserJar(fs: FuzzServer, b: Browser): Promise<CookieJar> {
  if (b === 'fresh') return new CookieJar();
  return fs.session(b);
}

export function unescapeHtml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&');
}

export const csrfOf = (html: string): string | undefined => {
  const m = /name="csrf" value="([^"]*)"/.exec(html);
  return m ? unescapeHtml(m[1]!) : undefined;
};

/** Right and wrong CSRF tokens. */
export const csrfVariant = fc.constantFrom('right', 'right', 'right', 'missing', 'empty', 'forged', 'dup', 'dup-forged', 'case', 'truncated', 'long', 'other', 'xss');
export type CsrfVariant = typeof csrfVariant extends fc.Arbitrary<infer T> ? T : never;

export function csrfPairs(variant: CsrfVariant, right: string | undefined, other: string | undefined): Pair[] {
  const r = right ?? 'no-csrf-known';
  switch (variant) {
    case 'right':
      return [['csrf', r]];
    case 'missing':
      return [];
    case 'empty':
      return [['csrf', '']];
    case 'forged':
      return [['csrf', 'A'.repeat(r.length)]];
    case 'dup':
      return [['csrf', r], ['csrf', r]];
    case 'dup-forged':
      return [['csrf', 'forged'], ['csrf', r]];
    case 'case':
      return [['csrf', r.toUpperCase()]];
    case 'truncated':
      return [['csrf', r.slice(0, -1)]];
    case 'long':
      return [['csrf', r + 'x'.repeat(5000)]];
    case 'other':
      return [['csrf', other ?? r]];
    case 'xss':
      return [['csrf', XSS[0]!]];
  }
}

/** Cookie headers: the browser's own, none, forged, another browser's, or garbage. */
export const cookieVariant = fc.constantFrom('own', 'own', 'own', 'none', 'forged', 'other', 'junk', 'long');
export type CookieVariant = typeof cookieVariant extends fc.Arbitrary<infer T> ? T : never;

export function cookieHeader(v: CookieVariant, jar: CookieJar, other: CookieJar | undefined, junkValue: string): Record<string, string> {
  switch (v) {
    case 'own':
      return jar.cookies.size > 0 ? { cookie: jar.header() } : {};
    case 'none':
      return {};
    case 'forged':
      return { cookie: 'RG_BROWSER=forged-browser-binding; RG_SESSION=forged-session' };
    case 'other':
      return other && other.cookies.size > 0 ? { cookie: other.header() } : {};
    case 'junk':
      return { cookie: junkValue };
    case 'long':
      return { cookie: `RG_BROWSER=${'b'.repeat(300)}; RG_SESSION=${'s'.repeat(300)}` };
  }
}

/** Wrong credentials (never alice's password) or right ones of the fuzz users only. */
export const credentials = fc.oneof(
  { weight: 1, arbitrary: fc.record({ username: fc.constantFrom('solo', 'multi', 'loner', 'SOLO', ' multi '), password: fc.constant(FUZZ_PASSWORD) }) },
  { weight: 3, arbitrary: fc.record({ username: fc.oneof(fc.constantFrom('alice', 'deep', 'Alice ', 'nobody', ''), junk), password: fc.oneof(fc.constantFrom('', 'x', 'password', FUZZ_PASSWORD.toUpperCase()), junk) }) },
);

export const bodyShape = fc.record({ kind: bodyKind, type: contentType, serial: serialization, bytes: rawBytes });
export type BodyShape = typeof bodyShape extends fc.Arbitrary<infer T> ? T : never;

export function withBody(pairs: Pair[], shape: BodyShape): { headers: Record<string, string>; payload: string | undefined } {
  const payload = bodyFor(shape.kind, pairs, shape.serial, shape.bytes);
  return { headers: shape.type === null ? {} : { 'content-type': shape.type }, payload };
}
