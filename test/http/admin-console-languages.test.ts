// The admin console's language settings (realm page): Keycloak's internationalizationEnabled,
// supportedLocales (comma-separated) and defaultLocale, saved and refused as the other doors do, on both databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, setup, signIn } from '../helpers/console.js';
import { grantRolesByName } from '../../src/admin/operations/roles.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: the realm page's language settings, saved; bad locales refused with the form kept; a viewer sees them only`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, { username: ADMIN.username, password: ADMIN.password });
      const realmUrl = `${CONSOLE}/realms/${REALM}`;
      let page = await inject(ts.app, jar, 'GET', realmUrl);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2>Languages<\/h2>/);
      assert.match(page.body, /<input type="checkbox" id="internationalizationEnabled" name="internationalizationEnabled" value="on">/);
      assert.match(page.body, /<input type="text" id="supportedLocales" name="supportedLocales"[^>]* value="">/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;

      let res = await inject(ts.app, jar, 'POST', `${realmUrl}/languages`, { csrf, internationalizationEnabled: 'on', supportedLocales: 'de, fr,<b>x', defaultLocale: 'de' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /supportedLocales: &quot;&lt;b&gt;x&quot; is not a locale/);
      assert.match(res.body, /value="de, fr,&lt;b&gt;x"/, 'the form keeps what was typed (escaped)');
      assert.equal((await ts.store.realms.get(REALM))?.internationalizationEnabled, false, 'nothing saved');

      res = await inject(ts.app, jar, 'POST', `${realmUrl}/languages`, { csrf, internationalizationEnabled: 'on', supportedLocales: 'de, fr,de-CH', defaultLocale: 'en' });
      assert.equal(res.statusCode, 303);
      let realm = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([realm.internationalizationEnabled, realm.supportedLocales, realm.defaultLocale], [true, ['de', 'fr', 'de-CH'], 'en']);
      page = await inject(ts.app, jar, 'GET', `${realmUrl}?done=languages-saved`);
      assert.match(page.body, /The language settings were saved/);
      assert.match(page.body, /id="internationalizationEnabled" name="internationalizationEnabled" value="on" checked>/);
      assert.match(page.body, /id="supportedLocales" name="supportedLocales"[^>]* value="de, fr, de-CH">/);
      assert.match(page.body, /id="defaultLocale" name="defaultLocale"[^>]* value="en">/);

      // Unticked, emptied: off, none, English.
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/languages`, { csrf, supportedLocales: '', defaultLocale: '' });
      assert.equal(res.statusCode, 303);
      realm = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([realm.internationalizationEnabled, realm.supportedLocales, realm.defaultLocale], [false, [], null]);

      // Without the CSRF token: refused.
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/languages`, { internationalizationEnabled: 'on' });
      assert.equal(res.statusCode, 403);
      assert.equal((await ts.store.realms.get(REALM))?.internationalizationEnabled, false);

      // A master admin with view-realm only: the settings shown, no form; a POST refused.
      const viewerId = (await ts.store.users.findByUsername('master', VIEWER.username))!.id;
      await grantRolesByName(ts.store, { realmId: 'master', userId: viewerId, clientId: 'realm-management', names: ['view-realm'] }, BOOTSTRAP_ACTOR);
      const viewer = await signIn(ts, VIEWER);
      page = await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/master`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2>Languages<\/h2><dl class="facts"><dt>Internationalization<\/dt><dd>off<\/dd><dt>Supported locales<\/dt><dd>none<\/dd><dt>Default locale<\/dt><dd>none \(English\)<\/dd><\/dl>/);
      assert.doesNotMatch(page.body, /action="[^"]*\/languages"/);
      const viewerCsrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      res = await inject(ts.app, viewer, 'POST', `${CONSOLE}/realms/master/languages`, { csrf: viewerCsrf, internationalizationEnabled: 'on' });
      assert.equal(res.statusCode, 403);
      assert.equal((await ts.store.realms.get('master'))?.internationalizationEnabled, false);
    } finally {
      await ts.close();
    }
  });
}
