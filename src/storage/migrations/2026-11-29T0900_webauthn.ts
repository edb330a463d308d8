import type { Kysely } from 'kysely';

// WebAuthn security keys (W3C WebAuthn Level 2; Keycloak's "webauthn" credentials): a user may have
// several; credential_id (base64url of the raw id) is unique per user; public_key is the COSE key as
// the authenticator gave it (base64); sign_count the last signature counter seen. Challenges are stored
// only as SHA-256 hashes, bound to what asked for them (an interaction, a browser session), single use
// and short-lived. realms.webauthn_policy: Keycloak's webAuthnPolicy* settings as JSON ('{}': its
// defaults). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webauthn_credentials')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('label', 'varchar(255)')
    .addColumn('credential_id', 'varchar(1400)', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('alg', 'integer', (c) => c.notNull())
    .addColumn('aaguid', 'varchar(36)', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('attestation_format', 'varchar(32)', (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthn_credentials_user_credential').on('webauthn_credentials').columns(['user_id', 'credential_id']).unique().execute();
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('bound_to', 'varchar(128)', (c) => c.notNull())
    .addColumn('purpose', 'varchar(16)', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthn_challenges_bound').on('webauthn_challenges').column('bound_to').execute();
  await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires_at').execute();
  await db.schema.alterTable('realms').addColumn('webauthn_policy', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('webauthn_policy').execute();
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('webauthn_credentials').execute();
}
