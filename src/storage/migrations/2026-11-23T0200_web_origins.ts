import type { Kysely } from 'kysely';

// Per-client web origins (Keycloak's "webOrigins"): the browser origins allowed to call the JSON
// endpoints with CORS and to frame the session-status pages. A JSON list of origins, or "+" for the
// origins of the client's redirect URIs. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('web_origins', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('web_origins').execute();
}
