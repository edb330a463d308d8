// A directory user signs in through the real pages in Debian's chromium: the login page binds to a
// real slapd, the user is imported, consents, and the client gets a code that redeems for tokens whose
// sub is the imported user. A directory that does not answer shows "try again later" on the login page.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { CLIENT_ORIGIN, SKIP_REASON, checkLayout, heading, interceptClient, sharedBrowser, signInOnPage, authorizeUrl } from '../helpers/browser.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';
import { freePort } from '../helpers/smtp.js';
import { createUserStorage, updateUserStorage } from '../../src/admin/operations/user-storage.js';
import { updateRealm } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';

const shared = sharedBrowser();
let ldap: LdapServer | undefined;
before(async () => {
  if (!LDAP_MISSING) ldap = await startLdap({ people: [{ uid: 'lena', password: 'lena-ldap-pw', mail: 'lena@example.org', givenName: 'Lena', sn: 'Ldap' }] });
});
after(async () => {
  await ldap?.stop();
});

for (const dialect of dialects()) {
  test(`browser: an LDAP user signs in through the pages to the client's redirect with a code (${dialect})`, async (t) => {
    if (!shared.browser || !ldap) {
      t.skip(LDAP_MISSING ?? SKIP_REASON);
      return;
    }
    const ts: TestServer = await startTestServer({ dialect, listen: true });
    const context = await shared.newContext();
    try {
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
      const provider = await createUserStorage(ts.store, cliActor(), REALM, {
        name: 'corp',
        config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD], connectionTimeout: ['1000'], readTimeout: ['1000'] },
      });
      const page = await context.newPage();
      await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, 'ldap-state'));
      await signInOnPage(page, 'lena', 'wrong');
      await page.getByRole('alert').waitFor({ state: 'visible' });
      assert.equal((await page.getByRole('alert').textContent())?.trim(), 'Invalid username or password.');
      await signInOnPage(page, 'lena', 'lena-ldap-pw');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      const back = new URL(page.url());
      assert.equal(back.searchParams.get('state'), 'ldap-state');
      const code = back.searchParams.get('code');
      assert.ok(code);
      const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
        method: 'POST',
        headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }).toString(),
      });
      assert.equal(res.status, 200);
      const lena = (await ts.store.users.findByUsername(REALM, 'lena'))!;
      assert.equal(lena.federationLink, provider.id);
      assert.equal(decodeJwt(((await res.json()) as { access_token: string }).access_token).sub, lena.id);

      // The directory down: the login page says to try again later, quickly, and keeps the name.
      await updateUserStorage(ts.store, cliActor(), REALM, provider.id, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [`ldap://127.0.0.1:${await freePort()}`] } });
      const other = await (await shared.newContext()).newPage();
      await other.goto(authorizeUrl(ts, 'down'));
      await signInOnPage(other, 'mo', 'whatever');
      await other.getByRole('alert').waitFor({ state: 'visible' });
      assert.match((await other.getByRole('alert').textContent()) ?? '', /cannot be reached right now\. Please try again later\./);
      assert.equal(await heading(other), 'Sign in to continue to Web App');
      assert.equal(await other.getByLabel('Username').inputValue(), 'mo');
      await checkLayout(other, 'login-ldap-unavailable', dialect === 'sqlite');
      await other.context().close();
    } finally {
      await context.close();
      await ts.close();
    }
  });
}
