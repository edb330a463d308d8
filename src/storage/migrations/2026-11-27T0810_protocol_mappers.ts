import type { Kysely } from 'kysely';

// Keycloak's protocol mappers (custom claims) of OpenID Connect: each belongs to a client (owner_type
// 'client', owner the client id) or to a client scope ('scope', owner the scope's name) of a realm, as
// clients are keyed by (realm_id, client_id) and scopes by (realm_id, name). Names are unique per owner
// (Keycloak answers 409 for a duplicate). config is a JSON object of string values, Keycloak's config
// map. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('protocol_mappers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('owner_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('owner', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('protocol_mappers_owner_name', ['realm_id', 'owner_type', 'owner', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('protocol_mappers').execute();
}
