import type { Kysely } from 'kysely';

// Dynamic client registration (RFC 7591, with RFC 7592's management): Keycloak's initial access tokens
// (an operator hands one out; each registers up to `count` clients until it expires; 0: never), kept only
// as the SHA-256 of the token; and per client the hash of its current registration access token (NULL: the
// client was not registered dynamically, or its token was never issued). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_initial_access')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('remaining', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('client_initial_access_realm').on('client_initial_access').column('realm_id').execute();
  await db.schema.alterTable('clients').addColumn('registration_token_hash', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('registration_token_hash').execute();
  await db.schema.dropTable('client_initial_access').execute();
}
