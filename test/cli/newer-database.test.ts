import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { cliRunner } from '../helpers/cli.js';
import { dialects, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { openDatabase, type Db } from '../../src/storage/database.js';

// A database a newer Realmgate migrated (a migration this build does not know): every command says so
// in one line, exits 1 and changes nothing.
for (const dialect of dialects()) {
  describe(`a database migrated by a newer Realmgate (${dialect})`, () => {
    const { fails } = cliRunner(() => tdb.url);
    let tdb: TestDatabase;
    const table = (db: Db) => (db.schema ? sql.table(`${db.schema}.kysely_migration`) : sql.table('kysely_migration'));
    async function state(): Promise<string> {
      const db = await openDatabase(tdb.url);
      try {
        const migrations = await sql<{ name: string }>`select name from ${table(db)} order by name`.execute(db.kysely);
        const realms = await db.kysely.selectFrom('realms').select('id').execute();
        return JSON.stringify([migrations.rows, realms]);
      } finally {
        await db.close();
      }
    }
    before(async () => {
      tdb = await createTestDatabase(dialect);
      await sql`insert into ${table(tdb.db)} (name, timestamp) values ('9999_future', '2099-01-01T00:00:00.000Z')`.execute(tdb.db.kysely);
      await tdb.db.close();
    });
    after(async () => {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
    });

    test('migrate, realm create and start refuse it naming the unknown migration, and change nothing', async () => {
      const before = await state();
      const message = /^realmgate: the database was migrated by a newer Realmgate \(its migration 9999_future is unknown to this version\): this version cannot use it/m;
      fails(['migrate'], message, { status: 1 });
      fails(['realm', 'create', 'later'], message, { status: 1 });
      fails(['start', '--workers', '1', '--port', '0'], message, { status: 1 });
      assert.equal(await state(), before);
    });
  });
}
