import type { Kysely } from 'kysely';

// Client authentication with signed JWTs (RFC 7523 2.2 and 3, OpenID Connect Core 1.0 9 private_key_jwt;
// Keycloak's "client-jwt" authenticator, src/oauth/client-assertion.ts). Per client, its keys as Keycloak's
// attributes hold them (use.jwks.url/jwks.url, use.jwks.string/jwks.string, jwt.credential.certificate,
// jwt.credential.public.key, token.endpoint.auth.signing.alg, token.endpoint.auth.signing.max.exp), as one
// JSON object (NULL: none);
// the method itself is 'private_key_jwt' in auth_methods. And the used assertion ids: one row per jti
// (the SHA-256 of realm, client and jti: the primary key makes a second use fail on every node), kept
// until the assertion could no longer be accepted, then deleted by the collector. Additive only; frozen
// once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('jwt_keys', 'text').execute();
  await db.schema
    .createTable('client_assertion_jtis')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('client_assertion_jtis_expires').on('client_assertion_jtis').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('client_assertion_jtis').execute();
  await db.schema.alterTable('clients').dropColumn('jwt_keys').execute();
}
