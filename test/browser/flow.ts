// The browser side of E1 in a real browser: Debian's chromium driven by playwright-core.
// Never downloads a browser; when /usr/bin/chromium is missing every test here is skipped (CI installs it).
// With UPDATE_SCREENSHOTS=1 the pages are also saved to docs/screenshots/ at desktop and phone width.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext, type Page, type Request } from 'playwright-core';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { updateClient } from '../../src/admin/operations.js';
import { dialects } from '../helpers/db.js';
import { DEFAULT_SCOPES } from '../../src/storage/repos/realms.js';
import { CLIENT_ORIGIN, SKIP_REASON, checkLayout, heading, interceptClient, sharedBrowser } from '../helpers/browser.js';

const REQUESTED_SCOPES = ['openid', 'core_data', 'exports', 'offline_access'];
const SHOWN_SCOPES = [...REQUESTED_SCOPES, 'profile', 'email'];
// A state with characters that must be encoded, to prove it comes back unchanged.
const STATE = 'st4te /+&=?é';

const shared = sharedBrowser();
const newContext = (): Promise<BrowserContext> => shared.newContext();

function authorizeUrl(ts: TestServer, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({
    client_id: ts.client.id,
    redirect_uri: ts.client.redirectUri,
    response_type: 'code',
    scope: REQUESTED_SCOPES.join(' '),
    state: STATE,
    ...extra,
  });
  return `${ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}?${q.toString()}`;
}

function onInteractionPage(ts: TestServer, page: Page): boolean {
  const u = new URL(page.url());
  return u.origin === ts.baseUrl && u.pathname.startsWith(realmPath('/login-actions/'));
}

async function waitForClient(page: Page): Promise<URL> {
  await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
  return new URL(page.url());
}

/**
 * Checks that hold on every page (the stylesheet is applied despite the CSP, nothing overflows sideways
 * at phone width) and, with UPDATE_SCREENSHOTS=1, saves `<name>-desktop.png` and `<name>-phone.png`.
 */

async function tokenRequest(ts: TestServer, form: Record<string, string>): Promise<Response> {
  return fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
}

async function exchange(ts: TestServer, code: string): Promise<Record<string, unknown>> {
  const res = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(typeof body.access_token, 'string');
  assert.ok((body.access_token as string).length > 0);
  assert.equal(typeof body.refresh_token, 'string');
  assert.ok((body.refresh_token as string).length > 0);
  assert.match(String(body.token_type), /^bearer$/i);
  return body;
}

/** The URLs of one navigation, from the first request through each redirect to the last. */
function redirectChain(req: Request): string[] {
  const chain: string[] = [];
  for (let r: Request | null = req; r; r = r.redirectedFrom()) chain.unshift(r.url());
  return chain;
}

async function withBrowser(t: TestContext, dialect: 'sqlite' | 'postgres', fn: (ts: TestServer, page: Page, context: BrowserContext) => Promise<void>): Promise<void> {
  if (!shared.browser) {
    t.skip(SKIP_REASON);
    return;
  }
  const ts = await startTestServer({ dialect, listen: true });
  const context = await newContext();
  try {
    const page = await context.newPage();
    await fn(ts, page, context);
  } finally {
    await context.close();
    await ts.close();
  }
}

