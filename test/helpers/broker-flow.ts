// A sign-in through an identity provider's button, as a browser makes it (fetch with a cookie jar), for
// the social providers' tests: the login page, the button, Realmgate's redirects up to the provider's
// address; then, back from the provider, consent until the code reaches the client, and its exchange.
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { basic, type TestServer } from './server.js';
import { FetchCookieJar, browse, followRedirects } from './fetch-browser.js';
import { pageKind, parseForm } from './flow.js';
import type { Upstream } from './upstream-provider.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { createIdentityProvider, discoverProvider, type ProviderFields } from '../../src/admin/operations/identity-providers.js';

const CLIENT_HOST = 'app.example.com';

/** Provider `alias` of realm test, signing in at `up` (node-oidc-provider): its discovered endpoints, PKCE S256, openid email profile; `fields` over those. */
export async function addUpstreamProvider(ts: TestServer, up: Upstream, alias: string, fields: ProviderFields = {}): Promise<void> {
  const endpoints = await discoverProvider(up.issuer);
  await createIdentityProvider(ts.store, cliActor(), 'test', {
    alias,
    ...fields,
    config: { ...endpoints, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile', ...fields.config },
  });
  ts.services.cache.clear();
}

/** Presses the provider's button on a new sign-in's login page (realm test); the provider's authorization request (not followed) and the page's buttons (alias, text). */
export async function pressProviderButton(ts: TestServer, alias: string, jar: FetchCookieJar): Promise<{ location: URL; buttons: Array<[string, string]> }> {
  const authorize = new URL(`/auth/realms/test/protocol/openid-connect/auth?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1' })}`, ts.baseUrl);
  const login = await followRedirects(jar, authorize);
  const html = await login.res.text();
  assert.equal(pageKind(html), 'login');
  const form = /<form method="post" action="([^"]*)" class="providers">[\s\S]*?name="csrf" value="([^"]*)"/.exec(html);
  assert.ok(form, 'the login page has provider buttons');
  const buttons = [...html.matchAll(/name="provider" value="([^"]*)"[^>]*>([^<]*)</g)].map((m): [string, string] => [m[1]!, m[2]!]);
  const started = await browse(jar, new URL(form[1]!.replace(/&amp;/g, '&'), ts.baseUrl), { csrf: form[2]!, provider: alias });
  assert.equal(started.status, 303);
  // Realmgate's own redirects first (the broker's start), then the provider's address.
  let location = new URL(started.headers.get('location')!, ts.baseUrl);
  for (let i = 0; i < 5 && location.origin === ts.baseUrl; i++) {
    const res = await browse(jar, location);
    assert.ok(res.status >= 300 && res.status < 400, `a redirect at ${location}: ${res.status}`);
    location = new URL(res.headers.get('location')!, location);
  }
  return { location, buttons };
}

/** The review page's fields (Keycloak's first broker login "Review Profile"). */
export interface ProfileFields {
  email: string;
  firstName: string;
  lastName: string;
}

/** The values a page's profile form shows. */
export function profileShown(html: string): ProfileFields {
  const value = (id: string): string => {
    const v = new RegExp(`id="${id}" name="${id}" value="([^"]*)"`).exec(html)?.[1];
    assert.ok(v !== undefined, `no ${id} field`);
    return v.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  };
  return { email: value('email'), firstName: value('firstName'), lastName: value('lastName') };
}

/**
 * From the provider's authorization request on: follows it (the provider answers at once), allows consent,
 * and exchanges the code; the ID token's claims, or the page shown instead (an error page). With `review`,
 * a review page on the way is answered: what it showed (`reviewed`), each field left as shown unless `review` names it.
 */
export async function completeAtProvider(ts: TestServer, jar: FetchCookieJar, providerRequest: URL, review?: Partial<ProfileFields>): Promise<{ claims?: Record<string, unknown>; page?: string; reviewed?: ProfileFields }> {
  let at = await followRedirects(jar, providerRequest, (u) => u.host === CLIENT_HOST);
  let reviewed: ProfileFields | undefined;
  for (let i = 0; i < 5 && at.url.host !== CLIENT_HOST; i++) {
    const html = await at.res.text();
    const kind = pageKind(html);
    if (kind === 'review-profile' && review && !reviewed) {
      reviewed = profileShown(html);
      const form = parseForm(html);
      const posted = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...reviewed, ...review });
      at = posted.status === 303 ? await followRedirects(jar, new URL(posted.headers.get('location')!, ts.baseUrl), (u) => u.host === CLIENT_HOST) : { url: at.url, res: posted };
      continue;
    }
    if (kind !== 'consent') return { page: html, ...(reviewed ? { reviewed } : {}) };
    const form = parseForm(html);
    const posted = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, decision: 'allow' });
    at = await followRedirects(jar, new URL(posted.headers.get('location')!, ts.baseUrl), (u) => u.host === CLIENT_HOST);
  }
  const code = at.url.searchParams.get('code');
  assert.ok(code, `a code in ${at.url}`);
  const tokens = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }),
  });
  assert.equal(tokens.status, 200);
  return { claims: decodeJwt(((await tokens.json()) as { id_token: string }).id_token), ...(reviewed ? { reviewed } : {}) };
}

