// The admin console's "Impersonate" (Keycloak's): a master admin opens a user's account page signed in as
// them, in the same browser; refusals (no role, no CSRF token, a disabled user) change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject, runAuthorization } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, csrfOf, setup, signIn } from '../helpers/console.js';
import { createUser, disableUser } from '../../src/admin/operations/users.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: Impersonate opens the user's account page signed in as them; refusals change nothing`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`;
      const page = await inject(ts.app, jar, 'GET', userUrl);
      assert.match(page.body, /<h2>Impersonate<\/h2>/);
      assert.ok(page.body.includes(`action="${userUrl}/impersonate"`));
      const csrf = await csrfOf(ts, jar, userUrl);

      // The jar keeps one cookie per name whatever its path: this is the admin's own session in master.
      const masterSession = jar.cookies.get('RG_SESSION');
      assert.equal((await inject(ts.app, jar, 'POST', `${userUrl}/impersonate`, { csrf: 'forged' })).statusCode, 403, 'no valid CSRF token: refused');
      assert.equal(jar.cookies.get('RG_SESSION'), masterSession);

      const res = await inject(ts.app, jar, 'POST', `${userUrl}/impersonate`, { csrf });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, `${ts.config.authUrl}/auth/realms/${REALM}/account`);
      assert.notEqual(jar.cookies.get('RG_SESSION'), masterSession, "the user's session cookie, in the admin's browser");
      const account = await inject(ts.app, jar, 'GET', `/auth/realms/${REALM}/account`);
      assert.equal(account.statusCode, 200);
      assert.match(account.body, /Signed in as <strong>alice<\/strong>/);
      assert.match(account.body, /Administrator admin signed in as you in this browser/);
      const flow = await runAuthorization(ts, { jar });
      assert.ok(flow.code && !flow.pages.includes('login'), 'single sign-on as alice');
      assert.ok((await inject(ts.app, jar, 'GET', `${CONSOLE}/`)).statusCode === 200, 'the console session goes on (another realm)');
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /opened by administrator admin \(impersonation\)/, "the user's sessions in the console say so");
      const events = await ts.store.events.list(REALM, { types: ['IMPERSONATE'] });
      assert.equal(events.filter((e) => e.type === 'IMPERSONATE').length, 1);

      // A disabled user: the page says why, no session.
      const { id: offId } = await createUser(ts.store, { realmId: REALM, username: 'off', password: 'off password 42' });
      await disableUser(ts.store, { realmId: REALM, user: offId });
      const before = jar.cookies.get('RG_SESSION');
      const off = await inject(ts.app, jar, 'POST', `${CONSOLE}/realms/${REALM}/users/${offId}/impersonate`, { csrf });
      assert.equal(off.statusCode, 400);
      assert.match(off.body, /User is disabled: this user cannot be impersonated/);
      assert.equal(jar.cookies.get('RG_SESSION'), before);
      assert.doesNotMatch((await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users/${offId}`)).body, /<h2>Impersonate<\/h2>/);

      // A master user who may only read master's users: no button, and the form refused.
      const viewer = await signIn(ts, VIEWER);
      const admin = (await ts.store.users.findByUsername('master', 'admin'))!;
      const adminPage = `${CONSOLE}/realms/master/users/${admin.id}`;
      const viewerPage = await inject(ts.app, viewer, 'GET', adminPage);
      assert.equal(viewerPage.statusCode, 200);
      assert.doesNotMatch(viewerPage.body, /<h2>Impersonate<\/h2>/);
      const refused = await inject(ts.app, viewer, 'POST', `${adminPage}/impersonate`, { csrf: await csrfOf(ts, viewer, adminPage) });
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /impersonation role of realm master/);
      assert.ok((await inject(ts.app, viewer, 'GET', `${CONSOLE}/`)).statusCode === 200, 'still signed in to the console');
    } finally {
      await ts.close();
    }
  });
}
