// The language of a page: the realm's settings, what the user chose (kc_locale, the KEYCLOAK_LOCALE
// cookie), the user's own locale, the client's ui_locales and the browser's Accept-Language, in
// Keycloak's order (src/i18n/locales.ts selectLocale). The translator is kept on the request, and
// sendPage renders the page's view with it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import type { Interaction, Realm } from '../storage/types.js';
import { matchLocale, normalizeLocale, realmLocales, selectLocale } from '../i18n/locales.js';
import { localeMenu, Translator } from '../i18n/translator.js';
import { readRealmCookie, setRealmCookie } from './cookies.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The translator of this request's pages (useTranslator); English when none was chosen. */
    translator?: Translator;
  }
}

/** Keycloak's cookie for the browser's choice of language (a session cookie, scoped to the realm). */
export const LOCALE_COOKIE = 'KEYCLOAK_LOCALE';

/** Keycloak's query parameter for choosing a language, on any of its pages (the language menu's links). */
export const LOCALE_PARAM = 'kc_locale';

function queryParam(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
}

/** `url` (a path with its query) with kc_locale set to `tag`. */
export function withLocaleParam(url: string, tag: string): string {
  const u = new URL(url, 'http://x');
  u.searchParams.set(LOCALE_PARAM, tag);
  return `${u.pathname}${u.search}`;
}

/**
 * Chooses the language of this request's pages and keeps it on the request. `ia`: the sign-in in
 * progress (its ui_locales, and the language chosen during it, which a kc_locale here changes).
 * `userLocale`: the signed-in user's `locale` attribute. `here`: the address that shows this page again
 * (the language menu's links); a GET request's own address when not given. No menu without one.
 */
export async function useTranslator(services: Services, req: FastifyRequest, reply: FastifyReply, realm: Realm, opts: { ia?: Interaction; userLocale?: string | undefined; here?: string } = {}): Promise<Translator> {
  const texts = await services.cache.localizationTexts(realm.id);
  if (!realm.internationalizationEnabled) {
    req.translator = new Translator('en', texts);
    return req.translator;
  }
  const locales = realmLocales(realm);
  const asked = queryParam(req, LOCALE_PARAM);
  const chosen = asked !== undefined ? normalizeLocale(asked) : undefined;
  const selected = chosen !== undefined ? matchLocale(locales, chosen) : undefined;
  if (selected !== undefined) {
    setRealmCookie(reply, services.config, realm.id, LOCALE_COOKIE, selected);
    if (opts.ia && opts.ia.params.locale !== selected) {
      const params = { ...opts.ia.params, locale: selected };
      await services.store.interactions.update(opts.ia.id, { params });
      opts.ia.params = params;
    }
  }
  const locale = selectLocale(realm, {
    selected: selected ?? opts.ia?.params.locale,
    user: opts.userLocale,
    uiLocales: opts.ia?.params.uiLocales,
    cookie: readRealmCookie(req, services.config, realm.id, LOCALE_COOKIE),
    acceptLanguage: req.headers['accept-language'],
  });
  const here = opts.here ?? (req.method === 'GET' ? req.url : undefined);
  const menu = here !== undefined && locales.length > 1 ? localeMenu(locales, (tag) => withLocaleParam(here, tag)) : undefined;
  req.translator = new Translator(locale, texts, menu);
  return req.translator;
}
