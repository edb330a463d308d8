// A realm's password policy in a real browser (Debian's chromium, playwright-core): the Update password
// page says the policy before the user types, the browser's own check follows its length, and a password
// the policy forbids is refused with what it lacks. With UPDATE_SCREENSHOTS=1 the page is saved to
// docs/screenshots/update-password-policy*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: the update-password page shows the realm's policy and refuses what it forbids (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await updateRealm(ts.store, { realmId: 'test', settings: { passwordPolicy: 'length(12) and digits(1) and upperCase(1) and notUsername and passwordHistory(3)' } });
    await createUser(ts.store, { realmId: 'test', username: 'polly', password: 'Temporary password 1', orgAliases: ['acme'], temporary: true });
    const context = await shared.newContext();
    try {
      const page = await context.newPage();
      await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, 'policy'));
      await signInOnPage(page, 'polly', 'Temporary password 1');
      await page.getByRole('button', { name: 'Update password' }).waitFor();
      assert.equal(await heading(page), 'Choose a new password');
      const fresh = page.getByLabel('New password', { exact: true });
      // The hint is the field's description: screen readers read it with the field.
      assert.equal(await fresh.getAttribute('aria-describedby'), 'password-rule');
      assert.equal(
        (await page.locator('#password-rule').textContent())?.trim(),
        'At least 12 characters, with at least 1 digit and 1 upper-case letter. Not your username and not one of your last 3 passwords. Not your current password.',
      );
      assert.equal(await fresh.getAttribute('minlength'), '12');
      await checkLayout(page, 'update-password-policy', shoot);

      // Long enough for the browser, not for the policy: the server lists what is missing.
      await fresh.fill('long enough but plain');
      await page.getByLabel('Confirm new password', { exact: true }).fill('long enough but plain');
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal((await page.getByRole('alert').textContent())?.trim(), 'The password must contain at least 1 digit and contain at least 1 upper-case letter.');
      await checkLayout(page, 'update-password-policy-error', shoot);

      await page.getByLabel('New password', { exact: true }).fill('Polly password 2');
      await page.getByLabel('Confirm new password', { exact: true }).fill('Polly password 2');
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.ok(new URL(page.url()).searchParams.get('code'));
    } finally {
      await context.close();
      await ts.close();
    }
  });
}
