// The admin console's login options (realm page) and its duplicate-email refusal (users page); an
// administrator signs in to the console with their email (the master realm's login page), on both databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, setup, signIn } from '../helpers/console.js';
import { updateUser } from '../../src/admin/operations.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: login options on the realm page; an email another user has refused on the users page; sign-in by email`, async () => {
    const ts = await setup(dialect);
    try {
      await updateUser(ts.store, { realmId: 'master', user: ADMIN.username, email: 'Root@Example.org' });
      const jar = await signIn(ts, { username: 'root@example.org', password: ADMIN.password });
      const realmUrl = `${CONSOLE}/realms/${REALM}`;
      const page = await inject(ts.app, jar, 'GET', realmUrl);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2>Login<\/h2>/);
      assert.match(page.body, /<input type="checkbox" id="loginWithEmailAllowed" name="loginWithEmailAllowed" value="on" checked>/);
      assert.match(page.body, /<input type="checkbox" id="rememberMe" name="rememberMe" value="on">/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      let res = await inject(ts.app, jar, 'POST', `${realmUrl}/login-options`, { csrf, loginWithEmailAllowed: 'on', rememberMe: 'on', ssoIdleRememberMe: 'soon', ssoMaxRememberMe: '7200' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Remembered session idle timeout \(seconds; 0: none\): enter a whole number of seconds/);
      assert.match(res.body, /value="soon"/, 'the form keeps what was typed (escaped)');
      assert.equal((await ts.store.realms.get(REALM))?.rememberMe, false);
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/login-options`, { csrf, rememberMe: 'on', ssoIdleRememberMe: '600', ssoMaxRememberMe: '7200' });
      assert.equal(res.statusCode, 303);
      const realm = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([realm.loginWithEmailAllowed, realm.duplicateEmailsAllowed, realm.rememberMe, realm.ssoIdleRememberMe, realm.ssoMaxRememberMe], [false, false, true, 600, 7200]);

      res = await inject(ts.app, jar, 'POST', `${realmUrl}/users`, { csrf, username: 'alicia', email: 'ALICE@example.com', password: 'a good password 1' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /User exists with same email/);
      assert.equal(await ts.store.users.findByUsername(REALM, 'alicia'), undefined);
    } finally {
      await ts.close();
    }
  });
}
