import type { Kysely } from 'kysely';

// RFC 8707 2.1: the resources of an authorization request (and of a device authorization request)
// apply to the whole grant, so the code and the device code keep them (a JSON list; '[]' when the
// request named none: the grant is then bound to no resource). Codes already issued when this applies
// are unbound. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_codes').addColumn('resources', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('device_codes').addColumn('resources', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('device_codes').dropColumn('resources').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('resources').execute();
}
