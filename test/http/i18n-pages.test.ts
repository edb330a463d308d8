import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, runAuthorization } from '../helpers/flow.js';
import { SMTP_MISSING, SmtpServer } from '../helpers/smtp.js';
import { createClient, createRealm, createUser, updateRealm } from '../../src/admin/operations.js';
import { randomBytes } from 'node:crypto';
import { enrollOtp } from '../../src/admin/operations/otp.js';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { hotp, timeStep } from '../../src/crypto/totp.js';

// The end-user pages and mails in the reader's language (Keycloak's realm localization): the account
// page (the user's locale attribute, else the browser's languages), the device page, the logout pages,
// the code display page, a realm's own texts over the built-in ones, and a realm without
// internationalization, which stays English whatever is asked.

const ACCOUNT = realmPath('/account');
const DEVICE = realmPath('/device');
const LOGOUT = realmPath('/protocol/openid-connect/logout');

/** A request with this browser's cookies and more headers (Accept-Language). */
function send(ts: TestServer, jar: CookieJar, method: 'GET' | 'POST', url: string, o: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
  return inject(ts.app, jar, method, url, o.form, o.headers);
}

/** Every form on the page: its action and its hidden fields. */
function forms(html: string): Array<{ action: string; fields: Record<string, string> }> {
  return [...html.matchAll(/<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].map((m) => ({
    action: m[1]!.replace(/&amp;/g, '&'),
    fields: Object.fromEntries([...m[2]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((f) => [f[1]!, f[2]!])),
  }));
}

for (const dialect of dialects()) {
  describe(`pages in the reader's language (${dialect})`, () => {
    let ts: TestServer;
    const pageUri = (): string => `${ts.config.appUrl}/authentication_code`;

    before(async () => {
      ts = await startTestServer({ dialect });
      await updateRealm(ts.store, { realmId: REALM, settings: { internationalizationEnabled: true, supportedLocales: ['en', 'de', 'fr', 'es'] } });
      await createUser(ts.store, { realmId: REALM, username: 'hans', password: 'hans password 1', email: 'hans@example.com', attributes: { locale: ['de'] } });
      await createClient(ts.store, { realmId: REALM, clientId: 'desktop', name: 'Desk Tool', redirectUris: [pageUri()], secret: 'desktop-secret-value' });
      // A realm without internationalization: English, whatever the browser or the user asks.
      await createRealm(ts.store, { id: 'plain', displayName: 'Plain Realm' });
      await createUser(ts.store, { realmId: 'plain', username: 'otto', password: 'otto password 1', attributes: { locale: ['de'] } });
      ts.services.cache.clear();
    });
    after(() => ts.close());
    beforeEach(() => ts.services.cache.clear());

    /** Signs `username` in on the account page of `realm`, with `headers` on every request: the account page. */
    async function accountSignIn(username: string, password: string, headers: Record<string, string> = {}, realm = REALM): Promise<{ jar: CookieJar; login: LightMyRequestResponse; page: LightMyRequestResponse }> {
      const jar = new CookieJar();
      const url = `/auth/realms/${realm}/account`;
      const login = await send(ts, jar, 'GET', url, { headers });
      const form = parseForm(login.body);
      const done = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, username, password }, headers });
      assert.equal(done.statusCode, 303, done.body.slice(0, 400));
      return { jar, login, page: await send(ts, jar, 'GET', url, { headers }) };
    }

    test("the account page speaks the user's locale attribute, before the browser's languages, and its notices too", async () => {
      const { jar, page } = await accountSignIn('hans', 'hans password 1', { 'accept-language': 'fr' });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['content-language'], 'de');
      assert.match(page.body, /<html lang="de">/);
      assert.match(page.body, /<h1>Ihr Konto<\/h1>/);
      assert.match(page.body, /Angemeldet als <strong>hans<\/strong>\./);
      assert.match(page.body, /<h2>Wo Sie angemeldet sind<\/h2>/);
      assert.doesNotMatch(page.body, /Your account|Signed in as|Votre compte/);
      // The language menu: the realm's languages, each a link back to the account page.
      assert.match(page.body, /<nav class="locales" aria-label="Sprache">/);
      assert.match(page.body, /<a href="\/auth\/realms\/test\/account\?kc_locale=es" lang="es" hreflang="es">Español<\/a>/);
      // A refusal a route hands the page (a message, put in the page's language when rendered).
      const password = forms(page.body).find((f) => f.action.endsWith('/account/password'))!;
      const refused = await send(ts, jar, 'POST', password.action, { form: { ...password.fields, password: 'wrong one', 'password-new': 'x', 'password-confirm': 'x' }, headers: { 'accept-language': 'fr' } });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /<p class="error" role="alert">Das aktuelle Passwort ist nicht richtig\.<\/p>/);
      assert.doesNotMatch(refused.body, /The current password is not right/);
    });

    test('every button of the account page is in its language: an authenticator\'s Remove, the Delete account section', async () => {
      const { jar } = await accountSignIn('hans', 'hans password 1');
      const hans = (await ts.store.users.findByUsername(REALM, 'hans'))!;
      const key = randomBytes(20);
      const now = Math.floor(ts.clock.nowMs() / 1000);
      assert.equal(await enrollOtp(ts.store, { user: hans, key, code: hotp(key, timeStep(now, 30), 6, 'HmacSHA1'), label: 'Telefon', nowSeconds: now }), undefined);
      await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_account', changes: { enabled: true } });
      ts.services.cache.clear();
      try {
        const page = await send(ts, jar, 'GET', ACCOUNT);
        assert.equal(page.headers['content-language'], 'de');
        assert.match(page.body, /<strong>Telefon<\/strong>[\s\S]*?<button type="submit" class="secondary">Entfernen<\/button>/);
        assert.match(page.body, /<h2>Konto löschen<\/h2>/);
        assert.match(page.body, /<button type="submit" class="danger">Mein Konto löschen<\/button>/);
        assert.doesNotMatch(page.body, />(Remove|Delete my account|Delete account)</);
      } finally {
        await ts.store.otp.deleteAll(hans.id);
        await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_account', changes: { enabled: false } });
      }
    });

    test("without a locale attribute, the account page and its sign-in speak the browser's language (Accept-Language)", async () => {
      // A grant to list: its scopes in the page's language too, the application's name as it is.
      await runAuthorization(ts);
      const { login, page } = await accountSignIn('alice', ts.user.password, { 'accept-language': 'it, fr;q=0.8, en;q=0.5' });
      assert.equal(login.headers['content-language'], 'fr');
      assert.match(login.body, /<h1>Connectez-vous pour continuer vers votre compte<\/h1>/);
      assert.equal(page.headers['content-language'], 'fr');
      assert.match(page.body, /<h1>Votre compte<\/h1>/);
      assert.match(page.body, /Connecté en tant que <strong>alice<\/strong>\./);
      assert.match(page.body, /<strong>Ce navigateur<\/strong>/);
      assert.match(page.body, />Se déconnecter<\/button>/);
      assert.match(page.body, /<h2>Applications ayant accès<\/h2>/);
      assert.match(page.body, /<strong>Web App<\/strong> <span class="muted">pour Acme Inc\.<\/span>/);
      assert.match(page.body, /<li>Lire et modifier les données métier essentielles de votre organisation<\/li>/);
      assert.match(page.body, />Retirer l&#39;accès<\/button>/);
      // The same page for a browser that asks nothing: the realm's default, English.
      const { page: english } = await accountSignIn('alice', ts.user.password);
      assert.equal(english.headers['content-language'], 'en');
      assert.match(english.body, /<h1>Your account<\/h1>/);
      assert.match(english.body, /Signed in as <strong>alice<\/strong>\./);
    });

    test('the account page saves the language chosen in the user\'s locale attribute (one of the realm\'s), with its CSRF token', async () => {
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'lena', password: 'lena password 1' });
      const headers = { 'accept-language': 'fr' };
      const { jar, page } = await accountSignIn('lena', 'lena password 1', headers);
      assert.match(page.body, /<h2>Langue<\/h2>/);
      // The page's language preselected.
      assert.match(page.body, /<option value="fr" lang="fr" selected>Français<\/option>/);
      assert.match(page.body, /<option value="es" lang="es">Español<\/option>/);
      const form = forms(page.body).find((f) => f.action.endsWith('/account/locale'))!;
      const saved = await send(ts, jar, 'POST', form.action, { form: { ...form.fields, locale: 'es' }, headers });
      assert.equal(saved.statusCode, 200);
      assert.equal(saved.headers['content-language'], 'es');
      assert.match(saved.body, /<p class="notice" role="status">Su idioma se ha guardado\.<\/p>/);
      assert.deepEqual((await ts.store.users.get(id))!.attributes.locale, ['es']);
      // From now on the user's language, before the browser's.
      assert.equal((await send(ts, jar, 'GET', ACCOUNT, { headers })).headers['content-language'], 'es');
      // Not one of the realm's languages, or without the page's CSRF token: nothing saved.
      for (const bad of [{ ...form.fields, locale: 'it' }, { ...form.fields, csrf: 'forged', locale: 'de' }]) {
        const res = await send(ts, jar, 'POST', form.action, { form: bad, headers });
        assert.equal(res.statusCode, 303);
        assert.deepEqual((await ts.store.users.get(id))!.attributes.locale, ['es']);
      }
    });

    test('the device verification page in German, its errors too; kc_locale chooses, and the choice is remembered', async () => {
      const jar = new CookieJar();
      const page = await send(ts, jar, 'GET', `${DEVICE}?user_code=ABCD-EFGH`, { headers: { 'accept-language': 'de-CH, en;q=0.1' } });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['content-language'], 'de');
      assert.match(page.body, /<title>Gerät verbinden · Test Realm<\/title>/);
      assert.match(page.body, /<h1>Bestätigen Sie den Code auf Ihrem Gerät<\/h1>/);
      assert.match(page.body, /<label for="user_code">Code<\/label>/);
      assert.match(page.body, /<button type="submit">Weiter<\/button>/);
      // The menu's links keep the page's own address (its user_code).
      assert.match(page.body, /href="\/auth\/realms\/test\/device\?user_code=ABCD-EFGH&amp;kc_locale=fr"/);
      const form = parseForm(page.body);
      const wrong = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, user_code: 'BBBB-BBBB' }, headers: { 'accept-language': 'de' } });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /Dieser Code ist ungültig oder abgelaufen\./);
      assert.match(wrong.body, /<h1>Geben Sie den Code ein, den Ihr Gerät anzeigt<\/h1>/);
      // kc_locale (the menu's links) wins over Accept-Language, and its cookie keeps the choice.
      const chosen = await send(ts, jar, 'GET', `${DEVICE}?kc_locale=es`, { headers: { 'accept-language': 'de' } });
      assert.equal(chosen.headers['content-language'], 'es');
      assert.match(chosen.body, /<h1>Introduzca el código que muestra su dispositivo<\/h1>/);
      const later = await send(ts, jar, 'GET', DEVICE, { headers: { 'accept-language': 'de' } });
      assert.equal(later.headers['content-language'], 'es');
    });

    test('the logout confirmation page and the signed-out page in the browser\'s language', async () => {
      const { jar } = await runAuthorization(ts);
      const headers = { 'accept-language': 'es' };
      const confirm = await send(ts, jar, 'GET', `${LOGOUT}?client_id=${ts.client.id}`, { headers });
      assert.equal(confirm.statusCode, 200);
      assert.equal(confirm.headers['content-language'], 'es');
      assert.match(confirm.body, /<h1>¿Desea cerrar la sesión\?<\/h1>/);
      assert.match(confirm.body, /<p>Web App solicita cerrar su sesión en Test Realm\.<\/p>/);
      assert.match(confirm.body, /<button type="submit">Cerrar sesión<\/button>/);
      const form = forms(confirm.body)[0]!;
      const done = await send(ts, jar, 'POST', form.action, { form: form.fields, headers });
      assert.equal(done.statusCode, 200);
      assert.match(done.body, /<h1>Ha cerrado la sesión<\/h1>/);
      assert.match(done.body, /<p>Puede cerrar esta ventana\.<\/p>/);
      // A refused request: its reason, from the protocol core, in the page's language.
      const bad = await send(ts, jar, 'GET', `${LOGOUT}?post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`, { headers: { 'accept-language': 'fr' } });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /<h1>Demande de déconnexion invalide<\/h1>/);
      assert.match(bad.body, /post_logout_redirect_uri nécessite id_token_hint ou client_id\./);
    });

    test('the code display page speaks the language of the realm the code is from; an error page, that of the iss', async () => {
      const r = await runAuthorization(ts, { query: { client_id: 'desktop', redirect_uri: pageUri(), state: 'st' } });
      const url = `/authentication_code${r.location.search}`;
      const fr = await ts.app.inject({ method: 'GET', url, headers: { 'accept-language': 'fr' } });
      assert.equal(fr.statusCode, 200);
      assert.equal(fr.headers['content-language'], 'fr');
      assert.match(fr.body, /<h1>Copiez ce code dans Desk Tool<\/h1>/);
      assert.match(fr.body, /expire dans <strong id="seconds">\d+<\/strong> secondes\./);
      // The script's words come from the page in another language...
      assert.match(fr.body, /<p id="copy-status" class="muted" role="status" aria-live="polite" data-copied="Copié\." data-copy-failed="Sélectionnez le code et copiez-le avec votre clavier\."><\/p>/);
      // ...and are the script's own in English.
      const en = await ts.app.inject({ method: 'GET', url });
      assert.equal(en.headers['content-language'], 'en');
      assert.match(en.body, /<h1>Copy this code into Desk Tool<\/h1>/);
      assert.match(en.body, /<p id="copy-status" class="muted" role="status" aria-live="polite"><\/p>/);
      const iss = encodeURIComponent(`${ts.config.authUrl}/auth/realms/${REALM}`);
      const error = await ts.app.inject({ method: 'GET', url: `/authentication_code?error=access_denied&iss=${iss}`, headers: { 'accept-language': 'de' } });
      assert.equal(error.statusCode, 400);
      assert.match(error.body, /<h1>Es wurde kein Code ausgestellt<\/h1>/);
      assert.match(error.body, /Der Zugriff wurde verweigert, daher wurde kein Code ausgestellt\./);
      // Without an iss of one of its realms, the page cannot know the realm's languages: English.
      const unknown = await ts.app.inject({ method: 'GET', url: '/authentication_code?error=access_denied&iss=https%3A%2F%2Fother.example%2Fauth%2Frealms%2Ftest', headers: { 'accept-language': 'de' } });
      assert.match(unknown.body, /Access was denied, so no code was issued\./);
    });

    test("a realm's own text comes before the built-in one of its locale", async () => {
      await ts.store.localization.set(REALM, 'de', 'verifyOAuth2DeviceUserCode', 'Bitte den Code Ihres Fernsehers eingeben');
      await ts.store.localization.set(REALM, 'de', 'accountTitle', 'Mein Konto bei <Test>');
      ts.services.cache.clear();
      try {
        const page = await send(ts, new CookieJar(), 'GET', DEVICE, { headers: { 'accept-language': 'de' } });
        assert.match(page.body, /<h1>Bitte den Code Ihres Fernsehers eingeben<\/h1>/);
        // Other languages keep the built-in text.
        const fr = await send(ts, new CookieJar(), 'GET', DEVICE, { headers: { 'accept-language': 'fr' } });
        assert.match(fr.body, /<h1>Saisissez le code affiché sur votre appareil<\/h1>/);
        // A realm's text is text: escaped.
        const { page: account } = await accountSignIn('hans', 'hans password 1');
        assert.match(account.body, /<h1>Mein Konto bei &lt;Test&gt;<\/h1>/);
      } finally {
        await ts.store.localization.delete(REALM, 'de');
      }
    });

    test('a realm without internationalization stays English, whatever the browser and the user ask', async () => {
      const jar = new CookieJar();
      const page = await send(ts, jar, 'GET', '/auth/realms/plain/device?kc_locale=de', { headers: { 'accept-language': 'de' } });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['content-language'], 'en');
      assert.match(page.body, /<html lang="en">/);
      assert.match(page.body, /<h1>Enter the code shown on your device<\/h1>/);
      assert.doesNotMatch(page.body, /class="locales"/);
      const { page: account } = await accountSignIn('otto', 'otto password 1', { 'accept-language': 'de' }, 'plain');
      assert.equal(account.headers['content-language'], 'en');
      assert.match(account.body, /<h1>Your account<\/h1>/);
      assert.doesNotMatch(account.body, /Ihr Konto|class="locales"/);
    });
  });

  describe(`mails in the recipient's language (${dialect})`, { skip: SMTP_MISSING }, () => {
    let ts: TestServer;
    let smtp: SmtpServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      smtp = await SmtpServer.start();
      await updateRealm(ts.store, {
        realmId: REALM,
        settings: { resetPasswordAllowed: true, internationalizationEnabled: true, supportedLocales: ['en', 'de'], smtpServer: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@example.com' } },
      });
      await createUser(ts.store, { realmId: REALM, username: 'greta', password: 'greta password 1', email: 'greta@example.com', attributes: { locale: ['de'] } });
      await createUser(ts.store, { realmId: REALM, username: 'otto', password: 'otto password 1', email: 'otto@example.com' });
      ts.services.cache.clear();
    });
    after(async () => {
      await ts.close();
      await smtp.stop();
    });

    /** "Forgot password?" for `username`, from a new browser whose language is `acceptLanguage`. */
    async function askReset(username: string, acceptLanguage: string): Promise<void> {
      const jar = new CookieJar();
      const headers = { 'accept-language': acceptLanguage };
      const start = await send(ts, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`, { headers });
      const login = await send(ts, jar, 'GET', start.headers.location as string, { headers });
      const href = /<a href="([^"]*)" class="forgot">/.exec(login.body)?.[1];
      assert.ok(href, login.body.slice(0, 400));
      const page = await send(ts, jar, 'GET', href.replace(/&amp;/g, '&'), { headers });
      const form = parseForm(page.body);
      const res = await send(ts, jar, 'POST', form.action, { form: { csrf: form.csrf, username }, headers });
      assert.ok(res.statusCode < 400, res.body.slice(0, 400));
    }

    test("a reset mail is in the user's locale attribute, not the browser's language; a user without one gets the page's language, else the realm's default", async () => {
      await askReset('greta', 'en');
      const [de] = await smtp.waitFor(1, { to: 'greta@example.com' });
      assert.equal(de!.subject, 'Passwort für Test Realm zurücksetzen');
      assert.match(de!.text, /^Jemand hat angefordert, das Passwort Ihres Kontos greta bei Test Realm zurückzusetzen\./);
      assert.match(de!.text, /öffnen Sie diesen Link innerhalb von \d+ (Minuten|Stunden|Sekunden):/);
      assert.match(de!.html, /<html lang="de">/);
      assert.match(de!.html, /Ihres Kontos <strong>greta<\/strong> bei Test Realm/);
      assert.match(de!.html, /<a href="[^"]+">Neues Passwort wählen<\/a> \(innerhalb von \d+ \w+\)\./);
      assert.doesNotMatch(de!.text + de!.html, /Someone asked|Reset your/);
      // A user without one gets the language of the page that asked (as the browser's languages come
      // after the user's own in Keycloak's selector), else the realm's default, here English.
      await askReset('alice', 'de');
      const [paged] = await smtp.waitFor(1, { to: 'alice@example.com' });
      assert.equal(paged!.subject, 'Passwort für Test Realm zurücksetzen');
      assert.match(paged!.html, /<html lang="de">/);
      await askReset('otto', 'en');
      const [en] = await smtp.waitFor(1, { to: 'otto@example.com' });
      assert.equal(en!.subject, 'Reset your Test Realm password');
      assert.match(en!.html, /<html lang="en">/);
    });
  });
}
