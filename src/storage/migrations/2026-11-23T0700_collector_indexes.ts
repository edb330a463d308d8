import type { Kysely } from 'kysely';

// Indexes the collector of expired rows needs so that each slice reads only what it deletes instead of
// scanning whole tables (issue 11: bounded storage). Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('refresh_chains_revoked').on('refresh_chains').column('revoked_at').execute();
  await db.schema.createIndex('refresh_chains_max_expires').on('refresh_chains').column('max_expires_at').execute();
  await db.schema.createIndex('refresh_tokens_expires').on('refresh_tokens').column('expires_at').execute();
  await db.schema.createIndex('browser_sessions_expires').on('browser_sessions').column('expires_at').execute();
  await db.schema.createIndex('login_failures_last').on('login_failures').column('last_failure').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['login_failures_last', 'browser_sessions_expires', 'refresh_tokens_expires', 'refresh_chains_max_expires', 'refresh_chains_revoked']) {
    await db.schema.dropIndex(name).execute();
  }
}
