import { sql, type Kysely } from 'kysely';

// Issue 8: users get names and a verified-email flag (OIDC Core 5.1 claims); clients get the set of
// token endpoint authentication methods they accept, the algorithm of their ID tokens (OIDC Registration
// id_token_signed_response_alg) and the audiences their access tokens may name (RFC 8707); realms choose
// their access token format (RFC 9068). Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('first_name', 'varchar(255)').execute();
  await db.schema.alterTable('users').addColumn('last_name', 'varchar(255)').execute();
  await db.schema.alterTable('users').addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // Confidential clients accept both secret methods unless restricted (as mainstream servers do); a
  // client registered explicitly for client_secret_post keeps only that one, a public one stays "none".
  await db.schema
    .alterTable('clients')
    .addColumn('auth_methods', 'text', (c) => c.notNull().defaultTo('["client_secret_basic","client_secret_post"]'))
    .execute();
  await sql`UPDATE clients SET auth_methods = '["client_secret_post"]' WHERE auth_method = 'client_secret_post'`.execute(db);
  await sql`UPDATE clients SET auth_methods = '["none"]' WHERE public = 1`.execute(db);
  await db.schema.alterTable('clients').addColumn('id_token_alg', 'varchar(16)', (c) => c.notNull().defaultTo('RS256')).execute();
  await db.schema.alterTable('clients').addColumn('audiences', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('realms').addColumn('access_token_format', 'varchar(16)', (c) => c.notNull().defaultTo('jwt')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('access_token_format').execute();
  await db.schema.alterTable('clients').dropColumn('audiences').execute();
  await db.schema.alterTable('clients').dropColumn('id_token_alg').execute();
  await db.schema.alterTable('clients').dropColumn('auth_methods').execute();
  await db.schema.alterTable('users').dropColumn('email_verified').execute();
  await db.schema.alterTable('users').dropColumn('last_name').execute();
  await db.schema.alterTable('users').dropColumn('first_name').execute();
}
