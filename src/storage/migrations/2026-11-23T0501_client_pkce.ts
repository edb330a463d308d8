import type { Kysely } from 'kysely';

// Per-client PKCE requirement (Keycloak's attribute pkce.code.challenge.method): 'S256' makes a
// confidential client use PKCE too; public clients always must. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('pkce_method', 'varchar(16)', (c) => c.notNull().defaultTo('')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('pkce_method').execute();
}
