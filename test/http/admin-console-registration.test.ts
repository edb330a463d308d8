// The admin console's registration switches on the realm page (Keycloak's registrationAllowed,
// registrationEmailAsUsername, verifyEmail): checkboxes, CSRF, manage-realm; on both databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, setup, signIn } from '../helpers/console.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: the realm page switches registration and email verification on and off`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const realmUrl = `${CONSOLE}/realms/${REALM}`;
      const page = await inject(ts.app, jar, 'GET', realmUrl);
      assert.match(page.body, /<h2>Registration and email verification<\/h2>/);
      assert.match(page.body, /<input type="checkbox" id="registrationAllowed" name="registrationAllowed" value="on">/, 'off by default');
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      const forged = await inject(ts.app, jar, 'POST', `${realmUrl}/registration`, { csrf: 'forged', registrationAllowed: 'on' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await ts.store.realms.get(REALM))!.registrationAllowed, false);
      let res = await inject(ts.app, jar, 'POST', `${realmUrl}/registration`, { csrf, registrationAllowed: 'on', verifyEmail: 'on' });
      assert.equal(res.statusCode, 303);
      let r = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([r.registrationAllowed, r.registrationEmailAsUsername, r.verifyEmail], [true, false, true]);
      assert.match((await inject(ts.app, jar, 'GET', realmUrl)).body, /id="registrationAllowed" name="registrationAllowed" value="on" checked>/);
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/registration`, { csrf, registrationEmailAsUsername: 'on' });
      assert.equal(res.statusCode, 303);
      r = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([r.registrationAllowed, r.registrationEmailAsUsername, r.verifyEmail], [false, true, false], 'an unchecked box is off');
      // Keycloak's editUsernameAllowed, in the same form.
      assert.equal(r.editUsernameAllowed, false);
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/registration`, { csrf, editUsernameAllowed: 'on' });
      assert.equal(res.statusCode, 303);
      r = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([r.editUsernameAllowed, r.registrationEmailAsUsername], [true, false]);
      assert.match((await inject(ts.app, jar, 'GET', realmUrl)).body, /id="editUsernameAllowed" name="editUsernameAllowed" value="on" checked> Edit username: users may change their username on the account page/);
    } finally {
      await ts.close();
    }
  });
}
