/** The languages Realmgate's pages come in; a realm may add others through its localization texts. */
export const BUILT_IN_LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type BuiltInLocale = (typeof BUILT_IN_LOCALES)[number];

/**
 * One area's messages (src/i18n/messages/*.ts): English, and every other built-in language with exactly
 * the same keys (the compiler refuses a missing one). `{0}`, `{1}`, ... are the arguments.
 */
export type Catalog<E extends Record<string, string>> = { en: E } & { [L in Exclude<BuiltInLocale, 'en'>]: { [K in keyof E]: string } };
