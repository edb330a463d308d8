// Locale tags and how a page's locale is chosen (Keycloak's DefaultLocaleSelectorProvider, whose order
// and matching rules these follow; OIDC Core 3.1.2.1 for ui_locales).

/** A BCP 47 tag as Realmgate takes one: a language and up to three subtags (de, de-CH, zh-Hant-TW). */
export const LOCALE_TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,3}$/;
const TAG = LOCALE_TAG;

/** `tag` in its usual case (de-CH, zh-Hant-TW), or undefined when it is no tag. */
export function normalizeLocale(tag: string): string | undefined {
  if (tag.length > 35 || !TAG.test(tag)) return undefined;
  return tag
    .split('-')
    .map((part, i) => (i === 0 ? part.toLowerCase() : part.length === 2 ? part.toUpperCase() : part.length === 4 ? part[0]!.toUpperCase() + part.slice(1).toLowerCase() : part.toLowerCase()))
    .join('-');
}

function split(tag: string): { language: string; region: string } {
  const parts = tag.toLowerCase().split('-');
  // The region is the 2-letter (or 3-digit) subtag; a script (4 letters) is not one.
  const region = parts.slice(1).find((p) => p.length === 2 || /^\d{3}$/.test(p)) ?? '';
  return { language: parts[0]!, region };
}

/**
 * The supported locale that best matches `wanted`, as Keycloak matches them: the same language, and
 * the same region or a region on one side only (de matches de-CH and de-CH matches de; de-AT does not
 * match de-CH); the same region wins over none.
 */
export function matchLocale(supported: readonly string[], wanted: string): string | undefined {
  const w = split(wanted);
  let best: string | undefined;
  let bestExact = false;
  for (const s of supported) {
    const c = split(s);
    if (c.language !== w.language) continue;
    const exact = c.region === w.region;
    if (!exact && c.region !== '' && w.region !== '') continue;
    if (best === undefined || (exact && !bestExact)) {
      best = s;
      bestExact = exact;
    }
  }
  return best;
}

/**
 * An Accept-Language header's tags, most preferred first (RFC 9110 12.5.4); at most 20 of them, and
 * none with q=0. A header longer than 1 KB is read no further than that.
 */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (!header) return [];
  const out: Array<{ tag: string; q: number; i: number }> = [];
  const items = header.slice(0, 1024).split(',');
  for (let i = 0; i < items.length && out.length < 20; i++) {
    const [range, ...params] = items[i]!.trim().split(';');
    const tag = range?.trim() ?? '';
    if (tag === '' || tag === '*' || !TAG.test(tag)) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (q > 0) out.push({ tag, q, i });
  }
  return out.sort((a, b) => b.q - a.q || a.i - b.i).map((e) => e.tag);
}

/** What a realm says about languages (its Keycloak settings). */
export interface RealmLocales {
  internationalizationEnabled: boolean;
  supportedLocales: readonly string[];
  defaultLocale: string | null;
}

/** Where a request's locale may come from, in Keycloak's order of precedence. */
export interface LocaleSources {
  /** Chosen by the user in this sign-in, or on this very request (kc_locale). */
  selected?: string | undefined;
  /** The user's own `locale` attribute, once the user is known. */
  user?: string | undefined;
  /** The client's ui_locales (OIDC Core 3.1.2.1): a space-separated list, most preferred first. */
  uiLocales?: string | undefined;
  /** The KEYCLOAK_LOCALE cookie: the browser's last choice. */
  cookie?: string | undefined;
  acceptLanguage?: string | undefined;
}

/** The realm's locales a user may pick from: the supported ones, and the default one. */
export function realmLocales(realm: RealmLocales): string[] {
  const list = [...realm.supportedLocales];
  if (realm.defaultLocale && !list.includes(realm.defaultLocale)) list.push(realm.defaultLocale);
  return list.length > 0 ? list : ['en'];
}

/**
 * The locale of a page. A realm without internationalization speaks English (as Keycloak: its texts
 * for `en` still apply); otherwise the first source that matches one of its locales, else its default
 * locale, else English.
 */
export function selectLocale(realm: RealmLocales, sources: LocaleSources): string {
  if (!realm.internationalizationEnabled) return 'en';
  const supported = realmLocales(realm);
  const candidates: string[] = [];
  if (sources.selected) candidates.push(sources.selected);
  if (sources.user) candidates.push(sources.user);
  if (sources.uiLocales) candidates.push(...sources.uiLocales.split(' ').filter((t) => t !== '').slice(0, 20));
  if (sources.cookie) candidates.push(sources.cookie);
  candidates.push(...parseAcceptLanguage(sources.acceptLanguage));
  for (const c of candidates) {
    if (!TAG.test(c)) continue;
    const m = matchLocale(supported, c);
    if (m) return m;
  }
  return realm.defaultLocale ?? 'en';
}

const names = new Map<string, string>();
/** A locale's name in its own language ("Deutsch", "Français"), for the language menu. */
export function localeName(tag: string): string {
  let name = names.get(tag);
  if (name === undefined) {
    try {
      name = new Intl.DisplayNames([tag], { type: 'language' }).of(tag) ?? tag;
    } catch {
      name = tag;
    }
    name = name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
    if (names.size < 1000) names.set(tag, name);
  }
  return name;
}
