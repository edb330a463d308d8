import type { Kysely } from 'kysely';

// Administration (issue 9): roles and their user mappings (Keycloak's admin role names), the admin event
// log, realm enable/disable, and the per-client flows an operator switches on or off. Additive only.
// Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('roles')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    // '' for a realm role, else the client id of the client the role belongs to (e.g. realm-management).
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('roles_realm_client_name', ['realm_id', 'client_id', 'name'])
    .execute();
  await db.schema
    .createTable('user_roles')
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role_id'])
    .execute();
  await db.schema.createIndex('user_roles_role').on('user_roles').column('role_id').execute();
  await db.schema
    .createTable('admin_events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('time_ms', 'bigint', (c) => c.notNull())
    .addColumn('operation_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('resource_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('resource_path', 'text', (c) => c.notNull())
    .addColumn('auth_realm_id', 'varchar(64)')
    .addColumn('auth_client_id', 'varchar(255)')
    .addColumn('auth_user_id', 'varchar(36)')
    .addColumn('auth_username', 'varchar(255)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('via', 'varchar(16)', (c) => c.notNull())
    .addColumn('representation', 'text')
    .execute();
  await db.schema.createIndex('admin_events_realm_time').on('admin_events').columns(['realm_id', 'time_ms']).execute();
  await db.schema.alterTable('realms').addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('clients').addColumn('standard_flow_enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('clients').addColumn('direct_access_grants_enabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('clients').addColumn('service_accounts_enabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('service_accounts_enabled').execute();
  await db.schema.alterTable('clients').dropColumn('direct_access_grants_enabled').execute();
  await db.schema.alterTable('clients').dropColumn('standard_flow_enabled').execute();
  await db.schema.alterTable('realms').dropColumn('enabled').execute();
  await db.schema.dropTable('admin_events').execute();
  await db.schema.dropTable('user_roles').execute();
  await db.schema.dropTable('roles').execute();
}
