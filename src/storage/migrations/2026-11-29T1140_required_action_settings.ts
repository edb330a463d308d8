import type { Kysely } from 'kysely';

// Keycloak's requiredActions settings of a realm (enabled, defaultAction, priority, config per alias),
// as JSON of the configured actions ('{}': all enabled, none a default action, Realmgate's order).
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('required_actions', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('required_actions').execute();
}
