/** The languages Realmgate's pages come in; a realm may add others through its localization texts. */
export const BUILT_IN_LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'pl'] as const;
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number];

/** Every built-in language but English, each with exactly English's keys (the compiler refuses a missing one). */
export type Translations<E extends Record<string, string>> = { [L in Exclude<BuiltInLocale, 'en'>]: { [K in keyof E]: string } };

/**
 * One area's messages (src/i18n/messages/*.ts): English, and the other built-in languages, made by
 * `translations` when first asked for. `{0}`, `{1}`, ... are the arguments.
 */
export interface Catalog<E extends Record<string, string>> {
  en: E;
  translations: () => Translations<E>;
}
