import type { Kysely } from 'kysely';

// Keycloak's identity provider mappers: per provider (realm and alias), what a brokered sign-in sets on the
// local user from the provider's claims (roles, attributes, groups). config is Keycloak's config map as
// JSON (syncMode in it, as Keycloak keeps it). A mapper's name is unique per provider. Additive only;
// frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_provider_mappers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('identity_provider', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('mapper_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('identity_provider_mappers_name', ['realm_id', 'identity_provider', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('identity_provider_mappers').execute();
}
