// The PostgreSQL test databases of test/helpers/db.ts: a schema a test drops is emptied and handed to the
// next test database instead of being dropped, when its structure is still the template's. These tests
// guard what every other test relies on: a test database starts empty (but for kysely's own rows) and
// migrated, whatever the test before did with its schema. Other test files take from and give to the
// same pool meanwhile, so each test follows its own schemas by name (recycled, reusedFrom).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { createTestDatabase, migrateTo, recycled, reusedFrom, type TestDatabase } from '../helpers/db.js';
import { migrate } from '../../src/storage/database.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createRealm, createUser } from '../../src/admin/operations.js';

const base = process.env.TEST_DATABASE_URL;
const NAMES = Object.keys(MIGRATIONS).sort();

async function schemaExists(schema: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
  } finally {
    await c.end();
  }
}

async function fill(tdb: TestDatabase): Promise<void> {
  const store = new Store(tdb.db);
  await createRealm(store, { id: 'r' });
  await createClient(store, { realmId: 'r', clientId: 'web', redirectUris: ['http://127.0.0.1/cb'] });
  await createUser(store, { realmId: 'r', username: 'alice', password: 'correct horse battery' });
}

async function assertFresh(tdb: TestDatabase): Promise<void> {
  const k = tdb.db.kysely;
  for (const table of ['realms', 'clients', 'users', 'signing_keys', 'events', 'kysely_migration_lock'] as const) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(k);
    assert.equal(rows[0]!.n, table === 'kysely_migration_lock' ? 1 : 0, `${table} holds what the template holds`);
  }
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(k);
  assert.deepEqual(applied.rows.map((r) => r.name), NAMES);
  // Usable as a new database: the same realm, client and user again.
  await fill(tdb);
}

describe('recycled PostgreSQL test schemas', { skip: base ? false : 'TEST_DATABASE_URL is not set' }, () => {
  test('a dropped schema goes into the pool under another name; a test database taken from it is empty and migrated', async () => {
    const first = await createTestDatabase('postgres');
    await fill(first);
    const name = first.db.schema!;
    await first.drop();
    const pooledAs = recycled.get(name);
    assert.match(pooledAs ?? '', /^p_[0-9a-f]{12}$/, 'pooled under a new name');
    assert.equal(await schemaExists(name), false, 'nothing finds it under its old name');

    // Other files may take it first: take until it comes back or is gone from the pool; every one taken,
    // recycled or cloned, must be fresh.
    const taken: TestDatabase[] = [];
    try {
      while (taken.length < 20) {
        const next = await createTestDatabase('postgres');
        taken.push(next);
        await assertFresh(next);
        if (reusedFrom.get(next.db.schema!) === pooledAs || !(await schemaExists(pooledAs!))) break;
      }
      assert.ok(taken.some((t) => reusedFrom.get(t.db.schema!) !== null) || !(await schemaExists(pooledAs!)), 'a pooled schema was taken');
    } finally {
      for (const t of taken) await t.drop();
    }
  });

  test('a schema migrated down is dropped, not pooled; migrated back up, it is pooled again', async () => {
    const down = await createTestDatabase('postgres');
    assert.equal((await migrateTo(down.db, NAMES[NAMES.length - 2]!)).error, undefined);
    const name = down.db.schema!;
    await down.drop();
    assert.equal(recycled.get(name), null);
    assert.equal(await schemaExists(name), false);

    const again = await createTestDatabase('postgres');
    assert.equal((await migrateTo(again.db, NAMES[NAMES.length - 2]!)).error, undefined);
    await migrate(again.db);
    const againName = again.db.schema!;
    await again.drop();
    assert.match(recycled.get(againName) ?? '', /^p_/);
  });
});
