import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, realmPath, PASSWORD, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { CookieJar, inject, pageKind, parseForm } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations.js';
import { verifyPassword } from '../../src/crypto/passwords.js';

// A signed-in user changes their password on the account page: the current one typed again (refused and
// counted when wrong), the new one twice; every other session ends, this browser gets a new one.
for (const dialect of dialects()) {
  describe(`the account page's password form (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function signedIn(username: string, password: string): Promise<{ jar: CookieJar; csrf: string }> {
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      assert.equal((await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password })).statusCode, 303);
      const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.equal(pageKind(page.body), 'account');
      return { jar, csrf: /name="csrf" value="([^"]*)"/.exec(page.body)![1]! };
    }

    test('refused without the current password, with a mismatch or a short one; then changed, other sessions ended', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'petra', password: PASSWORD });
      const other = await signedIn('petra', PASSWORD);
      const { jar, csrf } = await signedIn('petra', PASSWORD);
      const post = (fields: Record<string, string>) => inject(ts.app, jar, 'POST', realmPath('/account/password'), { csrf, ...fields });
      const hash = async (): Promise<string> => (await ts.store.users.get(id))!.passwordHash;
      const before = await hash();
      for (const [fields, words] of [
        [{ password: 'not the password', 'password-new': 'petra password 2', 'password-confirm': 'petra password 2' }, /The current password is not right/],
        [{ password: PASSWORD, 'password-new': 'petra password 2', 'password-confirm': 'petra password 3' }, /do not match/],
        [{ password: PASSWORD, 'password-new': 'short', 'password-confirm': 'short' }, /at least 8 characters/],
        [{ password: PASSWORD, 'password-new': PASSWORD, 'password-confirm': PASSWORD }, /different from your current one/],
      ] as const) {
        const r = await post(fields);
        assert.equal(r.statusCode, 400);
        assert.match(r.body, words);
        assert.equal(pageKind(r.body), 'account', 'still signed in');
      }
      // Without the CSRF token: nothing.
      assert.equal((await inject(ts.app, jar, 'POST', realmPath('/account/password'), { password: PASSWORD, 'password-new': 'petra password 2', 'password-confirm': 'petra password 2' })).statusCode, 303);
      assert.equal(await hash(), before);

      const done = await post({ password: PASSWORD, 'password-new': 'petra password 2', 'password-confirm': 'petra password 2' });
      assert.equal(done.statusCode, 200);
      assert.match(done.body, /Your password is changed/);
      assert.ok(await verifyPassword(await hash(), 'petra password 2'));
      // This browser has a new session; the other browser's ended.
      assert.equal(pageKind((await inject(ts.app, jar, 'GET', realmPath('/account'))).body), 'account');
      assert.equal(pageKind((await inject(ts.app, other.jar, 'GET', realmPath('/account'))).body), 'login');
      const events = (await ts.store.events.list('test', { userId: id, types: ['UPDATE_PASSWORD', 'LOGIN_ERROR'], order: 'asc' })).map((e) => `${e.type} ${e.reason ?? ''}`);
      assert.ok(events.some((e) => e.startsWith('LOGIN_ERROR password change: current password refused')), events.join(' | '));
      assert.ok(events.some((e) => e.startsWith('UPDATE_PASSWORD changed by the user on the account page')), events.join(' | '));
    });

    test('guessing the current password from a session is throttled like a sign-in', async () => {
      await createUser(ts.store, { realmId: 'test', username: 'quinn', password: PASSWORD });
      const { jar, csrf } = await signedIn('quinn', PASSWORD);
      let last = '';
      for (let i = 0; i < 8; i++) {
        const r = await inject(ts.app, jar, 'POST', realmPath('/account/password'), { csrf, password: `guess ${i}`, 'password-new': 'quinn password 2', 'password-confirm': 'quinn password 2' });
        last = r.body;
        ts.clock.advance(10);
      }
      assert.match(last, /Too many failed sign-in attempts/);
      // The right one inside the lock: refused.
      const r = await inject(ts.app, jar, 'POST', realmPath('/account/password'), { csrf, password: PASSWORD, 'password-new': 'quinn password 2', 'password-confirm': 'quinn password 2' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /locked/);
    });
  });
}
