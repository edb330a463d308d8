import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { createTestDatabase, dialects, migrateTo } from '../helpers/db.js';
import { migrate } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import type { Database } from '../../src/storage/schema.js';
import { createRealm, deleteRealm } from '../../src/admin/operations.js';
import { createUser, deleteUser } from '../../src/admin/operations/users.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { UserQuery } from '../../src/storage/repos/user-admin.js';

// 2026-11-27T1200_user_attribute_index: Keycloak's exact attribute search (q=name:value) reads an index of
// attribute values, kept with the attributes by every write, instead of scanning every user's JSON.
for (const dialect of dialects()) {
  describe(`the index of user attribute values (${dialect})`, () => {
    const found = async (store: Store, realmId: string, q: Partial<UserQuery>): Promise<string[]> => (await store.userAdmin.search(realmId, { first: 0, max: 100, ...q } as UserQuery)).map((u) => u.username);
    const rowsOf = async (k: Kysely<Database>, userId?: string): Promise<Array<[string, string]>> => {
      let q = k.selectFrom('user_attribute_values').select(['name', 'value_key']);
      if (userId) q = q.where('user_id', '=', userId);
      return (await q.orderBy('name').orderBy('value_key').execute()).map((r) => [r.name, r.value_key]);
    };

    test('every write keeps it: create, update, clear, delete, import, realm deletion; case folds every letter; long values', async () => {
      const tdb = await createTestDatabase(dialect);
      try {
        const store = new Store(tdb.db);
        const k = tdb.db.kysely;
        await createRealm(store, { id: 'idx' });
        const long = `Ü${'x'.repeat(600)}`;
        const a = await createUser(store, { realmId: 'idx', username: 'anna', password: 'anna password 1', attributes: { dept: ['Ops', 'OPS', 'dev'], city: ['ÄRHUS'], note: [long] } });
        await createUser(store, { realmId: 'idx', username: 'bert', password: 'bert password 1', attributes: { dept: ['dev'] } });
        // Each name's values once by key (Ops and OPS are one).
        assert.deepEqual((await rowsOf(k, a.id)).map(([n]) => n), ['city', 'dept', 'dept', 'note']);
        assert.deepEqual(await found(store, 'idx', { attributes: [['dept', 'ops']] }), ['anna']);
        assert.deepEqual(await found(store, 'idx', { attributes: [['dept', 'DEV']] }), ['anna', 'bert']);
        // Every letter folds, on SQLite too (its lower() folds ASCII only).
        assert.deepEqual(await found(store, 'idx', { attributes: [['city', 'ärhus']] }), ['anna']);
        // A value over 255 characters is keyed by its hash: still found exactly, ignoring case, never by a prefix.
        assert.deepEqual(await found(store, 'idx', { attributes: [['note', long.toLowerCase()]] }), ['anna']);
        assert.deepEqual(await found(store, 'idx', { attributes: [['note', long.slice(0, 300)]] }), []);
        assert.deepEqual(await found(store, 'idx', { attributes: [['note', 'xxx']], exact: false }), ['anna'], 'exact=false reads the attributes themselves');
        // Names are compared as they are.
        assert.deepEqual(await found(store, 'idx', { attributes: [['Dept', 'ops']] }), []);

        await store.users.update(a.id, { attributes: { dept: ['sales'] } });
        assert.deepEqual(await rowsOf(k, a.id), [['dept', 'sales']]);
        assert.deepEqual(await found(store, 'idx', { attributes: [['dept', 'ops']] }), []);
        assert.deepEqual(await found(store, 'idx', { attributes: [['dept', 'Sales']] }), ['anna']);
        // An update of other fields leaves them; {} clears them.
        await store.users.update(a.id, { firstName: 'Anna' });
        assert.deepEqual(await rowsOf(k, a.id), [['dept', 'sales']]);
        await store.users.update(a.id, { attributes: {} });
        assert.deepEqual(await rowsOf(k, a.id), []);
        await store.users.update(a.id, { attributes: { dept: ['ops'] } });
        await deleteUser(store, { realmId: 'idx', user: 'anna' });
        assert.deepEqual(await rowsOf(k, a.id), []);

        // A Keycloak realm file's users.
        const r = await importKeycloakRealms(store, [{ realm: 'imported', enabled: true, users: [{ id: '6f1c0000-0000-4000-8000-00000000c1e0', username: 'cleo', enabled: true, attributes: { employeeId: ['E-1001'] } }] }], { ifExists: 'fail' }, { ...cliActor(), via: 'import' as const });
        assert.equal(r.realms[0]!.status, 'imported', r.realms[0]!.reason);
        assert.deepEqual(await found(store, 'imported', { attributes: [['employeeId', 'e-1001']] }), ['cleo']);
        // Another realm's values are not this realm's.
        assert.deepEqual(await found(store, 'idx', { attributes: [['employeeId', 'e-1001']] }), []);
        await deleteRealm(store, { realmId: 'imported' });
        assert.deepEqual(await k.selectFrom('user_attribute_values').select('user_id').where('realm_id', '=', 'imported').execute(), []);
        assert.deepEqual(await rowsOf(k), [['dept', 'dev']], "bert's row stays");
      } finally {
        await tdb.drop();
      }
    });

    test('the migration indexes the attributes already stored; the search reads the index, not every user', async () => {
      const tdb = await createTestDatabase(dialect);
      try {
        const store = new Store(tdb.db);
        const k = tdb.db.kysely;
        await createRealm(store, { id: 'old' });
        const down = await migrateTo(tdb.db, '2026-11-27T0810_protocol_mappers');
        assert.equal(down.error, undefined);
        // Users written before the index: 1,203 of them (more than one batch of the migration), one without
        // attributes, one with a row that is not an object (written by hand).
        const values = Array.from({ length: 1203 }, (_, i) => ({ id: `u-${String(i).padStart(5, '0')}`, attributes: JSON.stringify(i === 7 ? {} : { badge: [`B-${i}`, 'all'] }) }));
        values.push({ id: 'u-broken', attributes: '["not", "an object"]' });
        for (let i = 0; i < values.length; i += 100) {
          const rows = values.slice(i, i + 100).map((v) => sql`(${v.id}, 'old', ${`user-${v.id}`}, 'x', 1, 0, ${v.attributes})`);
          await sql`insert into users (id, realm_id, username, password_hash, enabled, created_at, attributes) values ${sql.join(rows)}`.execute(k);
        }
        await migrate(tdb.db);
        assert.deepEqual(await found(store, 'old', { attributes: [['badge', 'b-1200']] }), ['user-u-01200']);
        assert.deepEqual(await found(store, 'old', { attributes: [['badge', 'b-7']] }), []);
        assert.equal(await store.userAdmin.count('old', { attributes: [['badge', 'ALL']] } as UserQuery), 1202);

        // The plan: the users come from the index (SQLite: the primary key's index; PostgreSQL, told not
        // to scan when it can help it: an index scan of user_attribute_values).
        const repo = store.userAdmin as unknown as { filtered(realmId: string, q: Partial<UserQuery>): { selectAll(): { compile(): { sql: string; parameters: readonly unknown[] } } } };
        const compiled = repo.filtered('old', { attributes: [['badge', 'b-5']] }).selectAll().compile();
        if (dialect === 'sqlite') {
          const plan = (await k.executeQuery(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]))).rows as Array<{ detail: string }>;
          const details = plan.map((p) => p.detail).join('\n');
          assert.match(details, /user_attribute_values USING (COVERING )?INDEX/, details);
        } else {
          const plan = await k.transaction().execute(async (trx) => {
            await sql`set local enable_seqscan = off`.execute(trx);
            return (await trx.executeQuery(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))).rows as Array<{ 'QUERY PLAN': string }>;
          });
          const text = plan.map((p) => p['QUERY PLAN']).join('\n');
          assert.match(text, /Index (Only )?Scan using user_attribute_values_pk on user_attribute_values/, text);
        }
      } finally {
        await tdb.drop();
      }
    });
  });
}
