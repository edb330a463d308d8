// Realmgate's own messages, one module per area of pages (src/i18n/messages/), merged by language.
// A key is in exactly one area (test/unit/i18n.test.ts checks it, and that every language's text has
// the arguments the English one has).
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

/** locale -> key -> text, for the built-in languages. */
export const BUILT_IN: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(
  BUILT_IN_LOCALES.map((l) => [l, new Map(Object.values(AREAS).flatMap((area) => Object.entries(area[l] as Record<string, string>)))]),
);
