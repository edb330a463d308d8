import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import { EXACT } from '../../src/http/interaction/problems.js';
import { BUILT_IN_TEXTS } from '../../src/views/scope-text.js';
import { AREAS, builtInTexts } from '../../src/i18n/catalog.js';
import { BUILT_IN_LOCALES } from '../../src/i18n/catalog-types.js';
import { localeName, matchLocale, normalizeLocale, parseAcceptLanguage, selectLocale } from '../../src/i18n/locales.js';
import { ENGLISH, msg, t, th, Translator, withTranslator } from '../../src/i18n/translator.js';
import { html } from '../../src/views/html.js';

const i18nRealm = { internationalizationEnabled: true, supportedLocales: ['en', 'de', 'fr-CA', 'es'], defaultLocale: 'de' };

describe('locale tags', () => {
  test('are normalized, and what is not one is refused', () => {
    assert.equal(normalizeLocale('DE-ch'), 'de-CH');
    assert.equal(normalizeLocale('zh-hant-tw'), 'zh-Hant-TW');
    assert.equal(normalizeLocale('en'), 'en');
    for (const bad of ['', 'e', 'de_CH', 'de-', '-de', 'de-CH-x-y-z', 'de CH', '../x', 'a'.repeat(36), 'de-<b>']) assert.equal(normalizeLocale(bad), undefined, bad);
  });

  test('match as Keycloak matches them: a region on one side only, or the same one; the same region wins', () => {
    assert.equal(matchLocale(['en', 'de'], 'de-CH'), 'de');
    assert.equal(matchLocale(['en', 'de-CH'], 'de'), 'de-CH');
    assert.equal(matchLocale(['de-AT'], 'de-CH'), undefined);
    assert.equal(matchLocale(['de', 'de-CH'], 'de-CH'), 'de-CH');
    assert.equal(matchLocale(['de-CH', 'de'], 'de'), 'de');
    assert.equal(matchLocale(['en'], 'fr'), undefined);
  });

  test('Accept-Language is read by quality, then order; q=0 and junk are left out, and the count is bounded', () => {
    assert.deepEqual(parseAcceptLanguage('fr;q=0.5, de-CH, en;q=0.9, es;q=0, *;q=0.1, <x>'), ['de-CH', 'en', 'fr']);
    assert.deepEqual(parseAcceptLanguage(undefined), []);
    assert.equal(parseAcceptLanguage(Array.from({ length: 100 }, () => 'de').join(',')).length, 20);
  });

  test("the page's locale follows Keycloak's order: chosen, user, ui_locales, cookie, Accept-Language, default", () => {
    const all = { selected: 'es', user: 'fr-CA', uiLocales: 'xx en', cookie: 'de', acceptLanguage: 'es' };
    assert.equal(selectLocale(i18nRealm, all), 'es');
    assert.equal(selectLocale(i18nRealm, { ...all, selected: undefined }), 'fr-CA');
    assert.equal(selectLocale(i18nRealm, { ...all, selected: undefined, user: undefined }), 'en');
    assert.equal(selectLocale(i18nRealm, { cookie: 'es', acceptLanguage: 'fr' }), 'es');
    assert.equal(selectLocale(i18nRealm, { acceptLanguage: 'it, fr;q=0.5' }), 'fr-CA');
    assert.equal(selectLocale(i18nRealm, { acceptLanguage: 'it' }), 'de');
    assert.equal(selectLocale({ ...i18nRealm, defaultLocale: null }, { acceptLanguage: 'it' }), 'en');
  });

  test('a realm without internationalization speaks English, whatever is asked', () => {
    assert.equal(selectLocale({ ...i18nRealm, internationalizationEnabled: false }, { selected: 'de', acceptLanguage: 'de' }), 'en');
  });

  test('whatever a browser sends, the locale is one of the realm\'s', () => {
    fc.assert(
      fc.property(fc.record({ selected: fc.option(fc.string(), { nil: undefined }), uiLocales: fc.option(fc.string(), { nil: undefined }), cookie: fc.option(fc.string(), { nil: undefined }), acceptLanguage: fc.option(fc.string(), { nil: undefined }) }), (sources) => {
        assert.ok(['en', 'de', 'fr-CA', 'es'].includes(selectLocale(i18nRealm, sources)));
      }),
    );
  });

  test('a locale is named in its own language', () => {
    assert.equal(localeName('de'), 'Deutsch');
    assert.equal(localeName('fr'), 'Français');
  });
});

