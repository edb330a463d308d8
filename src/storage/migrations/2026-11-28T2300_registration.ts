import type { Kysely } from 'kysely';

// Self-registration and email verification (Keycloak's registrationAllowed, registrationEmailAsUsername
// and verifyEmail; all off by default, as in Keycloak): whether the login page offers "Register", whether
// the email typed there is the username, whether a user whose email is not verified must verify it
// (the VERIFY_EMAIL required action) before signing in. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('registration_allowed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('registration_email_as_username', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('verify_email', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['verify_email', 'registration_email_as_username', 'registration_allowed']) {
    await db.schema.alterTable('realms').dropColumn(column).execute();
  }
}
