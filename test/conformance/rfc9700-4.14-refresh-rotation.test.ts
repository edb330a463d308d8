import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { Harness, assertTokenError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 9700 4.14 refresh token protection (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    const realm = async () => (await ts.store.realms.get(REALM))!;

    test('RFC 9700 4.14.2: every refresh issues a new refresh token and invalidates the one presented', async () => {
      const t = await h.tokens();
      const res = await h.refresh(t.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      assert.notEqual(res.json().refresh_token, t.refresh_token);
      assert.equal(await h.active(t.refresh_token), false);
      assert.equal(await h.active(res.json().refresh_token), true);
      // The public client (which cannot authenticate) gets the same rotation.
      const pub = await h.publicTokens();
      const next = await h.publicRefresh(pub.refresh_token);
      assert.equal(next.statusCode, 200, next.body);
      assert.notEqual(next.json().refresh_token, pub.refresh_token);
      assert.equal((await h.publicRefresh(next.json().refresh_token)).statusCode, 200);
    });

    test('RFC 9700 4.14.2: replaying a used refresh token revokes the active one and the access tokens of the grant', async () => {
      for (const [t, refresh] of [
        [await h.tokens(), (rt: string) => h.refresh(rt)],
        [await h.publicTokens(), (rt: string) => h.publicRefresh(rt)],
      ] as const) {
        // The attacker refreshes first with the stolen token; the legitimate client then presents it too.
        const attacker = (await refresh(t.refresh_token)).json();
        assert.ok(await h.accepted(attacker.access_token));
        assertTokenError(await refresh(t.refresh_token), 400, 'invalid_grant');
        assertTokenError(await refresh(attacker.refresh_token), 400, 'invalid_grant');
        assert.equal(await h.accepted(attacker.access_token), false);
        assert.equal(await h.accepted(t.access_token), false);
      }
    });

    test('RFC 9700 4.14.2: the relationship is retained: an old ancestor replayed after several rotations is detected', async () => {
      const first = await h.tokens();
      let current = first;
      for (let i = 0; i < 3; i++) current = (await h.refresh(current.refresh_token)).json();
      assertTokenError(await h.refresh(first.refresh_token), 400, 'invalid_grant');
      assertTokenError(await h.refresh(current.refresh_token), 400, 'invalid_grant');
    });

    test('RFC 9700 4.14.2: concurrent use of one refresh token succeeds at most once and is treated as reuse', async () => {
      const t = await h.tokens();
      const results = await Promise.all([1, 2, 3, 4].map(() => h.refresh(t.refresh_token)));
      const ok = results.filter((r) => r.statusCode === 200);
      assert.ok(ok.length <= 1, `${ok.length} refreshes succeeded`);
      for (const r of results.filter((x) => x.statusCode !== 200)) assertTokenError(r, 400, 'invalid_grant');
      for (const r of ok) assertTokenError(await h.refresh(r.json().refresh_token), 400, 'invalid_grant');
    });

    test('RFC 9700 4.14.2: revocation after reuse is limited to the compromised grant', async () => {
      const victim = await h.tokens();
      const bystander = await h.tokens();
      await h.refresh(victim.refresh_token);
      await h.refresh(victim.refresh_token);
      assert.equal((await h.refresh(bystander.refresh_token)).statusCode, 200);
    });

    test('RFC 9700 4.14.2: a refresh token expires after a period of inactivity; using it starts a new period', async () => {
      const idle = (await realm()).refreshIdleLifetime;
      let t = await h.tokens();
      ts.clock.advance(idle - 1);
      const res = await h.refresh(t.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      t = res.json();
      ts.clock.advance(idle - 1);
      const again = await h.refresh(t.refresh_token);
      assert.equal(again.statusCode, 200, again.body);
      ts.clock.advance(idle);
      assertTokenError(await h.refresh(again.json().refresh_token), 400, 'invalid_grant');
    });

    test('RFC 9700 4.14.2: a chain of refreshes ends at its maximum lifetime, however active', async () => {
      const saved = await realm();
      await ts.store.realms.update(REALM, { refreshIdleLifetime: 3600, refreshMaxLifetime: 3 * 3600 });
      try {
        let t = await h.tokens();
        assert.equal(t.refresh_expires_in, 3600);
        for (let i = 0; i < 5; i++) {
          ts.clock.advance(3000);
          const res = await h.refresh(t.refresh_token);
          if (i < 3) {
            assert.equal(res.statusCode, 200, `refresh ${i}: ${res.body}`);
            t = res.json();
            // refresh_expires_in never reaches past the end of the chain.
            assert.ok(t.refresh_expires_in <= 3 * 3600 - 3000 * (i + 1), String(t.refresh_expires_in));
          } else {
            assertTokenError(res, 400, 'invalid_grant');
          }
        }
      } finally {
        await ts.store.realms.update(REALM, { refreshIdleLifetime: saved.refreshIdleLifetime, refreshMaxLifetime: saved.refreshMaxLifetime });
      }
    });

    test('RFC 9700 4.14.2: refresh tokens are bound to the scope the resource owner consented to', async () => {
      const t = await h.tokens({ scope: 'core_data offline_access' });
      assertTokenError(await h.refresh(t.refresh_token, { scope: 'core_data offline_access exports' }), 400, 'invalid_scope');
      assert.equal((await h.refresh(t.refresh_token)).json().scope, 'core_data offline_access');
    });
  });
}
