// The admin console's roles in a real browser (Debian's chromium via playwright-core): alice signs in to
// the web app first, then the admin creates a realm role and a client role, grants both to alice on her
// page, and alice's next access token (a refresh) carries them; revoked and deleted, it no longer does.
// The server caches configuration for a minute here: the console's changes must reach the next token anyway.
// On editor's page, editor is made to contain reviewer (her next token carries both), then no longer.
// With UPDATE_SCREENSHOTS=1 the roles pages are saved to docs/screenshots/console-role*.png (desktop, phone).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { SKIP_REASON, checkLayout, heading, sharedBrowser } from '../helpers/browser.js';
import { CONSOLE_ADMIN, adminOpensRealm, aliceSignsIn, claimsOf, tokenEndpoint } from '../helpers/browser-console.js';

const ADMIN = CONSOLE_ADMIN;

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`[${dialect}] admin console roles: create a realm and a client role, grant them to alice, her next token carries them`, async (t: TestContext) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true, config: { cacheTtlMs: 60_000 } });
    const contexts: BrowserContext[] = [];
    const shoot = dialect === 'sqlite';
    try {
      await bootstrapAdmin(ts.store, { ...ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });

      // Alice signs in to the web app: her first token has no roles (and the server caches that the realm maps none).
      let tokens = await aliceSignsIn(shared, ts, contexts);
      assert.equal(claimsOf(tokens).realm_access, undefined);

      // The admin signs in to the console and opens the realm's roles.
      const { page, nav } = await adminOpensRealm(shared, ts, contexts);
      await nav.getByRole('link', { name: 'Roles' }).click();
      assert.equal(await heading(page), 'Roles');
      assert.equal(await page.getByText('No roles yet.').count(), 1);

      // A realm role: refused once (a '/'), then created.
      await page.getByLabel('Role name').fill('editor/all');
      await page.getByLabel('Description (optional)').fill('Edits and publishes articles');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByRole('alert').filter({ hasText: "must not contain '/'" }).waitFor();
      assert.equal(await page.getByLabel('Description (optional)').inputValue(), 'Edits and publishes articles', 'the form keeps what was typed');
      await page.getByLabel('Role name').fill('editor');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByText('The role was created.').waitFor();
      assert.equal(await heading(page), 'editor');
      assert.equal(await page.getByRole('button', { name: 'Save role' }).count(), 1);
      // A second one, from the list.
      await nav.getByRole('link', { name: 'Roles' }).click();
      await page.getByLabel('Role name').fill('reviewer');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByText('The role was created.').waitFor();

      // A client role of the web app, on the client's page.
      await nav.getByRole('link', { name: 'Clients' }).click();
      await page.getByRole('link', { name: ts.client.id, exact: true }).click();
      assert.equal(await heading(page), ts.client.id);
      await page.getByLabel('Role name').fill('reader');
      await page.getByRole('button', { name: 'Create role' }).click();
      await page.getByText('The role was created.').waitFor();
      assert.equal(await heading(page), 'reader');

      // Alice's page: grant both roles from the select.
      await nav.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('link', { name: 'alice' }).click();
      assert.equal(await heading(page), 'alice');
      assert.equal(await page.getByText('No roles.').count(), 1);
      await page.getByLabel('Grant a role').selectOption({ label: 'editor' });
      await page.getByRole('button', { name: 'Grant role' }).click();
      await page.getByText('The role was granted').waitFor();
      await page.getByLabel('Grant a role').selectOption({ label: 'reader' });
      await page.getByRole('button', { name: 'Grant role' }).click();
      await page.getByText('The role was granted').waitFor();
      const held = page.locator('li.row', { hasText: 'client role of' });
      assert.equal(await held.count(), 1);
      await checkLayout(page, 'console-user-roles', shoot);

      // Her next access token carries them, whatever the server had cached.
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.deepEqual(claimsOf(tokens).realm_access, { roles: ['editor'] });
      assert.deepEqual(claimsOf(tokens).resource_access, { [ts.client.id]: { roles: ['reader'] } });

      // The roles page counts her; the role's page names her.
      await nav.getByRole('link', { name: 'Roles' }).click();
      assert.equal(await page.locator('td[data-label="Users"]').first().textContent(), '1');
      await checkLayout(page, 'console-roles', shoot);
      await page.getByRole('link', { name: 'editor' }).click();
      assert.equal(await page.getByRole('link', { name: 'alice' }).count(), 1);

      // What editor contains: reviewer, added from the select, carried in her next token; then removed.
      assert.equal(await page.getByText('No roles: it is not a composite role.').count(), 1);
      await page.getByLabel('Add a role it contains').selectOption({ label: 'reviewer' });
      await page.getByRole('button', { name: 'Add contained role' }).click();
      await page.getByText('The role now contains it').waitFor();
      assert.equal(await heading(page), 'editor');
      const contained = page.locator('li.row', { hasText: 'reviewer' });
      assert.equal(await contained.count(), 1);
      await checkLayout(page, 'console-role', shoot);
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.deepEqual(claimsOf(tokens).realm_access?.roles.sort(), ['editor', 'reviewer']);
      await contained.getByRole('button', { name: 'Remove' }).click();
      await page.getByText('The role no longer contains it').waitFor();
      assert.equal(await page.locator('li.row', { hasText: 'reviewer' }).count(), 0);
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.deepEqual(claimsOf(tokens).realm_access, { roles: ['editor'] });

      // Revoked on her page: the next token no longer carries it.
      await page.getByRole('link', { name: 'alice' }).click();
      await page.locator('li.row', { hasText: 'editor' }).getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('The role was revoked').waitFor();
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.equal(claimsOf(tokens).realm_access, undefined);
      assert.deepEqual(claimsOf(tokens).resource_access, { [ts.client.id]: { roles: ['reader'] } });

      // The client role deleted on its page (its name typed again): gone from the next token too.
      await page.goto(`${ts.baseUrl}/auth/admin/console/realms/${REALM}/clients/${ts.client.id}/roles/role?name=reader`);
      await page.getByLabel('Type the role name to delete the role').fill('reader');
      await page.getByRole('button', { name: 'Delete role' }).click();
      await page.getByText('The role was deleted').waitFor();
      assert.equal(await heading(page), ts.client.id);
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.equal(claimsOf(tokens).resource_access, undefined);
      assert.equal(await ts.store.roles.find(REALM, ts.client.id, 'reader'), undefined);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
