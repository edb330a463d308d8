// User federation in the admin console, in a real browser (Debian's chromium via playwright-core), against
// a real slapd: the admin adds an LDAP provider, tests it, a directory user signs in through the login
// page, the admin disables and deletes it. With UPDATE_SCREENSHOTS=1 the page is saved to
// docs/screenshots/console-user-federation-{desktop,phone}.png.
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { updateRealm } from '../../src/admin/operations.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage } from '../helpers/browser.js';
import { CONSOLE_ADMIN, adminOpensRealm } from '../helpers/browser-console.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';

const shared = sharedBrowser();
let ldap: LdapServer | undefined;
before(async () => {
  if (!LDAP_MISSING) ldap = await startLdap({ people: [{ uid: 'lena', password: 'lena-ldap-pw', mail: 'lena@example.org' }] });
});
after(async () => {
  await ldap?.stop();
});

for (const dialect of dialects()) {
  test(`[${dialect}] admin console user federation: an LDAP provider added, tested, signs a directory user in, disabled, deleted`, async (t: TestContext) => {
    if (!shared.browser || !ldap) return t.skip(LDAP_MISSING ?? SKIP_REASON);
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const contexts: BrowserContext[] = [];
    try {
      await bootstrapAdmin(ts.store, { ...CONSOLE_ADMIN, consoleRedirectUri: `${ts.baseUrl}/auth/admin/console/callback` });
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
      const { page, nav } = await adminOpensRealm(shared, ts, contexts);
      await nav.getByRole('link', { name: 'User federation' }).click();
      assert.equal(await heading(page), 'User federation');
      await page.getByText('No LDAP providers yet.').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('corp');
      await page.getByLabel('Connection URL').fill('http://not-ldap');
      await page.getByLabel('Users DN').fill(PEOPLE);
      await page.getByLabel('Bind DN').fill(ROOT_DN);
      await page.getByLabel('Bind password').fill(ROOT_PASSWORD);
      await page.getByRole('button', { name: 'Add provider' }).click();
      await page.getByRole('alert').filter({ hasText: 'ldap:// or ldaps://' }).waitFor();
      assert.equal(await page.getByLabel('Users DN').inputValue(), PEOPLE, 'the form keeps what was typed');
      assert.equal(await page.getByLabel('Bind password').inputValue(), '', 'but never the password');
      await page.getByLabel('Connection URL').fill(ldap.url);
      await page.getByLabel('Bind password').fill(ROOT_PASSWORD);
      await page.getByRole('button', { name: 'Add provider' }).click();
      await page.getByText('The LDAP provider was added: its users can sign in.').waitFor();
      await page.getByRole('button', { name: 'Test connection and bind' }).click();
      await page.getByText('Connected to the directory and bound as the bind DN.').waitFor();
      assert.ok(!(await page.content()).includes(ROOT_PASSWORD), 'the bind password is never in the page');
      await checkLayout(page, 'console-user-federation', dialect === 'sqlite');

      // A directory user signs in from the login page.
      const person = await shared.newContext();
      contexts.push(person);
      const personPage = await person.newPage();
      await interceptClient(person, personPage);
      await personPage.goto(authorizeUrl(ts, 'fed'));
      await signInOnPage(personPage, 'lena', 'lena-ldap-pw');
      await personPage.getByRole('button', { name: 'Allow' }).click();
      await personPage.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.ok(new URL(personPage.url()).searchParams.get('code'));

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByText('The LDAP provider was disabled').waitFor();
      await page.getByLabel('Type the name to delete it').fill('corp');
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('The LDAP provider was deleted').waitFor();
      assert.deepEqual(await ts.store.userStorage.list(REALM), []);
    } finally {
      for (const c of contexts) await c.close();
      await ts.close();
    }
  });
}
