import type { Kysely } from 'kysely';

// Rotating a client secret without downtime: the previous secret's hash stays valid until the given time
// (epoch seconds), as Keycloak's rotated secret (its client.secret.rotated attributes) does, so that an
// application's instances can move to the new secret one by one. NULL for every client until a rotation
// keeps one. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('rotated_secret_hash', 'varchar(255)').execute();
  await db.schema.alterTable('clients').addColumn('rotated_secret_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['rotated_secret_expires_at', 'rotated_secret_hash']) await db.schema.alterTable('clients').dropColumn(column).execute();
}
