import type { Kysely } from 'kysely';

// The client address of a pending authorization request, so that unfinished requests can be capped per
// address (issue 11: bounded storage). Null for rows created before this migration. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('interactions').addColumn('ip', 'varchar(64)').execute();
  await db.schema.createIndex('interactions_ip').on('interactions').columns(['ip', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('interactions_ip').execute();
  await db.schema.alterTable('interactions').dropColumn('ip').execute();
}
