import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dialects, migrateTo } from '../helpers/db.js';
import { startTestServer, basic, realmPath } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { openDatabase, migrate } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { createServices } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { tokenHash } from '../../src/crypto/random.js';

// Upgrading to refresh storage per chain (2026-11-23T0800_refresh_per_chain): a chain written in the
// per-token layout (a row per token, the used ones marked) keeps working with its current token, and its
// earlier tokens are reuses.
for (const dialect of dialects()) {
  describe(`upgrade to refresh storage per chain (${dialect})`, () => {
    test('a chain of the per-token layout keeps its current token; an earlier one revokes it', async () => {
      const ts = await startTestServer({ dialect });
      try {
        const auth = basic(ts.client.id, ts.client.secret);
        const r = await runAuthorization(ts);
        const t1 = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json().refresh_token as string;
        const t2 = (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t1 }, { authorization: auth })).json().refresh_token as string;
        const k = ts.db.db.kysely;
        const chain = await k.selectFrom('refresh_chains').select(['id', 'created_at']).executeTakeFirstOrThrow();

        // Back to the schema before per-chain storage, holding what the per-token layout wrote.
        const down = await migrateTo(ts.db.db, '2026-11-23T0100_refresh_token_keys');
        assert.equal(down.error, undefined);
        const at = Number(chain.created_at);
        await k.deleteFrom('refresh_tokens').execute();
        await k
          .insertInto('refresh_tokens')
          .values([
            { hash: tokenHash(t1), chain_id: chain.id, created_at: at, expires_at: at + 10_000, used_at: at + 1 },
            { hash: tokenHash(t2), chain_id: chain.id, created_at: at + 1, expires_at: at + 10_000, used_at: null },
          ])
          .execute();
        await ts.app.close();

        // The upgraded server: a new process in real life, so a new connection here too.
        const db = await openDatabase(ts.db.url);
        try {
          await migrate(db);
          const row = await db.kysely.selectFrom('refresh_chains').select(['current_hash', 'rotated_at']).where('id', '=', chain.id).executeTakeFirstOrThrow();
          assert.deepEqual({ ...row, rotated_at: Number(row.rotated_at) }, { current_hash: tokenHash(t2), rotated_at: at + 1 }); // the rotation minted t2 at at + 1
          const app = await buildApp({ services: createServices(ts.config, new Store(db), ts.clock) });
          try {
            const refresh = (token: string) =>
              app.inject({
                method: 'POST',
                url: realmPath('/protocol/openid-connect/token'),
                headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
                payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
              });
            const t3 = await refresh(t2);
            assert.equal(t3.statusCode, 200, t3.body);
            const t4 = await refresh(t3.json().refresh_token as string);
            assert.equal(t4.statusCode, 200, t4.body);
            // t1 was used before the upgrade: presenting it is a reuse, which revokes the chain.
            assert.equal((await refresh(t1)).json().error, 'invalid_grant');
            assert.equal((await refresh(t4.json().refresh_token as string)).json().error, 'invalid_grant');
          } finally {
            await app.close();
          }
        } finally {
          await db.close();
        }
      } finally {
        await ts.db.drop();
      }
    });
  });
}
