import type { Kysely } from 'kysely';

// Keycloak's user attributes: a JSON object of name -> list of string values ('{}' when none), as
// UserRepresentation.attributes carries them. One text column rather than a table of rows: attributes
// are read with the user (a token's claims, the admin API) and written whole; searching by attribute
// (the admin API's q=name:value) reads the column. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('attributes', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('attributes').execute();
}
