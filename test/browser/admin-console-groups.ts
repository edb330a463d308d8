// The admin console's groups in a real browser (Debian's chromium via playwright-core): alice signs in to
// the web app first; the admin builds a tree of groups, maps a realm role to a parent group and a client
// role to its subgroup, adds alice to the subgroup, and alice's next access token (a refresh) carries both;
// she joins and leaves groups on her page, the subgroup moves to the top (taking only its own role along)
// and a group is deleted. The server caches configuration for a minute here: the console's changes must
// reach the next token anyway. With UPDATE_SCREENSHOTS=1 the pages are saved to
// docs/screenshots/console-{groups,group,user-groups}-{desktop,phone}.png.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type BrowserContext } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { createRole } from '../../src/admin/operations/roles.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';
import { SKIP_REASON, checkLayout, heading, sharedBrowser } from '../helpers/browser.js';
import { CONSOLE_ADMIN, adminOpensRealm, aliceSignsIn, claimsOf, tokenEndpoint } from '../helpers/browser-console.js';

const ADMIN = CONSOLE_ADMIN;

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`[${dialect}] admin console groups: a tree of groups, a parent's role and a subgroup's reach a member's next token`, async (t: TestContext) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true, config: { cacheTtlMs: 60_000 } });
    const contexts: BrowserContext[] = [];
    const shoot = dialect === 'sqlite';
    try {
      await bootstrapAdmin(ts.store, { ...ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });
      await createRole(ts.store, { realmId: REALM, clientId: '', name: 'deployer', description: 'Deploys to production' }, BOOTSTRAP_ACTOR);
      await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'reader' }, BOOTSTRAP_ACTOR);

      // Alice signs in to the web app: her first token has no roles (and the server caches that the realm maps none).
      let tokens = await aliceSignsIn(shared, ts, contexts);
      assert.equal(claimsOf(tokens).realm_access, undefined);

      // The admin signs in to the console and opens the realm's groups.
      const { page, nav } = await adminOpensRealm(shared, ts, contexts);
      await nav.getByRole('link', { name: 'Groups' }).click();
      assert.equal(await heading(page), 'Groups');
      assert.equal(await page.getByText('No groups yet.').count(), 1);

      // A top-level group: refused once (a '/'), then created.
      await page.getByLabel('Group name').fill('Engineering/all');
      await page.getByLabel('Description (optional)').fill('Everyone who builds the product');
      await page.getByRole('button', { name: 'Create group' }).click();
      await page.getByRole('alert').filter({ hasText: "must not contain '/'" }).waitFor();
      assert.equal(await page.getByLabel('Description (optional)').inputValue(), 'Everyone who builds the product', 'the form keeps what was typed');
      await page.getByLabel('Group name').fill('Engineering');
      await page.getByRole('button', { name: 'Create group' }).click();
      await page.getByText('The group was created.').waitFor();
      assert.equal(await heading(page), '/Engineering');

      // A subgroup from its page, another from the Groups page with the parent chosen, and one more at the top.
      await page.getByLabel('Subgroup name').fill('Backend');
      await page.getByRole('button', { name: 'Create subgroup' }).click();
      await page.getByText('The group was created.').waitFor();
      assert.equal(await heading(page), '/Engineering/Backend');
      for (const [name, parent] of [['Frontend', '/Engineering'], ['Sales', undefined]] as const) {
        await nav.getByRole('link', { name: 'Groups' }).click();
        await page.getByLabel('Group name').fill(name);
        if (parent) await page.getByLabel('Parent group').selectOption({ label: parent });
        await page.getByRole('button', { name: 'Create group' }).click();
        await page.getByText('The group was created.').waitFor();
        assert.equal(await heading(page), `${parent ?? ''}/${name}`);
      }

      // A realm role mapped to /Engineering (from its page, reached through the tree).
      await nav.getByRole('link', { name: 'Groups' }).click();
      await page.getByRole('link', { name: 'Engineering', exact: true }).click();
      await page.getByLabel('Map a role').selectOption({ label: 'deployer' });
      await page.getByRole('button', { name: 'Map role' }).click();
      await page.getByText('The role was mapped to the group').waitFor();

      // /Engineering/Backend: alice added by her username, a client role mapped; the realm role shown as inherited.
      await page.getByRole('link', { name: 'Backend', exact: true }).click();
      assert.equal(await heading(page), '/Engineering/Backend');
      await page.getByLabel('Add a member (username)').fill('alice');
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByText('The member was added').waitFor();
      await page.getByLabel('Map a role').selectOption({ label: 'reader' });
      await page.getByRole('button', { name: 'Map role' }).click();
      await page.getByText('The role was mapped to the group').waitFor();
      assert.equal(await page.locator('li.row', { hasText: 'client role of' }).count(), 1);
      assert.equal(await page.locator('h3 + ul li', { hasText: 'deployer' }).count(), 1, 'the parent group’s role, read only');
      await checkLayout(page, 'console-group', shoot);

      // Her next access token carries both, whatever the server had cached.
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.deepEqual(claimsOf(tokens).realm_access, { roles: ['deployer'] });
      assert.deepEqual(claimsOf(tokens).resource_access, { [ts.client.id]: { roles: ['reader'] } });

      // The tree counts her.
      await nav.getByRole('link', { name: 'Groups' }).click();
      assert.equal(await page.locator('.group-tree li:has(> a:text-is("Backend")) > .muted').textContent(), '1 member');
      await checkLayout(page, 'console-groups', shoot);

      // Her page: her groups; she joins /Sales from the list, and leaves /Engineering/Backend.
      await nav.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('link', { name: 'alice' }).click();
      await page.getByLabel('Add to a group').selectOption({ label: '/Sales' });
      await page.getByRole('button', { name: 'Join group' }).click();
      await page.getByText('The user joined the group').waitFor();
      assert.deepEqual(await page.locator('h2:text-is("Groups") + ul li a').allTextContents(), ['/Engineering/Backend', '/Sales']);
      assert.equal(await page.getByText('Roles through these groups and those above them: deployer (realm role), reader (client role of web-app)').count(), 1);
      await page.getByRole('heading', { name: 'Groups' }).scrollIntoViewIfNeeded();
      await checkLayout(page, 'console-user-groups', shoot);

      // /Engineering/Backend moved to the top: it keeps its own client role, and no longer passes on the realm role.
      await page.getByRole('link', { name: '/Engineering/Backend' }).click();
      await page.getByLabel('Parent group').selectOption({ label: 'None (a top-level group)' });
      await page.getByRole('button', { name: 'Move group' }).click();
      await page.getByText('The group was moved').waitFor();
      assert.equal(await heading(page), '/Backend');
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.equal(claimsOf(tokens).realm_access, undefined);
      assert.deepEqual(claimsOf(tokens).resource_access, { [ts.client.id]: { roles: ['reader'] } });

      // Removed from it on the group's page: the client role goes too.
      await page.locator('li.row', { hasText: 'alice' }).getByRole('button', { name: 'Remove' }).click();
      await page.getByText('The member was removed').waitFor();
      tokens = await tokenEndpoint(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      assert.equal(claimsOf(tokens).resource_access, undefined);

      // /Engineering deleted, its name typed again: /Engineering/Frontend goes with it.
      await nav.getByRole('link', { name: 'Groups' }).click();
      await page.getByRole('link', { name: 'Engineering', exact: true }).click();
      await page.getByLabel('Type the group name to delete the group').fill('Engineering');
      await page.getByRole('button', { name: 'Delete group' }).click();
      await page.getByText('The group and its subgroups were deleted').waitFor();
      assert.equal(await heading(page), 'Groups');
      assert.deepEqual(await page.locator('.group-tree a').allTextContents(), ['Backend', 'Sales']);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
