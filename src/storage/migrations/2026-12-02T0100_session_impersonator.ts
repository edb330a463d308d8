import type { Kysely } from 'kysely';

// Keycloak's impersonation (an administrator signs in as a user from the admin API or console): the
// session it makes remembers who started it, as Keycloak's IMPERSONATOR_ID and IMPERSONATOR_USERNAME
// session notes do, and the administrator's realm. NULL for every session a user started. Additive
// only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').addColumn('impersonator_id', 'varchar(64)').execute();
  await db.schema.alterTable('browser_sessions').addColumn('impersonator_username', 'varchar(255)').execute();
  await db.schema.alterTable('browser_sessions').addColumn('impersonator_realm', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['impersonator_realm', 'impersonator_username', 'impersonator_id']) await db.schema.alterTable('browser_sessions').dropColumn(column).execute();
}
