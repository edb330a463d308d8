import type { Kysely } from 'kysely';

// Keycloak's realm default role (RealmRepresentation.defaultRole, normally the composite
// default-roles-<realm>): every new user of the realm is mapped to it. NULL: none (Realmgate's own
// realms). Deleting the role clears it. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('default_role_id', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('default_role_id').execute();
}
