import type { Kysely } from 'kysely';

// OpenID Connect Back-Channel Logout 1.0 (src/oidc/backchannel-logout.ts): per client, Keycloak's
// attributes backchannel.logout.url (NULL: none), backchannel.logout.session.required (default on: the
// logout token carries sid) and backchannel.logout.revoke.offline.tokens (default off). Additive only;
// frozen once landed. The index finds the chains started in a session: the clients a logout tells and
// the chains it revokes (every logout reads them; without it, a scan of every chain).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('backchannel_logout_url', 'text').execute();
  await db.schema.alterTable('clients').addColumn('backchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('clients').addColumn('backchannel_logout_revoke_offline', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('refresh_chains_session').on('refresh_chains').column('session_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('refresh_chains_session').execute();
  await db.schema.alterTable('clients').dropColumn('backchannel_logout_revoke_offline').execute();
  await db.schema.alterTable('clients').dropColumn('backchannel_logout_session_required').execute();
  await db.schema.alterTable('clients').dropColumn('backchannel_logout_url').execute();
}
