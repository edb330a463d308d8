// The account page and RP-initiated logout in a real browser: Debian's chromium driven by playwright-core.
// Never downloads a browser; when /usr/bin/chromium is missing every test here is skipped (CI installs it).
// With UPDATE_SCREENSHOTS=1 the account, logout confirmation and signed-out pages are saved to
// docs/screenshots/ at desktop and phone width.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext, type Cookie, type Page } from 'playwright-core';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createClient, updateRealm } from '../../src/admin/operations.js';
import { SESSION_COOKIE } from '../../src/http/cookies.js';
import { DEFAULT_SCOPES } from '../../src/storage/repos/realms.js';
import { interceptClient, CLIENT_ORIGIN, SKIP_REASON, checkLayout, heading, sharedBrowser } from '../helpers/browser.js';

const REQUESTED_SCOPES = ['openid', 'core_data', 'exports', 'offline_access'];
const ACCOUNT = realmPath('/account');
const LOGOUT = realmPath('/protocol/openid-connect/logout');

interface RegisteredClient {
  id: string;
  name: string;
  secret: string;
  redirectUri: string;
}

/** A relying party that registered where to come back after logout (web-app registers nothing). */
const RP = { id: 'rp-app', name: 'Relying Party', secret: 'rp-app-secret', redirectUri: `${CLIENT_ORIGIN}/callback`, postLogoutRedirectUri: `${CLIENT_ORIGIN}/after-logout` };

const shared = sharedBrowser();
const newContext = (): Promise<BrowserContext> => shared.newContext();


function authorizeUrl(ts: TestServer, client: RegisteredClient, state: string): string {
  const q = new URLSearchParams({ client_id: client.id, redirect_uri: client.redirectUri, response_type: 'code', scope: REQUESTED_SCOPES.join(' '), state });
  return `${ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}?${q.toString()}`;
}

function webApp(ts: TestServer): RegisteredClient {
  return { id: ts.client.id, name: 'Web App', secret: ts.client.secret, redirectUri: ts.client.redirectUri };
}

async function waitForClient(page: Page): Promise<URL> {
  await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
  return new URL(page.url());
}

