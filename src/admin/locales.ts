import type { RealmSettings } from '../storage/repos/realms.js';
import { ValidationError } from './validation.js';
import { LOCALE_TAG } from '../i18n/locales.js';

/**
 * A locale as every door takes one (supportedLocales, defaultLocale, the locale of localization texts): a
 * BCP 47-like tag, a language of 2 to 8 letters and up to three subtags (de, de-CH, zh-Hant-TW, sr-Latn-RS).
 * Kept as given (Keycloak keeps the tag as sent; its locale selector compares them case-insensitively).
 */
export const LOCALE_RE = LOCALE_TAG;

/** The most supportedLocales a realm lists. */
export const MAX_SUPPORTED_LOCALES = 100;

export function isLocaleTag(v: string): boolean {
  return LOCALE_RE.test(v);
}

/** `what` quotes at most 40 characters of a refused value (it comes from a request, a file or a command line). */
function shown(v: string): string {
  return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
}

export function checkLocaleTag(what: string, v: string): void {
  if (!isLocaleTag(v)) throw new ValidationError(`${what} ${shown(v)} is not a locale: use a language tag such as de, de-CH or zh-Hant-TW`);
}

/**
 * A realm's internationalization settings. A defaultLocale need not be one of supportedLocales: Keycloak
 * stores it as given (RepresentationToModel / DefaultExportImportManager set it without looking at the
 * list) and its locale selector falls back to it when none of the user's locales is supported, so
 * Realmgate does the same rather than refuse a realm Keycloak accepts.
 */
export function checkLocaleSettings(s: Pick<Partial<RealmSettings>, 'supportedLocales' | 'defaultLocale'>): void {
  if (s.supportedLocales !== undefined) {
    if (s.supportedLocales.length > MAX_SUPPORTED_LOCALES) throw new ValidationError(`a realm supports at most ${MAX_SUPPORTED_LOCALES} locales (supportedLocales has ${s.supportedLocales.length})`);
    for (const l of s.supportedLocales) checkLocaleTag('supportedLocales:', l);
  }
  if (s.defaultLocale != null) checkLocaleTag('defaultLocale:', s.defaultLocale);
}

/** A list of locales without repeats, in the order given (Keycloak keeps them as a set). */
export function uniqueLocales(list: readonly string[]): string[] {
  return [...new Set(list)];
}
