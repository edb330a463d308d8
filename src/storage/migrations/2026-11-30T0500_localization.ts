import type { Kysely } from 'kysely';

// Keycloak's realm localization. realms: internationalizationEnabled (off), supportedLocales (a JSON list,
// '[]') and defaultLocale (NULL: none), Keycloak's defaults, which existing realms get too. realm_localization:
// the realm's own texts (Keycloak's REALM_LOCALIZATIONS, which keeps a JSON map per locale; one row per
// text here, so that one text is set or deleted by its key), deleted with their realm. Additive only;
// frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('internationalization_enabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('supported_locales', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('realms').addColumn('default_locale', 'varchar(35)').execute();
  await db.schema
    .createTable('realm_localization')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('locale', 'varchar(35)', (c) => c.notNull())
    .addColumn('key', 'varchar(255)', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('realm_localization_pk', ['realm_id', 'locale', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('realm_localization').execute();
  for (const column of ['default_locale', 'supported_locales', 'internationalization_enabled']) await db.schema.alterTable('realms').dropColumn(column).execute();
}
