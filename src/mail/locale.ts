// The language of a mail: the recipient's own (their locale attribute) when the realm has
// internationalization and supports it, else the realm's default locale, else English, as Keycloak's
// FreeMarkerEmailTemplateProvider chooses it (through the same selector as the pages:
// src/i18n/locales.ts selectLocale). The realm's own texts apply, as on its pages.
import type { Services } from '../services.js';
import type { Realm, User } from '../storage/types.js';
import { selectLocale } from '../i18n/locales.js';
import { Translator, withTranslator } from '../i18n/translator.js';

/**
 * The translator of mails to `user` (none yet, as for an invitation to register: the realm's default
 * language). `pageLocale`: the language of the page that asked for the mail ("Forgot password?", a
 * registration), which comes after the user's own, as the browser's languages do in Keycloak's
 * selector: a user without a locale who asked on a German page gets a German mail.
 */
export async function mailTranslator(services: Pick<Services, 'cache'>, realm: Realm, user?: Pick<User, 'attributes'>, pageLocale?: string): Promise<Translator> {
  const texts = await services.cache.localizationTexts(realm.id);
  return new Translator(selectLocale(realm, { user: user?.attributes.locale?.[0], uiLocales: pageLocale }), texts);
}

/** `mail` (a view of src/views/mail.ts) rendered in the language of mails to `user` (see mailTranslator). */
export async function renderMail<T>(services: Pick<Services, 'cache'>, realm: Realm, user: Pick<User, 'attributes'> | undefined, mail: () => T, pageLocale?: string): Promise<T> {
  return withTranslator(await mailTranslator(services, realm, user, pageLocale), mail);
}
