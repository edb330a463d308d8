import { sql, type Kysely } from 'kysely';

// Refresh storage per chain, not per refresh (issue 11, item 1). Refresh tokens are signed JWTs naming
// their chain and generation, so the chain's row needs only the current token's hash: a rotation is one
// conditional update of that row and writes no new row; a validly signed token of the chain that is not
// the current one is an earlier generation, a reuse. The refresh grace window (item 5) lives here too,
// so that every node gives the same answer. Frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  // No index on current_hash: the chain is found by its id (the token's "chain" claim), and an
  // unindexed column lets PostgreSQL update the row in place (a HOT update, no index write).
  await db.schema.alterTable('refresh_chains').addColumn('current_hash', 'varchar(64)').execute();
  // The current token's generation (0: not known, a chain from before this migration).
  await db.schema.alterTable('refresh_chains').addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // When the chain last rotated normally (the grace window runs from here), or null.
  await db.schema.alterTable('refresh_chains').addColumn('rotated_at', 'bigint').execute();
  // The earliest generation the grace window still answers, and how many grace answers it gave.
  await db.schema.alterTable('refresh_chains').addColumn('grace_from_gen', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('refresh_chains').addColumn('grace_used', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // Chains of the old layout keep working: their current token is their one unused token row.
  await sql`UPDATE refresh_chains SET
      current_hash = (SELECT t.hash FROM refresh_tokens t WHERE t.chain_id = refresh_chains.id AND t.used_at IS NULL ORDER BY t.created_at DESC LIMIT 1),
      rotated_at = (SELECT max(t.created_at) FROM refresh_tokens t WHERE t.chain_id = refresh_chains.id AND t.used_at IS NULL AND EXISTS (SELECT 1 FROM refresh_tokens u WHERE u.chain_id = refresh_chains.id AND u.used_at IS NOT NULL))
    WHERE revoked_at IS NULL`.execute(db);
  // Refresh concurrency grace, per realm: off (0 seconds) by default.
  await db.schema.alterTable('realms').addColumn('refresh_grace_seconds', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('refresh_grace_max', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const c of ['grace_used', 'grace_from_gen', 'rotated_at', 'generation', 'current_hash']) await db.schema.alterTable('refresh_chains').dropColumn(c).execute();
  for (const c of ['refresh_grace_max', 'refresh_grace_seconds']) await db.schema.alterTable('realms').dropColumn(c).execute();
}
