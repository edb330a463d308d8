import type { Kysely } from 'kysely';

// JWT-secured authorization requests (RFC 9101; OIDC Core 6.1), per client as Keycloak's attributes:
// request.object.required ('not required', the default, 'request or request_uri', 'request only',
// 'request_uri only') and request.object.signature.alg (NULL: any asymmetric algorithm). Columns, as
// require.pushed.authorization.requests is one. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('request_object_required', 'varchar(32)', (c) => c.notNull().defaultTo('not required')).execute();
  await db.schema.alterTable('clients').addColumn('request_object_alg', 'varchar(16)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('request_object_alg').execute();
  await db.schema.alterTable('clients').dropColumn('request_object_required').execute();
}
