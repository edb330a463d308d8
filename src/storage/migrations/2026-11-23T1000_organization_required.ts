import type { Kysely } from 'kysely';

// Whether a user must belong to an organization to get a code (issue 10): on for every existing realm
// and every realm Realmgate creates (as before); an import from Keycloak turns it off where Keycloak
// did not require membership. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('organization_required', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('organization_required').execute();
}
