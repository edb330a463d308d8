import { sql, type Kysely } from 'kysely';

// Keycloak's login options. realms: loginWithEmailAllowed (on by default, as Keycloak: existing realms
// get it too), duplicateEmailsAllowed (off), rememberMe (off) and the remember-me session lifetimes
// ssoSessionIdleTimeoutRememberMe / ssoSessionMaxLifespanRememberMe (seconds; 0: the realm's usual ones).
// browser_sessions: whether the user ticked "Remember me", the idle timeout such a session has (0: none,
// as every session before) and when it was last used. users: an index of (realm, lower(email)), which a
// sign-in by email and the duplicate-email check look a user up by. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('login_with_email_allowed', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('realms').addColumn('duplicate_emails_allowed', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('remember_me', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('sso_idle_remember_me', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('sso_max_remember_me', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('browser_sessions').addColumn('remember_me', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('browser_sessions').addColumn('idle_timeout', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('browser_sessions').addColumn('used_at', 'bigint').execute();
  await db.schema.createIndex('users_realm_email').on('users').expression(sql`realm_id, lower(email)`).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_realm_email').execute();
  for (const column of ['used_at', 'idle_timeout', 'remember_me']) await db.schema.alterTable('browser_sessions').dropColumn(column).execute();
  for (const column of ['sso_max_remember_me', 'sso_idle_remember_me', 'remember_me', 'duplicate_emails_allowed', 'login_with_email_allowed']) {
    await db.schema.alterTable('realms').dropColumn(column).execute();
  }
}
