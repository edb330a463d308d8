import type { Kysely } from 'kysely';

// Email (Keycloak's smtpServer, resetPasswordAllowed and action token lifespans): the realm's SMTP
// settings as Keycloak's map in JSON without the password, which is sealed apart (src/crypto/smtp-secret.ts);
// whether its login page offers "Forgot password?"; how long a link mailed to a user lives (seconds),
// asked for by the user (a reset) or by an administrator (execute-actions-email). Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('smtp_server', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  await db.schema.alterTable('realms').addColumn('smtp_password', 'text').execute();
  await db.schema.alterTable('realms').addColumn('reset_password_allowed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('action_token_user_lifespan', 'integer', (c) => c.notNull().defaultTo(300)).execute();
  await db.schema.alterTable('realms').addColumn('action_token_admin_lifespan', 'integer', (c) => c.notNull().defaultTo(43_200)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['action_token_admin_lifespan', 'action_token_user_lifespan', 'reset_password_allowed', 'smtp_password', 'smtp_server']) {
    await db.schema.alterTable('realms').dropColumn(column).execute();
  }
}
