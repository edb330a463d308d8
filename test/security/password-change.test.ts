import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createUser, setUserPassword } from '../../src/admin/operations.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');

// Issue 12 item 4: a password change or reset signs the user out everywhere (offline chains too,
// unless asked to keep them), and is audited.
for (const dialect of dialects()) {
  describe(`changing a password ends sessions and chains (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    let n = 0;
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    interface Signed {
      online: { access_token: string; refresh_token: string };
      offline: { access_token: string; refresh_token: string };
      jar: Awaited<ReturnType<typeof runAuthorization>>['jar'];
      username: string;
    }

    async function exchange(code: string | undefined): Promise<{ access_token: string; refresh_token: string }> {
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    /** A user signed in in a browser, with an online chain and an offline chain. */
    async function signIn(username: string, password: string): Promise<Signed> {
      const first = await runAuthorization(ts, { username, password, query: { scope: 'openid core_data' } });
      const online = await exchange(first.code);
      const second = await runAuthorization(ts, { jar: first.jar, query: { scope: 'openid core_data offline_access' } });
      assert.ok(!second.pages.includes('login'), 'single sign-on');
      return { online, offline: await exchange(second.code), jar: first.jar, username };
    }

    async function newUser(): Promise<{ username: string; id: string }> {
      const username = `user${n++}`;
      const { id } = await createUser(ts.store, { realmId: REALM, username, password: 'first password', orgAliases: ['acme'] });
      return { username, id };
    }

    const refreshes = async (rt: string): Promise<boolean> =>
      (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth })).statusCode === 200;

    async function active(token: string): Promise<boolean> {
      const res = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token/introspect'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: new URLSearchParams({ token }).toString(),
      });
      return (res.json() as { active: boolean }).active;
    }

    async function browserSignedIn(s: Signed): Promise<boolean> {
      const r = await runAuthorization(ts, { jar: s.jar, query: { scope: 'openid core_data' }, username: s.username, password: 'second password' });
      return !r.pages.includes('login');
    }

    test('by default: browser sessions, online and offline chains and their access tokens all end; the event is audited', async () => {
      const u = await newUser();
      const s = await signIn(u.username, 'first password');
      const r = await setUserPassword(ts.store, { realmId: REALM, username: u.username, password: 'second password' });
      assert.equal(r.userId, u.id);
      assert.equal(await active(s.online.access_token), false);
      assert.equal(await active(s.offline.access_token), false);
      assert.equal(await refreshes(s.online.refresh_token), false);
      assert.equal(await refreshes(s.offline.refresh_token), false);
      assert.equal(await browserSignedIn(s), false);
      const events = await ts.store.events.list(REALM, { userId: u.id, username: u.username });
      const e = events.find((x) => x.type === 'UPDATE_PASSWORD');
      assert.ok(e, events.map((x) => x.type).join(' '));
      assert.equal(e.outcome, 'success');
      assert.equal(e.userId, u.id);
      // The new password works, the old one does not.
      await assert.rejects(runAuthorization(ts, { username: u.username, password: 'first password' }), /login failed/);
      assert.ok((await runAuthorization(ts, { username: u.username, password: 'second password' })).code);
    });

    test('keepOfflineSessions keeps offline chains only', async () => {
      const u = await newUser();
      const s = await signIn(u.username, 'first password');
      await setUserPassword(ts.store, { realmId: REALM, userId: u.id, password: 'second password', keepOfflineSessions: true });
      assert.equal(await refreshes(s.online.refresh_token), false);
      assert.equal(await active(s.online.access_token), false);
      assert.equal(await browserSignedIn(s), false);
      assert.equal(await active(s.offline.access_token), true);
      assert.equal(await refreshes(s.offline.refresh_token), true);
    });

    test('bad input is a validation error and changes nothing', async () => {
      const u = await newUser();
      const s = await signIn(u.username, 'first password');
      await assert.rejects(setUserPassword(ts.store, { realmId: REALM, username: u.username, password: 'short' }), /at least 8/);
      await assert.rejects(setUserPassword(ts.store, { realmId: REALM, username: 'nobody', password: 'long enough' }), /does not exist/);
      assert.equal(await refreshes(s.online.refresh_token), true);
    });

    test('realmgate user set-password does the same, and --keep-offline-sessions keeps offline chains', async () => {
      const run = (args: string[]) =>
        spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: ts.db.url, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 30_000 });
      const a = await newUser();
      const sa = await signIn(a.username, 'first password');
      let r = run(['user', 'set-password', REALM, a.username, '--password-stdin', '--keep-offline-sessions']);
      assert.equal(r.status, 1, 'no password on stdin');
      r = spawnSync(process.execPath, [BIN, 'user', 'set-password', REALM, a.username, '--password-stdin', '--keep-offline-sessions'], {
        env: { ...process.env, DATABASE_URL: ts.db.url, LOG_LEVEL: 'silent' },
        input: 'second password\n',
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /signed out/);
      assert.equal(await refreshes(sa.online.refresh_token), false);
      assert.equal(await refreshes(sa.offline.refresh_token), true);
      const b = await newUser();
      const sb = await signIn(b.username, 'first password');
      r = run(['user', 'set-password', REALM, b.username, '--password', 'second password']);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(await refreshes(sb.offline.refresh_token), false);
    });
  });
}
