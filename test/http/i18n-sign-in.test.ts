import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations.js';
import { realmCookieName } from '../../src/http/cookies.js';
import { LOCALE_COOKIE } from '../../src/http/i18n.js';

// The sign-in pages in the reader's language (Keycloak's realm localization): the realm's supported
// locales, chosen in Keycloak's order (kc_locale, the user's locale, ui_locales, the cookie, Accept-Language).

const AUTH = realmPath('/protocol/openid-connect/auth');

/** A request with the browser's cookies (updated) and headers (Accept-Language). */
function send(ts: TestServer, jar: CookieJar, method: 'GET' | 'POST', url: string, o: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
  return inject(ts.app, jar, method, url, o.form, o.headers);
}

const lang = (html: string): string | undefined => /<html lang="([^"]*)">/.exec(html)?.[1];
const unescapeHtml = (s: string): string => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'");

for (const dialect of dialects()) {
  describe(`sign-in pages in the reader's language (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      // A user whose own language is German (Keycloak's `locale` attribute).
      await createUser(ts.store, { realmId: REALM, username: 'bernd', password: ts.user.password, email: 'bernd@example.com', orgAliases: ['acme'], attributes: { locale: ['de'] } });
    });
    after(() => ts.close());

    const international = { internationalizationEnabled: true, supportedLocales: ['en', 'de', 'fr', 'es'], defaultLocale: null };
    beforeEach(async () => {
      await ts.store.realms.update(REALM, international);
      await ts.store.db.kysely.deleteFrom('consents').execute();
      // A language chosen in an earlier test became alice's own (Keycloak's locale updater): none again.
      const alice = (await ts.store.users.get(ts.user.id))!;
      const { locale: _chosen, ...rest } = alice.attributes;
      await ts.store.users.update(ts.user.id, { attributes: rest });
    });

    /** A new sign-in: the authorization request (with `query`), then its first page. */
    async function start(o: { query?: Record<string, string>; headers?: Record<string, string>; jar?: CookieJar } = {}): Promise<{ jar: CookieJar; url: string; page: LightMyRequestResponse }> {
      const jar = o.jar ?? new CookieJar();
      const res = await send(ts, jar, 'GET', `${AUTH}?${authorizeQuery(ts, o.query)}`, { ...(o.headers ? { headers: o.headers } : {}) });
      assert.equal(res.statusCode, 303, res.body);
      const url = res.headers.location as string;
      const page = await send(ts, jar, 'GET', url, { ...(o.headers ? { headers: o.headers } : {}) });
      return { jar, url, page };
    }

    /** Signs in on the login page `page`; the next page (after the Post/Redirect/Get), and its address in `url`. */
    async function signIn(jar: CookieJar, page: LightMyRequestResponse, username: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse & { url: string }> {
      const form = parseForm(page.body);
      const res = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, username, password: ts.user.password }, headers });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const url = res.headers.location as string;
      return Object.assign(await send(ts, jar, 'GET', url, { headers }), { url });
    }

    test('Accept-Language de: the login page in German, with the language menu (kc_locale links)', async () => {
      const { page, url } = await start({ headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } });
      assert.equal(page.statusCode, 200);
      assert.equal(lang(page.body), 'de');
      assert.equal(page.headers['content-language'], 'de');
      assert.match(page.body, /<h1>Melden Sie sich an, um mit Web App fortzufahren<\/h1>/);
      assert.match(page.body, /<label for="password">Passwort<\/label>/);
      assert.match(page.body, /<button type="submit">Anmelden<\/button>/);
      assert.match(page.body, /<title>Anmelden · Test Realm<\/title>/);
      assert.doesNotMatch(page.body, /Sign in to continue/);
      // The menu: every supported locale, the current one not a link, the others the page again with kc_locale.
      const nav = /<nav class="locales" aria-label="Sprache">(.*?)<\/nav>/s.exec(page.body)?.[1];
      assert.ok(nav, page.body.slice(0, 800));
      assert.match(nav, /<span lang="de" aria-current="true">Deutsch<\/span>/);
      for (const [tag, name] of [['en', 'English'], ['fr', 'Français'], ['es', 'Español']]) {
        const href: string | undefined = new RegExp(`<a href="([^"]*)" lang="${tag}" hreflang="${tag}">${name}</a>`).exec(nav)?.[1];
        assert.ok(href, `${tag} in ${nav}`);
        const link: URL = new URL(unescapeHtml(href), 'http://x');
        assert.equal(link.pathname, url);
        assert.equal(link.searchParams.get('kc_locale'), tag);
      }
    });

    test('kc_locale=fr on the page switches it, sets KEYCLOAK_LOCALE and sticks for the rest of the sign-in', async () => {
      const de = { 'accept-language': 'de' };
      const { jar, url, page } = await start({ headers: de });
      assert.equal(lang(page.body), 'de');
      const fr = await send(ts, jar, 'GET', `${url}?kc_locale=fr`, { headers: de });
      assert.equal(fr.statusCode, 200);
      assert.equal(lang(fr.body), 'fr');
      assert.equal(fr.headers['content-language'], 'fr');
      assert.match(fr.body, /<h1>Connectez-vous pour continuer vers Web App<\/h1>/);
      assert.match(fr.body, /<label for="password">Mot de passe<\/label>/);
      const cookie = (fr.cookies as Array<{ name: string; value: string }>).find((c) => c.name === realmCookieName(ts.config, REALM, LOCALE_COOKIE));
      assert.equal(cookie?.value, 'fr');
      // The next pages of this sign-in, without kc_locale and still with Accept-Language de: French.
      const again = await send(ts, jar, 'GET', url, { headers: de });
      assert.equal(lang(again.body), 'fr');
      const consent = await signIn(jar, again, 'alice', de);
      assert.equal(lang(consent.body), 'fr');
      assert.match(consent.body, /<h1>Web App souhaite accéder à votre compte<\/h1>/);
      assert.match(consent.body, /<button type="submit" name="decision" value="allow">Autoriser<\/button>/);
      // Signed in, the language chosen is the user's own from now on (Keycloak's LocaleUpdaterProvider).
      assert.deepEqual((await ts.store.users.get(ts.user.id))?.attributes.locale, ['fr']);
    });

    test('ui_locales=es at the authorization request: the pages in Spanish', async () => {
      const { page } = await start({ query: { ui_locales: 'es' } });
      assert.equal(lang(page.body), 'es');
      assert.equal(page.headers['content-language'], 'es');
      assert.match(page.body, /<h1>Inicie sesión para continuar en Web App<\/h1>/);
      assert.match(page.body, /<label for="password">Contraseña<\/label>/);
    });

    test('precedence: the chosen locale over ui_locales, ui_locales over Accept-Language', async () => {
      const de = { 'accept-language': 'de' };
      const first = await start({ query: { ui_locales: 'es fr' }, headers: de });
      assert.equal(lang(first.page.body), 'es');
      const chosen = await send(ts, first.jar, 'GET', `${first.url}?kc_locale=fr`, { headers: de });
      assert.equal(lang(chosen.body), 'fr');
      assert.equal(lang((await send(ts, first.jar, 'GET', first.url, { headers: de })).body), 'fr');
      // kc_locale at the authorization request itself (Keycloak's parameter) wins over ui_locales too.
      const asked = await start({ query: { ui_locales: 'es', kc_locale: 'de' } });
      assert.equal(lang(asked.page.body), 'de');
    });

    test("the user's own locale wins over ui_locales once the user is known (the consent page)", async () => {
      const { jar, page } = await start({ query: { ui_locales: 'es' } });
      assert.equal(lang(page.body), 'es');
      const consent = await signIn(jar, page, 'bernd');
      assert.equal(lang(consent.body), 'de');
      assert.match(consent.body, /<h1>Web App möchte auf Ihr Konto zugreifen<\/h1>/);
      // Alice has no locale of her own: ui_locales still decides.
      const other = await start({ query: { ui_locales: 'es' } });
      assert.equal(lang((await signIn(other.jar, other.page, 'alice')).body), 'es');
    });

    test('discovery lists the realm\'s locales as ui_locales_supported (OIDC Discovery 3, RFC 8414 2); none without internationalization', async () => {
      for (const path of [`/auth/realms/${REALM}/.well-known/openid-configuration`, `/.well-known/oauth-authorization-server/auth/realms/${REALM}`]) {
        const on = await ts.app.inject({ method: 'GET', url: path });
        assert.deepEqual(on.json().ui_locales_supported, ['en', 'de', 'fr', 'es'], path);
      }
      await ts.store.realms.update(REALM, { internationalizationEnabled: false });
      ts.services.cache.clear();
      const off = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/.well-known/openid-configuration` });
      assert.equal(off.json().ui_locales_supported, undefined);
    });

    test('a realm with internationalization off stays English whatever the browser asks', async () => {
      await ts.store.realms.update(REALM, { internationalizationEnabled: false });
      const { jar, url, page } = await start({ query: { ui_locales: 'de' }, headers: { 'accept-language': 'de' } });
      assert.equal(lang(page.body), 'en');
      assert.equal(page.headers['content-language'], 'en');
      assert.match(page.body, /<h1>Sign in to continue to Web App<\/h1>/);
      assert.doesNotMatch(page.body, /class="locales"/);
      const asked = await send(ts, jar, 'GET', `${url}?kc_locale=de`, { headers: { 'accept-language': 'de' } });
      assert.equal(lang(asked.body), 'en');
      assert.match(asked.body, /<label for="password">Password<\/label>/);
      assert.equal((asked.cookies as Array<{ name: string }>).some((c) => c.name === realmCookieName(ts.config, REALM, LOCALE_COOKIE)), false);
    });

    test("a wrong password's error, in German", async () => {
      const de = { 'accept-language': 'de' };
      const { jar, page } = await start({ headers: de });
      const form = parseForm(page.body);
      const res = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, username: 'alice', password: 'not the password' }, headers: de });
      assert.equal(res.statusCode, 200);
      assert.equal(lang(res.body), 'de');
      assert.match(res.body, /<p class="error" role="alert">Ungültiger Benutzername oder ungültiges Passwort\.<\/p>/);
      // A form posted without its CSRF token: the error page in German too.
      const stale = await send(ts, jar, 'POST', form.action, { form: { csrf: 'stale', username: 'alice', password: 'x' }, headers: de });
      assert.equal(stale.statusCode, 403);
      assert.match(stale.body, /<h1>Formular abgelaufen<\/h1>/);
      assert.equal(lang(stale.body), 'de');
      assert.doesNotMatch(stale.body, /Form expired/);
    });

    test('the consent and organization pages in German, the scopes in their German words', async () => {
      const de = { 'accept-language': 'de' };
      const { jar, page } = await start({ headers: de });
      const consent = await signIn(jar, page, 'alice', de);
      assert.equal(lang(consent.body), 'de');
      assert.match(consent.body, /<title>Zugriff erlauben · Test Realm<\/title>/);
      assert.match(consent.body, /<p>Wenn Sie es erlauben, kann Web App:<\/p>/);
      // The built-in scopes' English texts are shown in the page's language.
      assert.match(consent.body, /<li>Bestätigen, wer Sie sind \(Ihre Kontokennung\)<span class="scope">openid<\/span><\/li>/);
      assert.match(consent.body, /<li>Diesen Zugriff behalten, wenn Sie nicht angemeldet sind, bis Sie ihn widerrufen<span class="scope">offline_access<\/span><\/li>/);
      assert.match(consent.body, /<button type="submit" name="decision" value="deny" class="secondary">Ablehnen<\/button>/);
      const form = parseForm(consent.body);
      const res = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, decision: 'allow' }, headers: de });
      assert.equal(res.statusCode, 303);
      const org = await send(ts, jar, 'GET', res.headers.location as string, { headers: de });
      assert.equal(lang(org.body), 'de');
      assert.match(org.body, /<h1>Wählen Sie die Organisation, mit der Web App arbeiten soll<\/h1>/);
      assert.match(org.body, /<legend>Organisation<\/legend>/);
      assert.match(org.body, /<button type="submit">Weiter<\/button>/);
      // No choice made: the error in German.
      const orgForm = parseForm(org.body);
      const none = await send(ts, jar, 'POST', orgForm.action, { form: { csrf: orgForm.csrf, organization: 'nope' }, headers: de });
      assert.equal(none.statusCode, 400);
      assert.match(none.body, /<p class="error" role="alert">Wählen Sie eine Ihrer Organisationen\.<\/p>/);
    });

    test("a realm's localization text overrides a built-in message; Keycloak's ${key} consent text is resolved", async () => {
      const de = { 'accept-language': 'de' };
      await ts.store.localization.set(REALM, 'de', 'doLogIn', 'Los');
      await ts.store.realms.upsertScope(REALM, { name: 'core_data', consentText: '${profileScopeConsentText}' }, Math.floor(Date.now() / 1000));
      await ts.store.realms.upsertScope(REALM, { name: 'exports', consentText: '${ownConsentText}' }, Math.floor(Date.now() / 1000));
      await ts.store.localization.set(REALM, 'de', 'ownConsentText', 'Ihre Exporte (eigener Text)');
      try {
        const { jar, page } = await start({ headers: de, query: { scope: 'openid core_data exports' } });
        assert.match(page.body, /<button type="submit">Los<\/button>/);
        assert.doesNotMatch(page.body, /<button type="submit">Anmelden<\/button>/);
        const consent = await signIn(jar, page, 'alice', de);
        // The built-in message of Keycloak's key, then the realm's own text for a key of its own.
        assert.match(consent.body, /<li>Benutzerprofil<span class="scope">core_data<\/span><\/li>/);
        assert.match(consent.body, /<li>Ihre Exporte \(eigener Text\)<span class="scope">exports<\/span><\/li>/);
        // The realm's text for Keycloak's key wins over the built-in one.
        await ts.store.localization.set(REALM, 'de', 'profileScopeConsentText', 'Ihr Profil bei uns');
        const again = await send(ts, jar, 'GET', consent.url, { headers: de });
        assert.match(again.body, /<li>Ihr Profil bei uns<span class="scope">core_data<\/span><\/li>/);
        // In English (no realm text for en): Keycloak's English words; an unknown key shows as the key.
        const en = await send(ts, jar, 'GET', `${consent.url}?kc_locale=en`);
        assert.match(en.body, /<li>User profile<span class="scope">core_data<\/span><\/li>/);
        assert.match(en.body, /<li>ownConsentText<span class="scope">exports<\/span><\/li>/);
      } finally {
        for (const locale of await ts.store.localization.locales(REALM)) await ts.store.localization.delete(REALM, locale);
        await ts.store.realms.upsertScope(REALM, { name: 'core_data', consentText: "Read and change your organization's core business data" }, Math.floor(Date.now() / 1000));
        await ts.store.realms.upsertScope(REALM, { name: 'exports', consentText: "Export data from your organization's account" }, Math.floor(Date.now() / 1000));
      }
    });

    test('an unsupported locale falls back to the realm default', async () => {
      await ts.store.realms.update(REALM, { defaultLocale: 'fr' });
      const { jar, url, page } = await start({ headers: { 'accept-language': 'ja, zh;q=0.8' } });
      assert.equal(lang(page.body), 'fr');
      assert.match(page.body, /<h1>Connectez-vous pour continuer vers Web App<\/h1>/);
      const ja = await send(ts, jar, 'GET', `${url}?kc_locale=ja`, { headers: { 'accept-language': 'ja' } });
      assert.equal(lang(ja.body), 'fr');
      // Without a default locale: English.
      await ts.store.realms.update(REALM, { defaultLocale: null });
      assert.equal(lang((await send(ts, jar, 'GET', url, { headers: { 'accept-language': 'ja' } })).body), 'en');
    });

    test('the registration page in German: the password policy in its words, the refusals too', async () => {
      const de = { 'accept-language': 'de' };
      await ts.store.realms.update(REALM, { registrationAllowed: true, passwordPolicy: 'length(10) and digits(1)' });
      try {
        const { jar, url } = await start({ headers: de });
        const page = await send(ts, jar, 'GET', `${url}/registration`, { headers: de });
        assert.equal(page.statusCode, 200);
        assert.equal(lang(page.body), 'de');
        assert.match(page.body, /<h1>Konto erstellen<\/h1>/);
        assert.match(page.body, /<label for="firstName">Vorname<\/label>/);
        assert.match(page.body, /<p class="muted" id="password-rule">Mindestens 10 Zeichen, davon mindestens 1 Ziffer\.<\/p>/);
        const form = parseForm(page.body);
        const res = await send(ts, jar, 'POST', form.action, {
          form: { csrf: form.csrf, username: 'neu', email: 'not an email', firstName: 'Neu', lastName: '', 'password-new': 'short', 'password-confirm': 'short' },
          headers: de,
        });
        assert.equal(res.statusCode, 400);
        assert.match(res.body, /<li>Ungültige E-Mail-Adresse\.<\/li>/);
        assert.match(res.body, /<li>Bitte geben Sie einen Nachnamen an\.<\/li>/);
        assert.match(res.body, /<li>Das Passwort muss mindestens 10 Zeichen haben und mindestens 1 Ziffer enthalten\.<\/li>/);
        // The same form in English: the policy module's own words.
        const en = await send(ts, jar, 'POST', form.action, {
          form: { csrf: form.csrf, username: 'neu', email: 'neu@example.com', firstName: 'Neu', lastName: 'Nutzer', 'password-new': 'short', 'password-confirm': 'short' },
          headers: { 'accept-language': 'en' },
        });
        assert.equal(en.statusCode, 400);
        assert.match(en.body, /<p>The password must have at least 10 characters and contain at least 1 digit\.<\/p>/);
      } finally {
        await ts.store.realms.update(REALM, { registrationAllowed: false, passwordPolicy: '' });
      }
    });

    test("pages outside a sign-in: the authorization endpoint's error page, a mailed link's and an invitation's", async () => {
      const de = { 'accept-language': 'de' };
      const unknown = await ts.app.inject({ method: 'GET', url: `${AUTH}?${authorizeQuery(ts, { client_id: 'nobody' })}`, headers: de });
      assert.equal(unknown.statusCode, 400);
      assert.equal(lang(unknown.body), 'de');
      assert.match(unknown.body, /<h1>Unbekannte Anwendung<\/h1>/);
      assert.match(unknown.body, /bei diesem Server nicht registriert/);
      const link = await ts.app.inject({ method: 'GET', url: realmPath('/login-actions/action-token?key=garbage'), headers: { 'accept-language': 'es' } });
      assert.equal(link.statusCode, 400);
      assert.equal(lang(link.body), 'es');
      assert.match(link.body, /<h1>Este enlace no es válido<\/h1>/);
      const invitation = await ts.app.inject({ method: 'GET', url: realmPath('/login-actions/org-invitation?key=garbage'), headers: { 'accept-language': 'fr' } });
      assert.equal(invitation.statusCode, 400);
      assert.equal(lang(invitation.body), 'fr');
      assert.match(invitation.body, /<h1>Cette invitation n&#39;est pas valide<\/h1>/);
    });
  });
}
