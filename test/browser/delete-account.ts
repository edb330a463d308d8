// Keycloak's delete_account in a real browser (Debian's chromium, playwright-core): an application sends
// the user to kc_action=delete_account (a new sign-in, then the confirmation, cancelled: back at the
// application); the account page's "Delete account" (a wrong password refused, then the account gone).
// With UPDATE_SCREENSHOTS=1 the pages are saved to docs/screenshots/delete-account*.png,
// account-delete*.png and account-deleted*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: kc_action=delete_account cancelled, then the account deleted from the account page (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await updateRequiredAction(ts.store, { realmId: 'test', alias: 'delete_account', changes: { enabled: true } });
    ts.services.cache.clear();
    const context = await shared.newContext();
    try {
      const page = await context.newPage();
      await interceptClient(context, page);
      // Signed in at the application, then sent to delete the account: signs in again first.
      await page.goto(authorizeUrl(ts, 'first'));
      await signInOnPage(page, ts.user.username, ts.user.password);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      await page.goto(`${authorizeUrl(ts, 'delete')}&kc_action=delete_account`);
      await signInOnPage(page, ts.user.username, ts.user.password);
      await page.getByRole('button', { name: 'Delete my account' }).waitFor();
      assert.equal(await heading(page), 'Delete account');
      await checkLayout(page, 'delete-account', shoot);
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.equal(new URL(page.url()).searchParams.get('kc_action_status'), 'cancelled');
      assert.ok(await ts.store.users.get(ts.user.id));

      // The account page: the section at its end, the password typed again.
      await page.goto(`${ts.baseUrl}/auth/realms/test/account`);
      await page.getByRole('heading', { name: 'Delete account' }).waitFor();
      const form = page.locator('form.delete-account-form');
      await form.getByLabel('Current password').fill('not the password');
      await form.getByRole('button', { name: 'Delete my account' }).click();
      await page.getByText('The current password is not right.').waitFor();
      await page.getByRole('heading', { name: 'Delete account' }).scrollIntoViewIfNeeded();
      await checkLayout(page, 'account-delete', shoot);
      assert.ok(await ts.store.users.get(ts.user.id));
      await page.locator('form.delete-account-form').getByLabel('Current password').fill(ts.user.password);
      await page.locator('form.delete-account-form').getByRole('button', { name: 'Delete my account' }).click();
      await page.getByText('Your account has been deleted, and you are signed out everywhere.').waitFor();
      assert.equal(await heading(page), 'Account deleted');
      await checkLayout(page, 'account-deleted', shoot);
      assert.equal(await ts.store.users.get(ts.user.id), undefined);
      // Signed out: the account page asks for a sign-in.
      await page.goto(`${ts.baseUrl}/auth/realms/test/account`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    } finally {
      await context.close();
      await ts.close();
    }
  });
}
