import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';

for (const dialect of dialects()) {
  describe(`audit events (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('logins, consents, codes, refreshes, reuse, revocation and failures are recorded', async () => {
      // Successful refreshes are stored only when the realm asks for them (test/http/stored-events.test.ts).
      await ts.store.realms.update(REALM, { storedEventTypes: ['REFRESH_TOKEN', 'CODE_ISSUED', 'CODE_TO_TOKEN'] });
      const auth = basic(ts.client.id, ts.client.secret);
      // A failed login first.
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?client_id=${ts.client.id}&redirect_uri=${encodeURIComponent(ts.client.redirectUri)}&response_type=code&scope=openid`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: 'wrong password' });

      const r = await runAuthorization(ts);
      const t = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json();
      const t2 = (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth })).json();
      await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth });
      await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(ts.client.id, 'bad') });
      await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/revoke'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: `token=${t2.refresh_token}`,
      });

      const events = (await ts.store.events.list(REALM, { limit: 100 })).reverse();
      const types = events.map((e) => `${e.type}:${e.outcome}`);
      for (const expected of [
        'LOGIN_ERROR:failure',
        'LOGIN:success',
        'CONSENT:success',
        'CODE_ISSUED:success',
        'CODE_TO_TOKEN:success',
        'REFRESH_TOKEN:success',
        'TOKEN_REUSE:failure',
        'CLIENT_AUTH_ERROR:failure',
        'REVOKE:success',
      ]) {
        assert.ok(types.includes(expected), `${expected} missing from ${types.join(', ')}`);
      }
      const failedLogin = events.find((e) => e.type === 'LOGIN_ERROR')!;
      assert.equal(failedLogin.username, 'alice');
      assert.equal(failedLogin.ip, '127.0.0.1');
      // The code exchange names the user by name too (its row is read with the user's).
      assert.equal(events.find((e) => e.type === 'CODE_TO_TOKEN')!.username, ts.user.username);
      const refresh = events.find((e) => e.type === 'REFRESH_TOKEN')!;
      assert.equal(refresh.userId, ts.user.id);
      assert.equal(refresh.clientId, ts.client.id);
      // Filters: by user (id or attempted username), by client, by time.
      const mine = await ts.store.events.list(REALM, { userId: ts.user.id, username: 'alice' });
      assert.ok(mine.some((e) => e.type === 'LOGIN_ERROR') && mine.some((e) => e.type === 'REFRESH_TOKEN'));
      assert.equal((await ts.store.events.list(REALM, { clientId: 'nobody' })).length, 0);
      assert.equal((await ts.store.events.list(REALM, { since: Math.floor(ts.clock.nowMs() / 1000) + 10 })).length, 0);
      // No secret ends up in the log.
      const all = JSON.stringify(events);
      for (const secret of [ts.client.secret, t.refresh_token, t.access_token, ts.user.password, r.code!]) assert.ok(!all.includes(secret));
    });
  });
}
