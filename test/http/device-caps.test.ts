import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { nowSeconds } from '../../src/clock.js';

// Bounded storage (issue 11): every device authorization request stores a device code for 600 s, and
// anyone may ask for a public client's codes. Pending codes are capped per client address (public
// clients only) and overall, by the settings that cap unfinished sign-ins, counted apart from them.
for (const dialect of dialects()) {
  describe(`caps on pending device authorizations (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { maxInteractionsPerAddress: 3, maxInteractions: 6 } });
    });
    after(() => ts.close());

    const ask = (ip: string, client: 'public' | 'confidential'): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/auth/device'),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(client === 'confidential' ? { authorization: basic(ts.client.id, ts.client.secret) } : {}),
        },
        payload: new URLSearchParams({ ...(client === 'public' ? { client_id: 'native-app' } : {}), scope: 'openid' }).toString(),
        remoteAddress: ip,
      });

    const statuses = async (n: number, ip: string, client: 'public' | 'confidential'): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await ask(ip, client)).statusCode);
      return out;
    };

    /** Rows in device_codes, and those of them not yet expired, from one address or all. */
    async function rows(ip?: string): Promise<{ all: number; pending: number }> {
      let q = ts.db.db.kysely.selectFrom('device_codes').select(['expires_at']);
      if (ip) q = q.where('ip', '=', ip);
      const r = await q.execute();
      const now = nowSeconds(ts.clock);
      return { all: r.length, pending: r.filter((x) => Number(x.expires_at) > now).length };
    }

    function assertRefused(res: LightMyRequestResponse, description: RegExp): void {
      assert.equal(res.statusCode, 429, res.body);
      assert.equal(res.headers['retry-after'], '60');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      // RFC 6749 5.2: error and error_description, nothing else (no stack, no internals).
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
      assert.equal(body.error, 'temporarily_unavailable');
      assert.match(body.error_description, description);
    }

    test('a public client gets 429 past the cap of its address; another address still gets codes; the rows stay at the cap', async () => {
      assert.deepEqual(await statuses(3, '10.6.0.1', 'public'), [200, 200, 200]);
      assertRefused(await ask('10.6.0.1', 'public'), /too many pending device authorizations from this address/);
      assert.deepEqual(await statuses(5, '10.6.0.1', 'public'), [429, 429, 429, 429, 429]);
      assert.deepEqual(await rows('10.6.0.1'), { all: 3, pending: 3 });
      assert.equal((await ask('10.6.0.2', 'public')).statusCode, 200);
      assert.deepEqual(await rows(), { all: 4, pending: 4 });
      ts.clock.advance(601);
    });

    test('a confidential client is not capped per address', async () => {
      assert.deepEqual(await statuses(5, '10.6.0.3', 'confidential'), [200, 200, 200, 200, 200]);
      assert.deepEqual(await rows('10.6.0.3'), { all: 5, pending: 5 });
      ts.clock.advance(601);
    });

    test('the overall cap refuses every client; once the codes expire, requests succeed again', async () => {
      assert.deepEqual(await statuses(3, '10.6.0.4', 'public'), [200, 200, 200]);
      assert.deepEqual(await statuses(3, '10.6.0.5', 'confidential'), [200, 200, 200]);
      assertRefused(await ask('10.6.0.6', 'public'), /too many pending device authorizations on this server/);
      assertRefused(await ask('10.6.0.5', 'confidential'), /on this server/);
      for (let i = 0; i < 10; i++) assert.equal((await ask(`10.6.1.${i}`, i % 2 ? 'public' : 'confidential')).statusCode, 429);
      assert.equal((await rows()).pending, 6);
      // The codes expire after 600 s: room again, for the address that was at its cap too.
      ts.clock.advance(601);
      assert.equal((await ask('10.6.0.6', 'public')).statusCode, 200);
      assert.deepEqual(await statuses(3, '10.6.0.4', 'public'), [200, 200, 200]);
      assert.equal((await ask('10.6.0.5', 'confidential')).statusCode, 200);
      assert.equal((await rows()).pending, 5);
    });
  });
}
