import type { Kysely } from 'kysely';

// Keycloak's first broker login "Review Profile" mode (idp-review-profile's update.profile.on.first.login):
// at a first sign-in through an identity provider, the account it gives is reviewed when something is
// missing ('missing', Keycloak's default and what Realmgate did before), always ('on') or never ('off').
// Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('broker_review_profile', 'varchar(8)', (c) => c.notNull().defaultTo('missing')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('broker_review_profile').execute();
}
