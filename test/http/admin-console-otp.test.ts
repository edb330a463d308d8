// A user's authenticator apps in the admin console over real HTTP (inject) on both databases: listed with
// label and date (never a key), removed by manage-users (one of this user's only), setup at the next
// sign-in required and no longer required (CONFIGURE_TOTP), read-only for view-users, recorded as admin events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { ADMIN, CONSOLE, VIEWER, consoleEvents, csrfOf, setup, signIn } from '../helpers/console.js';
import { base32 } from '../../src/crypto/totp.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: a user's authenticator apps listed and removed; setup at the next sign-in required and not`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      // The viewer signs in before an authenticator is set up for them below (then their password alone would not do).
      const viewer = await signIn(ts, VIEWER);
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${alice.id}`;
      const csrf = await csrfOf(ts, jar, userUrl);
      let page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /<h2>Authenticator apps<\/h2>\s*<p class="muted">No authenticator app: the user signs in with their password alone\.<\/p>/);
      assert.match(page, /Setup: Not required at the next sign-in\./);

      const phoneKey = await enrollTestOtp(ts.store, alice, 'Phone <b>x</b>');
      const otherKey = await enrollTestOtp(ts.store, (await ts.store.users.get(alice.id))!);
      const stored = await ts.store.otp.list(alice.id);
      const phone = stored.find((c) => c.label !== null);
      const unnamed = stored.find((c) => c.label === null);
      page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /Phone &lt;b&gt;x&lt;\/b&gt;<span class="muted">Set up \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · HmacSHA1, 6 digits, 30 s<\/span>/);
      assert.match(page, /<span class="muted">Unnamed authenticator<\/span>/);
      assert.equal(page.match(/action="[^"]*\/otp\/remove"/g)?.length, 2);
      for (const key of [phoneKey, otherKey]) assert.ok(!page.includes(base32(key)) && !page.includes(key.toString('hex')), 'no key on the page');

      // Another user's authenticator named in the form: refused with the reason, nothing removed.
      const bob = (await ts.store.users.findByUsername('master', VIEWER.username))!;
      await enrollTestOtp(ts.store, bob, 'Bob phone');
      const bobOtp = (await ts.store.otp.list(bob.id))[0]!;
      let res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/remove`, { csrf, credential: bobOtp.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"[^>]*>[^<]*That authenticator app does not exist \(any more\) for this user\./);
      assert.equal((await ts.store.otp.list(bob.id)).length, 1);
      // Without the page's CSRF token: refused.
      res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/remove`, { csrf: 'forged', credential: phone!.id });
      assert.equal(res.statusCode, 403);
      assert.equal((await ts.store.otp.list(alice.id)).length, 2);

      res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/remove`, { csrf, credential: phone!.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=otp-removed`);
      assert.deepEqual((await ts.store.otp.list(alice.id)).map((c) => c.id), [unnamed!.id]);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=otp-removed`)).body, /The authenticator app was removed/);
      assert.ok((await consoleEvents(ts)).includes(`ACTION USER users/${alice.id}/credentials/${phone!.id}`));

      // Setup at the next sign-in: on, then off; other required actions stay.
      await ts.store.users.update(alice.id, { requiredActions: ['UPDATE_PASSWORD'] });
      page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /<input type="hidden" name="required" value="on"><button type="submit">Require setup at next sign-in<\/button>/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/setup`, { csrf, required: 'on' });
      assert.equal(res.headers.location, `${userUrl}?done=otp-setup-on`);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['UPDATE_PASSWORD', 'CONFIGURE_TOTP']);
      page = (await inject(ts.app, jar, 'GET', `${userUrl}?done=otp-setup-on`)).body;
      assert.match(page, /Setup: Required: the user sets up an authenticator app at the next sign-in\./);
      assert.match(page, /Stop requiring setup/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/setup`, { csrf, required: 'off' });
      assert.equal(res.headers.location, `${userUrl}?done=otp-setup-off`);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['UPDATE_PASSWORD']);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/otp/setup`, { csrf, required: 'maybe' });
      assert.equal(res.statusCode, 400);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['UPDATE_PASSWORD']);
      assert.ok((await consoleEvents(ts)).filter((e) => e === `UPDATE USER users/${alice.id}`).length >= 2);

      // view-users sees the authenticators, without the buttons; its POST is refused.
      const viewerUrl = `${CONSOLE}/realms/master/users/${bob.id}`;
      const seen = await inject(ts.app, viewer, 'GET', viewerUrl);
      assert.equal(seen.statusCode, 200);
      assert.match(seen.body, /Bob phone/);
      assert.doesNotMatch(seen.body, /otp\/remove|otp\/setup/);
      const viewerCsrf = /name="csrf" value="([^"]*)"/.exec(seen.body)![1]!;
      assert.equal((await inject(ts.app, viewer, 'POST', `${viewerUrl}/otp/remove`, { csrf: viewerCsrf, credential: bobOtp.id })).statusCode, 403);
      assert.equal((await inject(ts.app, viewer, 'POST', `${viewerUrl}/otp/setup`, { csrf: viewerCsrf, required: 'on' })).statusCode, 403);
      assert.equal((await ts.store.otp.list(bob.id)).length, 1);
      assert.deepEqual((await ts.store.users.get(bob.id))!.requiredActions, []);
    } finally {
      await ts.close();
    }
  });
}
