// Debian's mod_auth_openidc (2.4.12) as an independent front-channel logout receiver: it ends its session
// when its redirect URI is loaded with ?logout=get (its front-channel logout, which also reads iss and sid,
// section 2 of Front-Channel Logout 1.0). Chromium (playwright-core, never downloaded) signs in to Apache
// through Realmgate, then logs out at Realmgate: the logout page's frame reaches Apache and its session is
// gone; another user's Apache session stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { SKIP, available, startApache } from '../helpers/mod-auth-openidc.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/built.js';
import { FetchCookieJar, authorizeInBrowser, browse } from '../helpers/fetch-browser.js';
import { SKIP_REASON, heading, sharedBrowser, signInOnPage } from '../helpers/browser.js';
import { createClient } from '../../src/admin/operations.js';
import { createUser } from '../../src/admin/operations/users.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`mod_auth_openidc: a logout at Realmgate in the browser ends Apache's session by front-channel logout (${dialect})`, { skip: available ? false : SKIP }, async (t) => {
    if (!shared.browser) return t.skip(SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/protected/redirect_uri`;
    // Front-channel only (no back-channel URL): whatever ends Apache's session comes through the browser.
    const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'apache-rp', redirectUris: [redirectUri], frontchannelLogout: { enabled: true, url: `${redirectUri}?logout=get` } });
    const apache = await startApache(ts, { id: 'apache-rp', secret: secret! }, port);
    const context = await shared.newContext();
    try {
      const protectedPage = `${apache.base}/protected/index.html`;
      // Another user, in another browser (plain fetch), signed in to Apache too.
      const bob = { username: 'bob', password: 'bob password 42', id: '' };
      bob.id = (await createUser(ts.store, { realmId: REALM, username: bob.username, password: bob.password, orgAliases: ['acme'] })).id;
      const bystander = new FetchCookieJar();
      const first = await browse(bystander, new URL(protectedPage));
      assert.equal(first.status, 302, apache.log());
      assert.equal((await browse(bystander, await authorizeInBrowser({ ...ts, user: bob }, new URL(first.headers.get('location')!), bystander))).status, 302, apache.log());
      assert.equal((await browse(bystander, new URL(protectedPage))).status, 200, apache.log());

      const page = await context.newPage();
      await page.goto(protectedPage);
      await signInOnPage(page, ts.user.username, ts.user.password);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(protectedPage);
      assert.equal((await page.textContent('body'))?.trim(), 'the protected page', apache.log());

      // The user logs out at Realmgate (confirmed on its page; Apache sends no id_token_hint here).
      let frames = 0;
      page.on('request', (r) => {
        if (r.url().startsWith(`${redirectUri}?logout=get&iss=`)) frames++;
      });
      await page.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/logout`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForLoadState('load');
      assert.equal(await heading(page), 'You are signed out');
      assert.equal(frames, 1, 'the page framed Apache once');
      // Apache's session is gone: the protected page sends the browser to sign in again.
      await page.goto(protectedPage);
      assert.equal(new URL(page.url()).origin, ts.baseUrl, `Apache still let the browser in: ${apache.log()}`);
      assert.match(await heading(page), /^Sign in/);
      // Bob's Apache session (another Realmgate session, another sid) stays.
      assert.equal((await browse(bystander, new URL(protectedPage))).status, 200, apache.log());
    } finally {
      await context.close();
      await apache.stop();
      await ts.close();
    }
  });
}
