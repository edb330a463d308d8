import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from './helpers.js';

// A realm's notBefore is checked by the operation (checkNotBefore): the admin API refuses what the CLI
// refuses, before it changes anything.
for (const dialect of dialects()) {
  describe(`admin API: realm notBefore (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    async function call(method: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
      const token = await ts.kc.getAccessToken();
      const r = await fetch(`${ts.baseUrl}/auth/admin${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, text: await r.text() };
    }

    test('PUT realm refuses a notBefore beyond any date, negative or more than a day ahead, and stores nothing', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      for (const notBefore of [99_999_999_999_999, -1, nowS + 2 * 86_400, Date.parse('2999-01-01') / 1000]) {
        const r = await call('PUT', '/realms/test', { notBefore });
        assert.equal(r.status, 400, `${notBefore}: ${r.text}`);
        assert.match(r.text, /not-before time/);
        assert.equal((await ts.store.realms.get('test'))!.notBefore, 0);
      }
      assert.equal((await call('PUT', '/realms/test', { notBefore: nowS - 60 })).status, 204);
      assert.equal((await ts.store.realms.get('test'))!.notBefore, nowS - 60);
      assert.equal((await call('PUT', '/realms/test', { notBefore: nowS + 3600 })).status, 204);
      // The representation read back and written again keeps its value.
      const rep = JSON.parse((await (await fetch(`${ts.baseUrl}/auth/admin/realms/test`, { headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } })).text())) as Record<string, unknown>;
      assert.equal((await call('PUT', '/realms/test', rep)).status, 204);
      assert.equal((await call('PUT', '/realms/test', { notBefore: 0 })).status, 204);
    });

    test('POST realms with a notBefore far ahead creates no realm', async () => {
      for (const body of [{ realm: 'nb1', notBefore: 99_999_999_999_999 }, { realm: 'nb2', notBefore: 32_503_680_000 }]) {
        const r = await call('POST', '/realms', body);
        assert.equal(r.status, 400, r.text);
        assert.equal(await ts.store.realms.get(body.realm), undefined);
      }
    });
  });
}