async function signIn(ts: TestServer, page: Page): Promise<void> {
  await page.getByLabel('Username').fill(ts.user.username);
  await page.getByLabel('Password').fill(ts.user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The browser's session cookie for the realm, if any. */
async function sessionCookie(ts: TestServer, context: BrowserContext): Promise<Cookie | undefined> {
  return (await context.cookies(`${ts.baseUrl}${realmPath('/')}`)).find((c) => c.name === SESSION_COOKIE);
}

/**
 * Checks that hold on every page (the stylesheet is applied despite the CSP, nothing overflows sideways
 * at phone width) and, with UPDATE_SCREENSHOTS=1, saves `<name>-desktop.png` and `<name>-phone.png`.
 */

async function tokenRequest(ts: TestServer, client: RegisteredClient, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * A first authorization in this browser, as the user does it: sign in, allow, keep the preselected
 * organization; then the client exchanges the code. Returns the token response.
 */
async function authorizeAndExchange(ts: TestServer, page: Page, client: RegisteredClient): Promise<Record<string, string>> {
  await page.goto(authorizeUrl(ts, client, 'login'));
  assert.equal(await heading(page), `Sign in to continue to ${client.name}`);
  await signIn(ts, page);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  const back = await waitForClient(page);
  assert.equal(back.origin + back.pathname, client.redirectUri);
  assert.equal(back.searchParams.get('state'), 'login');
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back.href}`);
  const { status, body } = await tokenRequest(ts, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri });
  assert.equal(status, 200, JSON.stringify(body));
  for (const name of ['access_token', 'refresh_token', 'id_token']) assert.equal(typeof body[name], 'string', `a ${name}`);
  return body as Record<string, string>;
}

async function withBrowser(t: TestContext, dialect: 'sqlite' | 'postgres', fn: (ts: TestServer, page: Page, context: BrowserContext, hits: string[]) => Promise<void>): Promise<void> {
  if (!shared.browser) {
    t.skip(SKIP_REASON);
    return;
  }
  const ts = await startTestServer({ dialect, listen: true });
  await createClient(ts.store, { realmId: REALM, clientId: RP.id, name: RP.name, secret: RP.secret, redirectUris: [RP.redirectUri], postLogoutRedirectUris: [RP.postLogoutRedirectUri] });
  const context = await newContext();
  try {
    const page = await context.newPage();
    const hits = await interceptClient(context, page);
    await fn(ts, page, context, hits);
  } finally {
    await context.close();
    await ts.close();
  }
}

for (const dialect of dialects()) {
  // Screenshots come from one dialect only: the pages do not depend on the database.
  const shoot = dialect === 'sqlite';

  test(`browser: the account page lists the application and revokes its access (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context, hits) => {
      const client = webApp(ts);
      const tokens = await authorizeAndExchange(ts, page, client);

      // A second browser signs in on the account page itself: the user now has two sessions.
      const other = await newContext();
      try {
        const otherPage = await other.newPage();
        await otherPage.goto(`${ts.baseUrl}${ACCOUNT}`);
        assert.equal(await heading(otherPage), 'Sign in to continue to your account');
        await signIn(ts, otherPage);
        await otherPage.getByRole('heading', { name: 'Your account' }).waitFor();
      } finally {
        await other.close();
      }

      await page.goto(`${ts.baseUrl}${ACCOUNT}`);
      assert.equal(await heading(page), 'Your account');
      assert.equal(await page.title(), 'Your account · Test Realm');
      assert.equal((await page.getByText('Signed in as').textContent())?.trim(), `Signed in as ${ts.user.username}.`);

      // The application, for its organization, with each permission in plain words and nothing else.
      const grants = page.locator('li.grant');
      assert.equal(await grants.count(), 1);
      const grant = grants.first();
      assert.equal((await grant.locator('strong').first().textContent())?.trim(), 'Web App');
      assert.ok(await grant.getByText('for Acme Inc.').isVisible());
      const permissions = grant.locator('ul.scopes > li');
      assert.deepEqual(
        (await permissions.allInnerTexts()).map((s) => s.trim()).sort(),
        REQUESTED_SCOPES.map((name) => DEFAULT_SCOPES.find((s) => s.name === name)!.consentText).sort(),
      );
      for (const name of REQUESTED_SCOPES) assert.doesNotMatch(await grant.innerText(), new RegExp(`\\b${name}\\b`), `the scope name ${name} is not shown`);
      assert.match(await grant.innerText(), /Allowed since \d{4}-\d\d-\d\d \d\d:\d\d UTC\. Last used \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);

      // Both browsers, this one marked.
      const sessions = page.locator('li.session');
      assert.equal(await sessions.count(), 2);
      assert.equal(await sessions.filter({ hasText: 'This browser' }).count(), 1);
      assert.equal(await sessions.filter({ hasText: 'Another browser' }).count(), 1);
      await checkLayout(page, 'account', shoot);

      // Revoke: a notice, the application gone from the list, and its refresh token dead.
      await grant.getByRole('button', { name: 'Revoke access' }).click();
      const notice = page.getByRole('status');
      await notice.waitFor({ state: 'visible' });
      assert.equal((await notice.textContent())?.trim(), 'Access revoked. The application must ask you again.');
      assert.equal(await page.locator('li.grant').count(), 0);
      assert.ok(await page.getByText('No application has access to your account.').isVisible());
      assert.equal(await page.locator('li.session').count(), 2, 'revoking access signs no browser out');
      const refreshed = await tokenRequest(ts, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
      assert.equal(refreshed.status, 400);
      assert.equal(refreshed.body.error, 'invalid_grant');

      // The consent went with it: still signed in, the application has to ask again.
      await page.goto(authorizeUrl(ts, client, 'again'));
      assert.equal(await heading(page), 'Web App wants to access your account');
      assert.equal(hits.length, 1, 'only the first authorization reached the client');

      // Keycloak's editUsernameAllowed: the username field of Personal info becomes editable and saves.
      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: true } });
      ts.services.cache.clear();
      await page.goto(`${ts.baseUrl}${ACCOUNT}`);
      const usernameField = page.locator('#profile-username');
      assert.equal(await usernameField.isEditable(), true);
      await usernameField.fill('alice.liddell');
      await page.locator('#profile-firstName').fill('Alice');
      await page.locator('#profile-lastName').fill('Liddell');
      await page.locator('form.profile-form').getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Your personal info is saved.').waitFor();
      assert.equal((await ts.store.users.get(ts.user.id))!.username, 'alice.liddell');
      await checkLayout(page, 'account-edit-username', shoot);
      await ts.store.users.update(ts.user.id, { username: ts.user.username });
      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: false } });
      ts.services.cache.clear();
    });
  });

  test(`browser: logout with id_token_hint returns to the application and ends the session (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context, hits) => {
      const tokens = await authorizeAndExchange(ts, page, RP);
      const session = await sessionCookie(ts, context);
      assert.ok(session, 'a session after login');

      // A state with characters that must be encoded, to prove it comes back unchanged.
      const state = 'logout /+&=?é';
      const q = new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: RP.postLogoutRedirectUri, state });
      await page.goto(`${ts.baseUrl}${LOGOUT}?${q.toString()}`);
      const back = await waitForClient(page);
      assert.equal(back.origin + back.pathname, RP.postLogoutRedirectUri);
      assert.deepEqual([...back.searchParams.keys()], ['state']);
      assert.equal(back.searchParams.get('state'), state);
      assert.equal(hits.length, 2);
      assert.equal(await sessionCookie(ts, context), undefined, 'the session cookie is cleared');

      // The session ended on the server too: even its old cookie now meets the login page.
      await context.addCookies([session]);
      await page.goto(authorizeUrl(ts, RP, 'after-logout'));
      assert.equal(new URL(page.url()).origin, ts.baseUrl);
      assert.equal(await heading(page), `Sign in to continue to ${RP.name}`);
      assert.ok(await page.getByLabel('Password').isVisible());
      assert.equal(hits.length, 2);
    });
  });

  test(`browser: logout without id_token_hint asks first, then signs out (${dialect})`, async (t) => {
    await withBrowser(t, dialect, async (ts, page, context, hits) => {
      await authorizeAndExchange(ts, page, RP);
      const session = await sessionCookie(ts, context);
      assert.ok(session, 'a session after login');

      // Another site could send the browser here: the user is asked, and nothing ends before they answer.
      await page.goto(`${ts.baseUrl}${LOGOUT}?client_id=${RP.id}`);
      assert.equal(await heading(page), 'Do you want to sign out?');
      assert.equal(await page.title(), 'Sign out · Test Realm');
      assert.ok(await page.getByText('Relying Party asks to sign you out of Test Realm.').isVisible());
      assert.ok(await sessionCookie(ts, context), 'still signed in while asked');
      await checkLayout(page, 'logout-confirm', shoot);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
      assert.equal(new URL(page.url()).origin, ts.baseUrl, 'no return address: the server says so itself');
      assert.ok(await page.getByText('You can close this window.').isVisible());
      assert.equal(await sessionCookie(ts, context), undefined, 'the session cookie is cleared');
      assert.equal(hits.length, 1);
      await checkLayout(page, 'signed-out', shoot);

      await context.addCookies([session]);
      await page.goto(`${ts.baseUrl}${ACCOUNT}`);
      assert.equal(await heading(page), 'Sign in to continue to your account');
    });
  });
}
