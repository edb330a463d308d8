import type { Kysely } from 'kysely';

// Refresh tokens are JWTs signed with a per-realm HMAC key (HS512, as Keycloak). The key is kept apart
// from signing_keys: it is never published in the JWKS and does not rotate with the realm's signing key.
// The secret is a JWK, sealed like the private signing keys. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('hmac_keys')
    .addColumn('kid', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('alg', 'varchar(16)', (c) => c.notNull())
    .addColumn('secret_jwk', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('hmac_keys_realm').on('hmac_keys').column('realm_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('hmac_keys').execute();
}
