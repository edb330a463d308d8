import type { Kysely } from 'kysely';

// The client address of a device authorization request, so that pending device codes can be capped per
// address as unfinished sign-ins are (issue 11: bounded storage). Null for rows created before this
// migration. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('device_codes').addColumn('ip', 'varchar(64)').execute();
  await db.schema.createIndex('device_codes_ip').on('device_codes').columns(['ip', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('device_codes_ip').execute();
  await db.schema.alterTable('device_codes').dropColumn('ip').execute();
}
