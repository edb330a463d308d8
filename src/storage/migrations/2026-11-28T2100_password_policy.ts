import type { Kysely } from 'kysely';

// Keycloak's password policies (src/admin/password-policy.ts). realms.password_policy: the realm's policy
// as Realmgate keeps it ('' when none). users.password_changed_at: when the current password was set,
// for forceExpiredPasswordChange (NULL, a user from before: counted from the user's creation, the
// earliest the password can have been set). password_history: the earlier passwords' argon2id hashes
// (or imported ones) that passwordHistory(N) compares a new one with, at most N-1 a user, trimmed at
// every change. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('password_policy', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('users').addColumn('password_changed_at', 'bigint').execute();
  await db.schema
    .createTable('password_history')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('password_history_user').on('password_history').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('password_history').execute();
  await db.schema.alterTable('users').dropColumn('password_changed_at').execute();
  await db.schema.alterTable('realms').dropColumn('password_policy').execute();
}
