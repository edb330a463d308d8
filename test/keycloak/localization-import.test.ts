import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const actor = { ...cliActor(), via: 'import' as const };

const lineOf = (r: RealmReport, element: string): { outcome: string; reason?: string } => {
  const l = r.lines.find((x) => x.element === element);
  assert.ok(l, `no line for ${element}: ${JSON.stringify(r.lines.map((x) => x.element))}`);
  return l;
};

// Keycloak's internationalizationEnabled, supportedLocales, defaultLocale and localizationTexts move with a realm, and back out.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: realm localization (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('the fixture (Keycloak 26.6: internationalization off, localizationTexts {}): the defaults, a mapped line, no texts', async () => {
      const report = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      for (const r of report.realms.filter((x) => x.realm !== 'master')) {
        assert.equal(r.status, 'imported', JSON.stringify(r));
        const realm = (await ts.store.realms.get(r.realm))!;
        assert.deepEqual([realm.internationalizationEnabled, realm.supportedLocales, realm.defaultLocale], [false, [], null]);
        const line = lineOf(r, 'realm setting internationalizationEnabled');
        assert.equal(line.outcome, 'mapped');
        assert.match(line.reason ?? '', /^false: the pages are shown in English/);
        assert.ok(!r.lines.some((l) => l.element === 'localization texts'), 'no texts, no line');
        assert.deepEqual(await ts.store.localization.locales(r.realm), []);
      }
    });

    test('a realm with locales and texts keeps them, exported as read; what cannot move is reported, the rest imported', async () => {
      const rep = {
        realm: 'intl',
        enabled: true,
        internationalizationEnabled: true,
        supportedLocales: ['de', 'fr', 'de_DE', 'de'],
        defaultLocale: 'fr',
        localizationTexts: {
          de: { loginTitle: 'Anmelden bei {0}', greeting: 'Grüß Gott 😀', ['k'.repeat(256)]: 'too long a key', bad: 5 },
          fr: { loginTitle: 'Se connecter' },
          'not a locale': { a: 'b' },
        },
      };
      const report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const realm = (await ts.store.realms.get('intl'))!;
      assert.deepEqual([realm.internationalizationEnabled, realm.supportedLocales, realm.defaultLocale], [true, ['de', 'fr'], 'fr']);
      assert.match(lineOf(r, 'realm setting internationalizationEnabled').reason ?? '', /^true: the pages are shown in the user's language among the supported locales \(de, fr\)/);
      assert.match(lineOf(r, 'realm setting supportedLocales').reason ?? '', /not locales, left out: "de_DE"/);
      assert.match(lineOf(r, 'localization texts "not a locale"').reason ?? '', /not a locale: its 1 text\(s\) left out/);
      const de = lineOf(r, 'localization texts de');
      assert.equal(de.outcome, 'mapped');
      assert.match(de.reason ?? '', /left out: "k{40}\.\.\." \(a localization key must have 1 to 255 characters/);
      assert.match(de.reason ?? '', /"bad" \(not a string\)/);
      const texts = lineOf(r, 'localization texts');
      assert.equal(texts.outcome, 'imported');
      assert.match(texts.reason ?? '', /^3 text\(s\) in 2 locale\(s\) \(de, fr\)/);
      assert.deepEqual(await ts.store.localization.texts('intl', 'de'), { greeting: 'Grüß Gott 😀', loginTitle: 'Anmelden bei {0}' });
      assert.deepEqual(await ts.store.localization.texts('intl', 'fr'), { loginTitle: 'Se connecter' });

      const exported = await exportRealm(ts.store, 'intl', { withSecrets: false });
      assert.deepEqual([exported.internationalizationEnabled, exported.supportedLocales, exported.defaultLocale], [true, ['de', 'fr'], 'fr']);
      assert.deepEqual(exported.localizationTexts, { de: { greeting: 'Grüß Gott 😀', loginTitle: 'Anmelden bei {0}' }, fr: { loginTitle: 'Se connecter' } });
      // The export imports again, the same (overwriting the realm).
      const again = await importKeycloakRealms(ts.store, [exported], { ifExists: 'overwrite' }, actor);
      assert.equal(again.realms[0]!.status, 'overwritten', JSON.stringify(again.realms[0]));
      assert.deepEqual((await ts.store.localization.all('intl')).get('de')?.get('greeting'), 'Grüß Gott 😀');
      assert.equal(await ts.store.localization.count('intl'), 3, 'the realm replaced: its texts replaced, not added');
    });

    test('a bad default locale is left out (reported); localizationTexts of the wrong type fail the realm, nothing stored; over 10,000 texts or 2,000,000 characters the rest is left out', async () => {
      let report = await importKeycloakRealms(ts.store, [{ realm: 'bad-default', enabled: true, defaultLocale: 'xx yy' }], { ifExists: 'fail' }, actor);
      let r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      assert.match(lineOf(r, 'realm setting defaultLocale').reason ?? '', /"xx yy" is not a locale: left out/);
      assert.equal((await ts.store.realms.get('bad-default'))?.defaultLocale, null);

      report = await importKeycloakRealms(ts.store, [{ realm: 'bad-texts', enabled: true, localizationTexts: { de: 'Hallo' } }], { ifExists: 'fail' }, actor);
      r = report.realms[0]!;
      assert.equal(r.status, 'failed');
      assert.match(r.reason ?? '', /localizationTexts.de must be an object of key: text/);
      assert.equal(await ts.store.realms.get('bad-texts'), undefined);
      report = await importKeycloakRealms(ts.store, [{ realm: 'bad-list', enabled: true, supportedLocales: 'de' }], { ifExists: 'fail' }, actor);
      assert.equal(report.realms[0]!.status, 'failed');
      assert.match(report.realms[0]!.reason ?? '', /supportedLocales must be a list of strings/);

      const many = (n: number, p: string): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${p}${i}`, `t${i}`]));
      report = await importKeycloakRealms(ts.store, [{ realm: 'wordy', enabled: true, localizationTexts: { de: many(6_000, 'a'), fr: many(4_005, 'b') } }], { ifExists: 'fail' }, actor);
      r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r.reason));
      assert.equal(await ts.store.localization.count('wordy'), 10_000);
      const beyond = r.lines.find((l) => l.element === 'localization texts' && l.outcome === 'mapped');
      assert.match(beyond?.reason ?? '', /10005 in the file: the first 10000 kept \(Realmgate's limits per realm: 10000 texts, 2000000 characters\), 5 left out/);

      // Past 2,000,000 characters together, the rest is left out too (reported), the realm imported.
      const long = (n: number, p: string): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${p}${i}`, 'x'.repeat(16 * 1024)]));
      report = await importKeycloakRealms(ts.store, [{ realm: 'long', enabled: true, localizationTexts: { de: long(100, 'a'), fr: long(30, 'b') } }], { ifExists: 'fail' }, actor);
      r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r.reason));
      assert.equal(await ts.store.localization.count('long'), 122);
      const cut = r.lines.find((l) => l.element === 'localization texts' && l.outcome === 'mapped');
      assert.match(cut?.reason ?? '', /130 in the file: the first 122 kept \(Realmgate's limits per realm: 10000 texts, 2000000 characters\), 8 left out/);
    });
  });
}
