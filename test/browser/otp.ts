// Authenticator apps (TOTP, RFC 6238; Keycloak's CONFIGURE_TOTP required action and OTP form) in a real
// browser: Debian's chromium driven by playwright-core. The QR code on the setup page is read from a
// screenshot by zbarimg and its codes computed by oathtool: neither knows Realmgate. With
// UPDATE_SCREENSHOTS=1 the pages are saved to docs/screenshots/configure-otp*.png and otp*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { createUser } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';
import { OTP_TOOLS_MISSING, oathtoolCode, readQr } from '../helpers/otp.js';

const shared = sharedBrowser();
const PASSWORD = 'otto password 1';


async function cookieNames(context: BrowserContext, ts: TestServer): Promise<string[]> {
  return (await context.cookies(ts.baseUrl + realmPath('/'))).map((c) => c.name);
}


async function backAtClient(page: Page, ts: TestServer, state: string): Promise<void> {
  await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
  const back = new URL(page.url());
  assert.equal(back.searchParams.get('state'), state);
  const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
    method: 'POST',
    headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: ts.client.redirectUri }).toString(),
  });
  assert.equal(res.status, 200, await res.text());
}

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: an authenticator app is set up from the QR code at the first sign-in, then asked for at each sign-in (${dialect})`, async (t) => {
    if (!shared.browser || OTP_TOOLS_MISSING) {
      t.skip(OTP_TOOLS_MISSING ?? SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    const { id: userId } = await createUser(ts.store, { realmId: 'test', username: 'otto', password: PASSWORD, orgAliases: ['acme'], requiredActions: ['CONFIGURE_TOTP'] });
    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    const contexts: BrowserContext[] = [];
    try {
      const context = await shared.newContext();
      contexts.push(context);
      const page = await context.newPage();
      const hits = await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, 'first'));
      await signInOnPage(page, 'otto', PASSWORD);

      // The setup page: no session yet, nothing sent to the client.
      await page.getByRole('button', { name: 'Finish setup' }).waitFor();
      assert.equal(await page.title(), 'Set up an authenticator · Test Realm');
      assert.equal(await heading(page), 'Set up an authenticator app');
      assert.ok(!(await cookieNames(context, ts)).some((n) => n.startsWith('RG_SESSION')), 'no session before setup');
      assert.deepEqual(hits, []);
      const field = page.getByLabel('One-time code');
      assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
      assert.equal(await field.getAttribute('inputmode'), 'numeric');
      await checkLayout(page, 'configure-otp', shoot);

      // zbarimg reads the QR code off the screen: an otpauth URI with the realm as issuer, and the key the
      // page offers to type.
      const uri = new URL(readQr(await page.locator('svg.qr').screenshot()));
      assert.equal(uri.protocol, 'otpauth:');
      assert.equal(uri.host, 'totp');
      assert.equal(decodeURIComponent(uri.pathname), '/Test Realm:otto');
      assert.equal(uri.searchParams.get('issuer'), 'Test Realm');
      assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
      assert.equal(uri.searchParams.get('digits'), '6');
      assert.equal(uri.searchParams.get('period'), '30');
      const secret = uri.searchParams.get('secret')!;
      assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits');
      await page.getByText('Cannot scan it? Type the key instead').click();
      assert.equal((await page.locator('#otp-key').textContent())!.replace(/\s/g, ''), secret);
      // Reloading shows the same key (the form must agree with the page the app scanned).
      await page.reload();
      assert.equal(readQr(await page.locator('svg.qr').screenshot()), uri.href);

      // A wrong code: refused, nothing stored.
      await page.getByLabel('One-time code').fill(String((Number(oathtoolCode(secret, now())) + 1) % 1_000_000).padStart(6, '0'));
      await page.getByRole('button', { name: 'Finish setup' }).click();
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /Invalid authenticator code/);
      assert.deepEqual(await ts.store.otp.list(userId), []);
      await checkLayout(page, 'configure-otp-error', shoot);

      // The code oathtool computes: set up; consent, organization, the code back at the client.
      await page.getByLabel('One-time code').fill(oathtoolCode(secret, now()));
      await page.getByLabel('Device name').fill('Otto’s phone');
      await page.getByRole('button', { name: 'Finish setup' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await backAtClient(page, ts, 'first');
      const [credential] = await ts.store.otp.list(userId);
      assert.equal(credential!.label, 'Otto’s phone');
      assert.deepEqual((await ts.store.users.get(userId))!.requiredActions, []);
      assert.ok((await cookieNames(context, ts)).includes('RG_DEVICE'));

      // Another browser: the password, then the authenticator's code.
      const other = await shared.newContext();
      contexts.push(other);
      const page2 = await other.newPage();
      await interceptClient(other, page2);
      await page2.goto(authorizeUrl(ts, 'second'));
      await signInOnPage(page2, 'otto', PASSWORD);
      await page2.getByRole('button', { name: 'Sign in' }).waitFor();
      assert.equal(await heading(page2), 'Enter your authenticator code');
      assert.equal(await page2.title(), 'Authenticator code · Test Realm');
      const names = await cookieNames(other, ts);
      assert.ok(!names.some((n) => n.startsWith('RG_SESSION')) && !names.includes('RG_DEVICE'), `no session nor device cookie before the code: ${names.join(', ')}`);
      await checkLayout(page2, 'otp', shoot);
      // The code used for the setup is spent: refused within its time step.
      await page2.getByLabel('One-time code').fill(oathtoolCode(secret, now()));
      await page2.getByRole('button', { name: 'Sign in' }).click();
      await page2.getByRole('alert').waitFor();
      assert.equal((await page2.getByRole('alert').textContent())?.trim(), 'Invalid authenticator code.');
      // Thirty seconds later, the new code.
      ts.clock.advance(30);
      const code = oathtoolCode(secret, now());
      await page2.getByLabel('One-time code').fill(code);
      await page2.getByRole('button', { name: 'Sign in' }).click();
      await backAtClient(page2, ts, 'second');
      assert.ok((await cookieNames(other, ts)).includes('RG_DEVICE'));

      // The account page lists the authenticator, to remove or to add another.
      await page2.goto(`${ts.baseUrl}${realmPath('/account')}`);
      await page2.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
      assert.match((await page2.locator('li.authenticator').textContent()) ?? '', /Otto’s phone/);
      await page2.getByRole('button', { name: 'Add another authenticator app' }).waitFor();
      await checkLayout(page2, 'account-authenticators', shoot);
      // Recovery codes: shown once, ten of them.
      await page2.getByRole('button', { name: 'Create recovery codes' }).click();
      await page2.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      assert.equal(await page2.locator('ol.recovery-codes li').count(), 10);
      await checkLayout(page2, 'recovery-codes', shoot);
      await page2.getByRole('link', { name: 'Back to your account' }).click();
      await page2.getByText('10 left.').waitFor();

      // A third browser that saw that code (over a shoulder): it is spent.
      const third = await shared.newContext();
      contexts.push(third);
      const page3 = await third.newPage();
      await interceptClient(third, page3);
      await page3.goto(authorizeUrl(ts, 'third'));
      await signInOnPage(page3, 'otto', PASSWORD);
      await page3.getByLabel('One-time code').fill(code);
      await page3.getByRole('button', { name: 'Sign in' }).click();
      await page3.getByRole('alert').waitFor();
      assert.equal((await page3.getByRole('alert').textContent())?.trim(), 'Invalid authenticator code.');
      // The record: the setup, each login, each refused code.
      const events = (await ts.store.events.list('test', { userId, types: ['UPDATE_TOTP', 'LOGIN', 'LOGIN_ERROR'], order: 'asc' })).map((e) => `${e.type}${e.reason ? ` ${e.reason}` : ''}`);
      assert.deepEqual(events.filter((e) => e.startsWith('UPDATE_TOTP')), ['UPDATE_TOTP authenticator Otto’s phone set up', 'UPDATE_TOTP 10 recovery codes created (earlier ones no longer work)']);
      assert.equal(events.filter((e) => e === 'LOGIN').length, 2);
      assert.equal(events.filter((e) => e === 'LOGIN_ERROR invalid authenticator code').length, 2);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
