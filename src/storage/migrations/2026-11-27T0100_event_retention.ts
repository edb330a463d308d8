import type { Kysely } from 'kysely';

// A realm's own retention of its events and of its admin events, in seconds (Keycloak's eventsExpiration
// and its realm attribute adminEventsExpiration); NULL: the server's (REALMGATE_EVENTS_RETENTION_DAYS,
// REALMGATE_ADMIN_EVENTS_RETENTION_DAYS). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('events_retention', 'integer').execute();
  await db.schema.alterTable('realms').addColumn('admin_events_retention', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('admin_events_retention').execute();
  await db.schema.alterTable('realms').dropColumn('events_retention').execute();
}
