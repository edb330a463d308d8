import type { Kysely } from 'kysely';

// Keycloak's editUsernameAllowed (realm setting, default off): users may change their username on the
// account page and through the account REST API, and administrators through the admin API. Additive
// only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('edit_username_allowed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('edit_username_allowed').execute();
}
