// The console's user page: the required actions as checkboxes, saved as the complete list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, csrfOf, setup, signIn } from '../helpers/console.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: a user's required actions ticked and saved; an unknown one refused; CSRF checked`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${alice.id}`;
      const csrf = await csrfOf(ts, jar, userUrl);
      const page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /<h2>Required actions<\/h2>/);
      assert.match(page, /name="action" value="UPDATE_PROFILE">/);
      const save = (body: string) => ts.app.inject({ method: 'POST', url: `${userUrl}/required-actions`, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
      let res = await save(`csrf=${encodeURIComponent(csrf)}&action=UPDATE_PROFILE&action=TERMS_AND_CONDITIONS`);
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE']);
      const after = (await inject(ts.app, jar, 'GET', res.headers.location as string)).body;
      assert.match(after, /name="action" value="UPDATE_PROFILE" checked>/);
      assert.match(after, /name="action" value="TERMS_AND_CONDITIONS" checked>/);
      assert.match(after, /name="action" value="UPDATE_PASSWORD">/);
      res = await save(`csrf=${encodeURIComponent(csrf)}&action=CONFIGURE_RECOVERY_AUTHN_CODES`);
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /CONFIGURE_RECOVERY_AUTHN_CODES.*not supported/);
      res = await save(`csrf=wrong&action=UPDATE_PASSWORD`);
      assert.notEqual(res.statusCode, 303);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE']);
      // None ticked: the list is cleared.
      res = await save(`csrf=${encodeURIComponent(csrf)}`);
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.users.get(alice.id))!.requiredActions, []);
    } finally {
      await ts.close();
    }
  });
}
