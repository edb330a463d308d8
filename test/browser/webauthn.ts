// Security keys (W3C WebAuthn Level 2; Keycloak's webauthn-register required action and WebAuthn
// authenticator) in a real browser: Debian's chromium driven by playwright-core, with Chrome DevTools
// Protocol's virtual authenticator (CTAP2 over USB, user verification) standing in for the key: nothing
// of it knows Realmgate. The page's own script calls navigator.credentials. With UPDATE_SCREENSHOTS=1
// the pages are saved to docs/screenshots/webauthn*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createUser } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();
const PASSWORD = 'wendy password 1';

/** The client's redirect: state, and a code the token endpoint exchanges. */
async function backAtClient(page: Page, ts: TestServer, state: string): Promise<void> {
  await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
  const back = new URL(page.url());
  assert.equal(back.searchParams.get('state'), state);
  const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: ts.client.redirectUri }).toString(),
  });
  assert.equal(res.status, 200, await res.text());
}

/** Whether the browser holds the realm's session cookie (its path is the realm's: asked for with a URL under it). */
async function signedIn(context: BrowserContext, base: string): Promise<boolean> {
  return (await context.cookies(`${base}${realmPath('/account')}`)).some((c) => c.name === 'RG_SESSION');
}

/** A virtual CTAP2 authenticator on USB with user verification (a key with a PIN), touched at once. */
async function virtualKey(context: BrowserContext, page: Page, o: { platform?: boolean } = {}): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    // A platform authenticator (the device's screen lock) keeps discoverable credentials: passkeys.
    options: { protocol: 'ctap2', transport: o.platform ? 'internal' : 'usb', hasResidentKey: o.platform === true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

/**
 * A listening test server whose public URL names localhost (WebAuthn's RP ID is a domain, never an IP
 * address), and the authorization request of its confidential client.
 */
async function localhostServer(dialect: 'sqlite' | 'postgres'): Promise<{ ts: TestServer; base: string; authorize: (state: string) => string }> {
  const ts = await startTestServer({ dialect, listen: true });
  const base = ts.baseUrl.replace('127.0.0.1', 'localhost');
  Object.assign(ts.config, { authUrl: base, appUrl: base });
  const authorize = (state: string): string => `${base}${realmPath('/protocol/openid-connect/auth')}?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid core_data', state })}`;
  return { ts, base, authorize };
}

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: a security key is registered at the first sign-in (webauthn-register), then asked for after the password (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const { ts, base, authorize } = await localhostServer(dialect);
    const { id: userId } = await createUser(ts.store, { realmId: 'test', username: 'wendy', password: PASSWORD, orgAliases: ['acme'], requiredActions: ['webauthn-register'] });
    const contexts: BrowserContext[] = [];
    try {
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const hits = await interceptClient(context, page);
      const { cdp, authenticatorId } = await virtualKey(context, page);
      await page.goto(authorize('first'));
      await signInOnPage(page, 'wendy', PASSWORD);

      // The registration page: no session yet, nothing sent to the client.
      await page.getByRole('button', { name: 'Register' }).waitFor();
      assert.equal(await page.title(), 'Register a security key · Test Realm');
      assert.equal(await heading(page), 'Register a security key');
      assert.ok(!(await signedIn(context, base)), 'no session before the key');
      assert.deepEqual(hits, []);
      await checkLayout(page, 'webauthn-register', shoot);
      await page.getByLabel('Name of the key').fill('Wendy’s key');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await backAtClient(page, ts, 'first');
      const [stored] = await ts.store.webauthn.list(userId);
      assert.equal(stored!.label, 'Wendy’s key');
      assert.equal(stored!.alg, -7);
      assert.deepEqual((await ts.store.users.get(userId))!.requiredActions, []);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(credentials.length, 1);
      assert.ok(Buffer.from(credentials[0]!.credentialId, 'base64').equals(stored!.credentialId), 'the key the authenticator made');

      // Sign out (the logout endpoint's confirmation), then sign in again: the password, then the key.
      await page.goto(`${base}${realmPath('/protocol/openid-connect/logout')}`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((u) => !u.pathname.endsWith('/logout') || u.search === '');
      assert.ok(!(await signedIn(context, base)), 'signed out');
      await page.goto(authorize('second'));
      await signInOnPage(page, 'wendy', PASSWORD);
      await page.getByRole('button', { name: 'Use security key' }).waitFor();
      assert.equal(await heading(page), 'Use your security key');
      assert.equal(await page.title(), 'Security key · Test Realm');
      assert.ok(!(await signedIn(context, base)), 'no session before the key');
      await checkLayout(page, 'webauthn', shoot);
      await page.getByRole('button', { name: 'Use security key' }).click();
      // Consent was given for acme, the user's one organization: straight back to the client.
      await backAtClient(page, ts, 'second');
      const after = (await ts.store.webauthn.list(userId))[0]!;
      const { credentials: now } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(after.signCount, now[0]!.signCount, 'the counter the authenticator reached');
      assert.ok(after.signCount > 0);

      // The account page lists the key, to remove or to add another.
      await page.goto(`${base}${realmPath('/account')}`);
      await page.getByRole('heading', { name: 'Security keys' }).waitFor();
      assert.match((await page.locator('li.authenticator').filter({ hasText: 'Wendy’s key' }).textContent()) ?? '', /added/);
      await page.getByRole('button', { name: 'Add a security key' }).waitFor();
      await checkLayout(page, 'account-security-keys', shoot);

      // Without a key to touch (the authenticator removed): the page says so, nothing is posted.
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
      const other = await shared.newContext();
      contexts.push(other);
      const page2 = await other.newPage();
      await interceptClient(other, page2);
      const second = await virtualKey(other, page2);
      await page2.goto(authorize('third'));
      await signInOnPage(page2, 'wendy', PASSWORD);
      await page2.getByRole('button', { name: 'Use security key' }).click();
      await page2.locator('#webauthn-status').waitFor({ state: 'visible', timeout: 15_000 });
      assert.match((await page2.locator('#webauthn-status').textContent()) ?? '', /security key/i);
      void second;
      const events = (await ts.store.events.list('test', { userId, types: ['UPDATE_CREDENTIAL', 'LOGIN'], order: 'asc' })).map((e) => e.type);
      assert.deepEqual(events.sort(), ['LOGIN', 'LOGIN', 'UPDATE_CREDENTIAL']);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });

  test(`browser: a passkey (webauthn-register-passwordless) is registered, then signs in from the login page without a password (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const { ts, base, authorize } = await localhostServer(dialect);
    const { id: userId } = await createUser(ts.store, { realmId: 'test', username: 'paula', password: PASSWORD, orgAliases: ['acme'], requiredActions: ['webauthn-register-passwordless'] });
    const contexts: BrowserContext[] = [];
    try {
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      await interceptClient(context, page);
      const { cdp, authenticatorId } = await virtualKey(context, page, { platform: true });
      await page.goto(authorize('first'));
      await signInOnPage(page, 'paula', PASSWORD);
      await page.getByRole('button', { name: 'Register' }).waitFor();
      assert.equal(await heading(page), 'Register a passkey');
      await page.getByLabel('Name of the key').fill('Laptop');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await backAtClient(page, ts, 'first');
      const [stored] = await ts.store.webauthn.list(userId);
      assert.equal(stored!.passwordless, true);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(credentials[0]!.isResidentCredential, true, 'a discoverable credential');

      await page.goto(`${base}${realmPath('/protocol/openid-connect/logout')}`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((u) => !u.pathname.endsWith('/logout') || u.search === '');
      await page.goto(authorize('second'));
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      await checkLayout(page, 'login-passkey', shoot);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await backAtClient(page, ts, 'second');
      // The account page's own sign-in offers the passkey too: the key alone opens the account page.
      await page.goto(`${base}${realmPath('/protocol/openid-connect/logout')}`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL((u) => !u.pathname.endsWith('/logout') || u.search === '');
      await page.goto(`${base}${realmPath('/account')}`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      await checkLayout(page, 'account-login-passkey', shoot);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('heading', { name: 'Security keys' }).waitFor();
      assert.ok(await signedIn(context, base), 'signed in');
      const logins = await ts.store.events.list('test', { userId, types: ['LOGIN'] });
      assert.equal(logins.length, 3);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
