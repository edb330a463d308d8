import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

// Organization commands of the installed command (npm test builds dist/ first), over the database of a
// running server: what the CLI changes, the server sees at once.

for (const dialect of dialects()) {
  describe(`realmgate org lifecycle commands (${dialect})`, () => {
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
    test('org update, disable, enable, members and delete', async () => {
      ok(['org', 'create', REALM, 'wayne', '--domain', 'wayne.example']);
      ok(['org', 'create', REALM, 'hooli', '--description', 'Making the world a better place']);
      fails(['org', 'update', REALM, 'hooli', '--domain', 'wayne.example'], /already has this alias or one of these domains/, { status: 1 });
      ok(['org', 'update', REALM, 'hooli', '--name', 'Hooli XYZ', '--domain', 'hooli.example']);
      // The invitation's redirect URL: set, refused when not an http(s) URL, removed with "".
      ok(['org', 'update', REALM, 'hooli', '--redirect-url', 'https://hooli.example/welcome']);
      assert.equal((await ts.store.organizationAdmin.get((await ts.store.organizations.findByAlias(REALM, 'hooli'))!.id))!.redirectUrl, 'https://hooli.example/welcome');
      fails(['org', 'update', REALM, 'hooli', '--redirect-url', 'ftp://hooli.example/'], /redirectUrl must be an absolute http or https URL/, { status: 1 });
      ok(['org', 'update', REALM, 'hooli', '--redirect-url', '']);
      assert.equal((await ts.store.organizationAdmin.get((await ts.store.organizations.findByAlias(REALM, 'hooli'))!.id))!.redirectUrl, null);
      assert.match(ok(['org', 'list', REALM]), /^hooli\tHooli XYZ\tenabled\thooli.example$/m);
      ok(['user', 'create', REALM, 'pete', '--password', PASSWORD]);
      ok(['org', 'members', 'add', REALM, 'hooli', 'pete']);
      const t = await tokens('pete', 'hooli');
      ok(['org', 'disable', REALM, 'hooli']);
      assert.match(ok(['org', 'list', REALM]), /^hooli\tHooli XYZ\tdisabled/m);
      assert.equal(await refreshStatus(t.refresh_token), 400);
      ok(['org', 'enable', REALM, 'hooli']);
      const t2 = await tokens('pete', 'hooli');
      ok(['org', 'members', 'remove', REALM, 'hooli', 'pete']);
      assert.equal(await refreshStatus(t2.refresh_token), 400);
      ok(['org', 'delete', REALM, 'hooli']);
      assert.doesNotMatch(ok(['org', 'list', REALM]), /hooli/);
      fails(['org', 'delete', REALM, 'hooli'], /organization hooli does not exist/, { status: 1 });
    });
  });
}
