import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';

/** The most texts a realm keeps, over all its locales (src/admin/operations/localization.ts checks the rest). */
export const MAX_TEXTS_PER_REALM = 10_000;

/**
 * The most characters a realm's texts hold together: every server keeps a realm's texts in memory
 * (src/services.ts localizationTexts), so their size is bound, not only their number (10,000 texts of
 * 16 KB would be 160 MB). Keycloak's own messages of one language are about 120,000 characters.
 */
export const MAX_TEXT_CHARS_PER_REALM = 2_000_000;

/** A change would leave the realm with more texts, or more characters, than the bounds: nothing of it was stored. */
export class TooManyTextsError extends Error {
  constructor(
    readonly total: number,
    readonly chars = 0,
  ) {
    super(
      total > MAX_TEXTS_PER_REALM
        ? `a realm keeps at most ${MAX_TEXTS_PER_REALM} localization texts; this change would make ${total}`
        : `a realm's localization texts hold at most ${MAX_TEXT_CHARS_PER_REALM} characters together; this change would make ${chars}`,
    );
  }
}

/**
 * Keycloak's realm localization texts (REALM_LOCALIZATIONS; RealmModel's createOrUpdateRealmLocalizationTexts,
 * getRealmLocalizationTexts...): per realm, locale and key, one text. Keys and locales are checked by the
 * operations; this repository keeps the count bound, inside the transaction that writes.
 */
export class LocalizationRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The locales that have texts, sorted (Keycloak sorts them too). */
  async locales(realmId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('realm_localization').select('locale').distinct().where('realm_id', '=', realmId).orderBy('locale').execute();
    return rows.map((r) => r.locale);
  }

  /** The texts of one locale, key -> text ({} when none). */
  async texts(realmId: string, locale: string): Promise<Record<string, string>> {
    const rows = await this.db.selectFrom('realm_localization').select(['key', 'value']).where('realm_id', '=', realmId).where('locale', '=', locale).orderBy('key').execute();
    const out: Record<string, string> = {};
    // Keys are untrusted text: an own property each, never the prototype's (a key "__proto__").
    for (const r of rows) Object.defineProperty(out, r.key, { value: r.value, enumerable: true, writable: true, configurable: true });
    return out;
  }

  /** One text, or undefined. */
  async text(realmId: string, locale: string, key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('realm_localization').select('value').where('realm_id', '=', realmId).where('locale', '=', locale).where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** Every text of the realm: locale -> key -> text, in one query. */
  async all(realmId: string): Promise<Map<string, Map<string, string>>> {
    const rows = await this.db.selectFrom('realm_localization').select(['locale', 'key', 'value']).where('realm_id', '=', realmId).orderBy('locale').orderBy('key').execute();
    const out = new Map<string, Map<string, string>>();
    for (const r of rows) {
      let texts = out.get(r.locale);
      if (!texts) out.set(r.locale, (texts = new Map()));
      texts.set(r.key, r.value);
    }
    return out;
  }

  /** How many texts the realm has, over all its locales. */
  async count(realmId: string): Promise<number> {
    const r = await this.db.selectFrom('realm_localization').select((eb) => eb.fn.countAll<number | string>().as('n')).where('realm_id', '=', realmId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Adds or replaces one text (TooManyTextsError, nothing stored, past the bound). */
  set(realmId: string, locale: string, key: string, value: string): Promise<void> {
    return this.setMany(realmId, locale, { [key]: value });
  }

  /**
   * Adds or replaces texts of one locale, the others staying (Keycloak's createOrUpdateRealmLocalizationTexts),
   * in one transaction: all of them, or none (TooManyTextsError past the bound).
   */
  async setMany(realmId: string, locale: string, texts: Record<string, string>): Promise<void> {
    const entries = Object.entries(texts);
    if (entries.length === 0) return;
    await inTransaction(this.db, async (trx) => {
      // Writers of one realm take turns (a row lock on PostgreSQL; SQLite has one writer anyway), so that
      // the count below sees every text committed before and two writers cannot both pass the bound.
      await trx.updateTable('realms').set((eb) => ({ id: eb.ref('id') })).where('id', '=', realmId).execute();
      // Batches of 200 rows stay far below both databases' limits on bound parameters.
      for (let i = 0; i < entries.length; i += 200) {
        await trx
          .insertInto('realm_localization')
          .values(entries.slice(i, i + 200).map(([key, value]) => ({ realm_id: realmId, locale, key, value })))
          .onConflict((oc) => oc.columns(['realm_id', 'locale', 'key']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
          .execute();
      }
      const sums = await trx
        .selectFrom('realm_localization')
        .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string | null>(eb.fn('length', ['value'])).as('chars')])
        .where('realm_id', '=', realmId)
        .executeTakeFirstOrThrow();
      const total = Number(sums.n);
      const chars = Number(sums.chars ?? 0);
      // Thrown inside the transaction: it rolls back.
      if (total > MAX_TEXTS_PER_REALM || chars > MAX_TEXT_CHARS_PER_REALM) throw new TooManyTextsError(total, chars);
    });
  }

  /** Deletes one text (with `key`) or every text of the locale; whether anything was there. */
  async delete(realmId: string, locale: string, key?: string): Promise<boolean> {
    let q = this.db.deleteFrom('realm_localization').where('realm_id', '=', realmId).where('locale', '=', locale);
    if (key !== undefined) q = q.where('key', '=', key);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
