import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { buildApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';

// Refresh concurrency grace (issue 11, item 5): a realm setting, off by default. Every edge is reached by
// moving the manual clock, never by waiting.
const WINDOW = 10;

for (const dialect of dialects()) {
  describe(`refresh concurrency grace (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    const setGrace = (seconds: number, max = 1): Promise<void> => ts.store.realms.update(REALM, { refreshGraceSeconds: seconds, refreshGraceMax: max });

    async function chain(): Promise<string> {
      const r = await runAuthorization(ts);
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(t.statusCode, 200, t.body);
      return t.json().refresh_token as string;
    }

    async function refresh(token: string, app: FastifyInstance = ts.app): Promise<{ status: number; token: string; error: string | undefined }> {
      const res = await app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
      });
      const body = res.json() as { refresh_token?: string; error?: string };
      return { status: res.statusCode, token: body.refresh_token ?? '', error: body.error };
    }

    const gen = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { gen: number }).gen;

    test('off by default: a rotated token presented again revokes the chain at once', async () => {
      await setGrace(0);
      assert.equal((await ts.store.realms.get(REALM))!.refreshGraceSeconds, 0);
      const t1 = await chain();
      const t2 = await refresh(t1);
      assert.equal(t2.status, 200);
      const again = await refresh(t1);
      assert.equal(again.error, 'invalid_grant');
      assert.equal((await refresh(t2.token)).error, 'invalid_grant', 'the chain is revoked');
    });

    test(`on (${WINDOW} s): presented again exactly ${WINDOW} s after its rotation, the token gets a valid successor`, async () => {
      await setGrace(WINDOW);
      const t1 = await chain();
      const t2 = await refresh(t1);
      ts.clock.advance(WINDOW);
      const t3 = await refresh(t1);
      assert.equal(t3.status, 200);
      assert.equal(gen(t3.token), 3, 'the successor follows the chain, not the presented token');
      // The successor is the chain's current token; it rotates normally.
      const t4 = await refresh(t3.token);
      assert.equal(t4.status, 200);
      // That normal rotation moved the window on: t1 and t2 are now earlier than it, so reuse.
      ts.clock.advance(1);
      assert.equal((await refresh(t2.token)).error, 'invalid_grant');
      assert.equal((await refresh(t4.token)).error, 'invalid_grant', 'the reuse revoked the chain');
      const counted = ts.services.audit.counter.get(REALM, 'REFRESH_TOKEN_GRACE', 'success');
      assert.ok(counted >= 1);
    });

    test(`on (${WINDOW} s): ${WINDOW + 1} s after its rotation, the token is a reuse and revokes the chain`, async () => {
      await setGrace(WINDOW);
      const t1 = await chain();
      const t2 = await refresh(t1);
      ts.clock.advance(WINDOW + 1);
      assert.equal((await refresh(t1)).error, 'invalid_grant');
      assert.equal((await refresh(t2.token)).error, 'invalid_grant', 'the chain is revoked');
    });

    test('in the window, a rotated token with an altered signature gets nothing and uses up nothing', async () => {
      await setGrace(WINDOW, 1);
      const t1 = await chain();
      const t2 = await refresh(t1);
      assert.equal(t2.status, 200);
      // The claims of the rotated token, a signature that is not the server's: not the current token, so
      // its signature is checked (the grant does not on the way in) and it is refused as invalid.
      const [h, p, sig] = t1.split('.') as [string, string, string];
      const forged = `${h}.${p}.${(sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)}`;
      const f = await refresh(forged);
      assert.equal(f.error, 'invalid_grant');
      // Neither a grace answer nor a revocation: the genuine rotated token still has its one grace answer,
      // and the chain lives on.
      const g = await refresh(t1);
      assert.equal(g.status, 200, 'the forged presentation used no grace answer');
      assert.equal((await refresh(g.token)).status, 200, 'the chain was not revoked');
    });

    test('at most M successors per rotation: the (M+1)th presentation revokes', async () => {
      await setGrace(WINDOW, 2);
      const t1 = await chain();
      const t2 = await refresh(t1);
      const g1 = await refresh(t1);
      const g2 = await refresh(t1);
      assert.deepEqual([t2.status, g1.status, g2.status], [200, 200, 200]);
      assert.deepEqual([gen(t2.token), gen(g1.token), gen(g2.token)], [2, 3, 4]);
      assert.equal((await refresh(t1)).error, 'invalid_grant');
      assert.equal((await refresh(g2.token)).error, 'invalid_grant', 'the chain is revoked');
    });

    test('two tabs at once, each on its own node over one database: both get a token; off, one wins and the chain is revoked', async () => {
      // A second node: its own services and app over the same database (the grace state is in the chain's row).
      const other = await buildApp({ services: createServices(ts.config, ts.store, ts.clock) });
      await other.ready();
      try {
        await setGrace(WINDOW);
        const t1 = await chain();
        const both = await Promise.all([refresh(t1), refresh(t1, other)]);
        assert.deepEqual(both.map((r) => r.status), [200, 200]);
        assert.notEqual(both[0]!.token, both[1]!.token);

        await setGrace(0);
        const u1 = await chain();
        const race = await Promise.all([refresh(u1), refresh(u1, other)]);
        assert.deepEqual(race.map((r) => r.status).sort(), [200, 400]);
        const winner = race.find((r) => r.status === 200)!;
        assert.equal((await refresh(winner.token)).error, 'invalid_grant', 'the loser revoked the chain');
      } finally {
        await other.close();
      }
    });
  });
}
