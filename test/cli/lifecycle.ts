import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

// The installed command (npm test builds dist/ first), over the database of a running server: what the
// CLI changes, the server sees at once.

for (const dialect of dialects()) {
  describe(`realmgate user, org and token lifecycle commands (${dialect})`, () => {
    const { ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function tokens(username = 'alice', organization = 'acme'): Promise<{ access_token: string; refresh_token: string }> {
      const r = await runAuthorization(ts, { username, organization, query: { scope: 'openid core_data' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }
    const refreshStatus = async (token: string): Promise<number> =>
      (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode;
    const userinfoStatus = async (token: string): Promise<number> =>
      (await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/userinfo'), headers: { authorization: `Bearer ${token}` } })).statusCode;

    test('--help lists the lifecycle commands', () => {
      assert.match(ok(['user', '--help']), /update.*\n(.*\n)*.*disable(.*\n)*.*enable(.*\n)*.*delete(.*\n)*.*sessions(.*\n)*.*logout/);
      assert.match(ok(['token', 'revoke', '--help']), /--user(.*\n)*.*--client/);
    });

    test('list commands of an unknown realm exit 1', () => {
      fails(['user', 'list', 'nope'], /realm nope does not exist/, { status: 1 });
      fails(['org', 'list', 'nope'], /realm nope does not exist/, { status: 1 });
      fails(['user', 'sessions', 'nope', 'alice'], /realm nope does not exist/, { status: 1 });
    });

    test('user disable refuses the live tokens at once; enable lets the user log in again', async () => {
      ok(['user', 'create', REALM, 'mia', '--password', PASSWORD, '--org', 'acme']);
      const t = await tokens('mia');
      const listed = ok(['user', 'sessions', REALM, 'mia']);
      assert.match(listed, /^session\tstarted\tlast access\taddress\tclients\n/);
      assert.match(listed, new RegExp(`\\t127\\.0\\.0\\.1\\t${ts.client.id}\\n`));
      assert.match(ok(['user', 'disable', REALM, 'mia']), /disabled user mia/);
      const mia = (await ts.store.users.findByUsername(REALM, 'mia'))!;
      const events = await ts.store.adminEvents.list(REALM);
      assert.ok(events.some((e) => e.via === 'cli' && e.operation === 'UPDATE' && e.resourcePath === `users/${mia.id}`), 'the change is an admin event');
      assert.match(ok(['user', 'list', REALM, '--search', 'mia']), /^mia\t\tdisabled\n$/);
      assert.equal(await userinfoStatus(t.access_token), 401);
      assert.equal(await refreshStatus(t.refresh_token), 400);
      assert.equal(ok(['user', 'sessions', REALM, 'mia']).trim().split('\n').length, 1, 'only the header: the session ended');
      ok(['user', 'enable', REALM, 'MIA']);
      const again = await tokens('mia');
      assert.equal(await userinfoStatus(again.access_token), 200);
    });

    test('user update, logout and delete', async () => {
      ok(['org', 'create', REALM, 'umbrella', '--name', 'Umbrella Corp', '--domain', 'umbrella.example']);
      ok(['user', 'create', REALM, 'nora', '--password', PASSWORD, '--org', 'acme']);
      fails(['user', 'update', REALM, 'nora', '--email', 'nope'], /not an email address/, { status: 1 });
      ok(['user', 'update', REALM, 'nora', '--email', 'nora@umbrella.example', '--org', 'acme', '--org', 'umbrella']);
      assert.match(ok(['org', 'members', 'list', REALM, 'umbrella']), /^nora\tnora@umbrella.example\n$/);
      const t = await tokens('nora', 'umbrella');
      assert.match(ok(['user', 'logout', REALM, 'nora']), /ended 1 session\(s\) and revoked 1 token chain\(s\)/);
      assert.equal(await userinfoStatus(t.access_token), 401);
      assert.equal(await refreshStatus(t.refresh_token), 400);
      const u = await tokens('nora', 'acme');
      assert.match(ok(['user', 'consents', REALM, 'nora']), new RegExp(`^${ts.client.id}\\t.*core_data`, 'm'));
      assert.match(ok(['user', 'delete', REALM, 'nora']), /deleted user nora/);
      assert.equal(await userinfoStatus(u.access_token), 401);
      assert.doesNotMatch(ok(['user', 'list', REALM]), /nora/);
      fails(['user', 'delete', REALM, 'nora'], /user nora does not exist/, { status: 1 });
    });

    test('token revoke --user | --client', async () => {
      ok(['user', 'create', REALM, 'olga', '--password', PASSWORD, '--org', 'acme']);
      const o = await tokens('olga');
      assert.match(ok(['token', 'revoke', REALM, '--user', 'olga']), /revoked 1 token chain\(s\) of user olga/);
      assert.equal(await refreshStatus(o.refresh_token), 400);
      const a = await tokens();
      assert.match(ok(['token', 'revoke', REALM, '--client', ts.client.id]), /revoked [1-9]\d* token chain\(s\) of client web-app/);
      assert.equal(await userinfoStatus(a.access_token), 401);
      fails(['token', 'revoke', REALM], /exactly one of --user or --client/, { status: 1 });
      fails(['token', 'revoke', REALM, '--client', 'nope'], /client nope does not exist/, { status: 1 });
      fails(['token', 'revoke', 'nope', '--user', 'olga'], /realm nope does not exist/, { status: 1 });
    });

  });
}
