// Client initial access tokens in the admin console, in a real browser (Debian's chromium via
// playwright-core): the admin goes from the clients list to the page, a bad count is refused with the
// reason, a token is created and shown once with the registration endpoint, a script registers a client
// with it (RFC 7591), the list shows what remains, and the admin deletes it. With UPDATE_SCREENSHOTS=1 the
// page showing a new token is saved to docs/screenshots/console-initial-access-{desktop,phone}.png.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { SKIP_REASON, checkLayout, heading, sharedBrowser } from '../helpers/browser.js';
import { CONSOLE_ADMIN, adminOpensRealm } from '../helpers/browser-console.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`[${dialect}] admin console initial access tokens: created and shown once, registers a client, deleted`, async (t: TestContext) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const contexts: BrowserContext[] = [];
    try {
      await bootstrapAdmin(ts.store, { ...CONSOLE_ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });
      const { page, nav } = await adminOpensRealm(shared, ts, contexts);
      await nav.getByRole('link', { name: 'Clients' }).click();
      await page.getByRole('link', { name: 'Initial access tokens' }).click();
      assert.equal(await heading(page), 'Initial access tokens');
      await page.getByText('No initial access tokens that can still register a client.').waitFor();
      const endpoint = `${ts.baseUrl}/auth/realms/${REALM}/clients-registrations/openid-connect`;
      assert.equal(await page.locator('dl.facts dd code').first().textContent(), endpoint);

      // A count of 0 is refused, said above the form, which keeps what was typed.
      await page.getByLabel('Expiration (seconds; 0: never)').fill('3600');
      await page.getByLabel('Count (clients it may register)').fill('0');
      await page.getByRole('button', { name: 'Create initial access token' }).click();
      await page.getByRole('alert').filter({ hasText: 'count must be a whole number of clients from 1 to 1000000' }).waitFor();
      assert.equal(await page.getByLabel('Expiration (seconds; 0: never)').inputValue(), '3600');

      await page.getByLabel('Count (clients it may register)').fill('5');
      await page.getByRole('button', { name: 'Create initial access token' }).click();
      await page.getByText('The initial access token was created.').waitFor();
      await page.getByText('copy it now; it will not be shown again').waitFor();
      const token = ((await page.locator('#initial-access-token').textContent()) ?? '').trim();
      assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
      assert.ok(!page.url().includes(token), 'the token is in no URL');
      await checkLayout(page, 'console-initial-access', dialect === 'sqlite');

      // A deployment script registers a client with it.
      const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ redirect_uris: ['https://app.example/cb'] }) });
      assert.equal(res.status, 201, await res.clone().text());

      // The list: one used, four left, the token no longer shown; then deleted.
      await nav.getByRole('link', { name: 'Clients' }).click();
      await page.getByRole('link', { name: 'Initial access tokens' }).click();
      const row = page.locator('tbody tr');
      assert.equal(await row.count(), 1);
      assert.equal(await row.locator('td[data-label="Remaining"]').textContent(), '4');
      assert.ok(!(await page.content()).includes(token), 'never shown again');
      await row.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('The initial access token was deleted').waitFor();
      await page.getByText('No initial access tokens that can still register a client.').waitFor();
      assert.deepEqual(await ts.store.clientRegistration.listInitialAccess(REALM, 0), []);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
