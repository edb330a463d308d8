import type { Store } from '../../storage/store.js';
import type { RealmSettings } from '../../storage/repos/realms.js';
import type { Realm } from '../../storage/types.js';
import { isLocaleTag, MAX_SUPPORTED_LOCALES, uniqueLocales } from '../locales.js';
import { checkTextKey, checkTextValue, MAX_TEXTS_PER_REALM } from '../operations/localization.js';
import { MAX_TEXT_CHARS_PER_REALM } from '../../storage/repos/localization.js';
import { ValidationError } from '../validation.js';
import type { RealmReportBuilder } from './import-report.js';

type Json = Record<string, unknown>;

/** A file's value as a report line names it: at most 40 characters, quoted. */
const shown = (v: string): string => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);

/**
 * Keycloak's supportedLocales and defaultLocale of a realm of the file (already read by
 * fromRealmRepresentation, types checked), made what every door accepts: a tag that is no locale is left
 * out and reported, as are locales past the 100th; the realm is imported all the same.
 */
export function importLocaleSettings(settings: Partial<RealmSettings>, report: RealmReportBuilder): void {
  if (settings.supportedLocales !== undefined) {
    const given = uniqueLocales(settings.supportedLocales);
    const bad = given.filter((l) => !isLocaleTag(l));
    const good = given.filter((l) => isLocaleTag(l));
    if (bad.length > 0) report.mapped('realm setting supportedLocales', `not locales, left out: ${bad.slice(0, 10).map(shown).join(', ')}${bad.length > 10 ? ', ...' : ''}`);
    if (good.length > MAX_SUPPORTED_LOCALES) report.mapped('realm setting supportedLocales', `${good.length} locales: the first ${MAX_SUPPORTED_LOCALES} kept (Realmgate's limit)`);
    settings.supportedLocales = good.slice(0, MAX_SUPPORTED_LOCALES);
  }
  if (settings.defaultLocale != null && !isLocaleTag(settings.defaultLocale)) {
    report.mapped('realm setting defaultLocale', `${shown(settings.defaultLocale)} is not a locale: left out (English)`);
    settings.defaultLocale = null;
  }
}

/** The settings as the realm has them now, in the report (a line rather than silence). */
export function reportLocaleSettings(realm: Realm, report: RealmReportBuilder): void {
  const list = realm.supportedLocales.length > 0 ? realm.supportedLocales.join(', ') : 'none listed';
  const fallback = realm.defaultLocale ?? 'English';
  report.mapped(
    'realm setting internationalizationEnabled',
    realm.internationalizationEnabled
      ? `true: the pages are shown in the user's language among the supported locales (${list}) where Realmgate has it, else in ${fallback} (defaultLocale)`
      : `false: the pages are shown in English (supported locales kept: ${list}; default locale: ${realm.defaultLocale ?? 'none'})`,
  );
}

/** The file's localizationTexts that can be stored, per locale; the others reported. */
export type FileTexts = Array<{ locale: string; texts: Record<string, string> }>;

/**
 * Keycloak's localizationTexts ({locale: {key: text}}) of a realm of the file: not an object of objects
 * fails the realm (as any realm field of the wrong type); a locale that is no locale, a key or a text
 * beyond the limits, a text that is not a string is left out and reported; past MAX_TEXTS_PER_REALM texts
 * or MAX_TEXT_CHARS_PER_REALM characters, the rest is left out (reported).
 */
export function readFileTexts(rep: Json, report: RealmReportBuilder): FileTexts {
  const raw = rep.localizationTexts;
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ValidationError('localizationTexts must be an object of locales');
  const out: FileTexts = [];
  let kept = 0;
  let chars = 0;
  let beyond = 0;
  for (const [locale, texts] of Object.entries(raw as Json)) {
    if (texts === null || typeof texts !== 'object' || Array.isArray(texts)) throw new ValidationError(`localizationTexts.${locale.slice(0, 40)} must be an object of key: text`);
    const entries = Object.entries(texts as Json);
    if (!isLocaleTag(locale)) {
      report.mapped(`localization texts ${shown(locale)}`, `not a locale: its ${entries.length} text(s) left out`);
      continue;
    }
    const ok: Record<string, string> = {};
    const refused: string[] = [];
    for (const [key, value] of entries) {
      try {
        if (typeof value !== 'string') throw new ValidationError('not a string');
        checkTextKey(key);
        checkTextValue(key, value);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        refused.push(`${shown(key)} (${err.message})`);
        continue;
      }
      if (kept >= MAX_TEXTS_PER_REALM || chars + value.length > MAX_TEXT_CHARS_PER_REALM) {
        beyond++;
        continue;
      }
      Object.defineProperty(ok, key, { value, enumerable: true, writable: true, configurable: true });
      kept++;
      chars += value.length;
    }
    if (refused.length > 0) report.mapped(`localization texts ${locale}`, `left out: ${refused.slice(0, 5).join('; ')}${refused.length > 5 ? `; and ${refused.length - 5} more` : ''}`);
    if (Object.keys(ok).length > 0) out.push({ locale, texts: ok });
  }
  if (beyond > 0) report.mapped('localization texts', `${kept + beyond} in the file: the first ${kept} kept (Realmgate's limits per realm: ${MAX_TEXTS_PER_REALM} texts, ${MAX_TEXT_CHARS_PER_REALM} characters), ${beyond} left out`);
  return out;
}

/** Stores the texts read (inside the import's transaction) and says what moved. */
export async function storeFileTexts(store: Store, realmId: string, texts: FileTexts, report: RealmReportBuilder): Promise<void> {
  if (texts.length === 0) return;
  let count = 0;
  for (const { locale, texts: t } of texts) {
    await store.localization.setMany(realmId, locale, t);
    count += Object.keys(t).length;
  }
  report.imported('localization texts', `${count} text(s) in ${texts.length} locale(s) (${texts.map((t) => t.locale).join(', ')}): the realm's own texts (admin API localization/, realmgate realm localization)`);
}
