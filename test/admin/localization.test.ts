import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { ConfigCache } from '../../src/services.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// Keycloak's realm localization through keycloak-admin-client 26, unchanged: the realm's
// internationalizationEnabled, supportedLocales and defaultLocale, and its own texts (RealmLocalizationResource).
for (const dialect of dialects()) {
  describe(`admin API: realm localization (${dialect})`, () => {
    let ts: AdminTestServer;
    const url = (p: string): string => `${ts.baseUrl}/auth/admin/realms/${p}`;
    /** A raw request as the master admin (what the client has no call for, or sends differently). */
    const raw = async (method: string, p: string, body?: string, contentType = 'text/plain'): Promise<Response> =>
      fetch(url(p), { method, headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, ...(body !== undefined ? { 'content-type': contentType } : {}) }, ...(body !== undefined ? { body } : {}) });
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("the settings: Keycloak's names and defaults, changed by realms.update, sent back unchanged", async () => {
      const fresh = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(fresh?.internationalizationEnabled, false);
      assert.deepEqual(fresh?.supportedLocales, []);
      assert.equal(fresh?.defaultLocale, undefined);
      // Keycloak keeps a defaultLocale that is not among the supported ones (its fallback all the same).
      await ts.kc.realms.update({ realm: 'test' }, { internationalizationEnabled: true, supportedLocales: ['de', 'fr', 'de-CH', 'fr'], defaultLocale: 'en' });
      const changed = await ts.kc.realms.findOne({ realm: 'test' });
      assert.deepEqual([changed?.internationalizationEnabled, changed?.supportedLocales, changed?.defaultLocale], [true, ['de', 'fr', 'de-CH'], 'en'], 'repeats dropped');
      await ts.kc.realms.update({ realm: 'test' }, changed!);
      assert.deepEqual(await ts.kc.realms.findOne({ realm: 'test' }), changed);
      // Absent or null leaves them; "" removes the default locale.
      await ts.kc.realms.update({ realm: 'test' }, { displayName: 'Test' });
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.defaultLocale, 'en');
      await ts.kc.realms.update({ realm: 'test' }, { defaultLocale: '' });
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.defaultLocale, undefined);
      assert.equal((await ts.store.realms.get('test'))?.defaultLocale, null);
    });

    test('bad locales and lists: 400 in Keycloak\'s error form, nothing changed', async () => {
      const before = await ts.kc.realms.findOne({ realm: 'test' });
      for (const [body, message] of [
        [{ supportedLocales: ['de', 'de_DE'] }, /supportedLocales: "de_DE" is not a locale/],
        [{ supportedLocales: ['x'] }, /"x" is not a locale/],
        [{ supportedLocales: ['en-'] }, /is not a locale/],
        [{ supportedLocales: ['toolonglang'] }, /is not a locale/],
        [{ supportedLocales: ['de-CH-1901-abc-xyz'] }, /is not a locale/],
        [{ supportedLocales: 'de,fr' }, /supportedLocales must be a list of strings/],
        [{ supportedLocales: [1] }, /supportedLocales must be a list of strings/],
        [{ defaultLocale: 'de DE' }, /defaultLocale: "de DE" is not a locale/],
        [{ defaultLocale: 7 }, /defaultLocale must be a string/],
        [{ internationalizationEnabled: 'yes' }, /internationalizationEnabled must be true or false/],
        [{ supportedLocales: Array.from({ length: 101 }, (_, i) => `l${String.fromCharCode(97 + (i % 26))}-${i}`) }, /at most 100 locales/],
      ] as const) {
        const e = await errorOf(ts.kc.realms.update({ realm: 'test' }, body as never));
        assert.equal(e.status, 400, JSON.stringify(body));
        assert.equal(typeof e.body.error, 'string');
        assert.match(String(e.body.errorMessage), message);
      }
      assert.deepEqual(await ts.kc.realms.findOne({ realm: 'test' }), before);
      // 100 distinct locales are fine.
      await ts.kc.realms.update({ realm: 'test' }, { supportedLocales: Array.from({ length: 100 }, (_, i) => `zz-${i}`) });
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.supportedLocales?.length, 100);
      await ts.kc.realms.update({ realm: 'test' }, { supportedLocales: ['de', 'fr'] });
    });

    test('every localization call of keycloak-admin-client; the texts in the realm export; the cache sees a change after clear()', async () => {
      assert.deepEqual(await ts.kc.realms.getRealmSpecificLocales({ realm: 'test' }), []);
      assert.deepEqual(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' }), {}, 'no texts: {} (Keycloak)');
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'loginTitle' }, 'Anmelden bei {0}');
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'greeting' }, 'Grüß Gott, <b>"Welt"</b> & 😀');
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'fr', key: 'loginTitle' }, 'Se connecter');
      assert.deepEqual(await ts.kc.realms.getRealmSpecificLocales({ realm: 'test' }), ['de', 'fr']);
      assert.deepEqual(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' }), { greeting: 'Grüß Gott, <b>"Welt"</b> & 😀', loginTitle: 'Anmelden bei {0}' });
      // The client's paging parameters are ignored (Keycloak has none).
      assert.deepEqual(Object.keys(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de', first: 0, max: 1 })), ['greeting', 'loginTitle']);
      // Replaced, not added.
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'loginTitle' }, 'Anmeldung');
      // One text, text/plain.
      let r = await raw('GET', 'test/localization/de/loginTitle');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await r.text(), 'Anmeldung');
      r = await raw('GET', 'test/localization/de/nothing');
      assert.equal(r.status, 404);
      assert.equal(((await r.json()) as { errorMessage: string }).errorMessage, 'Localization text not found');
      // POST a JSON object: added or replaced, the others stay.
      r = await raw('POST', 'test/localization/fr', JSON.stringify({ loginTitle: 'Connexion', doLogIn: 'Se connecter' }), 'application/json');
      assert.equal(r.status, 204);
      assert.deepEqual(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'test', selectedLocale: 'fr' }), { doLogIn: 'Se connecter', loginTitle: 'Connexion' });
      // useRealmDefaultLocaleFallback: the default locale's texts fill the keys the locale lacks (Keycloak's deprecated parameter).
      await ts.kc.realms.update({ realm: 'test' }, { defaultLocale: 'fr' });
      r = await raw('GET', 'test/localization/de?useRealmDefaultLocaleFallback=true');
      assert.deepEqual(await r.json(), { doLogIn: 'Se connecter', greeting: 'Grüß Gott, <b>"Welt"</b> & 😀', loginTitle: 'Anmeldung' });
      // An empty text/plain body is an empty text, as Keycloak stores it.
      assert.equal((await raw('PUT', 'test/localization/de/empty', '')).status, 204);
      assert.equal(await (await raw('GET', 'test/localization/de/empty')).text(), '');

      // The hot path's cached read (the test server caches nothing: a cache of a minute here): one query
      // per cache window; a change shows after clear().
      const cache = new ConfigCache(ts.store, 60_000);
      const cached = await cache.localizationTexts('test');
      assert.equal(cached.get('de')?.get('loginTitle'), 'Anmeldung');
      await ts.store.localization.set('test', 'de', 'loginTitle', 'Changed elsewhere');
      assert.equal((await cache.localizationTexts('test')).get('de')?.get('loginTitle'), 'Anmeldung', 'cached');
      cache.clear();
      assert.equal((await cache.localizationTexts('test')).get('de')?.get('loginTitle'), 'Changed elsewhere');
      ts.services.cache.clear();
      assert.equal((await ts.services.cache.localizationTexts('test')).get('de')?.get('loginTitle'), 'Changed elsewhere');
      const none1 = await cache.localizationTexts('master');
      assert.equal(none1.size, 0);
      assert.equal(await cache.localizationTexts('master'), none1, 'a realm without texts shares one empty value');
      assert.equal(await cache.localizationTexts('doomed'), none1);

      // The realm export carries them, as Keycloak's.
      const exported = (await ts.kc.realms.export({ realm: 'test', exportClients: false, exportGroupsAndRoles: false })) as Record<string, unknown>;
      assert.deepEqual((exported.localizationTexts as Record<string, Record<string, string>>).fr, { doLogIn: 'Se connecter', loginTitle: 'Connexion' });
      assert.deepEqual([exported.internationalizationEnabled, exported.supportedLocales, exported.defaultLocale], [true, ['de', 'fr'], 'fr']);

      // Deleting: one key (404 when none), then a whole locale (the client's call without key: DELETE .../de/).
      await ts.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de', key: 'empty' });
      assert.equal(await statusOf(ts.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de', key: 'empty' })), 404);
      await ts.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' });
      assert.deepEqual(await ts.kc.realms.getRealmSpecificLocales({ realm: 'test' }), ['fr']);
      const gone = await errorOf(ts.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' }));
      assert.equal(gone.status, 404);
      assert.equal(gone.body.errorMessage, 'No localization texts for locale de found.');

      // Admin events: Realmgate records the changes under REALM with the sub-resource's path, keys but never texts.
      const events = await ts.store.adminEvents.list('test', {});
      const paths = events.filter((e) => e.resourcePath.startsWith('localization/')).map((e) => `${e.operation} ${e.resourcePath}`);
      assert.ok(paths.includes('UPDATE localization/de/loginTitle'), paths.join(', '));
      assert.ok(paths.includes('UPDATE localization/fr'), paths.join(', '));
      assert.ok(paths.includes('DELETE localization/de'), paths.join(', '));
      assert.ok(!events.some((e) => (e.representation ?? '').includes('Se connecter')), 'no text in the admin log');
    });

    test('limits: bad locales, keys and texts are 400, and past 10,000 texts per realm nothing is stored', async () => {
      const bad = async (p: Promise<unknown>, message: RegExp): Promise<void> => {
        const e = await errorOf(p);
        assert.equal(e.status, 400);
        assert.match(String(e.body.errorMessage), message);
      };
      await bad(ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de_DE', key: 'k' }, 'v'), /"de_DE" is not a locale/);
      await bad(ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'k' }, 'x'.repeat(16 * 1024 + 1)), /at most 16384/);
      await bad(ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'k' }, 'ü'.repeat(8 * 1024 + 1)), /16386 bytes/);
      await bad(ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'tab\there' }, 'v'), /control characters/);
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'k'.repeat(255) }, 'x'.repeat(16 * 1024));
      let r = await raw('POST', 'test/localization/de', JSON.stringify({ ['k'.repeat(256)]: 'v' }), 'application/json');
      assert.equal(r.status, 400);
      r = await raw('POST', 'test/localization/de', JSON.stringify({ a: 'ok', b: 5 }), 'application/json');
      assert.equal(r.status, 400);
      assert.match(((await r.json()) as { errorMessage: string }).errorMessage, /the text of "b" must be a string/);
      r = await raw('POST', 'test/localization/de', JSON.stringify(['a']), 'application/json');
      assert.equal(r.status, 400);
      r = await raw('PUT', 'test/localization/de/k', '{"a":1}', 'application/json');
      assert.equal(r.status, 400);
      assert.equal(await ts.store.localization.text('test', 'de', 'a'), undefined, 'nothing of a refused batch');

      // Keys are data, never object machinery: "__proto__" and "constructor" are texts like any other.
      r = await raw('POST', 'test/localization/pt', '{"__proto__": "p", "constructor": "c"}', 'application/json');
      assert.equal(r.status, 204);
      assert.equal(await (await raw('GET', 'test/localization/pt')).text(), '{"__proto__":"p","constructor":"c"}');
      assert.equal(await (await raw('GET', 'test/localization/pt/__proto__')).text(), 'p');
      assert.equal((await ts.store.localization.all('test')).get('pt')?.get('__proto__'), 'p');
      await ts.store.localization.delete('test', 'pt');

      await ts.store.localization.delete('test', 'de');
      await ts.store.localization.delete('test', 'fr');
      const many = (n: number, prefix: string): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `text ${i}`]));
      r = await raw('POST', 'test/localization/en', JSON.stringify(many(9_999, 'key.')), 'application/json');
      assert.equal(r.status, 204);
      assert.equal(await ts.store.localization.count('test'), 9_999);
      // Two new ones (and one replaced) would make 10,001: refused whole.
      r = await raw('POST', 'test/localization/it', JSON.stringify({ 'key.0': 'uno', new1: 'a', new2: 'b' }), 'application/json');
      assert.equal(r.status, 400);
      assert.match(((await r.json()) as { errorMessage: string }).errorMessage, /at most 10000 localization texts; this change would make 10002: nothing was stored/);
      assert.equal(await ts.store.localization.count('test'), 9_999);
      assert.deepEqual(await ts.store.localization.texts('test', 'it'), {});
      // Replacing existing texts adds none: fine at the bound.
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'en', key: 'last' }, 'the 10,000th');
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'en', key: 'key.1' }, 'replaced');
      assert.equal(await statusOf(ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'en', key: 'one.more' }, 'no')), 400);
      assert.equal(await ts.store.localization.count('test'), 10_000);
      // A batch larger than the bound is refused before the database.
      r = await raw('POST', 'test/localization/es', JSON.stringify(many(10_001, 'k')), 'application/json');
      assert.equal(r.status, 400);
      await ts.store.localization.delete('test', 'en');
    });

    test("past 2,000,000 characters of a realm's texts together nothing more is stored (every server keeps them in memory)", async () => {
      // 122 texts of 16,384 characters: 1,998,848, under the bound; a 123rd is past it.
      const big = (from: number, n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`big.${from + i}`, 'x'.repeat(16 * 1024)]));
      let r = await raw('POST', 'test/localization/en', JSON.stringify(big(0, 61)), 'application/json');
      assert.equal(r.status, 204);
      r = await raw('POST', 'test/localization/de', JSON.stringify(big(0, 61)), 'application/json');
      assert.equal(r.status, 204);
      // One more text of 16,384 characters (and one of 2) would make 2,015,234: refused whole.
      r = await raw('POST', 'test/localization/fr', JSON.stringify({ ...big(0, 1), small: 'ok' }), 'application/json');
      assert.equal(r.status, 400);
      assert.match(((await r.json()) as { errorMessage: string }).errorMessage, /hold at most 2000000 characters together; this change would make 2015234: nothing was stored/);
      assert.deepEqual(await ts.store.localization.texts('test', 'fr'), {});
      // Shortening a text makes room for it.
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'en', key: 'big.0' }, 'short');
      r = await raw('POST', 'test/localization/fr', JSON.stringify({ ...big(0, 1), small: 'ok' }), 'application/json');
      assert.equal(r.status, 204);
      await ts.store.localization.delete('test', 'en');
      await ts.store.localization.delete('test', 'de');
      await ts.store.localization.delete('test', 'fr');
    });

    test('roles: any admin role of the realm reads (as Keycloak), manage-realm changes; other realms see nothing', async () => {
      await ts.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'loginTitle' }, 'Anmelden');
      const viewer = await serviceAccountAdmin(ts, 'test', 'l10n-viewer', ['view-realm']);
      assert.deepEqual(await viewer.kc.realms.getRealmSpecificLocales({ realm: 'test' }), ['de']);
      assert.deepEqual(await viewer.kc.realms.getRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' }), { loginTitle: 'Anmelden' });
      assert.equal(await statusOf(viewer.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'x' }, 'y')), 403);
      assert.equal(await statusOf(viewer.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de', key: 'loginTitle' })), 403);
      assert.equal(await statusOf(viewer.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de' })), 403);
      const token = await viewer.kc.getAccessToken();
      const post = await fetch(url('test/localization/de'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"x":"y"}' });
      assert.equal(post.status, 403);
      // Keycloak's requireAnyAdminRole: another admin role of the realm reads them too.
      const userAdmin = await serviceAccountAdmin(ts, 'test', 'l10n-users', ['view-users']);
      assert.deepEqual(await userAdmin.kc.realms.getRealmSpecificLocales({ realm: 'test' }), ['de']);
      assert.equal(await statusOf(userAdmin.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'x' }, 'y')), 403);
      const manager = await serviceAccountAdmin(ts, 'test', 'l10n-manager', ['manage-realm']);
      await manager.kc.realms.addLocalization({ realm: 'test', selectedLocale: 'de', key: 'x' }, 'y');
      await manager.kc.realms.deleteRealmLocalizationTexts({ realm: 'test', selectedLocale: 'de', key: 'x' });
      assert.equal(await ts.store.localization.text('test', 'de', 'x'), undefined);
      // An admin of the test realm may not touch master's.
      assert.equal(await statusOf(manager.kc.realms.getRealmSpecificLocales({ realm: 'master' })), 403);
      assert.equal(await statusOf(manager.kc.realms.addLocalization({ realm: 'master', selectedLocale: 'de', key: 'x' }, 'y')), 403);
    });

    test('deleting a realm deletes its texts', async () => {
      await ts.kc.realms.create({ realm: 'doomed', enabled: true });
      await ts.kc.realms.addLocalization({ realm: 'doomed', selectedLocale: 'de', key: 'a' }, 'A');
      await ts.kc.realms.addLocalization({ realm: 'doomed', selectedLocale: 'fr', key: 'a' }, 'A');
      assert.equal(await ts.store.localization.count('doomed'), 2);
      await ts.kc.realms.del({ realm: 'doomed' });
      assert.equal(await ts.store.localization.count('doomed'), 0);
      // A realm made again with that name starts without them; one made from a representation with
      // Keycloak's localizationTexts (an import) has those.
      await ts.kc.realms.create({ realm: 'doomed', enabled: true });
      assert.deepEqual(await ts.kc.realms.getRealmSpecificLocales({ realm: 'doomed' }), []);
      await ts.kc.realms.create({ realm: 'reborn', enabled: true, internationalizationEnabled: true, supportedLocales: ['de'], localizationTexts: { de: { a: 'A' } } } as never);
      assert.deepEqual(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'reborn', selectedLocale: 'de' }), { a: 'A' });
      assert.deepEqual((await ts.kc.realms.findOne({ realm: 'reborn' }))?.supportedLocales, ['de']);
      assert.equal(await statusOf(ts.kc.realms.getRealmSpecificLocales({ realm: 'no-such-realm' })), 404);
    });
  });
}
