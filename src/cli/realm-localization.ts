import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import { deleteTexts, getText, getTexts, listTextLocales, MAX_TEXT_CHARS_PER_REALM, MAX_TEXTS_PER_REALM, MAX_VALUE_BYTES, setText, setTexts } from '../admin/operations/localization.js';

/** A JSON file of texts ({key: text}); the operation checks what is in it. */
async function textsFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not JSON: it must hold one object of key: text`);
  }
}

/** `realm localization ...`: the realm's own texts (Keycloak's realm localization), as the admin API's localization/ resource. */
export function registerRealmLocalization(realm: Command): void {
  const loc = realm.command('localization').description("the realm's own localization texts (Keycloak's realm localization): list, get, set, delete");

  loc
    .command('list <realm>')
    .description('list the locales that have texts, one a line')
    .action(async (realmId: string) => {
      const locales = await withStore((store) => listTextLocales(store, realmId), { access: 'read' });
      process.stdout.write(locales.map((l) => `${l}\n`).join(''));
    });

  loc
    .command('get <realm> <locale> [key]')
    .description("print a locale's texts as a JSON object, or one text (control characters shown escaped)")
    .action(async (realmId: string, locale: string, key: string | undefined) => {
      if (key === undefined) {
        const texts = await withStore((store) => getTexts(store, { realmId, locale }), { access: 'read' });
        process.stdout.write(`${terminalJson(texts, 2)}\n`);
        return;
      }
      const text = await withStore((store) => getText(store, { realmId, locale, key }), { access: 'read' });
      process.stdout.write(`${terminalSafe(text)}\n`);
    });

  loc
    .command('set <realm> <locale> [key] [value]')
    .description(`add or replace one text (KEY VALUE), or those of a JSON file of key: text (--file); the locale's other texts stay. Keys 1 to 255 characters, texts at most ${MAX_VALUE_BYTES} bytes, at most ${MAX_TEXTS_PER_REALM} texts and ${MAX_TEXT_CHARS_PER_REALM} characters per realm`)
    .option('--file <path>', 'a JSON file holding one object of key: text (all of them or none are stored)')
    .action(async (realmId: string, locale: string, key: string | undefined, value: string | undefined, o: { file?: string }) => {
      if (o.file !== undefined) {
        if (key !== undefined) throw new CliError('give either KEY VALUE or --file, not both');
        const texts = await textsFile(o.file);
        await withStore((store) => setTexts(store, { realmId, locale, texts: texts as Record<string, string> }));
        process.stdout.write(`set the texts of ${o.file} in locale ${locale} of realm ${realmId}\n`);
        return;
      }
      if (key === undefined || value === undefined) throw new CliError('give KEY VALUE, or --file with a JSON object of key: text');
      await withStore((store) => setText(store, { realmId, locale, key, value }));
      process.stdout.write(`set ${terminalSafe(key)} in locale ${locale} of realm ${realmId}\n`);
    });

  loc
    .command('delete <realm> <locale> [key]')
    .description("delete one text, or every text of the locale without KEY (an error when there is none)")
    .action(async (realmId: string, locale: string, key: string | undefined) => {
      await withStore((store) => deleteTexts(store, { realmId, locale, ...(key !== undefined ? { key } : {}) }));
      process.stdout.write(key !== undefined ? `deleted ${terminalSafe(key)} in locale ${terminalSafe(locale)} of realm ${realmId}\n` : `deleted the texts of locale ${terminalSafe(locale)} of realm ${realmId}\n`);
    });
}
