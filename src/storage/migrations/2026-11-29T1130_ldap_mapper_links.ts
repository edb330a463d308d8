import type { Kysely } from 'kysely';

// LDAP group and role mappers (Keycloak's group-ldap-mapper and role-ldap-mapper): which local groups
// and roles a mapper of a user storage provider made from (or matched to) the directory's groups. A
// sign-in sets a federated user's memberships among exactly these to the directory's; groups and roles
// an administrator made stay untouched. kind: 'group' or 'role'; target_id: the group's or role's id;
// name: the directory group's name. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ldap_mapper_links')
    .addColumn('mapper_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('kind', 'varchar(8)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addPrimaryKeyConstraint('ldap_mapper_links_pk', ['mapper_id', 'kind', 'target_id'])
    .execute();
  await db.schema.createIndex('ldap_mapper_links_target').on('ldap_mapper_links').columns(['target_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ldap_mapper_links').execute();
}
