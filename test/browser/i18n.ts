// The pages in another language, in a real browser (Debian's chromium, playwright-core): a German
// browser gets the realm's pages in German (its Accept-Language), the language menu switches the sign-in
// to French for the rest of it, and a wrong password, the consent and the organization pages follow;
// the language chosen becomes the user's (their locale attribute), which the account page speaks and
// whose language form changes it.
// The words expected are the catalogs' own (src/i18n/messages), so that a wording can change without
// this test, but an English page cannot pass. With UPDATE_SCREENSHOTS=1 the German login page is saved
// to docs/screenshots/login-de-*.png, the French consent page to consent-fr-*.png,
// the French account page to account-fr-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { updateRealm } from '../../src/admin/operations.js';
import { Translator } from '../../src/i18n/translator.js';
import { CLIENT_ORIGIN, SKIP_REASON, authorizeUrl, checkLayout, interceptClient, sharedBrowser } from '../helpers/browser.js';

const shared = sharedBrowser();
const de = new Translator('de');
const fr = new Translator('fr');

for (const dialect of dialects()) {
  const shoot = dialect === 'sqlite';

  test(`browser: a German browser signs in in German, and switches to French from the language menu (${dialect})`, async (t) => {
    if (!shared.browser) {
      t.skip(SKIP_REASON);
      return;
    }
    const ts = await startTestServer({ dialect, listen: true });
    await updateRealm(ts.store, { realmId: 'test', settings: { internationalizationEnabled: true, supportedLocales: ['en', 'de', 'fr'], defaultLocale: 'en' } });
    const context = await shared.newContext({ locale: 'de-DE' });
    try {
      const page = await context.newPage();
      await interceptClient(context, page);
      await page.goto(authorizeUrl(ts, 'i18n'));
      await page.getByLabel(de.t('usernameOrEmail'), { exact: true }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), de.t('loginTitleApp', 'Web App'));
      const menu = page.getByRole('navigation', { name: de.t('languageMenu') });
      assert.deepEqual(await menu.locator('a').allTextContents(), ['English', 'Français']);
      assert.equal(await menu.locator('[aria-current="true"]').textContent(), 'Deutsch');
      await checkLayout(page, 'login-de', shoot);

      await menu.getByRole('link', { name: 'Français' }).click();
      await page.getByLabel(fr.t('usernameOrEmail'), { exact: true }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'fr');
      const cookie = (await context.cookies(`${ts.baseUrl}/auth/realms/test/`)).find((c) => c.name === 'KEYCLOAK_LOCALE');
      assert.equal(cookie?.value, 'fr');
      assert.equal(cookie?.httpOnly, true);

      // A wrong password: the error, in French, on the page the form posted to.
      await page.getByLabel(fr.t('usernameOrEmail'), { exact: true }).fill('alice');
      await page.getByLabel(fr.t('password'), { exact: true }).fill('not the password');
      await page.getByRole('button', { name: fr.t('doLogIn') }).click();
      await page.getByRole('alert').waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'fr');
      assert.equal((await page.getByRole('alert').textContent())?.trim(), fr.t('invalidUserMessage'));

      await page.getByLabel(fr.t('password'), { exact: true }).fill(ts.user.password);
      await page.getByRole('button', { name: fr.t('doLogIn') }).click();
      // The longer French words fit the pages at desktop and phone width (nothing scrolls sideways).
      await page.getByRole('button', { name: fr.t('doAllow') }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'fr');
      await checkLayout(page, 'consent-fr', shoot);
      await page.getByRole('button', { name: fr.t('doAllow') }).click();
      await page.getByRole('button', { name: fr.t('doContinue') }).waitFor();
      await checkLayout(page, 'organization-fr', false);
      await page.getByRole('button', { name: fr.t('doContinue') }).click();
      await page.waitForURL((u) => u.origin === CLIENT_ORIGIN);
      assert.ok(new URL(page.url()).searchParams.get('code'));
      // The language chosen during the sign-in is the user's from now on (Keycloak's locale updater).
      assert.deepEqual((await ts.store.users.get(ts.user.id))?.attributes.locale, ['fr']);

      // The account page speaks the user's language; its language form changes it for good.
      await page.goto(`${ts.baseUrl}/auth/realms/test/account`);
      await page.getByRole('heading', { level: 1, name: fr.t('accountTitle') }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'fr');
      // The realm's password rule too (it was English on the French account page once).
      assert.doesNotMatch((await page.locator('#password-rule').textContent()) ?? '', /At least|characters/);
      await checkLayout(page, 'account-fr', shoot);
      await page.getByLabel(fr.t('accountLanguageIntro')).selectOption('de');
      await page.getByRole('button', { name: fr.t('accountSaveLanguage') }).click();
      await page.getByRole('heading', { level: 1, name: de.t('accountTitle') }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.deepEqual((await ts.store.users.get(ts.user.id))?.attributes.locale, ['de']);
    } finally {
      await context.close();
      await ts.close();
    }
  });
}
