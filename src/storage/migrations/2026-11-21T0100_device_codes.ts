import type { Kysely } from 'kysely';

// RFC 8628 device authorization: one row per device_code, stored only as hashes. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_codes')
    .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_code_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('interval', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('user_id', 'varchar(36)')
    .addColumn('session_id', 'varchar(36)')
    .addColumn('organization_id', 'varchar(36)')
    .addColumn('auth_time', 'bigint')
    .addColumn('chain_id', 'varchar(36)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_codes_expires').on('device_codes').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('device_codes').execute();
}
