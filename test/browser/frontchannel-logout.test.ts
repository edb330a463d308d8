// OpenID Connect Front-Channel Logout 1.0 in a real browser (Debian's chromium driven by playwright-core;
// never downloads a browser, skipped when /usr/bin/chromium is missing): two relying parties signed in in
// one browser session, logout at the end-session endpoint. The relying parties: ./frontchannel-rp.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { heading, sharedBrowser } from '../helpers/browser.js';
import { checkFrontchannel, logoutUrl, signInTo, withServers, STATE, type RelyingParty } from './frontchannel-rp.js';

const shared = sharedBrowser();

for (const dialect of dialects()) {
  test(`browser: two RPs signed in in one session are each framed once with iss and sid; an RP with the switch off is not; the browser ends at post_logout_redirect_uri with state (${dialect})`, async (t) => {
    await withServers(shared, t, dialect, [{ id: 'rp-one', frontchannel: true }, { id: 'rp-two', frontchannel: true }, { id: 'rp-off', frontchannel: false }], async ({ ts, rps }) => {
      const [one, two, off] = rps as [RelyingParty, RelyingParty, RelyingParty];
      const context = await shared.newContext();
      try {
        const page = await context.newPage();
        await signInTo(ts, page, one, true);
        await signInTo(ts, page, two, false);
        await signInTo(ts, page, off, false);
        assert.equal(one.sid, two.sid, 'one browser session');
        const violations: string[] = [];
        page.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
        });
        await page.goto(logoutUrl(ts, one));
        await page.waitForURL((u) => u.href.startsWith(`${one.base}/after-logout`));
        const back = new URL(page.url());
        assert.equal(back.searchParams.get('state'), STATE);
        checkFrontchannel(ts, one, one.sid);
        checkFrontchannel(ts, two, one.sid);
        assert.equal(off.frontchannel.length, 0, 'the switch is off: no request');
        assert.deepEqual(violations, [], 'nothing on the page broke its CSP');
        // The session is over: the next authorization asks to sign in again.
        await page.goto(one.authorizeUrl());
        assert.match(await heading(page), /^Sign in/);
      } finally {
        await context.close();
      }
    });
  });

}
