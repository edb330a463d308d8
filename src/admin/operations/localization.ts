import type { Store } from '../../storage/store.js';
import { MAX_TEXT_CHARS_PER_REALM, MAX_TEXTS_PER_REALM, TooManyTextsError } from '../../storage/repos/localization.js';
import { checkLocaleTag } from '../locales.js';
import { NotFound, ValidationError, checkPathSegment } from '../validation.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';

/** A text's key: 1 to 255 characters (the column is varchar(255)). */
export const MAX_KEY_LENGTH = 255;
/** A text: at most 16 KB of UTF-8 (Keycloak's texts are messages, a page's paragraph at most). */
export const MAX_VALUE_BYTES = 16 * 1024;
export { MAX_TEXT_CHARS_PER_REALM, MAX_TEXTS_PER_REALM };

function quoted(v: string): string {
  return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
}

export function checkTextKey(key: string): void {
  // A JavaScript length counts UTF-16 units, never fewer than PostgreSQL's characters (validation.ts LIMITS).
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) throw new ValidationError(`a localization key must have 1 to ${MAX_KEY_LENGTH} characters (${quoted(key)} has ${key.length})`);
  // NUL is refused by PostgreSQL in text; the other control characters would only hide a key.
  if (/[\x00-\x1f\x7f]/.test(key)) throw new ValidationError(`the localization key ${quoted(key)} has control characters`);
  // PUT/DELETE .../localization/{locale}/{key}: a key ".." would reach the whole locale.
  checkPathSegment('the localization key', key);
}

export function checkTextValue(key: string, value: string): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_VALUE_BYTES) throw new ValidationError(`the text of ${quoted(key)} has ${bytes} bytes: at most ${MAX_VALUE_BYTES} (16 KB of UTF-8)`);
  // PostgreSQL's text cannot hold NUL; a text with one could never be stored.
  if (value.includes('\0')) throw new ValidationError(`the text of ${quoted(key)} has a NUL character`);
}

/**
 * A JSON object of texts as the admin API and the CLI receive one ({key: text}): an object of strings,
 * each key and text within the limits; at most MAX_TEXTS_PER_REALM entries (a realm never holds more).
 */
export function readTexts(body: unknown): Record<string, string> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('the texts must be a JSON object of key: text');
  const entries = Object.entries(body as Record<string, unknown>);
  if (entries.length > MAX_TEXTS_PER_REALM) throw new ValidationError(`a realm keeps at most ${MAX_TEXTS_PER_REALM} localization texts; ${entries.length} were sent`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw new ValidationError(`the text of ${quoted(key)} must be a string`);
    checkTextKey(key);
    checkTextValue(key, value);
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The count bound as the doors say it: a 400 / a CLI error, nothing stored. */
async function bounded(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof TooManyTextsError) throw new ValidationError(`${err.message}: nothing was stored`);
    throw err;
  }
}

/**
 * The admin event of a change. Keycloak's RealmLocalizationResource records none (its ResourceType has
 * no localization type); Realmgate records every admin change, under Keycloak's REALM type with the
 * sub-resource's path (localization/<locale>[/<key>]), naming the keys and never the texts.
 */
async function recordChange(store: Store, actor: Actor, e: { realmId: string; operation: 'UPDATE' | 'DELETE'; locale: string; key?: string; keys?: string[] }): Promise<void> {
  const path = `localization/${e.locale}${e.key !== undefined ? `/${e.key}` : ''}`;
  const keys = e.keys ?? (e.key !== undefined ? [e.key] : undefined);
  await recordAdminEvent(store, actor, {
    realmId: e.realmId,
    operation: e.operation,
    resourceType: 'REALM',
    resourcePath: path,
    representation: { locale: e.locale, ...(keys ? { keys: keys.slice(0, 100), count: keys.length } : {}) },
  });
}

/** The locales the realm has texts for, sorted (Keycloak's GET localization). */
export async function listTextLocales(store: Store, realmId: string): Promise<string[]> {
  await requireRealm(store, realmId);
  return store.localization.locales(realmId);
}

/**
 * A locale's texts (Keycloak's GET localization/{locale}; {} when none). With `defaultFallback`
 * (Keycloak's deprecated useRealmDefaultLocaleFallback), the realm's default locale's texts fill the keys
 * the locale lacks, as Keycloak's resource still does.
 */
export async function getTexts(store: Store, input: { realmId: string; locale: string; defaultFallback?: boolean }): Promise<Record<string, string>> {
  const realm = await requireRealm(store, input.realmId);
  const own = await store.localization.texts(realm.id, input.locale);
  if (!input.defaultFallback || !realm.defaultLocale) return own;
  const fallback = await store.localization.texts(realm.id, realm.defaultLocale);
  for (const [k, v] of Object.entries(own)) Object.defineProperty(fallback, k, { value: v, enumerable: true, writable: true, configurable: true });
  return fallback;
}

/** One text (Keycloak's GET localization/{locale}/{key}); not found when none. */
export async function getText(store: Store, input: { realmId: string; locale: string; key: string }): Promise<string> {
  await requireRealm(store, input.realmId);
  const text = await store.localization.text(input.realmId, input.locale, input.key);
  if (text === undefined) throw new NotFound('Localization text not found');
  return text;
}

/** Adds or replaces texts of a locale, the others staying (Keycloak's POST localization/{locale}): all or none. */
export async function setTexts(store: Store, input: { realmId: string; locale: string; texts: Record<string, string> }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  checkLocaleTag('the locale', input.locale);
  const texts = readTexts(input.texts);
  const keys = Object.keys(texts);
  if (keys.length === 0) return;
  await bounded(() => store.localization.setMany(input.realmId, input.locale, texts));
  await recordChange(store, actor, { realmId: input.realmId, operation: 'UPDATE', locale: input.locale, keys });
}

/** Adds or replaces one text (Keycloak's PUT localization/{locale}/{key}). */
export async function setText(store: Store, input: { realmId: string; locale: string; key: string; value: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  checkLocaleTag('the locale', input.locale);
  checkTextKey(input.key);
  checkTextValue(input.key, input.value);
  await bounded(() => store.localization.set(input.realmId, input.locale, input.key, input.value));
  await recordChange(store, actor, { realmId: input.realmId, operation: 'UPDATE', locale: input.locale, key: input.key });
}

/**
 * Deletes one text, or every text of the locale without `key`. Nothing there is not found, as Keycloak
 * answers both ("Localization text not found", "No localization texts for locale ... found.").
 */
export async function deleteTexts(store: Store, input: { realmId: string; locale: string; key?: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  if (!(await store.localization.delete(input.realmId, input.locale, input.key))) {
    throw new NotFound(input.key !== undefined ? 'Localization text not found' : `No localization texts for locale ${input.locale.slice(0, 40)} found.`);
  }
  await recordChange(store, actor, { realmId: input.realmId, operation: 'DELETE', locale: input.locale, ...(input.key !== undefined ? { key: input.key } : {}) });
}
