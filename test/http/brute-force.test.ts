import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm } from '../helpers/flow.js';

for (const dialect of dialects()) {
  describe(`brute-force protection of the login (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** A login form, and a function that posts one attempt to it. */
    async function loginForm(ip = '127.0.0.1') {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      return (username: string, password: string) =>
        ts.app.inject({
          method: 'POST',
          url: form.action,
          remoteAddress: ip,
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username, password }).toString(),
        });
    }

    test('failures slow down, then lock the username for a growing period', async () => {
      const attempt = await loginForm();
      for (let i = 0; i < 2; i++) assert.match((await attempt('alice', 'wrong-password')).body, /Invalid username or password/);
      // Third failure: from now on each attempt waits a little.
      assert.match((await attempt('alice', 'wrong-password')).body, /Invalid username or password/);
      let res = await attempt('alice', ts.user.password);
      assert.equal(res.statusCode, 429);
      assert.match(res.body, /Wait 2 seconds/);
      ts.clock.advance(3);
      assert.match((await attempt('alice', 'wrong-password')).body, /Invalid username or password/);
      ts.clock.advance(5);
      // Fifth failure: a lockout of the realm's 60 seconds; even the right password is refused.
      assert.match((await attempt('alice', 'wrong-password')).body, /Invalid username or password/);
      res = await attempt('alice', ts.user.password);
      assert.equal(res.statusCode, 429);
      assert.match(res.body, /locked for 60 seconds/);
      assert.ok(Number(res.headers['retry-after']) > 0);
      ts.clock.advance(61);
      // The next lockout lasts twice as long.
      for (let i = 0; i < 5; i++) {
        await attempt('alice', 'wrong-password');
        ts.clock.advance(10);
      }
      res = await attempt('alice', ts.user.password);
      assert.match(res.body, /locked for/);
      ts.clock.advance(120);
      res = await attempt('alice', ts.user.password);
      assert.equal(res.statusCode, 303, 'the right password works once the lock has passed');
      const events = await ts.store.events.list(REALM, { username: 'alice' });
      assert.equal(events.filter((e) => e.type === 'LOCKOUT').length, 2);
    });

    test('a locked name reads the same whether or not the user exists', async () => {
      const lockedBody = async (name: string): Promise<string> => {
        const attempt = await loginForm('10.0.0.2');
        for (let i = 0; i < 5; i++) {
          await attempt(name, 'wrong-password');
          ts.clock.advance(10);
        }
        return (await attempt(name, 'wrong-password')).body.replace(/value="[^"]*"/g, '').replace(/login-actions\/[^/]+/g, '');
      };
      const known = await lockedBody('alice');
      ts.clock.advance(3600);
      const unknown = await lockedBody('nobody-here');
      assert.match(known, /locked for 50 seconds/);
      assert.equal(known.replace(/alice/g, 'X'), unknown.replace(/nobody-here/g, 'X'));
      ts.clock.advance(3600);
    });

    test('one address guessing many usernames is locked too', async () => {
      const attempt = await loginForm('10.0.0.3');
      for (let i = 0; i < 20; i++) await attempt(`user${i}`, 'wrong-password');
      const res = await attempt('alice', ts.user.password);
      assert.equal(res.statusCode, 429);
      // Another address is not affected.
      const other = await loginForm('10.0.0.4');
      assert.equal((await other('alice', ts.user.password)).statusCode, 303);
    });
  });
}
