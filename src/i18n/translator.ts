// The words of a page in the reader's language. Views are synchronous functions that build a string, so
// the translator a view uses is set around its call (withTranslator) rather than passed down through
// every view's arguments: no request can run in between, and a view called outside of one speaks
// English.
import { escapeHtml, SafeHtml } from '../views/html.js';
import { builtInTexts, type MessageKey } from './catalog.js';
import { localeName } from './locales.js';

export type Texts = ReadonlyMap<string, ReadonlyMap<string, string>>;
const NO_TEXTS: Texts = new Map();

/** The language menu of a page: the realm's locales, each a link that shows the page in it. */
export interface LocaleMenu {
  locales: ReadonlyArray<{ tag: string; name: string; href: string }>;
}

/** `{0}`, `{1}`, ... replaced by the arguments; `''` is one apostrophe (Java's MessageFormat, as Keycloak's texts are written). */
function fill(text: string, args: ReadonlyArray<string | number>): string {
  return text.replace(/\{(\d)\}|''/g, (m, i: string | undefined) => (i === undefined ? "'" : String(args[Number(i)] ?? m)));
}

export class Translator {
  /** For each locale of the chain (the locale, its language, English): the realm's texts and the built-in ones. */
  private readonly layers: ReadonlyArray<ReadonlyMap<string, string>>;

  /**
   * `realmTexts`: the realm's own texts (locale -> key -> text: its localization), which come before
   * the built-in ones of each locale. A locale falls back to its language (de-CH to de), then English.
   * Tags are compared without regard to case, as Keycloak's are (a realm may have stored "DE").
   */
  constructor(
    readonly locale: string,
    realmTexts: Texts = NO_TEXTS,
    readonly menu?: LocaleMenu,
  ) {
    const lower = locale.toLowerCase();
    const chain = [...new Set([lower, lower.split('-')[0]!, 'en'])];
    const own = (l: string): ReadonlyMap<string, string> | undefined => {
      for (const [tag, texts] of realmTexts) if (tag.toLowerCase() === l) return texts;
      return undefined;
    };
    this.layers = chain.flatMap((l) => [own(l), builtInTexts(l)]).filter((m): m is ReadonlyMap<string, string> => m !== undefined);
  }

  /** The text of `key`, arguments not filled in. */
  raw(key: MessageKey | string): string {
    for (const layer of this.layers) {
      const text = layer.get(key);
      if (text !== undefined) return text;
    }
    return key;
  }

  /** Plain text. */
  t(key: MessageKey, ...args: ReadonlyArray<string | number>): string {
    return fill(this.raw(key), args);
  }

  /**
   * HTML: the text escaped, its arguments escaped unless they are SafeHtml (a name in <strong>, a link).
   * The text's own apostrophes stay as they are: they need no escape between tags or in the pages'
   * double-quoted attributes, and the English pages read as they did before they were translated.
   */
  h(key: MessageKey, ...args: ReadonlyArray<string | number | SafeHtml>): SafeHtml {
    const text = this.raw(key);
    let out = '';
    let last = 0;
    const words = (part: string): string => escapeHtml(part).replace(/&#39;/g, "'");
    for (const m of text.matchAll(/\{(\d)\}|''/g)) {
      out += words(text.slice(last, m.index));
      if (m[1] === undefined) out += "'";
      else {
        const a = args[Number(m[1])];
        out += a === undefined ? escapeHtml(m[0]) : a instanceof SafeHtml ? a.value : escapeHtml(String(a));
      }
      last = m.index! + m[0].length;
    }
    return new SafeHtml(out + words(text.slice(last)));
  }
}

export const ENGLISH = new Translator('en');

let current: Translator = ENGLISH;

/** Runs `view` (synchronous) with `tr` as the translator of t(), th() and msg(). */
export function withTranslator<T>(tr: Translator, view: () => T): T {
  const before = current;
  current = tr;
  try {
    return view();
  } finally {
    current = before;
  }
}

/** The translator of the view being rendered (English outside of one). */
export function currentTranslator(): Translator {
  return current;
}

/** Plain text in the current page's language. */
export function t(key: MessageKey, ...args: ReadonlyArray<string | number>): string {
  return current.t(key, ...args);
}

/** HTML in the current page's language (see Translator.h). */
export function th(key: MessageKey, ...args: ReadonlyArray<string | number | SafeHtml>): SafeHtml {
  return current.h(key, ...args);
}

/**
 * A message to be put in the reader's language when it is rendered: what a route or the protocol core
 * hands a view (an error, a notice) before the page's translator is at work. Interpolated into html``,
 * or turned into a string, it is the text of the view being rendered.
 */
export class Msg {
  constructor(
    readonly key: MessageKey,
    readonly args: ReadonlyArray<string | number> = [],
  ) {}
  toString(): string {
    return current.t(this.key, ...this.args);
  }
}

export function msg(key: MessageKey, ...args: ReadonlyArray<string | number>): Msg {
  return new Msg(key, args);
}

/** Text a view shows: already words, or a message to translate. */
export type Text = string | Msg;

/** A language menu for `locales` whose links are `href(tag)`. */
export function localeMenu(locales: readonly string[], href: (tag: string) => string): LocaleMenu {
  return { locales: locales.map((tag) => ({ tag, name: localeName(tag), href: href(tag) })) };
}
