import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { REALM, realmPath, type TestServer } from './server.js';

/** A browser's cookies for `inject` requests (paths are ignored: all cookies live under one realm). */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  update(res: LightMyRequestResponse): void {
    for (const c of res.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      if (c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }
}

function unescape(s: string): string {
  return s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

export interface Form {
  action: string;
  csrf: string;
}

export function parseForm(html: string): Form {
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]*)"/.exec(html)?.[1];
  if (!action || !csrf) throw new Error(`no form in page:\n${html.slice(0, 500)}`);
  return { action: unescape(action), csrf: unescape(csrf) };
}

export type PageKind = 'update-profile' | 'review-profile' | 'terms' | 'delete-account' | 'webauthn' | 'webauthn-register' | 'account' | 'link-account' | 'login' | 'otp' | 'update-password' | 'configure-otp' | 'consent' | 'organization' | 'no-organization' | 'device-entry' | 'device-done' | 'error';

export function pageKind(html: string): PageKind {
  if (html.includes('data-webauthn="get"') && !html.includes('name="password"')) return 'webauthn';
  if (html.includes('data-webauthn="create"')) return 'webauthn-register';
  if (html.includes('<h1>Your account</h1>')) return 'account';
  if (html.includes('<h1>Update your profile</h1>')) return 'update-profile';
  if (html.includes('<h1>Update account information</h1>')) return 'review-profile';
  if (html.includes('<h1>Terms and conditions</h1>')) return 'terms';
  if (html.includes('<h1>Delete account</h1>')) return 'delete-account';
  if (html.includes('<svg class="qr"')) return 'configure-otp';
  if (html.includes('name="otp"')) return 'otp';
  if (html.includes('name="password-new"')) return 'update-password';
  if (html.includes('<h1>Link your ')) return 'link-account';
  if (html.includes('name="password"')) return 'login';
  if (html.includes('name="decision"')) return 'consent';
  if (html.includes('name="organization"')) return 'organization';
  if (html.includes('has no organization')) return 'no-organization';
  if (html.includes('name="user_code"')) return 'device-entry';
  if (/Your device (is|was not) connected/.test(html)) return 'device-done';
  return 'error';
}

/**
 * Follows the server's own redirects (paths on it), allowing consent and choosing `organization` (acme)
 * on the way, until the client's redirect or another page.
 */
export async function driveFlow(app: FastifyInstance, jar: CookieJar, res: LightMyRequestResponse, organization = 'acme'): Promise<LightMyRequestResponse> {
  for (;;) {
    const location = res.headers.location as string | undefined;
    if (res.statusCode === 303 && location?.startsWith('/')) res = await inject(app, jar, 'GET', location);
    else if (res.statusCode === 200 && pageKind(res.body) === 'consent') res = await inject(app, jar, 'POST', parseForm(res.body).action, { csrf: parseForm(res.body).csrf, decision: 'allow' });
    else if (res.statusCode === 200 && pageKind(res.body) === 'organization') res = await inject(app, jar, 'POST', parseForm(res.body).action, { csrf: parseForm(res.body).csrf, organization });
    else return res;
  }
}

/** A repeatable parameter (RFC 8707 resource) is given as a list. */
export function authorizeQuery(ts: TestServer, extra: Record<string, string | string[] | undefined> = {}): string {
  const q = new URLSearchParams();
  const all: Record<string, string | string[] | undefined> = {
    client_id: ts.client.id,
    redirect_uri: ts.client.redirectUri,
    response_type: 'code',
    scope: 'openid core_data offline_access',
    state: 'xyz',
    ...extra,
  };
  for (const [k, v] of Object.entries(all)) for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) q.append(k, one);
  return q.toString();
}

export interface FlowOptions {
  query?: Record<string, string | string[] | undefined>;
  /** Headers of every request the browser sends (its User-Agent, say). */
  headers?: Record<string, string>;
  username?: string;
  password?: string;
  consent?: 'allow' | 'deny';
  organization?: string;
  jar?: CookieJar;
  /** Typed twice on the update-password page, when the password given is temporary (UPDATE_PASSWORD). */
  newPassword?: string;
  /** More fields of the login form (rememberMe: 'on'). */
  loginFields?: Record<string, string>;
}

export interface FlowResult {
  /** The final redirect to the client. */
  location: URL;
  code: string | undefined;
  pages: PageKind[];
  jar: CookieJar;
  /** The response parameters, wherever the response mode put them (query, fragment or a posted form). */
  params: URLSearchParams;
  /** The form-post page, when response_mode=form_post. */
  formPost?: string;
}

/** The authorization response's parameters from a redirect (query or fragment) or a form_post page. */
export function responseOf(res: LightMyRequestResponse, pages: PageKind[], jar: CookieJar): FlowResult | undefined {
  if (res.statusCode === 200 && res.body.includes('id="form-post"')) {
    const action = unescape(/<form method="post" action="([^"]*)" id="form-post"/.exec(res.body)?.[1] ?? '');
    const params = new URLSearchParams();
    for (const m of res.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) params.append(unescape(m[1]!), unescape(m[2]!));
    return { location: new URL(action), code: params.get('code') ?? undefined, pages, jar, params, formPost: res.body };
  }
  if (res.statusCode !== 303) return undefined;
  const location = res.headers.location as string;
  if (location.startsWith(`/auth/realms/${REALM}/login-actions/`)) return undefined;
  const url = new URL(location);
  const params = url.hash ? new URLSearchParams(url.hash.slice(1)) : url.searchParams;
  return { location: url, code: params.get('code') ?? undefined, pages, jar, params };
}

