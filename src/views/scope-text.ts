// The words of a scope on the consent page. A scope's consentText is the realm's own words, shown as
// written, except Keycloak's `${key}` form (its consent.screen.text convention, e.g.
// `${profileScopeConsentText}`), which names a message: the realm's localization text for the page's
// language, else the built-in one. The built-in scopes' English texts (src/storage/repos/realms.ts
// DEFAULT_SCOPES, and Keycloak's that its importer stores for `${key}` texts) are stored as English words;
// an exact match of one of them is shown in the page's language too.
import { currentTranslator, t } from '../i18n/translator.js';
import type { MessageKey } from '../i18n/catalog.js';

const KEYCLOAK_FORM = /^\$\{([A-Za-z0-9_.-]{1,100})\}$/;

/** The exact English texts of the built-in scopes, and the message each one is. */
export const BUILT_IN_TEXTS: ReadonlyMap<string, MessageKey> = new Map<string, MessageKey>([
  ['Confirm who you are (your account identifier)', 'defaultScopeOpenid'],
  ['See your name and username', 'defaultScopeProfile'],
  ['See your email address', 'defaultScopeEmail'],
  ["Read and change your organization's core business data", 'defaultScopeCoreData'],
  ["Export data from your organization's account", 'defaultScopeExports'],
  ['Keep this access when you are not signed in, until you revoke it', 'defaultScopeOfflineAccess'],
  ['User profile', 'profileScopeConsentText'],
  ['Email address', 'emailScopeConsentText'],
  ['Address', 'addressScopeConsentText'],
  ['Phone number', 'phoneScopeConsentText'],
  ['Offline Access', 'offlineAccessScopeConsentText'],
  ['User roles', 'rolesScopeConsentText'],
  ['Organization', 'organizationScopeConsentText'],
]);

/** A scope's consent text in the current page's language (plain text, escaped where it is interpolated). */
export function scopeConsentText(consentText: string): string {
  const key = KEYCLOAK_FORM.exec(consentText)?.[1];
  // Keycloak shows the key itself when no message has it; so does Translator.raw.
  if (key !== undefined) return currentTranslator().raw(key).replace(/''/g, "'");
  const builtIn = BUILT_IN_TEXTS.get(consentText);
  return builtIn !== undefined ? t(builtIn) : consentText;
}
