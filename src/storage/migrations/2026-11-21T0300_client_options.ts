import type { Kysely } from 'kysely';

// Per-client token endpoint authentication method (client_secret_basic stays the default, as the
// specification requires) and the whitelist of post-logout redirect URIs. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('auth_method', 'varchar(32)', (c) => c.notNull().defaultTo('client_secret_basic')).execute();
  await db.schema.alterTable('clients').addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('post_logout_redirect_uris').execute();
  await db.schema.alterTable('clients').dropColumn('auth_method').execute();
}