for (const dialect of dialects()) {
  // Screenshots come from one dialect only: the pages do not depend on the database.
  const shoot = dialect === 'sqlite';

  test(`browser: login, consent, organization, code exchange, then SSO without pages (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context) => {
      const hits = await interceptClient(context, page);

      // Login page, found by its labels.
      await page.goto(authorizeUrl(ts));
      assert.ok(onInteractionPage(ts, page), `expected the login page, at ${page.url()}`);
      assert.equal(await page.title(), 'Sign in · Test Realm');
      assert.equal(await heading(page), 'Sign in to continue to Web App');
      const username = page.getByLabel('Username');
      const password = page.getByLabel('Password');
      assert.ok(await username.isVisible());
      assert.ok(await password.isVisible());
      assert.equal(await password.getAttribute('type'), 'password');
      assert.equal(await page.getByRole('alert').count(), 0, 'no error before the first attempt');
      await checkLayout(page, 'login', shoot);

      // A wrong password: a visible alert, still the login page, no session.
      await username.fill(ts.user.username);
      await password.fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor({ state: 'visible' });
      assert.equal((await alert.textContent())?.trim(), 'Invalid username or password.');
      assert.ok(onInteractionPage(ts, page), `a failed login must stay on the login page, at ${page.url()}`);
      assert.equal(await heading(page), 'Sign in to continue to Web App');
      assert.equal(await page.getByLabel('Username').inputValue(), ts.user.username, 'the username is kept');
      assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not echoed back');
      assert.ok(!(await context.cookies()).some((c) => c.name === 'RG_SESSION'), 'no session after a failed login');
      assert.deepEqual(hits, []);
      await checkLayout(page, 'login-error', shoot);

      // The right password.
      await page.getByLabel('Password').fill(ts.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();

      // Consent: every requested permission in plain words, and the default scopes whose claims openid
      // releases (profile, email: Keycloak's default client scopes), nothing else.
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.ok(onInteractionPage(ts, page), page.url());
      assert.equal(await heading(page), 'Web App wants to access your account');
      const items = page.locator('ul.permissions > li');
      assert.equal(await items.count(), SHOWN_SCOPES.length, (await items.allInnerTexts()).join(' | '));
      for (const name of SHOWN_SCOPES) {
        const text = DEFAULT_SCOPES.find((s) => s.name === name)?.consentText;
        assert.ok(text, `no consent text for ${name}`);
        const item = page.getByRole('listitem').filter({ hasText: text });
        assert.equal(await item.count(), 1, `"${text}" (${name}) is listed once`);
        assert.ok(await item.isVisible(), `"${text}" (${name}) is visible`);
      }
      for (const s of DEFAULT_SCOPES.filter((s) => !SHOWN_SCOPES.includes(s.name))) {
        assert.equal(await page.getByText(s.consentText).count(), 0, `${s.name} was not requested`);
      }
      assert.ok(await page.getByRole('button', { name: 'Deny' }).isVisible());
      await checkLayout(page, 'consent', shoot);
      await page.getByRole('button', { name: 'Allow' }).click();

      // Organization: the single organization is preselected.
      await page.getByRole('button', { name: 'Continue' }).waitFor();
      assert.ok(onInteractionPage(ts, page), page.url());
      assert.equal(await heading(page), 'Choose the organization Web App will work with');
      const radios = page.getByRole('radio');
      assert.equal(await radios.count(), 1);
      const acme = page.getByRole('radio', { name: 'Acme Inc.' });
      assert.ok(await acme.isChecked(), 'the only organization is preselected');
      assert.equal(await acme.getAttribute('value'), 'acme');
      await checkLayout(page, 'organization', shoot);
      await page.getByRole('button', { name: 'Continue' }).click();

      // Back at the client with a code and the same state.
      const back = await waitForClient(page);
      assert.equal(back.origin + back.pathname, ts.client.redirectUri);
      assert.equal(back.searchParams.get('state'), STATE);
      assert.equal(back.searchParams.get('error'), null);
      const code = back.searchParams.get('code');
      assert.ok(code, `no code in ${back.href}`);
      assert.equal(back.searchParams.get('iss'), `${ts.baseUrl}${realmPath('')}`);
      assert.equal(hits.length, 1);
      assert.equal(await page.textContent('p'), 'Back at the application.');
      const session = (await context.cookies(ts.baseUrl + realmPath('/'))).find((c) => c.name === 'RG_SESSION');
      assert.ok(session, 'a session cookie after login');
      assert.ok(session.httpOnly, 'the session cookie is HttpOnly');
      assert.equal(session.sameSite, 'Lax');
      await exchange(ts, code);

      // The code works once.
      const again = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri });
      assert.equal(again.status, 400, await again.text());

      // Second authorization in the same browser: SSO session + remembered consent, no page at all.
      const state2 = 'second';
      const res = await page.goto(authorizeUrl(ts, { state: state2 }));
      assert.ok(res, 'a response');
      const chain = redirectChain(res.request());
      assert.equal(chain.length, 2, `expected one redirect straight to the client, got:\n${chain.join('\n')}`);
      assert.ok(chain[0]!.startsWith(`${ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}`), chain[0]);
      const second = new URL(chain[1]!);
      assert.equal(second.origin + second.pathname, ts.client.redirectUri);
      assert.equal(new URL(page.url()).href, second.href);
      assert.equal(second.searchParams.get('state'), state2);
      const code2 = second.searchParams.get('code');
      assert.ok(code2, `no code in ${second.href}`);
      assert.notEqual(code2, code);
      assert.equal(hits.length, 2);
      await exchange(ts, code2);
    });
  });

  test(`browser: Deny on the consent page returns access_denied with the state (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context) => {
      const hits = await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, { state: 'deny-me' }));
      await page.getByLabel('Username').fill(ts.user.username);
      await page.getByLabel('Password').fill(ts.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Deny' }).click();
      const back = await waitForClient(page);
      assert.equal(back.origin + back.pathname, ts.client.redirectUri);
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), 'deny-me');
      assert.equal(back.searchParams.get('code'), null);
      assert.equal(hits.length, 1);

      // Denying is not remembered as consent: the next request asks again.
      await page.goto(authorizeUrl(ts, { state: 'ask-again' }));
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.ok(onInteractionPage(ts, page), page.url());
      assert.equal(hits.length, 1);
    });
  });

  test(`browser: the consent page names the services the request is bound to (RFC 8707), and the tokens are for them only (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context) => {
      await interceptClient(context, page);
      const apis = ['https://api.example.com', `https://exports.example.com/v1/${'very-long-path-segment/'.repeat(6)}`];
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, audiences: { set: [...apis, 'https://other.example.com'] } });
      await page.goto(`${authorizeUrl(ts)}&${apis.map((a) => `resource=${encodeURIComponent(a)}`).join('&')}`);
      await page.getByLabel('Username').fill(ts.user.username);
      await page.getByLabel('Password').fill(ts.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.equal(await page.getByText('Only on these services:').count(), 1);
      assert.deepEqual((await page.locator('ul.resources > li').allInnerTexts()).map((x) => x.trim()), apis);
      await checkLayout(page, 'consent-resources', shoot);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      const code = (await waitForClient(page)).searchParams.get('code');
      assert.ok(code);
      const tokens = await exchange(ts, code);
      const claims = JSON.parse(Buffer.from((tokens.access_token as string).split('.')[1]!, 'base64url').toString()) as { aud: unknown };
      assert.deepEqual(claims.aud, apis);
    });
  });

  test(`browser: an unregistered redirect_uri shows an error page and never leaves the server (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context) => {
      const hits = await interceptClient(context, page);
      const res = await page.goto(authorizeUrl(ts, { redirect_uri: `${CLIENT_ORIGIN}/not-registered` }));
      assert.equal(res?.status(), 400);
      assert.equal(new URL(page.url()).origin, ts.baseUrl);
      assert.equal(await heading(page), 'Invalid return address');
      const alert = page.getByRole('alert');
      assert.ok(await alert.isVisible());
      assert.match((await alert.textContent()) ?? '', /not registered/);
      assert.deepEqual(hits, []);
      await checkLayout(page, 'error', shoot);
    });
  });

  test(`browser: the authentication_code page says when a code is unknown or expired (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page) => {
      const res = await page.goto(`${ts.baseUrl}/authentication_code?code=abc123&state=x`);
      assert.equal(res?.status(), 200);
      assert.equal(await heading(page), 'This code can no longer be used');
      const alert = page.getByRole('alert');
      assert.ok(await alert.isVisible());
      assert.match((await alert.textContent()) ?? '', /expired or was already used/);
      assert.equal(await page.locator('#code').count(), 0);
      await checkLayout(page, 'authentication-code', shoot);
    });
  });
}
