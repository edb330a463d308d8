import type { Kysely } from 'kysely';

// The audit log: who did what, from where, when, and whether it worked. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)')
    .addColumn('user_id', 'varchar(36)')
    .addColumn('username', 'varchar(255)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('reason', 'text')
    .execute();
  await db.schema.createIndex('events_realm_time').on('events').columns(['realm_id', 'time']).execute();
  await db.schema.createIndex('events_realm_user').on('events').columns(['realm_id', 'user_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('events').execute();
}
