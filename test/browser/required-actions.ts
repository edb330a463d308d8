// Keycloak's TERMS_AND_CONDITIONS and UPDATE_PROFILE required actions in a real browser (Debian's
// chromium, playwright-core): after the password, the realm's terms (accepted), then the profile form,
// prefilled, a refused email, then saved; the client gets its code. With UPDATE_SCREENSHOTS=1 both pages
// are saved to docs/screenshots/terms*.png and update-profile*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();
const TERMS = 'Welcome to the Acme portal. By using it you agree to use it for your work at Acme only, to keep your password to yourself and to report anything that looks wrong to the service desk.\n\nWe keep a record of your sign-ins for 90 days.';

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: terms accepted, then the profile reviewed (a taken email refused), then the code (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await updateRequiredAction(ts.store, { realmId: 'test', alias: 'TERMS_AND_CONDITIONS', changes: { config: { terms_text: TERMS } } });
    await ts.store.users.update(ts.user.id, { requiredActions: ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE'], firstName: 'Alice', lastName: 'Liddell' });
    const { id: bob } = await import('../../src/admin/operations/users.js').then((m) => m.createUser(ts.store, { realmId: 'test', username: 'bob', password: 'bob password 123', email: 'bob@example.com' }));
    assert.ok(bob);
    ts.services.cache.clear();
    const context = await shared.newContext();
    try {
      const page = await context.newPage();
      await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, 'reqact'));
      await signInOnPage(page, ts.user.username, ts.user.password);
      await page.getByRole('button', { name: 'Accept' }).waitFor();
      assert.equal(await heading(page), 'Terms and conditions');
      await checkLayout(page, 'terms', shoot);
      await page.getByRole('button', { name: 'Accept' }).click();
      await page.getByLabel('Email', { exact: true }).waitFor();
      assert.equal(await heading(page), 'Update your profile');
      assert.equal(await page.getByLabel('First name').inputValue(), 'Alice');
      await page.getByLabel('Email', { exact: true }).fill('bob@example.com');
      await page.getByRole('button', { name: 'Submit' }).click();
      await page.getByText('Email already exists.').waitFor();
      await checkLayout(page, 'update-profile', shoot);
      await page.getByLabel('Email', { exact: true }).fill('alice.liddell@example.com');
      await page.getByRole('button', { name: 'Submit' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.ok(new URL(page.url()).searchParams.get('code'));
      const user = (await ts.store.users.get(ts.user.id))!;
      assert.deepEqual([user.email, user.requiredActions, user.attributes.terms_and_conditions?.length], ['alice.liddell@example.com', [], 1]);
    } finally {
      await context.close();
      await ts.close();
    }
  });
}
