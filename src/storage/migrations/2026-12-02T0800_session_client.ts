import type { Kysely } from 'kysely';

// Where a browser session was started from, as Keycloak keeps it (its user session's IP address, and
// the device its account console shows from the user agent): the address of the request that signed in
// and its User-Agent header (at most 255 characters). NULL for sessions made before this migration.
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').addColumn('ip_address', 'varchar(64)').execute();
  await db.schema.alterTable('browser_sessions').addColumn('user_agent', 'varchar(255)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['user_agent', 'ip_address']) await db.schema.alterTable('browser_sessions').dropColumn(column).execute();
}
