// The admin console in a real browser (Debian's chromium via playwright-core): the admin signs in through
// master's login pages, creates a client, whitelists a redirect URI, creates a user and disables them;
// then the real login pages prove the new redirect URI works and the disabled user cannot sign in; last,
// the admin impersonates alice and lands on her account page.
// With UPDATE_SCREENSHOTS=1 every console page is saved to docs/screenshots/console-*.png (desktop, phone).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext, type Page } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { CLIENT_ORIGIN, SKIP_REASON, checkLayout, heading, interceptClient, sharedBrowser } from '../helpers/browser.js';
import { enrollTestOtp } from '../helpers/otp.js';

const ADMIN = { username: 'admin', password: 'admin password 42' };

const shared = sharedBrowser();
const newContext = (): Promise<BrowserContext> => shared.newContext();

async function signInOnPages(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

for (const dialect of dialects()) {
  test(`[${dialect}] admin console walk: sign-in, client, redirect URI, user, disable; the login pages agree`, async (t: TestContext) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const contexts: BrowserContext[] = [];
    // Screenshots from one database only (they are the same pages).
    const shoot = dialect === 'sqlite';
    try {
      await bootstrapAdmin(ts.store, { ...ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });
      const context = await newContext();
      contexts.push(context);
      const page = await context.newPage();

      // The operator opens {AUTH_URL}/auth/admin/ and lands on master's login page.
      await page.goto(`${ts.baseUrl}/auth/admin/`);
      assert.equal(await heading(page), 'Sign in to continue to Admin console');
      await signInOnPages(page, ADMIN.username, ADMIN.password);
      // A public client: the project asks consent on each of its requests.
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(`${ts.baseUrl}/auth/admin/console/`);
      assert.equal(await heading(page), 'Dashboard');
      await checkLayout(page, 'console-dashboard', shoot);

      await page.getByRole('link', { name: 'Test Realm' }).click();
      assert.equal(await heading(page), 'Test Realm');
      await checkLayout(page, 'console-realm', shoot);
      await page.getByRole('navigation', { name: 'Realm' }).getByRole('link', { name: 'Clients' }).click();
      assert.equal(await heading(page), 'Clients');
      await checkLayout(page, 'console-clients', shoot);

      // Create a confidential client; its secret is shown once.
      await page.getByLabel('Client ID').fill('shop');
      await page.getByLabel('Name').fill('Shop');
      await page.getByLabel('Redirect URI').fill(`${CLIENT_ORIGIN}/shop`);
      await page.getByRole('button', { name: 'Create client' }).click();
      assert.equal(await heading(page), 'shop');
      const secret = ((await page.locator('code.secret').textContent()) ?? '').trim();
      assert.ok(secret.length >= 32);

      // Whitelist a second redirect URI.
      await page.getByLabel('Add a redirect URI').fill(`${CLIENT_ORIGIN}/shop-callback`);
      await page.getByRole('button', { name: 'Add redirect URI' }).click();
      await page.getByText('The redirect URI was added.').waitFor();
      assert.equal(await page.getByText(`${CLIENT_ORIGIN}/shop-callback`).count(), 1);
      // Allow the client's own origin for browser calls (CORS), then replace its secret.
      await page.getByLabel('Add a web origin').fill(CLIENT_ORIGIN);
      await page.getByRole('button', { name: 'Add web origin' }).click();
      await page.getByText('The web origin was added.').waitFor();
      assert.equal(await page.locator('code', { hasText: new RegExp(`^${CLIENT_ORIGIN}$`) }).count(), 1);
      // Require pushed authorization requests (RFC 9126) for it.
      await page.getByLabel('Require pushed authorization requests').check();
      await page.getByRole('button', { name: 'Save pushed requests' }).click();
      await page.getByText('The pushed authorization request setting was saved.').waitFor();
      assert.equal(await page.getByLabel('Require pushed authorization requests').isChecked(), true);
      await page.getByRole('button', { name: 'Generate a new secret' }).click();
      await page.getByText('A new secret was generated').waitFor();
      const newSecret = ((await page.locator('code.secret').textContent()) ?? '').trim();
      assert.ok(newSecret.length >= 32 && newSecret !== secret);
      await checkLayout(page, 'console-client', shoot);
      // Another, keeping this one for a day beside it (a rolling change of the application's instances):
      // the page says until when, and the button refuses it at once.
      await page.getByLabel('Keep the old secret valid beside the new one').selectOption({ label: 'For 1 day' });
      await page.getByRole('button', { name: 'Generate a new secret' }).click();
      await page.getByText('the old one is still accepted until').waitFor();
      assert.equal(await page.getByText('Previous secret', { exact: true }).count(), 1);
      assert.equal((await ts.store.clients.get(REALM, 'shop'))!.rotatedSecret !== null, true);
      await checkLayout(page, 'console-client-previous-secret', shoot);
      await page.getByRole('button', { name: 'Refuse the previous secret now' }).click();
      await page.getByText('The previous secret is refused from now on').waitFor();
      assert.equal((await ts.store.clients.get(REALM, 'shop'))!.rotatedSecret, null);
      // Off again: the walk signs in to shop below with a plain authorization request.
      await page.getByLabel('Require pushed authorization requests').uncheck();
      await page.getByRole('button', { name: 'Save pushed requests' }).click();
      await page.getByText('The pushed authorization request setting was saved.').waitFor();
      assert.equal((await ts.store.clients.get(REALM, 'shop'))!.requirePushedAuthorizationRequests, false);
      // DPoP-bound tokens (RFC 9449): on, then off again (the walk's plain code exchange below sends no proof).
      await page.getByLabel('Require DPoP-bound tokens').check();
      await page.getByRole('button', { name: 'Save DPoP' }).click();
      await page.getByText('The DPoP setting was saved.').waitFor();
      assert.equal((await ts.store.clients.get(REALM, 'shop'))!.dpopBoundAccessTokens, true);
      await page.getByLabel('Require DPoP-bound tokens').uncheck();
      await page.getByRole('button', { name: 'Save DPoP' }).click();
      await page.getByText('The DPoP setting was saved.').waitFor();
      assert.equal((await ts.store.clients.get(REALM, 'shop'))!.dpopBoundAccessTokens, false);
      // Its credentials: a signed JWT (private_key_jwt) with keys at a JWKS URL; then back to its secret.
      await page.getByLabel('Client authenticator').selectOption('client-jwt');
      await page.getByLabel('Use JWKS URL').check();
      await page.getByLabel('JWKS URL', { exact: true }).fill('https://shop.example.com/.well-known/jwks.json');
      await page.getByLabel('Signature algorithm', { exact: true }).selectOption('ES256');
      await page.getByRole('button', { name: 'Save credentials' }).click();
      await page.getByText('The credentials were saved.').waitFor();
      assert.deepEqual((await ts.store.clients.get(REALM, 'shop'))!.authMethods, ['private_key_jwt']);
      await page.locator('#authenticator').scrollIntoViewIfNeeded();
      await checkLayout(page, 'console-client-jwt', shoot);
      await page.getByLabel('Client authenticator').selectOption('client-secret');
      await page.getByRole('button', { name: 'Save credentials' }).click();
      await page.getByText('The credentials were saved.').waitFor();
      assert.deepEqual((await ts.store.clients.get(REALM, 'shop'))!.authMethods, ['client_secret_basic', 'client_secret_post']);

      // Create a user, then disable them.
      await page.getByRole('navigation', { name: 'Realm' }).getByRole('link', { name: 'Users' }).click();
      assert.equal(await heading(page), 'Users');
      await checkLayout(page, 'console-users', shoot);
      await page.getByLabel('Username').fill('carol');
      await page.getByLabel('Initial password').fill('carol password 1');
      await page.getByRole('button', { name: 'Create user' }).click();
      assert.equal(await heading(page), 'carol');
      await page.getByText('The user was created.').waitFor();
      await page.getByRole('button', { name: 'Disable user' }).click();
      await page.getByText('The user was disabled').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Enable user' }).count(), 1);
      // Two attributes, the second with two values (one per line).
      await page.getByLabel('Attribute name').fill('locale');
      await page.getByLabel('Values, one per line').fill('fr');
      await page.getByRole('button', { name: 'Set attribute' }).click();
      await page.getByText('The attribute was set').waitFor();
      await page.getByLabel('Attribute name').fill('skills');
      await page.getByLabel('Values, one per line').fill('java\ngo');
      await page.getByRole('button', { name: 'Set attribute' }).click();
      await page.getByText('The attribute was set').waitFor();
      assert.equal(await page.locator('.attribute-values code').count(), 3);
      // Authenticator apps carol set up (as the setup page does): listed, one removed; setup required again.
      const carolUser = (await ts.store.users.findByUsername(REALM, 'carol'))!;
      await enrollTestOtp(ts.store, carolUser, 'Pixel 8');
      await enrollTestOtp(ts.store, carolUser, 'Work tablet');
      await page.reload();
      assert.equal(await page.getByText('Pixel 8').count(), 1);
      await page.locator('li', { hasText: 'Work tablet' }).getByRole('button', { name: 'Remove' }).click();
      await page.getByText('The authenticator app was removed').waitFor();
      assert.equal(await page.getByText('Work tablet').count(), 0);
      assert.equal((await ts.store.otp.list(carolUser.id)).length, 1);
      await page.getByRole('button', { name: 'Require setup at next sign-in' }).click();
      await page.getByText('The user sets up an authenticator app at the next sign-in.', { exact: true }).waitFor();
      assert.deepEqual((await ts.store.users.get(carolUser.id))!.requiredActions, ['UPDATE_PASSWORD', 'CONFIGURE_TOTP']);
      assert.equal(await page.getByRole('button', { name: 'Stop requiring setup' }).count(), 1);
      await checkLayout(page, 'console-user', shoot);

      await page.getByRole('navigation', { name: 'Realm' }).getByRole('link', { name: 'Events' }).click();
      assert.equal(await heading(page), 'Events');
      assert.ok((await page.getByText('clients/shop', { exact: true }).count()) >= 2, 'the client create and update are admin events');
      await checkLayout(page, 'console-events', shoot);
      await page.getByRole('navigation', { name: 'Realm' }).getByRole('link', { name: 'Organizations' }).click();
      assert.equal(await heading(page), 'Organizations');
      await checkLayout(page, 'console-organizations', shoot);
      await page.getByRole('link', { name: 'acme' }).click();
      assert.equal(await heading(page), 'Acme Inc.');
      await checkLayout(page, 'console-organization', shoot);

      // The new redirect URI works at the real authorization endpoint (cache TTL 0 in tests).
      const app = await newContext();
      contexts.push(app);
      const appPage = await app.newPage();
      const hits = await interceptClient(app, appPage);
      const q = new URLSearchParams({ client_id: 'shop', redirect_uri: `${CLIENT_ORIGIN}/shop-callback`, response_type: 'code', scope: 'openid', state: 's1' });
      await appPage.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth?${q.toString()}`);
      await signInOnPages(appPage, ts.user.username, ts.user.password);
      await appPage.getByRole('button', { name: 'Allow' }).click();
      // Alice works for Acme: the realm asks which organization the application acts for.
      await appPage.getByRole('button', { name: 'Continue' }).click();
      await appPage.waitForURL((u) => u.origin === CLIENT_ORIGIN).catch(async (err: unknown) => {
        throw new Error(`not back at the client: ${appPage.url()} ${await heading(appPage)} ${String(err).slice(0, 80)}`);
      });
      const back = new URL(hits.at(-1)!);
      assert.equal(back.origin + back.pathname, `${CLIENT_ORIGIN}/shop-callback`);
      assert.equal(back.searchParams.get('state'), 's1');
      assert.ok(back.searchParams.get('code'));

      // The disabled user cannot sign in: the login page answers as for a wrong password.
      const carol = await newContext();
      contexts.push(carol);
      const carolPage = await carol.newPage();
      await interceptClient(carol, carolPage);
      await carolPage.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth?${q.toString()}`);
      await signInOnPages(carolPage, 'carol', 'carol password 1');
      assert.match(await heading(carolPage), /^Sign in/);
      assert.equal(await carolPage.locator('.error').count(), 1);
      assert.ok(!carolPage.url().startsWith(CLIENT_ORIGIN));

      // Back in the console, the operator deletes the client by typing its ID; its login stops working.
      await page.goto(`${ts.baseUrl}/auth/admin/console/realms/${REALM}/clients/shop`);
      await page.getByLabel('Type the client ID to delete the client').fill('shop');
      await page.getByRole('button', { name: 'Delete client' }).click();
      await page.getByText('The client was deleted').waitFor();
      assert.equal(await heading(page), 'Clients');
      assert.equal(await ts.store.clients.get(REALM, 'shop'), undefined);

      // Impersonate: from alice's page the operator signs in as her, in this browser, on her account page.
      await page.goto(`${ts.baseUrl}/auth/admin/console/realms/${REALM}/users/${ts.user.id}`);
      await page.getByRole('heading', { name: 'Impersonate' }).scrollIntoViewIfNeeded();
      await checkLayout(page, 'console-user-impersonate', shoot);
      await page.getByRole('button', { name: 'Impersonate' }).click();
      await page.waitForURL(`${ts.baseUrl}/auth/realms/${REALM}/account`);
      await page.getByText('Administrator admin signed in as you in this browser (impersonation).').waitFor();
      assert.match((await page.locator('li.session', { hasText: 'This browser' }).textContent()) ?? '', /opened by administrator admin/);
      await checkLayout(page, 'account-impersonated', shoot);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
