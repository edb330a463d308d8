import type { Kysely } from 'kysely';

// Keycloak 26's organization redirectUrl: where a new member goes once they joined through an
// invitation (NULL: the account page). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('redirect_url', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('redirect_url').execute();
}
