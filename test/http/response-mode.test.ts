import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, runAuthorization, tokenRequest, authorizeQuery } from '../helpers/flow.js';

for (const dialect of dialects()) {
  describe(`response_mode query, fragment, form_post (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const exchange = (code: string) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });

    test('discovery lists the three modes', async () => {
      const doc = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json();
      assert.deepEqual(doc.response_modes_supported, ['query', 'fragment', 'form_post']);
    });

    test('fragment: the code, state and iss come in the fragment, nothing in the query', async () => {
      const r = await runAuthorization(ts, { query: { response_mode: 'fragment', state: 'a b&c' } });
      assert.equal(r.location.search, '');
      assert.equal(r.location.origin + r.location.pathname, ts.client.redirectUri);
      assert.equal(r.params.get('state'), 'a b&c');
      assert.equal(r.params.get('iss'), `${ts.config.authUrl}/auth/realms/${REALM}`);
      assert.ok(r.code);
      assert.equal((await exchange(r.code)).statusCode, 200);
    });

    test('query stays the default, and explicit query works', async () => {
      for (const mode of [undefined, 'query']) {
        const r = await runAuthorization(ts, { query: { response_mode: mode } });
        assert.equal(r.location.hash, '');
        assert.ok(r.location.searchParams.get('code'));
      }
    });

    test('form_post: an escaped, auto-submitting form under the pages\' CSP, whose code works', async () => {
      const state = '"><script>alert(1)</script>';
      const r = await runAuthorization(ts, { query: { response_mode: 'form_post', state } });
      assert.ok(r.formPost);
      assert.equal(r.location.href, ts.client.redirectUri);
      assert.equal(r.params.get('state'), state);
      assert.ok(!r.formPost.includes('<script>alert'), 'state is escaped');
      assert.match(r.formPost, /<script src="\/auth\/resources\/form-post\.js" defer><\/script>/);
      assert.ok(r.code);
      assert.equal((await exchange(r.code)).statusCode, 200);
      const js = await ts.app.inject({ method: 'GET', url: '/auth/resources/form-post.js' });
      assert.equal(js.statusCode, 200);
      assert.match(String(js.headers['content-type']), /javascript/);
    });

    test('form_post page headers: no caching, no framing, scripts from this origin only', async () => {
      const jar = new CookieJar();
      // Already signed in from a previous flow in this jar: the code comes at once.
      await runAuthorization(ts, { jar, query: { response_mode: 'form_post' } });
      const res = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { response_mode: 'form_post' })}`);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    test('errors after the redirect URI is verified use the requested mode', async () => {
      const bad = (extra: Record<string, string>) =>
        ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { scope: 'openid nope', ...extra })}` });
      const frag = await bad({ response_mode: 'fragment' });
      assert.equal(frag.statusCode, 303);
      const u = new URL(frag.headers.location as string);
      assert.equal(new URLSearchParams(u.hash.slice(1)).get('error'), 'invalid_scope');
      assert.equal(u.search, '');
      const post = await bad({ response_mode: 'form_post' });
      assert.equal(post.statusCode, 200);
      assert.match(post.body, /name="error" value="invalid_scope"/);
      // An unknown mode is itself the error, delivered in the default mode.
      const unknown = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { response_mode: 'web_message' })}` });
      assert.equal(new URL(unknown.headers.location as string).searchParams.get('error'), 'invalid_request');
    });

    test('a denied consent and prompt=none go back in the requested mode', async () => {
      const denied = await runAuthorization(ts, { consent: 'deny', query: { response_mode: 'fragment', prompt: 'consent' } });
      assert.equal(denied.params.get('error'), 'access_denied');
      assert.equal(denied.location.search, '');
      const none = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { response_mode: 'form_post', prompt: 'none' })}` });
      assert.equal(none.statusCode, 200);
      assert.match(none.body, /name="error" value="login_required"/);
    });
  });
}
