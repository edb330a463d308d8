import type { Kysely } from 'kysely';

// Groups (Keycloak's): a tree per realm (parent_id '' at the top), names unique among siblings; users
// belong to groups, groups are mapped roles, and a member holds the roles of its groups and of their
// ancestors; a realm's default groups are joined by every user created. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('groups')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('parent_id', 'varchar(36)', (c) => c.notNull().defaultTo(''))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    // A JSON object of string lists (Keycloak's group attributes).
    .addColumn('attributes', 'text', (c) => c.notNull().defaultTo('{}'))
    // 1: a default group of the realm (Keycloak's defaultGroups), which every new user joins.
    .addColumn('realm_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('groups_realm_parent_name', ['realm_id', 'parent_id', 'name'])
    .execute();
  await db.schema.createIndex('groups_parent').on('groups').column('parent_id').execute();
  await db.schema
    .createTable('group_members')
    .addColumn('group_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_members_user').on('group_members').column('user_id').execute();
  await db.schema
    .createTable('group_roles')
    .addColumn('group_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_roles_pk', ['group_id', 'role_id'])
    .execute();
  await db.schema.createIndex('group_roles_role').on('group_roles').column('role_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('group_roles').execute();
  await db.schema.dropTable('group_members').execute();
  await db.schema.dropTable('groups').execute();
}
