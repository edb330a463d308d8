// Self-registration and email verification in a real browser (Debian's chromium driven by
// playwright-core), the mail through a real SMTP server (aiosmtpd): "Register" on the login page, the
// form refused then accepted, "Verify your email", the mail's link opened in the same browser, consent,
// and the code at the application. With UPDATE_SCREENSHOTS=1 the pages are saved to
// docs/screenshots/register*.png, register-error*.png and verify-email*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRealm } from '../../src/admin/operations.js';
import { SMTP_MISSING, SmtpServer, linkIn } from '../helpers/smtp.js';
import { SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser } from '../helpers/browser.js';

const shared = sharedBrowser();
const CHOSEN = 'my own new password 5';

async function exchange(ts: TestServer, code: string): Promise<string> {
  const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }).toString(),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: register, verify the email through the mailed link, back to the application (${dialect})`, { skip: SMTP_MISSING }, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    const smtp = await SmtpServer.start();
    const contexts: BrowserContext[] = [];
    try {
      await updateRealm(ts.store, {
        realmId: 'test',
        settings: { registrationAllowed: true, verifyEmail: true, organizationRequired: false, passwordPolicy: 'length(10) and digits(1)', smtpServer: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com', fromDisplayName: 'Test Realm' } },
      });
      ts.services.cache.clear();
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const hits = await interceptClient(context, page);

      await page.goto(authorizeUrl(ts, 'signup'));
      await checkLayout(page, 'login-register', shoot);
      await page.getByRole('link', { name: 'Register' }).click();
      assert.equal(await heading(page), 'Create your account');
      assert.equal(await page.title(), 'Register · Test Realm');
      assert.match((await page.locator('#password-rule').textContent()) ?? '', /At least 10 characters/);
      await checkLayout(page, 'register', shoot);

      const fill = async (username: string, confirm: string): Promise<void> => {
        await page.getByLabel('Username').fill(username);
        await page.getByLabel('Email').fill('robin@example.com');
        await page.getByLabel('First name').fill('Robin');
        await page.getByLabel('Last name').fill('Hood <Locksley>');
        await page.getByLabel('Password', { exact: true }).fill(CHOSEN);
        await page.getByLabel('Confirm password', { exact: true }).fill(confirm);
        await page.getByRole('button', { name: 'Register' }).click();
      };
      await fill('alice', 'not the same 1');
      const alert = (await page.getByRole('alert').textContent()) ?? '';
      assert.match(alert, /Username already exists\./);
      assert.match(alert, /Passwords don't match\./);
      assert.equal(await page.getByLabel('Last name').inputValue(), 'Hood <Locksley>', 'what was typed is kept (and escaped: the value is the text)');
      assert.equal(await page.getByLabel('Password', { exact: true }).inputValue(), '', 'never the password');
      await checkLayout(page, 'register-error', shoot);

      await fill('robin', CHOSEN);
      assert.equal(await heading(page), 'Verify your email');
      assert.match((await page.getByRole('status').textContent()) ?? '', /has been sent to robin@example\.com/);
      await checkLayout(page, 'verify-email', shoot);

      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.to, 'robin@example.com');
      assert.equal(mail!.subject, 'Verify your Test Realm email address');
      await page.goto(linkIn(mail!));
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((u) => u.origin === 'https://app.example.com');
      assert.equal(hits.length, 1);
      const landed = new URL(page.url());
      assert.equal(landed.searchParams.get('state'), 'signup');
      await exchange(ts, landed.searchParams.get('code')!);
      const robin = (await ts.store.users.findByUsername('test', 'robin'))!;
      assert.equal(robin.emailVerified, true);
      assert.equal(robin.lastName, 'Hood <Locksley>');
    } finally {
      for (const c of contexts) await c.close();
      await smtp.stop();
      await ts.close();
    }
  });
}
