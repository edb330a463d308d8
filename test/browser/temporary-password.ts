// A temporary password (Keycloak's UPDATE_PASSWORD required action) in a real browser: Debian's chromium
// driven by playwright-core. Login, then the Update password page (a mismatch and a too-short try first),
// then consent, organization and the code; a second sign-in with the new password shows no such page.
// With UPDATE_SCREENSHOTS=1 the page is saved to docs/screenshots/update-password*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createUser } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();
const TEMPORARY = 'temporary password 1';
const CHOSEN = 'a password of my own';


async function sessionCookie(context: BrowserContext, ts: TestServer): Promise<boolean> {
  return (await context.cookies(ts.baseUrl + realmPath('/'))).some((c) => c.name === 'RG_SESSION' || c.name === 'RG_SESSION_STATE');
}


async function exchange(ts: TestServer, code: string): Promise<void> {
  const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }).toString(),
  });
  assert.equal(res.status, 200, await res.text());
}

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: a temporary password is replaced at the first sign-in, then consent and code; the new one signs in plainly (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await createUser(ts.store, { realmId: 'test', username: 'tess', password: TEMPORARY, orgAliases: ['acme'], temporary: true });
    const contexts: BrowserContext[] = [];
    try {
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const hits = await interceptClient(context, page);

      await page.goto(authorizeUrl(ts, 'first'));
      await signInOnPage(page, 'tess', TEMPORARY);

      // The update page: the same look as the login page, no session yet.
      await page.getByRole('button', { name: 'Update password' }).waitFor();
      assert.equal(await page.title(), 'Update password · Test Realm');
      assert.equal(await heading(page), 'Choose a new password');
      assert.match((await page.locator('main').textContent()) ?? '', /The password of tess was set by an administrator/);
      const fresh = page.getByLabel('New password', { exact: true });
      const confirm = page.getByLabel('Confirm new password', { exact: true });
      assert.equal(await fresh.getAttribute('type'), 'password');
      assert.equal(await fresh.getAttribute('autocomplete'), 'new-password');
      assert.equal(await confirm.getAttribute('type'), 'password');
      assert.equal(await page.getByRole('alert').count(), 0);
      assert.equal(await sessionCookie(context, ts), false, 'no session cookie before the new password');
      assert.deepEqual(hits, [], 'nothing sent to the client yet');
      await checkLayout(page, 'update-password', shoot);

      // A mismatch.
      await fresh.fill(CHOSEN);
      await confirm.fill(`${CHOSEN}!`);
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal((await page.getByRole('alert').textContent())?.trim(), 'The two passwords do not match.');
      assert.equal(await page.getByLabel('New password', { exact: true }).inputValue(), '', 'passwords are not echoed back');
      await checkLayout(page, 'update-password-error', shoot);

      // Too short: the browser's own check (minlength) stops it first; the server refuses it as well.
      await page.getByLabel('New password', { exact: true }).fill('short');
      await page.getByLabel('Confirm new password', { exact: true }).fill('short');
      await page.getByRole('button', { name: 'Update password' }).click();
      assert.equal(await page.getByLabel('New password', { exact: true }).evaluate((el) => (el as HTMLInputElement).validity.tooShort), true);
      await page.locator('form').evaluate((f) => {
        (f as HTMLFormElement).noValidate = true;
      });
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.getByRole('alert').filter({ hasText: 'at least 8 characters' }).waitFor();
      assert.equal(await sessionCookie(context, ts), false, 'still no session');
      assert.deepEqual((await ts.store.users.findByUsername('test', 'tess'))!.requiredActions, ['UPDATE_PASSWORD']);

      // A good one: on to consent and organization, then back at the client with a code.
      await page.getByLabel('New password', { exact: true }).fill(CHOSEN);
      await page.getByLabel('Confirm new password', { exact: true }).fill(CHOSEN);
      await page.getByRole('button', { name: 'Update password' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      const back = new URL(page.url());
      assert.equal(back.searchParams.get('state'), 'first');
      const code = back.searchParams.get('code');
      assert.ok(code, back.href);
      await exchange(ts, code);
      assert.equal(await sessionCookie(context, ts), true);
      assert.deepEqual((await ts.store.users.findByUsername('test', 'tess'))!.requiredActions, []);

      // Another browser: the new password signs in, without the update page (consent is remembered).
      const other = await shared.newContext();
      contexts.push(other);
      const page2 = await other.newPage();
      await interceptClient(other, page2);
      await page2.goto(authorizeUrl(ts, 'second'));
      await signInOnPage(page2, 'tess', TEMPORARY);
      await page2.getByRole('alert').waitFor();
      assert.equal((await page2.getByRole('alert').textContent())?.trim(), 'Invalid username or password.', 'the temporary password is gone');
      await page2.getByLabel('Password', { exact: true }).fill(CHOSEN);
      await page2.getByRole('button', { name: 'Sign in' }).click();
      await page2.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      const back2 = new URL(page2.url());
      assert.equal(back2.searchParams.get('state'), 'second');
      assert.ok(back2.searchParams.get('code'));
      await exchange(ts, back2.searchParams.get('code')!);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
