import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { REALM, type TestServer } from './server.js';
import { interceptClient, type sharedBrowser } from './browser.js';

// Steps the console's browser tests share: alice signs in to the web app (her tokens), and the admin
// signs in to the console and opens the test realm.

export const CONSOLE_ADMIN = { username: 'admin', password: 'admin password 42' };

export async function signInOnPages(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
}

export function claimsOf(tokens: Tokens): { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> } & Record<string, unknown> {
  return JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()) as Record<string, never>;
}

/** A token request of the test client (client_secret_post); asserts a 200. */
export async function tokenEndpoint(ts: TestServer, form: Record<string, string>): Promise<Tokens> {
  const res = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...form, client_id: ts.client.id, client_secret: ts.client.secret }).toString(),
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return JSON.parse(body) as Tokens;
}

type Shared = ReturnType<typeof sharedBrowser>;

/** alice signs in to the web app in a browser of her own (sign-in, consent, organization): her first tokens. */
export async function aliceSignsIn(shared: Shared, ts: TestServer, contexts: BrowserContext[]): Promise<Tokens> {
  const app = await shared.newContext();
  contexts.push(app);
  const appPage = await app.newPage();
  const hits = await interceptClient(app, appPage);
  const q = new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1' });
  await appPage.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth?${q.toString()}`);
  await signInOnPages(appPage, ts.user.username, ts.user.password);
  await appPage.getByRole('button', { name: 'Allow' }).click();
  await appPage.getByRole('button', { name: 'Continue' }).click();
  await appPage.waitForURL((u) => u.href.startsWith(ts.client.redirectUri));
  const code = new URL(hits.at(-1)!).searchParams.get('code')!;
  return tokenEndpoint(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri });
}

/** The admin signs in to the console (CONSOLE_ADMIN) in another browser and opens the test realm: the page and the realm's navigation. */
export async function adminOpensRealm(shared: Shared, ts: TestServer, contexts: BrowserContext[]): Promise<{ page: Page; nav: ReturnType<Page['getByRole']> }> {
  const context = await shared.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${ts.baseUrl}/auth/admin/`);
  await signInOnPages(page, CONSOLE_ADMIN.username, CONSOLE_ADMIN.password);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${ts.baseUrl}/auth/admin/console/`);
  await page.getByRole('link', { name: 'Test Realm' }).click();
  return { page, nav: page.getByRole('navigation', { name: 'Realm' }) };
}
