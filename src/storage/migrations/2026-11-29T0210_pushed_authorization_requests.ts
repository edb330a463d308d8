import type { Kysely } from 'kysely';

// RFC 9126 Pushed Authorization Requests (src/oauth/par.ts): one row per request_uri, stored only as the
// SHA-256 of its random part, with the client, the authorization request's parameters as pushed (JSON),
// the pushing address (capped per address for public clients, as device codes are) and its expiry; used_at
// marks the one use at the authorization endpoint. Clients get Keycloak's attribute
// require.pushed.authorization.requests; realms Keycloak's parRequestUriLifespan (seconds, default 60).
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pushed_authorization_requests')
    .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('ip', 'varchar(64)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('pushed_authorization_requests_expires').on('pushed_authorization_requests').column('expires_at').execute();
  await db.schema.createIndex('pushed_authorization_requests_ip').on('pushed_authorization_requests').columns(['ip', 'expires_at']).execute();
  await db.schema.createIndex('pushed_authorization_requests_client').on('pushed_authorization_requests').columns(['realm_id', 'client_id', 'expires_at']).execute();
  await db.schema.alterTable('clients').addColumn('require_pushed_authorization_requests', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('par_request_uri_lifespan', 'integer', (c) => c.notNull().defaultTo(60)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('par_request_uri_lifespan').execute();
  await db.schema.alterTable('clients').dropColumn('require_pushed_authorization_requests').execute();
  await db.schema.dropTable('pushed_authorization_requests').execute();
}
