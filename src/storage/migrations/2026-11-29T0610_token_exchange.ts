import type { Kysely } from 'kysely';

// RFC 8693 token exchange as Keycloak's "standard token exchange" (src/oauth/grants/token-exchange.ts): per
// client, Keycloak's attribute standard.token.exchange.enabled (default off) and
// standard.token.exchange.enableRefreshRequestedTokenType ('NO', the default, or 'SAME_SESSION'). Columns, as
// require.pushed.authorization.requests is one. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('standard_token_exchange', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('clients').addColumn('token_exchange_refresh', 'varchar(16)', (c) => c.notNull().defaultTo('NO')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('token_exchange_refresh').execute();
  await db.schema.alterTable('clients').dropColumn('standard_token_exchange').execute();
}
