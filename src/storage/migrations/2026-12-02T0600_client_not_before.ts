import type { Kysely } from 'kysely';

// Keycloak's client not-before (ClientRepresentation.notBefore, its Revocation tab): every token issued to
// the client before this time (epoch seconds) is refused, as the realm's not_before does for the whole
// realm. 0: none. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('not_before', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('not_before').execute();
}
