import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';

const ACCOUNT = realmPath('/account');

/** Every form on the page: its action and its fields. */
function forms(html: string): Array<{ action: string; fields: Record<string, string> }> {
  return [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)].map((m) => ({
    action: m[1]!.replace(/&amp;/g, '&'),
    fields: Object.fromEntries([...m[2]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((f) => [f[1]!, f[2]!])),
  }));
}

for (const dialect of dialects()) {
  describe(`account page (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function grantAndTokens(): Promise<{ jar: CookieJar; refresh: string }> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      return { jar: r.jar, refresh: res.json().refresh_token };
    }

    test('without a session the account page asks to sign in', async () => {
      const jar = new CookieJar();
      const page = await inject(ts.app, jar, 'GET', ACCOUNT);
      assert.match(page.body, /name="password"/);
      const form = parseForm(page.body);
      const bad = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: 'nope' });
      assert.match(bad.body, /Invalid username or password/);
      const ok = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: ts.user.password });
      assert.equal(ok.statusCode, 303);
      const account = await inject(ts.app, jar, 'GET', ACCOUNT);
      assert.match(account.body, /Signed in as <strong>alice<\/strong>/);
      assert.match(account.body, /This browser/);
    });

    test('an application with access is listed and its access can be revoked', async () => {
      const { jar, refresh } = await grantAndTokens();
      const page = await inject(ts.app, jar, 'GET', ACCOUNT);
      assert.match(page.body, /<strong>Web App<\/strong> <span class="muted">for Acme Inc.<\/span>/);
      assert.match(page.body, /Read and change your organization&#39;s core business data/);
      assert.match(page.body, /Last used/);
      const revoke = forms(page.body).find((f) => f.action.endsWith('/account/revoke'))!;
      // Without the CSRF token nothing happens.
      await inject(ts.app, jar, 'POST', revoke.action, { ...revoke.fields, csrf: 'forged' });
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode, 200);
      const { refresh: second } = await grantAndTokens();
      const done = await inject(ts.app, jar, 'POST', revoke.action, revoke.fields);
      assert.match(done.body, /Access revoked/);
      assert.doesNotMatch(done.body, /<strong>Web App<\/strong>/);
      const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: second }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.json().error, 'invalid_grant');
      // The consent is gone too: the next authorization asks again.
      assert.deepEqual((await runAuthorization(ts, { jar })).pages, ['consent', 'organization']);
    });

    test('another browser can be signed out from the list', async () => {
      const a = await grantAndTokens();
      const b = await grantAndTokens();
      const page = await inject(ts.app, a.jar, 'GET', ACCOUNT);
      const other = forms(page.body).filter((f) => f.action.endsWith('/sessions/end'));
      assert.ok(other.length >= 2);
      const bPage = await inject(ts.app, b.jar, 'GET', ACCOUNT);
      const bCurrent = /This browser[\s\S]*?name="session_id" value="([^"]*)"/.exec(bPage.body)![1]!;
      const target = other.find((f) => f.fields.session_id === bCurrent)!;
      await inject(ts.app, a.jar, 'POST', target.action, target.fields);
      assert.match((await inject(ts.app, b.jar, 'GET', ACCOUNT)).body, /name="password"/);
      assert.match((await inject(ts.app, a.jar, 'GET', ACCOUNT)).body, /Signed in as/);
    });
  });
}
