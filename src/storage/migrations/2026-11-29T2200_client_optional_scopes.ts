import type { Kysely } from 'kysely';

// Keycloak's default and optional client scopes. Per client, the JSON list of its optional scopes: a
// subset of `scopes` that it may ask for but that is never granted or implied without being asked ('[]':
// every scope of the client is a default one, as before). Per realm, Keycloak's
// defaultDefaultClientScopes and defaultOptionalClientScopes, the scopes a new client gets, as JSON
// {"default": [...], "optional": [...]} (NULL: Realmgate's built-in scopes, all default).
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('optional_scopes', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('realms').addColumn('client_scope_defaults', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('client_scope_defaults').execute();
  await db.schema.alterTable('clients').dropColumn('optional_scopes').execute();
}
