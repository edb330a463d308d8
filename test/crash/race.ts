/**
 * Exactly one winner across processes (issue 11, item 1): two real server processes (bin/realmgate.js
 * start, the bundle: `npm run build` first) over one database are sent the same refresh token at the
 * same time, a thousand times, each time on a fresh chain: exactly one answers 200; the other sees a
 * token that is no longer current, a reuse, and the chain is revoked (the grace window is off).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from '../helpers/db.js';
import { Store } from '../../src/storage/store.js';
import { killServerProcess, seedTokenClient, startServerProcess, type ServerProcess, type TokenClient } from './harness.js';

const RACES = 1000;

/** One file per database (sigkill-sqlite.test.ts, ...): each file must finish within the runner's timeout on a loaded machine. */
export function raceSuite(dialect: 'sqlite' | 'postgres'): void {
  describe(`two server processes racing one refresh token (${dialect})`, () => {
    test(`${RACES} races: exactly one winner each`, async (t) => {
      const tdb = await createTestDatabase(dialect);
      const store = new Store(tdb.db);
      const servers: ServerProcess[] = [];
      let tc: TokenClient | undefined;
      try {
        tc = await seedTokenClient(store, 24);
        servers.push(await startServerProcess(tdb.url), await startServerProcess(tdb.url));
        const [a, b] = servers as [ServerProcess, ServerProcess];
        let firstWins = 0;
        // Races run ten at a time, each on its own chain: independent races, so they may overlap.
        const race = async (i: number): Promise<void> => {
          const token = await tc!.newChain(i % 2 ? a : b);
          const form = { grant_type: 'refresh_token', refresh_token: token };
          const [ra, rb] = await Promise.all([tc!.post(a, form), tc!.post(b, form)]);
          assert.deepEqual([ra.status, rb.status].sort(), [200, 400], `race ${i + 1}: ${JSON.stringify([ra.json, rb.json])}`);
          const loser = ra.status === 400 ? ra : rb;
          assert.equal(loser.json.error, 'invalid_grant');
          if (ra.status === 200) firstWins++;
          // The loser's reuse revoked the chain: the winner's token is refused too.
          const winner = (ra.status === 200 ? ra : rb).json.refresh_token as string;
          if (i % 50 === 0) assert.equal((await tc!.post(a, { grant_type: 'refresh_token', refresh_token: winner })).status, 400);
        };
        for (let i = 0; i < RACES; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => race(i + j)));
        const revoked = await tdb.db.kysely.selectFrom('refresh_chains').select((eb) => eb.fn.countAll().as('n')).where('revoked_at', 'is not', null).executeTakeFirstOrThrow();
        assert.equal(Number(revoked.n), RACES);
        t.diagnostic(`${RACES} races, one winner each: server A won ${firstWins}, server B ${RACES - firstWins}`);
      } finally {
        for (const s of servers) await killServerProcess(s);
        await tc?.close();
        await tdb.drop();
      }
    });
  });
}
