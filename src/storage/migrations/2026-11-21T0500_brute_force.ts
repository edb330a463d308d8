import type { Kysely } from 'kysely';

// Brute-force protection: per realm settings and the failure counters (per username and per client
// address), shared by every server process through the database. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('max_login_failures', 'integer', (c) => c.notNull().defaultTo(5)).execute();
  await db.schema.alterTable('realms').addColumn('lockout_seconds', 'integer', (c) => c.notNull().defaultTo(60)).execute();
  await db.schema.alterTable('realms').addColumn('max_lockout_seconds', 'integer', (c) => c.notNull().defaultTo(900)).execute();
  await db.schema
    .createTable('login_failures')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('subject', 'varchar(320)', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('lockouts', 'integer', (c) => c.notNull())
    .addColumn('last_failure', 'bigint', (c) => c.notNull())
    .addColumn('blocked_until', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('login_failures_pk', ['realm_id', 'subject'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('login_failures').execute();
  await db.schema.alterTable('realms').dropColumn('max_lockout_seconds').execute();
  await db.schema.alterTable('realms').dropColumn('lockout_seconds').execute();
  await db.schema.alterTable('realms').dropColumn('max_login_failures').execute();
}
