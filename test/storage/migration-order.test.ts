import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Migrator, sql } from 'kysely';
import { createTestDatabase, dialects, migrateTo, migrating } from '../helpers/db.js';
import { migrate } from '../../src/storage/database.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';

// Two branches merged in another order than their migrations' dates: a database created between the two
// merges has the later-named migration and lacks the earlier-named one. The next release's start must
// apply the missing one (kysely refuses that by default: "corrupted migrations").
const MISSING = '2026-11-23T0200_web_origins';
const BEFORE = '2026-11-23T0100_user_names_and_client_settings';

for (const dialect of dialects()) {
  describe(`migrations merged out of order (${dialect})`, () => {
    test('a database lacking a migration named before ones it has is migrated at start', async () => {
      const t = await createTestDatabase(dialect);
      try {
        const k = t.db.kysely;
        assert.equal((await migrateTo(t.db, BEFORE)).error, undefined);
        // The release made before the earlier-named branch was merged: every migration but that one.
        const without = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name !== MISSING));
        const earlier = new Migrator({ db: k, provider: { getMigrations: async () => without }, ...(t.db.schema ? { migrationTableSchema: t.db.schema } : {}) });
        // As every migration of a test database: again if another file's dropped schema broke kysely's catalog read.
        assert.equal((await migrating(t.db, () => earlier.migrateToLatest())).error, undefined);
        const table = t.db.schema ? sql.table(`${t.db.schema}.kysely_migration`) : sql.table('kysely_migration');
        const names = async (): Promise<string[]> => (await sql<{ name: string }>`select name from ${table}`.execute(k)).rows.map((r) => r.name).sort();
        assert.ok(!(await names()).includes(MISSING));

        await migrate(t.db);
        assert.deepEqual(await names(), Object.keys(MIGRATIONS).sort());
        // What the missing migration adds is there.
        await k.selectFrom('clients').select('web_origins').execute();
      } finally {
        await t.drop();
      }
    });
  });
}
