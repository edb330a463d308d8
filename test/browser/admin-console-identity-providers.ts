// Identity providers in the admin console, in a real browser (Debian's chromium via playwright-core): the
// admin adds node-oidc-provider from its issuer (its endpoints discovered), a person signs in through it
// from the login page's button and becomes a linked user, the admin sees and removes the link on the
// user's page, disables the provider (the login page no longer offers it) and deletes it. With
// UPDATE_SCREENSHOTS=1 the pages are saved to docs/screenshots/console-{identity-providers,
// identity-provider,user-linked-accounts}-{desktop,phone}.png.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { updateRealm } from '../../src/admin/operations.js';
import { SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser } from '../helpers/browser.js';
import { CONSOLE_ADMIN, adminOpensRealm } from '../helpers/browser-console.js';
import { startUpstream } from '../helpers/upstream-provider.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`[${dialect}] admin console identity providers: added from the issuer, a sign-in through it links a user, unlinked, disabled, deleted`, async (t: TestContext) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const redirectUri = `${ts.baseUrl}/auth/realms/${REALM}/broker/corp/endpoint`;
    const up = await startUpstream({ redirectUri });
    const contexts: BrowserContext[] = [];
    const shoot = dialect === 'sqlite';
    try {
      await bootstrapAdmin(ts.store, { ...CONSOLE_ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });

      // The admin opens Identity providers and adds one from its issuer; a typo in the alias first.
      const { page, nav } = await adminOpensRealm(shared, ts, contexts);
      await nav.getByRole('link', { name: 'Identity providers' }).click();
      assert.equal(await heading(page), 'Identity providers');
      await page.getByText('No identity providers yet.').waitFor();
      assert.equal(await page.getByLabel('Authorization URL').isVisible(), false, 'the endpoints one by one are folded away');
      await page.getByLabel('Alias').fill('corp sso');
      await page.getByLabel('Display name (optional)').fill('Corp SSO');
      await page.getByLabel('Issuer').fill(up.issuer);
      await page.getByLabel('Client ID').fill(up.clientId);
      await page.getByLabel('Client secret').fill(up.clientSecret);
      await page.getByRole('button', { name: 'Add provider' }).click();
      await page.getByRole('alert').filter({ hasText: 'alias must be 1 to 255 letters' }).waitFor();
      assert.equal(await page.getByLabel('Issuer').inputValue(), up.issuer, 'the form keeps what was typed');
      assert.equal(await page.getByLabel('Client secret').inputValue(), '', 'but never the secret');
      await page.getByLabel('Alias').fill('corp');
      await page.getByLabel('Client secret').fill(up.clientSecret);
      await page.getByRole('button', { name: 'Add provider' }).click();
      await page.getByText('The identity provider was added. Register its redirect URI at the provider.').waitFor();
      assert.equal(await heading(page), 'Corp SSO');
      assert.equal(await page.locator('dt:text-is("Redirect URI") + dd').textContent(), redirectUri);
      assert.equal(await page.locator('dt:text-is("Authorization URL") + dd').textContent(), `${up.issuer}/auth`, 'discovered');
      assert.equal(await page.locator('dt:text-is("PKCE") + dd').textContent(), 'S256');
      await checkLayout(page, 'console-identity-provider', shoot);

      // A person signs in through it from the login page's button: a new user, linked.
      const person = await shared.newContext();
      contexts.push(person);
      const personPage = await person.newPage();
      await interceptClient(person, personPage);
      await personPage.goto(authorizeUrl(ts, 'b1'));
      up.nextAccount = { sub: 'corp-42', email: 'nina@corp.example', preferred_username: 'nina' };
      await personPage.getByRole('button', { name: 'Corp SSO' }).click();
      await personPage.getByRole('button', { name: 'Allow' }).waitFor();

      // The list, with its redirect URI (the screenshot of the page).
      await nav.getByRole('link', { name: 'Identity providers' }).click();
      assert.deepEqual(await page.locator('tbody td').allTextContents(), ['corp', 'Corp SSO', 'enabled', redirectUri]);
      await checkLayout(page, 'console-identity-providers', shoot);

      // Her page lists the linked account; the admin unlinks it.
      await nav.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('link', { name: 'nina' }).click();
      const linked = page.locator('h2:text-is("Linked accounts") + ul li');
      assert.match((await linked.textContent()) ?? '', /^corpnina · id corp-42 · linked \d{4}-\d\d-\d\d /);
      assert.match((await page.locator('dt:text-is("Password") + dd').textContent()) ?? '', /^none \(the user signs in through an identity provider/);
      await page.getByText('The user has no password: without a linked account they cannot sign in').waitFor();
      await page.getByRole('heading', { name: 'Linked accounts' }).scrollIntoViewIfNeeded();
      await checkLayout(page, 'console-user-linked-accounts', shoot);
      await linked.getByRole('button', { name: 'Unlink' }).click();
      await page.getByText('The linked account was removed').waitFor();
      await page.getByText('No linked accounts at identity providers.').waitFor();
      const nina = (await ts.store.users.findByUsername(REALM, 'nina'))!;
      assert.deepEqual(await ts.store.identityProviders.links(nina.id), []);

      // Disabled: the login page no longer offers it. Enabled again, then deleted with its alias typed.
      await nav.getByRole('link', { name: 'Identity providers' }).click();
      await page.getByRole('link', { name: 'corp' }).click();
      await page.getByRole('button', { name: 'Disable provider' }).click();
      await page.getByText('The identity provider was disabled').waitFor();
      const other = await shared.newContext();
      contexts.push(other);
      const otherPage = await other.newPage();
      await otherPage.goto(authorizeUrl(ts, 'b2'));
      await otherPage.getByLabel('Username').waitFor();
      assert.equal(await otherPage.getByRole('button', { name: 'Corp SSO' }).count(), 0);
      await page.getByRole('button', { name: 'Enable provider' }).click();
      await page.getByText('The identity provider was enabled').waitFor();
      await page.getByLabel('Type the alias to delete the provider').fill('corp');
      await page.getByRole('button', { name: 'Delete provider' }).click();
      await page.getByText('The identity provider was deleted').waitFor();
      assert.equal(await heading(page), 'Identity providers');
      assert.equal(await ts.store.identityProviders.get(REALM, 'corp'), undefined);
    } finally {
      for (const c of contexts) await c.close();
      await up.close();
      await ts.close();
    }
  });
}
