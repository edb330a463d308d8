import type { Kysely } from 'kysely';

// User federation (Keycloak's UserStorageProvider components, providerId "ldap"): the LDAP directories a
// realm's users may sign in through. config is Keycloak's component config (a map of string lists) as
// JSON, without bindCredential, which is sealed (src/crypto/broker-secrets.ts); mappers are its
// LDAPStorageMapper subcomponents as JSON. users.federation_link names the provider a user came from
// (Keycloak's federationLink): their password lives there, never here. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_storage_providers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('provider_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('bind_credential', 'text')
    .addColumn('mappers', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_storage_providers_realm').on('user_storage_providers').columns(['realm_id']).execute();
  await db.schema.alterTable('users').addColumn('federation_link', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('federation_link').execute();
  await db.schema.dropTable('user_storage_providers').execute();
}
