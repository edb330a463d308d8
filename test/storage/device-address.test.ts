import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase, dialects, migrateTo, ownTables } from '../helpers/db.js';
import { migrate } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createRealm } from '../../src/admin/operations.js';

// 2026-11-26T0100_device_code_address: device codes record the client address that asked for them, so
// that pending ones can be capped per address (issue 11). Rows from before the column have none.
for (const dialect of dialects()) {
  describe(`device codes' client address (${dialect})`, () => {
    test('the column and its index come and go with the migration; older rows count overall, never per address', async () => {
      const tdb = await createTestDatabase(dialect);
      try {
        const k = tdb.db.kysely;
        const store = new Store(tdb.db);
        await createRealm(store, { id: 'r' });
        await createClient(store, { realmId: 'r', clientId: 'tv', redirectUris: ['http://127.0.0.1/cb'], public: true });
        const code = (hash: string, ip?: string) => ({ hash, userCodeHash: `u-${hash}`, realmId: 'r', clientId: 'tv', scopes: [], interval: 5, now: 1000, expiresAt: 1600, ...(ip ? { ip } : {}) });
        const indexes = async (): Promise<string[]> => {
          const q =
            dialect === 'sqlite'
              ? sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'device_codes'`
              : sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'device_codes' and schemaname = current_schema()`;
          return (await q.execute(k)).rows.map((r) => r.name);
        };
        assert.ok((await indexes()).includes('device_codes_ip'));

        const down = await migrateTo(tdb.db, '2026-11-25T0100_code_resources');
        assert.equal(down.error, undefined);
        assert.ok(!(await indexes()).includes('device_codes_ip'));
        // This test's own schema only (other tests' schemas hold a device_codes too, and come and go).
        const columns = async (): Promise<string[]> => (await ownTables(tdb.db)).get('device_codes') ?? [];
        assert.ok(!(await columns()).includes('ip'));
        // A row written before the column existed.
        await sql`insert into device_codes (hash, user_code_hash, realm_id, client_id, scopes, status, interval, created_at, expires_at) values ('old', 'u-old', 'r', 'tv', '[]', 'pending', 5, 1000, 1600)`.execute(k);

        await migrate(tdb.db);
        assert.ok((await indexes()).includes('device_codes_ip'));
        assert.equal((await k.selectFrom('device_codes').select('ip').where('hash', '=', 'old').executeTakeFirstOrThrow()).ip, null);
        await store.devices.create(code('new', '10.7.0.1'));
        assert.equal((await k.selectFrom('device_codes').select('ip').where('hash', '=', 'new').executeTakeFirstOrThrow()).ip, '10.7.0.1');
        await store.devices.create(code('new2', '10.7.0.1'));
        assert.equal(await store.devices.countPendingFrom('10.7.0.1', 1100, 100), 2);
        assert.equal(await store.devices.countPendingFrom('10.7.0.1', 1100, 1), 1, 'counted up to the cap');
        assert.equal(await store.devices.countPending(1100), 3);
        // Pending until expiry: a code expiring at 1600 no longer counts at 1600.
        assert.equal(await store.devices.countPending(1599), 3);
        assert.equal(await store.devices.countPending(1600), 0);
      } finally {
        await tdb.drop();
      }
    });
  });
}
