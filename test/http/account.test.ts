import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations/users.js';

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

    test('the account page asks the terms and the profile (required actions) before its session; a declined terms leaves none; a form without its proof is refused', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'reviewer', password: 'reviewer password 1', email: 'reviewer@example.com', firstName: 'Re', lastName: 'Viewer', requiredActions: ['UPDATE_PROFILE', 'TERMS_AND_CONDITIONS'] });
      const signIn = async (jar: CookieJar) => {
        const form = parseForm((await inject(ts.app, jar, 'GET', ACCOUNT)).body);
        return inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'reviewer', password: 'reviewer password 1' });
      };
      // Declined: no session, the action stays.
      const j1 = new CookieJar();
      const t1 = await signIn(j1);
      assert.equal(pageKind(t1.body), 'terms', t1.body.slice(0, 300));
      const f1 = forms(t1.body)[0]!;
      assert.ok(f1.fields.proof);
      const declined = await inject(ts.app, j1, 'POST', f1.action, { ...f1.fields, cancel: '1' });
      assert.equal(declined.statusCode, 403);
      assert.match(declined.body, /Terms declined/);
      assert.match((await inject(ts.app, j1, 'GET', ACCOUNT)).body, /name="password"/);
      assert.ok((await ts.store.users.get(id))!.requiredActions.includes('TERMS_AND_CONDITIONS'));
      // Without the proof of the password: refused.
      const forged = await inject(ts.app, j1, 'POST', f1.action, { ...f1.fields, proof: 'forged', accept: '1' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await ts.store.users.get(id))!.attributes.terms_and_conditions, undefined);
      // Accepted, then the profile (prefilled), refused once, then saved: signed in.
      const j2 = new CookieJar();
      const t2 = await signIn(j2);
      const f2 = forms(t2.body)[0]!;
      const profile = await inject(ts.app, j2, 'POST', f2.action, { ...f2.fields, accept: '1' });
      assert.equal(pageKind(profile.body), 'update-profile', profile.body.slice(0, 300));
      assert.match(profile.body, /value="reviewer@example\.com"/);
      assert.match((await ts.store.users.get(id))!.attributes.terms_and_conditions?.[0] ?? '', /^\d+$/);
      const fp = forms(profile.body)[0]!;
      const empty = await inject(ts.app, j2, 'POST', fp.action, { ...fp.fields, email: 'reviewer@example.com', firstName: '', lastName: 'Viewer' });
      assert.equal(empty.statusCode, 400);
      assert.match(empty.body, /Please specify first name\./);
      assert.match((await inject(ts.app, j2, 'GET', ACCOUNT)).body, /name="password"/, 'no session yet');
      const saved = await inject(ts.app, j2, 'POST', fp.action, { ...fp.fields, email: 'reviewer@example.com', firstName: 'Rita', lastName: 'Viewer' });
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 300));
      assert.match((await inject(ts.app, j2, 'GET', ACCOUNT)).body, /Signed in as <strong>reviewer<\/strong>/);
      const user = (await ts.store.users.get(id))!;
      assert.deepEqual([user.firstName, user.requiredActions], ['Rita', []]);
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
