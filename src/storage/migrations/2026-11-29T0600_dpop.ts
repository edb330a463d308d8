import type { Kysely } from 'kysely';

// DPoP (RFC 9449; src/oauth/dpop.ts). Per client, Keycloak's dpop.bound.access.tokens (1: the token
// endpoint refuses a request without a proof). Per refresh chain, the thumbprint (RFC 7638) of the key a
// public client's chain is bound to (RFC 9449 5; NULL: not bound). Per authorization code, the dpop_jkt of
// its authorization request (RFC 9449 10; NULL: none). And the used proof ids: one row per jti (the SHA-256
// of realm, htu and jti: the primary key makes a second use fail on every node), kept while the proof
// could be accepted, then deleted by the collector. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('dpop_bound_access_tokens', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('refresh_chains').addColumn('dpop_jkt', 'text').execute();
  await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute();
  await db.schema
    .createTable('dpop_proof_jtis')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dpop_proof_jtis_expires').on('dpop_proof_jtis').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('dpop_proof_jtis').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('refresh_chains').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('clients').dropColumn('dpop_bound_access_tokens').execute();
}
