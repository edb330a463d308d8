// Keycloak's login options in a real browser (Debian's chromium, playwright-core): the login page asks
// for "Username or email" and offers "Remember me" when the realm does; ticked, the sign-in cookie is
// persistent (an expiry), unticked it is a browser-session cookie. With UPDATE_SCREENSHOTS=1 the page is
// saved to docs/screenshots/login-remember-me*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRealm } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, interceptClient, sharedBrowser } from '../helpers/browser.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: sign in by email with "Remember me"; the cookie outlives the browser only when ticked (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await updateRealm(ts.store, { realmId: 'test', settings: { rememberMe: true, ssoMaxRememberMe: 30 * 86_400 } });
    try {
      for (const remember of [true, false]) {
        const context = await shared.newContext();
        try {
          const page = await context.newPage();
          await interceptClient(context, page);
          await page.goto(authorizeUrl(ts, 'remember'));
          const name = page.getByLabel('Username or email', { exact: true });
          await name.waitFor();
          const box = page.getByRole('checkbox', { name: 'Remember me' });
          assert.equal(await box.isChecked(), false);
          if (remember) await checkLayout(page, 'login-remember-me', shoot);
          await name.fill('alice@example.com');
          await page.getByLabel('Password', { exact: true }).fill(ts.user.password);
          if (remember) await box.check();
          await page.getByRole('button', { name: 'Sign in' }).click();
          if (remember) {
            // The first sign-in: consent and the organization (remembered for the second).
            await page.getByRole('button', { name: 'Allow' }).click();
            await page.getByRole('button', { name: 'Continue' }).click();
          }
          await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
          assert.ok(new URL(page.url()).searchParams.get('code'));
          const session = (await context.cookies(`${ts.baseUrl}/auth/realms/test/`)).find((c) => c.name === 'RG_SESSION');
          assert.ok(session, 'signed in');
          if (remember) {
            const days = (session.expires - Date.now() / 1000) / 86_400;
            assert.ok(days > 29.9 && days <= 30, `a persistent cookie for the remember-me lifetime (${days} days)`);
          } else {
            assert.equal(session.expires, -1, 'a browser-session cookie');
          }
        } finally {
          await context.close();
        }
      }
    } finally {
      await ts.close();
    }
  });
}
