// A browser's part of a flow over real HTTP (fetch, redirects by hand), for tests whose relying party is
// another program: openid-client in-process, mod_auth_openidc in Apache.
import assert from 'node:assert/strict';
import http from 'node:http';
import { pageKind, parseForm, type PageKind } from './flow.js';
import type { TestServer } from './server.js';

/** A browser's cookies: name=value pairs from set-cookie headers (attributes ignored, all hosts and ports alike). */
export class FetchCookieJar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  has(name: string): boolean {
    return this.cookies.has(name);
  }
  /** Another browser holding the same cookies, e.g. a copy kept by someone who stole them. */
  clone(): FetchCookieJar {
    const copy = new FetchCookieJar();
    for (const [k, v] of this.cookies) copy.cookies.set(k, v);
    return copy;
  }
  update(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/**
 * One request as a browser's navigation makes it: the jar's cookies, a form POST when `form` is given, no
 * redirect followed. Through node:http rather than fetch, whose Sec-Fetch-Mode is always cors: relying
 * parties such as mod_auth_openidc answer a request that is not a navigation with 401, not a redirect.
 */
export function browse(jar: FetchCookieJar, url: URL, form?: Record<string, string>): Promise<Response> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const headers: Record<string, string> = {
    cookie: jar.header(),
    accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
    'sec-fetch-mode': 'navigate',
    ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: form ? 'POST' : 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const h = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode!;
        const response = new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: h });
        jar.update(response);
        resolve(response);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function seeOther(res: Response, base: string): URL {
  assert.equal(res.status, 303, `expected a 303, got ${res.status}`);
  return new URL(res.headers.get('location')!, base);
}

/** The user's part of the flow over real HTTP: login, consent, organization; returns the redirect to the client. */
export async function authorizeInBrowser(ts: TestServer, authUrl: URL, jar = new FetchCookieJar()): Promise<URL> {
  const steps: Array<[PageKind, Record<string, string>]> = [
    ['login', { username: ts.user.username, password: ts.user.password }],
    ['consent', { decision: 'allow' }],
    ['organization', { organization: 'acme' }],
  ];
  let next = seeOther(await browse(jar, authUrl), ts.baseUrl);
  for (const [kind, fields] of steps) {
    assert.match(next.pathname, /^\/auth\/realms\/test\/login-actions\/[^/]+$/);
    const page = await browse(jar, next);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.equal(pageKind(html), kind);
    const form = parseForm(html);
    next = seeOther(await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...fields }), ts.baseUrl);
  }
  return next;
}

/**
 * The user's part over real HTTP, whichever pages come (login; consent, which a client asks only once
 * per user; organization), to the client's redirect: for flows that need not see each page.
 */
export async function signInThroughPages(ts: TestServer, authUrl: URL, jar = new FetchCookieJar()): Promise<URL> {
  const fields: Record<string, Record<string, string>> = {
    login: { username: ts.user.username, password: ts.user.password },
    consent: { decision: 'allow' },
    organization: { organization: 'acme' },
  };
  let next = seeOther(await browse(jar, authUrl), ts.baseUrl);
  for (let i = 0; i < 5 && next.pathname.includes('/login-actions/'); i++) {
    const html = await (await browse(jar, next)).text();
    const kind = pageKind(html);
    assert.ok(fields[kind], `unexpected page ${kind}`);
    const form = parseForm(html);
    next = seeOther(await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...fields[kind] }), ts.baseUrl);
  }
  return next;
}

/**
 * Follows redirects as a browser does (GET, cookies in `jar`) until a page, or until `stop` says the
 * browser reached a URL that is not fetched (a relying party's redirect URI: answered as a 303 there).
 */
export async function followRedirects(jar: FetchCookieJar, url: URL, stop: (url: URL) => boolean = () => false): Promise<{ url: URL; res: Response }> {
  for (let i = 0; i < 20; i++) {
    if (stop(url)) return { url, res: new Response(null, { status: 303 }) };
    const res = await browse(jar, url);
    if (res.status !== 302 && res.status !== 303) return { url, res };
    url = new URL(res.headers.get('location')!, url);
  }
  throw new Error('too many redirects');
}

/**
 * Allows each consent page on the way (at most five) until the browser reaches a URL `reached` accepts
 * (a relying party's redirect URI, which is not fetched); that URL, with its code.
 */
export async function consentUntil(jar: FetchCookieJar, at: { url: URL; res: Response }, reached: (url: URL) => boolean): Promise<URL> {
  let { url, res } = at;
  for (let i = 0; i < 5 && !reached(url); i++) {
    const html = await res.text();
    assert.equal(pageKind(html), 'consent', `at ${url}: ${html.slice(0, 300)}`);
    const form = parseForm(html);
    const posted = await browse(jar, new URL(form.action, url), { csrf: form.csrf, decision: 'allow' });
    ({ url, res } = await followRedirects(jar, new URL(posted.headers.get('location')!, url), reached));
  }
  assert.ok(url.searchParams.get('code'), `a code in ${url}`);
  return url;
}
