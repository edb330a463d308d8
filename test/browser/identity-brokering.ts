// Identity brokering in a real browser (Debian's chromium through playwright-core): the login page's
// "Corp SSO" button takes the browser to node-oidc-provider and back, and an account that matches an
// existing user by email is linked on the "Link your account" page. With UPDATE_SCREENSHOTS=1 both pages
// are saved to docs/screenshots/.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer, basic, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { createOrganization } from '../../src/admin/operations/organizations.js';
import { updateIdentityProvider } from '../../src/admin/operations/identity-providers.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { createIdentityProvider, discoverProvider } from '../../src/admin/operations/identity-providers.js';

const shared = sharedBrowser();

async function withProvider(t: TestContext, dialect: 'sqlite' | 'postgres', fn: (ts: TestServer, up: Upstream, page: Page) => Promise<void>): Promise<void> {
  if (!shared.browser) {
    t.skip(SKIP_REASON);
    return;
  }
  const ts = await startTestServer({ dialect, listen: true });
  const up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/test/broker/corp/endpoint` });
  const context = await shared.newContext();
  try {
    await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
    const endpoints = await discoverProvider(up.issuer);
    await createIdentityProvider(ts.store, cliActor(), 'test', {
      alias: 'corp',
      displayName: 'Corp SSO',
      config: { ...endpoints, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile' },
    });
    const page = await context.newPage();
    await interceptClient(context, page);
    await fn(ts, up, page);
  } finally {
    await context.close();
    await up.close();
    await ts.close();
  }
}

/** Consents on the consent page, then waits for the client's redirect; exchanges the code for the ID token's subject. */
async function consentAndExchange(ts: TestServer, page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Allow' }).click();
  // A member of an organization chooses it; anyone else is back at the client.
  const radio = page.getByRole('radio').first();
  // (The loser of the race fails once the page is gone: caught, it is not an unhandled rejection.)
  const next = await Promise.race([page.waitForURL((u) => u.origin === CLIENT_ORIGIN).then(() => 'client', () => 'gone'), radio.waitFor().then(() => 'organization', () => 'gone')]);
  if (next === 'organization') {
    await page.getByRole('radio').first().check();
    await page.getByRole('button', { name: 'Continue' }).click();
  }
  await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
  const code = new URL(page.url()).searchParams.get('code');
  assert.ok(code, `a code in ${page.url()}`);
  const res = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }),
  });
  assert.equal(res.status, 200);
  const idToken = ((await res.json()) as { id_token: string }).id_token;
  return (JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
}

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: "Sign in with" a provider goes there and back, and a new user signs in (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      await page.goto(authorizeUrl(ts, 'b1'));
      const button = page.getByRole('button', { name: 'Corp SSO' });
      assert.ok(await button.isVisible(), 'the login page offers the provider');
      await checkLayout(page, 'login-providers', shoot);
      up.nextAccount = { sub: 'b-1', email: 'nina@corp.example', email_verified: true, preferred_username: 'nina' };
      await button.click();
      // Through node-oidc-provider (its sign-in answered by the test hook) and back to the consent page.
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.equal(new URL(page.url()).origin, ts.baseUrl);
      assert.ok(up.requests.some((q) => q.get('code_challenge_method') === 'S256'), 'PKCE at the provider');
      const sub = await consentAndExchange(ts, page);
      const user = await ts.store.users.findByUsername('test', 'nina');
      assert.equal(sub, user?.id);
      // Her account page lists the link; being her only way in, it cannot be unlinked.
      await page.goto(`${ts.baseUrl}/auth/realms/test/account`);
      await page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
      assert.match((await page.locator('li.linked-account').textContent()) ?? '', /Corp SSO\s+as nina/);
      assert.equal(await page.getByRole('button', { name: 'Unlink' }).count(), 0);
      await checkLayout(page, 'account-linked-accounts', shoot);
    });
  });

  test(`browser: an application asks a signed-in user to link their account at the provider (kc_action=idp_link) (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'pia', password: 'pia password 1', email: 'pia@example.com' });
      await page.goto(authorizeUrl(ts, 'b5'));
      await signInOnPage(page, 'pia', 'pia password 1');
      await consentAndExchange(ts, page);
      await page.goto(`${authorizeUrl(ts, 'b6')}&kc_action=idp_link:corp`);
      await page.getByRole('button', { name: 'Continue' }).waitFor();
      assert.equal(await heading(page), 'Link your account');
      await checkLayout(page, 'idp-link', shoot);
      up.nextAccount = { sub: 'b-5', email: 'pia@corp.example', preferred_username: 'pia.corp' };
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.equal(new URL(page.url()).searchParams.get('kc_action_status'), 'success');
      assert.deepEqual((await ts.store.identityProviders.links(id)).map((l) => [l.identityProvider, l.federatedUserId]), [['corp', 'b-5']]);
    });
  });

  test(`browser: a provider's account without names is completed on the review page before the user is made (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      await page.goto(authorizeUrl(ts, 'b8'));
      up.nextAccount = { sub: 'b-8', email: 'quinn@corp.example', preferred_username: 'quinn', given_name: undefined, family_name: undefined };
      await page.getByRole('button', { name: 'Corp SSO' }).click();
      await page.getByLabel('First name').waitFor();
      assert.equal(await heading(page), 'Update account information');
      assert.equal(await page.getByLabel('Email').inputValue(), 'quinn@corp.example');
      await checkLayout(page, 'review-profile', shoot);
      await page.getByLabel('First name').fill('Quinn');
      await page.getByLabel('Last name').fill('Corp');
      await page.getByRole('button', { name: 'Submit' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      const sub = await consentAndExchange(ts, page);
      const user = (await ts.store.users.findByUsername('test', 'quinn'))!;
      assert.equal(sub, user.id);
      assert.deepEqual([user.firstName, user.lastName], ['Quinn', 'Corp']);
    });
  });

  test(`browser: a user links their account at the provider from the account page (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'rosa', password: 'rosa password 1', email: 'rosa@example.com' });
      await page.goto(`${ts.baseUrl}/auth/realms/test/account`);
      await signInOnPage(page, 'rosa', 'rosa password 1');
      await page.getByRole('heading', { name: 'Linked accounts' }).waitFor();
      assert.match((await page.locator('li.linkable-account').textContent()) ?? '', /Corp SSO\s+Not linked/);
      await checkLayout(page, 'account-link-offered', shoot);
      up.nextAccount = { sub: 'b-7', email: 'rosa@corp.example', preferred_username: 'rosa.corp' };
      await page.getByRole('button', { name: 'Link account' }).click();
      await page.getByRole('status').waitFor();
      assert.equal(new URL(page.url()).pathname, '/auth/realms/test/account');
      assert.equal(await page.getByRole('status').textContent(), 'Your Corp SSO account is linked: you can sign in with it from now on.');
      assert.match((await page.locator('li.linked-account').textContent()) ?? '', /Corp SSO\s+as rosa\.corp/);
      await page.getByRole('heading', { name: 'Linked accounts' }).scrollIntoViewIfNeeded();
      await checkLayout(page, 'account-link-done', shoot);
      assert.deepEqual((await ts.store.identityProviders.links(id)).map((l) => [l.identityProvider, l.federatedUserId]), [['corp', 'b-7']]);
    });
  });

  test(`browser: an account matching an existing user's email is linked with that user's password (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'omar', password: 'omar password 1', email: 'omar@example.com' });
      await page.goto(authorizeUrl(ts, 'b2'));
      up.nextAccount = { sub: 'b-2', email: 'omar@example.com', preferred_username: 'omar.corp' };
      await page.getByRole('button', { name: 'Corp SSO' }).click();
      await page.getByLabel('Password of omar').waitFor();
      assert.equal(await heading(page), 'Link your Corp SSO account');
      await checkLayout(page, 'link-account', shoot);
      await page.getByLabel('Password of omar').fill('not the password');
      await page.getByRole('button', { name: 'Link and sign in' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal((await ts.store.identityProviders.links(id)).length, 0);
      await page.getByLabel('Password of omar').fill('omar password 1');
      await page.getByRole('button', { name: 'Link and sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.equal(await consentAndExchange(ts, page), id);
      assert.deepEqual((await ts.store.identityProviders.links(id)).map((l) => l.federatedUserId), ['b-2']);
    });
  });
  test(`browser: an email of an organization's domain, typed without a password, goes to its provider (${dialect})`, async (t) => {
    await withProvider(t, dialect, async (ts, up, page) => {
      const org = await createOrganization(ts.store, { realmId: 'test', alias: 'corp', domains: [{ name: 'corp.example', verified: true }] });
      await updateIdentityProvider(ts.store, cliActor(), 'test', 'corp', { hideOnLogin: true, organizationId: org.id, config: { 'kc.org.domain': 'corp.example', 'kc.org.broker.redirect.mode.email-matches': 'true' } });
      await page.goto(authorizeUrl(ts, 'b3'));
      assert.equal(await page.getByRole('button', { name: 'Corp SSO' }).count(), 0, 'hidden from the login page');
      assert.match((await page.locator('#password-note').textContent()) ?? '', /Your email is enough/);
      await checkLayout(page, 'login-email-routing', shoot);
      up.nextAccount = { sub: 'b-3', email: 'pia@corp.example', preferred_username: 'pia' };
      await page.getByLabel('Username').fill('pia@corp.example');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.equal(up.requests.at(-1)?.get('login_hint'), 'pia@corp.example');
      const pia = await ts.store.users.findByUsername('test', 'pia');
      assert.equal(await consentAndExchange(ts, page), pia?.id);
    });
  });
}