/** A request with the browser's cookies (and `headers`: its Accept-Language, say); the jar takes the answer's. */
export async function inject(app: FastifyInstance, jar: CookieJar, method: 'GET' | 'POST', url: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const res = await app.inject({
    method,
    url,
    headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
  });
  jar.update(res);
  return res;
}

/** Drives the browser side of E1 through login, consent and organization choice, like a user would. */
export async function runAuthorization(ts: TestServer, opts: FlowOptions = {}): Promise<FlowResult> {
  const jar = opts.jar ?? new CookieJar();
  const pages: PageKind[] = [];
  let res = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, opts.query)}`, undefined, opts.headers);
  for (let i = 0; i < 10; i++) {
    const done = responseOf(res, pages, jar);
    if (done) return done;
    if (res.statusCode !== 303) throw new Error(`expected a 303, got ${res.statusCode}: ${res.body.slice(0, 300)}`);
    const location = res.headers.location as string;
    const page = await inject(ts.app, jar, 'GET', location, undefined, opts.headers);
    // A page may itself finish the flow (a consent given meanwhile in another tab): follow it.
    if (page.statusCode === 303 || page.body.includes('id="form-post"')) {
      res = page;
      continue;
    }
    const kind = pageKind(page.body);
    pages.push(kind);
    if (kind === 'no-organization' || kind === 'error') {
      const href = /<a href="([^"]*)"/.exec(page.body)?.[1];
      if (kind === 'no-organization' && href) {
        const url = new URL(unescape(href));
        return { location: url, code: undefined, pages, jar, params: url.hash ? new URLSearchParams(url.hash.slice(1)) : url.searchParams };
      }
      throw new Error(`flow stopped on ${kind} page: ${page.body.slice(0, 400)}`);
    }
    const form = parseForm(page.body);
    if (kind === 'login') {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: opts.username ?? ts.user.username, password: opts.password ?? ts.user.password, ...opts.loginFields }, opts.headers);
      if (res.statusCode === 200 && !res.body.includes('id="form-post"')) throw new Error('login failed');
    } else if (kind === 'update-password') {
      if (opts.newPassword === undefined) throw new Error('the flow asks for a new password (UPDATE_PASSWORD) and no newPassword was given');
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': opts.newPassword, 'password-confirm': opts.newPassword }, opts.headers);
      if (res.statusCode !== 303) throw new Error(`the new password was refused: ${res.body.slice(0, 400)}`);
    } else if (kind === 'consent') {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, decision: opts.consent ?? 'allow' }, opts.headers);
    } else {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, organization: opts.organization ?? 'acme' }, opts.headers);
    }
  }
  throw new Error('too many steps');
}

export async function tokenRequest(ts: TestServer, form: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return ts.app.inject({
    method: 'POST',
    url: realmPath('/protocol/openid-connect/token'),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  });
}

/**
 * One attempt at the login page of a new authorization request, from `ip`: 303 when the password is
 * accepted, 200 (the page again) when it is not.
 */
export async function loginStatus(ts: TestServer, username: string, password: string, ip = '127.0.0.1'): Promise<number> {
  const jar = new CookieJar();
  const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
  const form = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
  return (await postFormFrom(ts, jar, ip, form.action, { csrf: form.csrf, username, password })).statusCode;
}

/** A form POST with `jar`'s cookies from the client address `ip` (the jar is not updated). */
export async function postFormFrom(ts: TestServer, jar: CookieJar, ip: string, url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
  return ts.app.inject({
    method: 'POST',
    url,
    remoteAddress: ip,
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The roles an access token carries (realm_access, resource_access by client), each list sorted; absent claims absent. */
export type TokenRoles = { realm?: string[]; clients?: Record<string, string[]> };
export function tokenRolesOf(accessToken: string): TokenRoles {
  const c = decodeJwt(accessToken) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
  const out: TokenRoles = {};
  if (c.realm_access) out.realm = [...c.realm_access.roles].sort();
  if (c.resource_access) out.clients = Object.fromEntries(Object.entries(c.resource_access).map(([k, v]) => [k, [...v.roles].sort()]));
  return out;
}

/**
 * A sign-in test's usual steps over inject, for `ts()` (the server a `before` starts): `auth`, the
 * authorization request (with `extra` parameters) in a browser's jar; `drive`, the flow followed from a
 * response (driveFlow); `clientRedirect`, the 303 to the client, as a URL.
 */
export function flowSteps(ts: () => TestServer): {
  auth(jar: CookieJar, extra?: Record<string, string>): Promise<LightMyRequestResponse>;
  drive(jar: CookieJar, res: LightMyRequestResponse): Promise<LightMyRequestResponse>;
  clientRedirect(res: LightMyRequestResponse): URL;
} {
  return {
    auth: (jar, extra = {}) => inject(ts().app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts(), extra)}`),
    drive: (jar, res) => driveFlow(ts().app, jar, res),
    clientRedirect: (res) => {
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      return new URL(res.headers.location as string);
    },
  };
}
