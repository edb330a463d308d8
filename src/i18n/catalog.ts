// Realmgate's own messages, one module per area of pages (src/i18n/messages/), merged by language.
// A key is in exactly one area (test/unit/i18n.test.ts checks it, and that every language's text has
// the arguments the English one has). English is made at start-up; the other languages when a page
// first needs one (some 550 KB of heap for the seven, measured 2026-11-30, which a server whose realms
// all speak English never spends).
import common from './messages/common.js';
import login from './messages/login.js';
import consent from './messages/consent.js';
import actions from './messages/actions.js';
import account from './messages/account.js';
import device from './messages/device.js';
import logout from './messages/logout.js';
import app from './messages/app.js';
import mail from './messages/mail.js';
import { BUILT_IN_LOCALES } from './catalog-types.js';

/**
 * common: the layout and errors of any page; login: the login page and the sign-in flow's other pages;
 * consent: the consent and organization pages, and the scopes' consent texts; actions: second factors,
 * required actions, password reset, registration, invitations; account: the account pages; device:
 * the device flow's pages; logout: the logout pages; app: the code display page and form_post; mail: mails.
 */
export const AREAS = { common, login, consent, actions, account, device, logout, app, mail };

type Keys<A> = A extends { en: infer E } ? keyof E & string : never;
export type MessageKey = { [K in keyof typeof AREAS]: Keys<(typeof AREAS)[K]> }[keyof typeof AREAS];

const ENGLISH_TEXTS: ReadonlyMap<string, string> = new Map(Object.values(AREAS).flatMap((area) => Object.entries(area.en as Record<string, string>)));
let others: Map<string, ReadonlyMap<string, string>> | undefined;

/** key -> text of a built-in language (`tag` in lower case), or undefined when Realmgate has none. */
export function builtInTexts(tag: string): ReadonlyMap<string, string> | undefined {
  if (tag === 'en') return ENGLISH_TEXTS;
  if (!(BUILT_IN_LOCALES as readonly string[]).includes(tag)) return undefined;
  if (!others) {
    const made = Object.values(AREAS).map((area) => area.translations() as Record<string, Record<string, string>>);
    others = new Map(BUILT_IN_LOCALES.filter((l) => l !== 'en').map((l) => [l, new Map(made.flatMap((t) => Object.entries(t[l]!)))]));
  }
  return others.get(tag);
}
