import type { Kysely } from 'kysely';

// One-time-password authenticators (TOTP, RFC 6238; Keycloak's "otp" credentials): a user may have
// several; each secret is sealed (src/crypto/otp-secret.ts), and last_step is the last time step a code
// was accepted for, so that a code is accepted once (Keycloak's otpPolicyCodeReusable false). The
// interaction remembers that its user passed the second factor before a session exists (a required action
// may still come). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('otp_credentials')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('label', 'varchar(255)')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('algorithm', 'varchar(16)', (c) => c.notNull())
    .addColumn('digits', 'integer', (c) => c.notNull())
    .addColumn('period', 'integer', (c) => c.notNull())
    .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(-1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('otp_credentials_user').on('otp_credentials').column('user_id').execute();
  await db.schema.alterTable('interactions').addColumn('second_factor', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('interactions').dropColumn('second_factor').execute();
  await db.schema.dropTable('otp_credentials').execute();
}
