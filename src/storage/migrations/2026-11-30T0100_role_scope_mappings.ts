import type { Kysely } from 'kysely';

// Keycloak's role scope mappings. Per client, fullScopeAllowed (1, the default: its tokens carry every role
// of their user, as before); a client with 0 gets only the roles in its scope: its own client roles, and the
// roles mapped to its scope or to the scope of one of the token's client scopes (owner_kind 'client', owner
// the client id; 'scope', owner the scope's name). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('full_scope_allowed', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema
    .createTable('role_scope_mappings')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('owner_kind', 'varchar(8)', (c) => c.notNull())
    .addColumn('owner', 'varchar(255)', (c) => c.notNull())
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('role_scope_mappings_pk', ['realm_id', 'owner_kind', 'owner', 'role_id'])
    .execute();
  await db.schema.createIndex('role_scope_mappings_role').on('role_scope_mappings').column('role_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('role_scope_mappings').execute();
  await db.schema.alterTable('clients').dropColumn('full_scope_allowed').execute();
}
