import type { Kysely } from 'kysely';

// Which optional event types a realm stores (a JSON list). Successful refreshes are not among the
// defaults: they are the bulk of the traffic and are counted in metrics instead (issue 11, item 2).
// Failures, logins, consents, reuse detections and revocations are always stored, whatever this says.
// Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('realms')
    .addColumn('stored_event_types', 'text', (c) => c.notNull().defaultTo('["CODE_ISSUED","CODE_TO_TOKEN","DEVICE_APPROVED","DEVICE_TO_TOKEN","LOGOUT"]'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('stored_event_types').execute();
}
