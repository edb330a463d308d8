import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { realmPath } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm } from '../helpers/flow.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/** keycloak-admin-client's failure: its status and Keycloak's JSON body. */
async function failure(p: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    const e = err as { response?: { status: number }; responseData?: Record<string, unknown> };
    if (e.response) return { status: e.response.status, body: e.responseData ?? {} };
    throw err;
  }
  assert.fail('the call succeeded');
}

for (const dialect of dialects()) {
  describe(`admin API: Keycloak's login options, duplicate emails (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("a realm's login options: Keycloak's names and defaults, changed by realms.update", async () => {
      const fresh = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(fresh?.loginWithEmailAllowed, true);
      assert.equal(fresh?.duplicateEmailsAllowed, false);
      assert.equal(fresh?.rememberMe, false);
      assert.equal(fresh?.ssoSessionIdleTimeoutRememberMe, 0);
      assert.equal(fresh?.ssoSessionMaxLifespanRememberMe, 0);
      await ts.kc.realms.update({ realm: 'test' }, { rememberMe: true, ssoSessionIdleTimeoutRememberMe: 600, ssoSessionMaxLifespanRememberMe: 7200, loginWithEmailAllowed: false });
      const changed = await ts.kc.realms.findOne({ realm: 'test' });
      assert.deepEqual(
        [changed?.rememberMe, changed?.ssoSessionIdleTimeoutRememberMe, changed?.ssoSessionMaxLifespanRememberMe, changed?.loginWithEmailAllowed],
        [true, 600, 7200, false],
      );
      // The whole representation sent back (as the admin console does) changes nothing.
      await ts.kc.realms.update({ realm: 'test' }, changed!);
      assert.deepEqual(await ts.kc.realms.findOne({ realm: 'test' }), changed);
      // Bad values: 400, nothing changed.
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'test' }, { rememberMe: 'yes' as unknown as boolean })), 400);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'test' }, { ssoSessionMaxLifespanRememberMe: -1 })), 400);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'test' }, { ssoSessionIdleTimeoutRememberMe: 1.5 })), 400);
      await ts.kc.realms.update({ realm: 'test' }, { loginWithEmailAllowed: true, rememberMe: false });
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.ssoSessionMaxLifespanRememberMe, 7200);
    });

    test('an email another user has is refused: 409 "User exists with same email" (create and update, ignoring case)', async () => {
      const create = await failure(ts.kc.users.create({ realm: 'test', username: 'mallory', email: 'ALICE@example.com', enabled: true }));
      assert.equal(create.status, 409);
      assert.equal(create.body.errorMessage, 'User exists with same email');
      assert.equal((await ts.kc.users.find({ realm: 'test', username: 'mallory', exact: true })).length, 0, 'nothing was created');
      const { id } = await ts.kc.users.create({ realm: 'test', username: 'mallory', email: 'mallory@example.com', enabled: true });
      const update = await failure(ts.kc.users.update({ realm: 'test', id }, { email: 'alice@EXAMPLE.com' }));
      assert.equal(update.status, 409);
      assert.equal(update.body.errorMessage, 'User exists with same email');
      assert.equal((await ts.kc.users.findOne({ realm: 'test', id }))?.email, 'mallory@example.com');
      // Her own email, in other letters: not someone else's.
      await ts.kc.users.update({ realm: 'test', id }, { email: 'Mallory@Example.com', firstName: 'Mallory' });
      assert.equal((await ts.kc.users.findOne({ realm: 'test', id }))?.email, 'Mallory@Example.com');
    });

    test("duplicateEmailsAllowed: Keycloak's coupling with loginWithEmailAllowed; duplicates made then stay usable", async () => {
      await ts.kc.realms.update({ realm: 'test' }, { duplicateEmailsAllowed: true });
      let rep = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(rep?.duplicateEmailsAllowed, true);
      assert.equal(rep?.loginWithEmailAllowed, false, 'allowing duplicates turns login by email off');
      const { id } = await ts.kc.users.create({ realm: 'test', username: 'alice2', email: 'alice@example.com', enabled: true });
      await ts.kc.realms.update({ realm: 'test' }, { loginWithEmailAllowed: true });
      rep = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(rep?.loginWithEmailAllowed, true);
      assert.equal(rep?.duplicateEmailsAllowed, false, 'login by email turns duplicates off');
      // The duplicate made meanwhile stays; its other fields still change; a third one is refused.
      await ts.kc.users.update({ realm: 'test', id }, { firstName: 'Second', email: 'alice@example.com' });
      assert.equal((await ts.kc.users.findOne({ realm: 'test', id }))?.firstName, 'Second');
      assert.equal((await failure(ts.kc.users.create({ realm: 'test', username: 'alice3', email: 'alice@example.com' }))).status, 409);
      // Both sent at once: Keycloak's order (login option, then duplicates) leaves duplicates allowed.
      await ts.kc.realms.update({ realm: 'test' }, { loginWithEmailAllowed: true, duplicateEmailsAllowed: true });
      rep = await ts.kc.realms.findOne({ realm: 'test' });
      assert.deepEqual([rep?.loginWithEmailAllowed, rep?.duplicateEmailsAllowed], [false, true]);
      await ts.kc.realms.update({ realm: 'test' }, { loginWithEmailAllowed: true });
    });

    test("a user's sessions say truthfully whether they were remembered", async () => {
      await ts.kc.realms.update({ realm: 'test' }, { rememberMe: true });
      for (const rememberMe of [true, false]) {
        const jar = new CookieJar();
        const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
        const form = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
        const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: ts.user.password, ...(rememberMe ? { rememberMe: 'on' } : {}) });
        assert.equal(res.statusCode, 303);
      }
      const sessions = await ts.kc.users.listSessions({ realm: 'test', id: ts.user.id });
      assert.deepEqual(sessions.map((s) => (s as { rememberMe?: boolean }).rememberMe).sort(), [false, true]);
    });
  });
}
