// A user's security keys in the admin console over real HTTP (inject) on both databases: listed with
// label, date, algorithm and counter, removed by manage-users (one of this user's only, CSRF), registration
// at the next sign-in required and not (webauthn-register), read-only for view-users, admin events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { SoftKey, registerTestKey } from '../helpers/webauthn.js';
import { ADMIN, CONSOLE, VIEWER, consoleEvents, csrfOf, setup, signIn } from '../helpers/console.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: a user's security keys listed and removed; registration at the next sign-in required and not`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const viewer = await signIn(ts, VIEWER);
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${alice.id}`;
      const csrf = await csrfOf(ts, jar, userUrl);
      let page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /<h2>Security keys<\/h2>\s*<p class="muted">No security key\.<\/p>/);
      await registerTestKey(ts.store, ts.config.authUrl, alice.id, new SoftKey(), 'Key <b>x</b>');
      const [key] = await ts.store.webauthn.list(alice.id);
      page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /Key &lt;b&gt;x&lt;\/b&gt;<span class="muted">Added \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · ES256, counter 0, usb, nfc<\/span>/);
      assert.equal(page.match(/action="[^"]*\/webauthn\/remove"/g)?.length, 1);

      const bob = (await ts.store.users.findByUsername('master', VIEWER.username))!;
      await registerTestKey(ts.store, ts.config.authUrl, bob.id, new SoftKey(), 'Bob key');
      const bobKey = (await ts.store.webauthn.list(bob.id))[0]!;
      let res = await inject(ts.app, jar, 'POST', `${userUrl}/webauthn/remove`, { csrf, credential: bobKey.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /That security key does not exist \(any more\) for this user\./);
      assert.equal((await ts.store.webauthn.list(bob.id)).length, 1);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/webauthn/remove`, { csrf: 'forged', credential: key!.id });
      assert.equal(res.statusCode, 403);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/webauthn/remove`, { csrf, credential: key!.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=webauthn-removed`);
      assert.equal((await ts.store.webauthn.list(alice.id)).length, 0);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=webauthn-removed`)).body, /The security key was removed/);
      assert.ok((await consoleEvents(ts)).includes(`ACTION USER users/${alice.id}/credentials/${key!.id}`));

      res = await inject(ts.app, jar, 'POST', `${userUrl}/webauthn/setup`, { csrf, required: 'on' });
      assert.equal(res.headers.location, `${userUrl}?done=webauthn-setup-on`);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['webauthn-register']);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=webauthn-setup-on`)).body, /Registration: Required: the user registers a security key at the next sign-in\./);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/webauthn/setup`, { csrf, required: 'off' });
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, []);

      // view-users sees the keys, without the buttons; its POST is refused.
      const viewerUrl = `${CONSOLE}/realms/master/users/${bob.id}`;
      const seen = await inject(ts.app, viewer, 'GET', viewerUrl);
      assert.match(seen.body, /Bob key/);
      assert.doesNotMatch(seen.body, /webauthn\/remove|webauthn\/setup/);
      const viewerCsrf = /name="csrf" value="([^"]*)"/.exec(seen.body)![1]!;
      assert.equal((await inject(ts.app, viewer, 'POST', `${viewerUrl}/webauthn/remove`, { csrf: viewerCsrf, credential: bobKey.id })).statusCode, 403);
      assert.equal((await ts.store.webauthn.list(bob.id)).length, 1);
    } finally {
      await ts.close();
    }
  });
}
