import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// The installed command (npm test builds dist/ first): Keycloak's internationalization settings by realm
// create/update/show, and the realm's own texts by realm localization list/get/set/delete.
for (const dialect of dialects()) {
  describe(`realmgate CLI: realm localization (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-localization-');
    const { ok, fails } = cliRunner(() => database.url);

    test('--help names the options and the commands', () => {
      for (const command of ['create', 'update']) {
        const flat = ok(['realm', command, '--help']).replace(/\s+/g, ' ');
        assert.match(flat, /--internationalization <on\|off> on: the pages may be shown in the user's language/);
        assert.match(flat, /--supported-locales <tags> comma-separated locales/);
        assert.match(flat, /--default-locale <tag>/);
      }
      const help = ok(['realm', 'localization', '--help']).replace(/\s+/g, ' ');
      for (const c of ['list <realm>', 'get <realm> <locale> \\[key\\]', 'set \\[options\\] <realm> <locale> \\[key\\] \\[value\\]', 'delete <realm> <locale> \\[key\\]']) assert.match(help, new RegExp(c));
      assert.match(ok(['realm', 'localization', 'set', '--help']).replace(/\s+/g, ' '), /--file <path> a JSON file holding one object of key: text/);
    });

    test('realm create/update/show: the settings; bad locales refused in one line', () => {
      ok(['realm', 'create', 'l10n', '--internationalization', 'on', '--supported-locales', 'de, fr,en,de', '--default-locale', 'de']);
      let shown = ok(['realm', 'show', 'l10n']);
      assert.match(shown, /^internationalization: on$/m);
      assert.match(shown, /^supported locales: +de, fr, en$/m);
      assert.match(shown, /^default locale: +de$/m);
      ok(['realm', 'update', 'l10n', '--internationalization', 'off', '--supported-locales', 'none', '--default-locale', 'none']);
      shown = ok(['realm', 'show', 'l10n']);
      assert.match(shown, /^internationalization: off$/m);
      assert.match(shown, /^supported locales: +none$/m);
      assert.match(shown, /^default locale: +none \(English\)$/m);
      // A default locale outside the supported ones is kept, as Keycloak keeps it.
      ok(['realm', 'update', 'l10n', '--supported-locales', 'de-CH,fr', '--default-locale', 'en']);
      assert.match(ok(['realm', 'show', 'l10n']), /^default locale: +en$/m);
      fails(['realm', 'update', 'l10n', '--supported-locales', 'de,de_DE'], /^realmgate: supportedLocales: "de_DE" is not a locale/m, { status: 1 });
      fails(['realm', 'update', 'l10n', '--default-locale', 'x'], /defaultLocale: "x" is not a locale/, { status: 1 });
      fails(['realm', 'update', 'l10n', '--internationalization', 'maybe'], /--internationalization takes on or off/, { status: 1 });
      fails(['realm', 'update', 'l10n', '--supported-locales', Array.from({ length: 101 }, (_, i) => `zz-${i}`).join(',')], /at most 100 locales/, { status: 1 });
      fails(['realm', 'create', 'l10n2', '--supported-locales', 'e'], /"e" is not a locale/, { status: 1 });
      assert.match(ok(['realm', 'show', 'l10n']), /^supported locales: +de-CH, fr$/m, 'nothing changed by a refused update');
    });

    test('realm localization: set, get, list, set --file, delete; limits refused in one line, nothing stored', () => {
      assert.equal(ok(['realm', 'localization', 'list', 'l10n']), '');
      assert.equal(ok(['realm', 'localization', 'get', 'l10n', 'de']), '{}\n');
      ok(['realm', 'localization', 'set', 'l10n', 'de', 'loginTitle', 'Anmelden bei {0}']);
      ok(['realm', 'localization', 'set', 'l10n', 'de', 'evil', 'a\u001b[2Jb\nc']);
      assert.equal(ok(['realm', 'localization', 'get', 'l10n', 'de', 'loginTitle']), 'Anmelden bei {0}\n');
      assert.equal(ok(['realm', 'localization', 'get', 'l10n', 'de', 'evil']), 'a\\x1b[2Jb\\nc\n', 'control characters shown escaped');
      const file = path.join(database.dir, 'fr.json');
      fs.writeFileSync(file, JSON.stringify({ loginTitle: 'Se connecter', doLogIn: 'Connexion' }));
      ok(['realm', 'localization', 'set', 'l10n', 'fr', '--file', file]);
      assert.equal(ok(['realm', 'localization', 'list', 'l10n']), 'de\nfr\n');
      assert.deepEqual(JSON.parse(ok(['realm', 'localization', 'get', 'l10n', 'fr'])), { doLogIn: 'Connexion', loginTitle: 'Se connecter' });

      fails(['realm', 'localization', 'get', 'l10n', 'de', 'nothing'], /^realmgate: Localization text not found$/m, { status: 1 });
      fails(['realm', 'localization', 'set', 'l10n', 'de_DE', 'k', 'v'], /"de_DE" is not a locale/, { status: 1 });
      fails(['realm', 'localization', 'set', 'l10n', 'de', 'k'], /give KEY VALUE, or --file/, { status: 1 });
      fails(['realm', 'localization', 'set', 'l10n', 'de', 'k'.repeat(256), 'v'], /a localization key must have 1 to 255 characters/, { status: 1 });
      fails(['realm', 'localization', 'set', 'l10n', 'de', 'k', 'x'.repeat(16 * 1024 + 1)], /at most 16384/, { status: 1 });
      fails(['realm', 'localization', 'set', 'nosuch', 'de', 'k', 'v'], /realm nosuch does not exist/, { status: 1 });
      const bad = path.join(database.dir, 'bad.json');
      fs.writeFileSync(bad, JSON.stringify({ fine: 'ok', notText: 3 }));
      fails(['realm', 'localization', 'set', 'l10n', 'it', '--file', bad], /the text of "notText" must be a string/, { status: 1 });
      fs.writeFileSync(bad, 'not json');
      fails(['realm', 'localization', 'set', 'l10n', 'it', '--file', bad], /is not JSON/, { status: 1 });
      fails(['realm', 'localization', 'set', 'l10n', 'it', '--file', path.join(database.dir, 'missing.json')], /cannot read/, { status: 1 });
      const many = path.join(database.dir, 'many.json');
      fs.writeFileSync(many, JSON.stringify(Object.fromEntries(Array.from({ length: 9_997 }, (_, i) => [`k${i}`, `t${i}`]))));
      fails(['realm', 'localization', 'set', 'l10n', 'it', '--file', many], /at most 10000 localization texts; this change would make 10001: nothing was stored/, { status: 1 });
      assert.equal(ok(['realm', 'localization', 'list', 'l10n']), 'de\nfr\n', 'nothing of a refused file');

      ok(['realm', 'localization', 'delete', 'l10n', 'de', 'evil']);
      fails(['realm', 'localization', 'delete', 'l10n', 'de', 'evil'], /Localization text not found/, { status: 1 });
      ok(['realm', 'localization', 'delete', 'l10n', 'fr']);
      fails(['realm', 'localization', 'delete', 'l10n', 'fr'], /No localization texts for locale fr found/, { status: 1 });
      assert.equal(ok(['realm', 'localization', 'list', 'l10n']), 'de\n');
      ok(['realm', 'delete', 'l10n', '--yes']);
      ok(['realm', 'create', 'l10n']);
      assert.equal(ok(['realm', 'localization', 'list', 'l10n']), '', 'the texts went with their realm');
    });
  });
}
