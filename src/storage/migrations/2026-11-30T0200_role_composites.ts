import type { Kysely } from 'kysely';

// Keycloak's composite roles: a role (parent_id) contains other roles (child_id), of the realm or of any of
// its clients; whoever holds the parent holds what it contains, recursively. realm_id is the roles'
// realm (deleting a realm deletes its rows). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('role_composites')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('parent_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('child_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('role_composites_pk', ['parent_id', 'child_id'])
    .execute();
  await db.schema.createIndex('role_composites_child').on('role_composites').column('child_id').execute();
  await db.schema.createIndex('role_composites_realm').on('role_composites').column('realm_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('role_composites').execute();
}
