import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { createServices } from '../../src/services.js';
import { Store } from '../../src/storage/store.js';
import { openDatabase, type Db } from '../../src/storage/database.js';
import { createClient, revokeBefore, rotateKeys } from '../../src/admin/operations.js';
import { addMappers } from '../../src/admin/operations/protocol-mappers.js';
import { NO_MAPPERS } from '../../src/oauth/protocol-mappers.js';

// Issue 11 item 4: a change made by another node (here: another process's connection) reaches every
// node's caches within REALMGATE_CACHE_TTL_MS, and not only when the same process made it.
for (const dialect of dialects()) {
  describe(`caches across nodes (${dialect})`, () => {
    let ts: TestServer;
    let otherDb: Db;
    before(async () => {
      ts = await startTestServer({ dialect });
      otherDb = await openDatabase(ts.db.url, { synchronous: 'NORMAL' });
    });
    after(async () => {
      await otherDb.close();
      await ts.close();
    });

    test('realm, client and key changes made elsewhere show within the cache window', async () => {
      // A node with the documented 2-second window, on the test's clock.
      const node = createServices({ ...ts.config, cacheTtlMs: 2000 }, ts.store, ts.clock);
      const elsewhere = new Store(otherDb);
      assert.equal((await node.cache.realm(REALM))!.notBefore, 0);
      assert.equal(await node.cache.client(REALM, 'late-app'), undefined);
      const kid = (await node.keys.jwks(REALM)).keys[0]!.kid;

      await revokeBefore(elsewhere, { realmId: REALM, at: 1234 });
      await createClient(elsewhere, { realmId: REALM, clientId: 'late-app', redirectUris: ['https://late.example/cb'] });
      const rotated = await rotateKeys(elsewhere, { realmId: REALM }, { clock: ts.clock });

      // A client that did not exist is never cached as missing: it works at once.
      assert.ok(await node.cache.client(REALM, 'late-app'));
      // Within the window the cached realm and keys may still be the old ones ...
      assert.equal((await node.cache.realm(REALM))!.notBefore, 0);
      assert.equal((await node.keys.jwks(REALM)).keys.length, 1);
      // ... and after it, never.
      ts.clock.advance(2.001);
      assert.equal((await node.cache.realm(REALM))!.notBefore, 1234);
      const kids = (await node.keys.jwks(REALM)).keys.map((k) => k.kid);
      assert.ok(kids.includes(rotated.kid) && kids.includes(kid!));
    });

    test('protocol mappers: a realm without any costs one query per window; one added elsewhere shows within the window', async () => {
      const node = createServices({ ...ts.config, cacheTtlMs: 2000 }, ts.store, ts.clock);
      const elsewhere = new Store(otherDb);
      let queries = 0;
      const listRealm = ts.store.protocolMappers.listRealm.bind(ts.store.protocolMappers);
      ts.store.protocolMappers.listRealm = (realmId: string) => {
        queries++;
        return listRealm(realmId);
      };
      try {
        // No mappers: the shared empty value, read once for the window.
        assert.equal(await node.cache.protocolMappers(REALM), NO_MAPPERS);
        assert.equal(await node.cache.protocolMappers(REALM), NO_MAPPERS);
        assert.equal(queries, 1);
        assert.deepEqual(NO_MAPPERS.select('web-app', ['openid', 'profile']), []);
        await addMappers(elsewhere, { realmId: REALM, ownerType: 'client', owner: 'web-app' }, [
          { name: 'tenant', protocolMapper: 'oidc-hardcoded-claim-mapper', config: { 'claim.name': 'tenant', 'claim.value': 't1', 'access.token.claim': 'true' } },
        ]);
        // Within the window the cached "none" may stand ...
        assert.equal(await node.cache.protocolMappers(REALM), NO_MAPPERS);
        assert.equal(queries, 1);
        // ... after it, never.
        ts.clock.advance(2.001);
        const mappers = await node.cache.protocolMappers(REALM);
        assert.equal(mappers.none, false);
        assert.equal(mappers.select('web-app', []).length, 1);
        assert.equal(queries, 2);
      } finally {
        ts.store.protocolMappers.listRealm = listRealm;
      }
    });
  });
}
