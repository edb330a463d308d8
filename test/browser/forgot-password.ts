// "Forgot password?" in a real browser (Debian's chromium driven by playwright-core), with the mail
// through a real SMTP server (aiosmtpd): the link on the login page, the request, the mail's link opened
// in the same browser, the new password, and back into the application's sign-in (consent, organization,
// the code). With UPDATE_SCREENSHOTS=1 the pages are saved to docs/screenshots/forgot-password*.png,
// reset-mail-sent*.png and reset-password*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRealm } from '../../src/admin/operations.js';
import { SMTP_MISSING, SmtpServer, linkIn } from '../helpers/smtp.js';
import { SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';

const shared = sharedBrowser();
const CHOSEN = 'a fresh password of mine';

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

  test(`browser: forgot password, the mail's link, a new password, back to the application (${dialect})`, { skip: SMTP_MISSING }, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    const smtp = await SmtpServer.start();
    const contexts: BrowserContext[] = [];
    try {
      await updateRealm(ts.store, { realmId: 'test', settings: { resetPasswordAllowed: true, smtpServer: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com', fromDisplayName: 'Test Realm' } } });
      ts.services.cache.clear();
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const hits = await interceptClient(context, page);

      await page.goto(authorizeUrl(ts, 'forgot'));
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      assert.equal(await heading(page), 'Forgot your password?');
      assert.equal(await page.title(), 'Forgot password · Test Realm');
      await checkLayout(page, 'forgot-password', shoot);
      await page.getByLabel('Username or email').fill('alice@example.com');
      await page.getByRole('button', { name: 'Send link' }).click();
      assert.equal(await heading(page), 'Check your email');
      assert.match((await page.getByRole('status').textContent()) ?? '', /If an account exists, you will receive an email with instructions/);
      await checkLayout(page, 'reset-mail-sent', shoot);

      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.subject, 'Reset your Test Realm password');
      await page.goto(linkIn(mail!));
      assert.equal(await heading(page), 'Choose a new password');
      assert.match((await page.locator('main').textContent()) ?? '', /Choose a new password for alice/);
      await checkLayout(page, 'reset-password', shoot);
      await page.getByLabel('New password', { exact: true }).fill(CHOSEN);
      await page.getByLabel('Confirm new password', { exact: true }).fill(CHOSEN);
      await page.getByRole('button', { name: 'Save password' }).click();

      // Back in the application's sign-in: consent, then the code at the client.
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.origin === 'https://app.example.com');
      assert.equal(hits.length, 1);
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('state'), 'forgot');
      await exchange(ts, landed.searchParams.get('code')!);

      // A new browser signs in with the new password.
      const second = await shared.newContext();
      contexts.push(second);
      const p2 = await second.newPage();
      await interceptClient(second, p2);
      await p2.goto(authorizeUrl(ts, 'again'));
      await signInOnPage(p2, 'alice', CHOSEN);
      await p2.waitForURL((u) => u.origin === 'https://app.example.com');
      assert.equal(new URL(p2.url()).searchParams.get('state'), 'again');
    } finally {
      for (const c of contexts) await c.close();
      await smtp.stop();
      await ts.close();
    }
  });
}