describe('the built-in messages', () => {
  const placeholders = (s: string): string[] => [...s.matchAll(/\{(\d)\}/g)].map((m) => m[1]!).sort();

  test('every language has every key, with the same arguments as English, and no empty text', () => {
    for (const [name, area] of Object.entries(AREAS)) {
      const en = area.en as Record<string, string>;
      for (const l of BUILT_IN_LOCALES) {
        const texts = l === 'en' ? en : (area.translations() as Record<string, Record<string, string>>)[l]!;
        assert.deepEqual(Object.keys(texts).sort(), Object.keys(en).sort(), `${name}/${l}`);
        for (const [k, v] of Object.entries(texts)) {
          assert.ok(v.trim().length > 0, `${name}/${l}/${k} is empty`);
          assert.deepEqual(placeholders(v), placeholders(en[k]!), `${name}/${l}/${k}: ${v}`);
          // Markup belongs in the views (th with SafeHtml arguments): a message is text.
          assert.doesNotMatch(v, /<[a-z/]/i, `${name}/${l}/${k}`);
        }
      }
    }
  });

  test('a key is in one area only', () => {
    const seen = new Map<string, string>();
    for (const [name, area] of Object.entries(AREAS)) {
      for (const k of Object.keys(area.en)) {
        assert.equal(seen.get(k), undefined, `${k} is in ${seen.get(k)} and ${name}`);
        seen.set(k, name);
      }
    }
    assert.equal(builtInTexts('en')!.size, seen.size);
    for (const l of BUILT_IN_LOCALES) assert.equal(builtInTexts(l)!.size, seen.size, l);
    assert.equal(builtInTexts('xx'), undefined);
  });
});

describe('the translator', () => {
  test("a realm's own texts come first, then the locale's built-in ones, its language's, English's", () => {
    const texts = new Map([
      ['de', new Map([['doLogIn', 'Los']])],
      ['de-CH', new Map([['password', 'Passwort (CH)']])],
    ]);
    const tr = new Translator('de-CH', texts);
    assert.equal(tr.t('doLogIn'), 'Los');
    assert.equal(tr.t('password'), 'Passwort (CH)');
    assert.equal(tr.t('username'), 'Benutzername');
    assert.equal(new Translator('sv', texts).t('username'), 'Username');
    assert.equal(new Translator('en', new Map([['en', new Map([['doLogIn', 'Log in']])]])).t('doLogIn'), 'Log in');
  });

  test("arguments fill {0}, {1}; '' is an apostrophe; HTML escapes the text and its arguments unless they are SafeHtml", () => {
    const texts = new Map([['en', new Map([['loginTitleApp', "Don''t <go> to {0} {1} {0}"]])]]);
    const tr = new Translator('en', texts);
    assert.equal(tr.t('loginTitleApp', 'A&B', 2), "Don't <go> to A&B 2 A&B");
    assert.equal(tr.h('loginTitleApp', '<x>', html`<b>y</b>`).value, "Don't &lt;go&gt; to &lt;x&gt; <b>y</b> &lt;x&gt;");
    assert.equal(tr.t('loginTitleApp'), "Don't <go> to {0} {1} {0}");
  });

  test('views speak the language of the translator they run with, and English outside of one', () => {
    const de = new Translator('de');
    const m = msg('loginTitleApp', 'App');
    assert.equal(withTranslator(de, () => `${t('doLogIn')}|${m}|${html`${m}`.value}|${th('doLogIn').value}`), 'Anmelden|Melden Sie sich an, um mit App fortzufahren|Melden Sie sich an, um mit App fortzufahren|Anmelden');
    assert.equal(`${m}`, 'Sign in to continue to App');
    assert.equal(withTranslator(de, () => withTranslator(ENGLISH, () => t('doLogIn')) + t('doLogIn')), 'Sign inAnmelden');
    assert.throws(() => withTranslator(de, () => {
      throw new Error('x');
    }));
    assert.equal(t('doLogIn'), 'Sign in');
  });
});

describe('English words that are translated by their exact text', () => {
  // The admin operations' refusals (src/http/interaction/problems.ts) and the built-in scopes' consent
  // texts (src/views/scope-text.ts) are known by their English: if those words change where they are
  // written, the page would silently show English. Each must be its message's English, and still be
  // written where it comes from.
  const sources = (dir: string): string =>
    fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');

  test("the admin operations' refusals", () => {
    const admin = sources('src/admin') + sources('src/oauth');
    for (const [english, key] of EXACT) {
      assert.equal(ENGLISH.t(key), english, key);
      // profile-actions.ts writes the name refusals as `Please specify ${what}.` and `Invalid ${what}.`.
      const written = [english, english.replace(/'/g, "\\'"), english.replace(/(first|last) name/, '${what}')];
      assert.ok(written.some((w) => admin.includes(w)), `${english} is no longer in src/admin or src/oauth`);
    }
  });

  test("the built-in scopes' consent texts", () => {
    const storage = sources('src/storage');
    for (const [english, key] of BUILT_IN_TEXTS) {
      assert.equal(ENGLISH.t(key), english, key);
      // Keycloak's (profileScopeConsentText, ...): the importer takes their English from the messages themselves.
      if (key.endsWith('ScopeConsentText')) continue;
      assert.ok(storage.includes(english.replace(/'/g, "\\'")) || storage.includes(english) || storage.includes(JSON.stringify(english)), `${english} is no longer written in src/storage`);
    }
  });
});
