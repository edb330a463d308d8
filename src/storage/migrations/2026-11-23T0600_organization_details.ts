import type { Kysely } from 'kysely';

// Keycloak 26 organizations carry a description, an enabled flag and internet domains (each domain
// belongs to at most one organization of a realm). The index on refresh chains by client serves
// "revoke every token of this client". Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('description', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('organizations').addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema
    .createTable('organization_domains')
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('domain', 'varchar(255)', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('organization_domains_pk', ['organization_id', 'domain'])
    .addUniqueConstraint('organization_domains_realm_domain', ['realm_id', 'domain'])
    .execute();
  await db.schema.createIndex('refresh_chains_client').on('refresh_chains').columns(['realm_id', 'client_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('refresh_chains_client').execute();
  await db.schema.dropTable('organization_domains').execute();
  await db.schema.alterTable('organizations').dropColumn('enabled').execute();
  await db.schema.alterTable('organizations').dropColumn('description').execute();
}
