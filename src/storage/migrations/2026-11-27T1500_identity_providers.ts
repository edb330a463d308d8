import type { Kysely } from 'kysely';

// Identity brokering (Keycloak's identity providers): the OpenID Connect providers a realm lets its users
// sign in with, and the links between a local user and their account at a provider (Keycloak's federated
// identities). config is Keycloak's config map as JSON, without the client secret, which is sealed
// (src/crypto/broker-secrets.ts). A provider account links to one user; a user links once per provider.
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_providers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('alias', 'varchar(255)', (c) => c.notNull())
    .addColumn('provider_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('display_name', 'varchar(255)')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('hide_on_login', 'integer', (c) => c.notNull())
    .addColumn('trust_email', 'integer', (c) => c.notNull())
    .addColumn('link_only', 'integer', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(36)')
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('identity_providers_alias', ['realm_id', 'alias'])
    .execute();
  await db.schema
    .createTable('federated_identities')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('identity_provider', 'varchar(255)', (c) => c.notNull())
    .addColumn('federated_user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('federated_username', 'varchar(255)')
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('federated_identities_pk', ['realm_id', 'identity_provider', 'federated_user_id'])
    .addUniqueConstraint('federated_identities_user', ['user_id', 'identity_provider'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('federated_identities').execute();
  await db.schema.dropTable('identity_providers').execute();
}
