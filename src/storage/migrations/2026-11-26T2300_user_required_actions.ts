import type { Kysely } from 'kysely';

// Keycloak's required actions of a user, as a JSON list of names ('[]' when none). Realmgate acts on
// UPDATE_PASSWORD only (a temporary password: the user chooses a new one at the next sign-in); the
// admin API refuses any other name. A list rather than a flag so that the column keeps Keycloak's shape.
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('required_actions', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('required_actions').execute();
}
