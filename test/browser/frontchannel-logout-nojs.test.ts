// OpenID Connect Front-Channel Logout 1.0 in a real browser: without JavaScript the frames load and the
// Continue link goes on; with it, a relying party that never answers does not hold the logout up. With
// UPDATE_SCREENSHOTS=1 the logout page (as a browser without JavaScript keeps it) is saved to
// docs/screenshots/. The relying parties: ./frontchannel-rp.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { DESKTOP, checkLayout, heading, sharedBrowser } from '../helpers/browser.js';
import { checkFrontchannel, logoutUrl, signInTo, withServers, LOGOUT, STATE, type RelyingParty } from './frontchannel-rp.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`browser: without JavaScript the frames still load and the Continue link goes on; an RP that never answers does not hold the logout up (${dialect})`, async (t) => {
    await withServers(shared, t, dialect, [{ id: 'rp-nojs', frontchannel: true }, { id: 'rp-one', frontchannel: true }, { id: 'rp-hang', frontchannel: true, hang: true }], async ({ ts, rps }) => {
      const [nojs, one, hang] = rps as [RelyingParty, RelyingParty, RelyingParty];
      const noJs = await shared.browser!.newContext({ viewport: DESKTOP, locale: 'en-US', javaScriptEnabled: false });
      noJs.setDefaultTimeout(10_000);
      try {
        const page = await noJs.newPage();
        await signInTo(ts, page, nojs, true);
        await page.goto(logoutUrl(ts, nojs), { waitUntil: 'domcontentloaded' });
        assert.equal(await heading(page), 'Signing you out');
        const deadline = Date.now() + 5000;
        while (nojs.frontchannel.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        checkFrontchannel(ts, nojs, nojs.sid);
        // Nothing moves by itself without JavaScript.
        await new Promise((r) => setTimeout(r, 300));
        assert.ok(page.url().startsWith(`${ts.baseUrl}${LOGOUT}`), page.url());
        await checkLayout(page, 'frontchannel-logout', dialect === 'sqlite');
        await page.getByRole('link', { name: 'Continue' }).click();
        await page.waitForURL((u) => u.href.startsWith(`${nojs.base}/after-logout`));
        assert.equal(new URL(page.url()).searchParams.get('state'), STATE);
      } finally {
        await noJs.close();
      }

      // With JavaScript: one RP's frame never loads; the page moves on after its timeout.
      const context = await shared.newContext();
      try {
        const page = await context.newPage();
        await signInTo(ts, page, one, true);
        await signInTo(ts, page, hang, false);
        const started = Date.now();
        await page.goto(logoutUrl(ts, hang), { waitUntil: 'commit' });
        await page.waitForURL((u) => u.href.startsWith(`${hang.base}/after-logout`), { timeout: 12_000 });
        const waited = Date.now() - started;
        assert.equal(new URL(page.url()).searchParams.get('state'), STATE);
        checkFrontchannel(ts, one, hang.sid);
        assert.equal(hang.frontchannel.length, 1, 'the silent RP was asked');
        assert.ok(waited >= 3000, `moved on after the timeout, not before the frames could load (${waited} ms)`);
      } finally {
        await context.close();
      }
    });
  });
}
