import type { Kysely } from 'kysely';

// OpenID Connect Front-Channel Logout 1.0 (src/oidc/frontchannel-logout.ts): per client, Keycloak's
// frontchannelLogout switch (default off), its attribute frontchannel.logout.url (NULL: none) and
// frontchannel.logout.session.required (default on: iss and sid are added to the URL). Additive only;
// frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('frontchannel_logout', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('clients').addColumn('frontchannel_logout_url', 'text').execute();
  await db.schema.alterTable('clients').addColumn('frontchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('frontchannel_logout_session_required').execute();
  await db.schema.alterTable('clients').dropColumn('frontchannel_logout_url').execute();
  await db.schema.alterTable('clients').dropColumn('frontchannel_logout').execute();
}
