import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

const SPA_ORIGIN = 'http://localhost:5173';

for (const dialect of dialects()) {
  describe(`session-status pages for keycloak-js (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createClient(ts.store, { realmId: REALM, clientId: 'spa', redirectUris: [`${SPA_ORIGIN}/`], public: true, webOrigins: ['+'] });
    });
    after(() => ts.close());

    const get = (p: string) => ts.app.inject({ method: 'GET', url: realmPath(p) });

    test('the status iframe and cookie-check pages may be framed by registered web origins only', async () => {
      for (const p of ['/protocol/openid-connect/login-status-iframe.html', '/protocol/openid-connect/3p-cookies/step1.html', '/protocol/openid-connect/3p-cookies/step2.html']) {
        const res = await get(p);
        assert.equal(res.statusCode, 200, p);
        const csp = String(res.headers['content-security-policy']);
        assert.match(csp, new RegExp(`frame-ancestors ${SPA_ORIGIN}$`), p);
        assert.match(csp, /script-src 'self'/);
        assert.equal(res.headers['x-frame-options'], undefined);
        const script = /<script src="([^"]+)"><\/script>/.exec(res.body)?.[1];
        assert.ok(script, p);
        const js = await ts.app.inject({ method: 'GET', url: script });
        assert.equal(js.statusCode, 200);
        assert.match(String(js.headers['content-type']), /javascript/);
      }
      // The rest of the site still refuses every frame.
      const login = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?client_id=spa` });
      assert.match(String(login.headers['content-security-policy']), /frame-ancestors 'none'/);
    });

    test('init answers 204 for a client and an origin it allows, 403 otherwise', async () => {
      const init = (q: string) => get(`/protocol/openid-connect/login-status-iframe.html/init?${q}`);
      assert.equal((await init(`client_id=spa&origin=${encodeURIComponent(SPA_ORIGIN)}`)).statusCode, 204);
      assert.equal((await init(`client_id=spa&origin=${encodeURIComponent('https://evil.example')}`)).statusCode, 403);
      assert.equal((await init(`client_id=web-app&origin=${encodeURIComponent(SPA_ORIGIN)}`)).statusCode, 403);
      assert.equal((await init(`client_id=nope&origin=${encodeURIComponent(SPA_ORIGIN)}`)).statusCode, 403);
      assert.equal((await init('client_id=spa')).statusCode, 403);
    });

    test('login sets a readable session-state cookie naming the session (= sid), logout clears it', async () => {
      const r = await runAuthorization(ts);
      const state = r.jar.cookies.get('RG_SESSION_STATE');
      assert.ok(state);
      assert.notEqual(state, r.jar.cookies.get('RG_SESSION'), 'not the session secret');
      const tokens = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json();
      assert.equal(tokens.session_state, state);
      // The cookie's attributes: readable by script, realm path, Lax over plain http.
      const logout = await inject(ts.app, r.jar, 'GET', realmPath(`/protocol/openid-connect/logout?id_token_hint=${tokens.id_token}`));
      assert.equal(logout.statusCode, 200);
      const cleared = (logout.cookies as Array<{ name: string; value: string }>).find((c) => c.name === 'RG_SESSION_STATE');
      assert.ok(cleared);
      assert.equal(cleared.value, '');
    });

    test('the session-state cookie is not HttpOnly, SameSite=Lax on http, scoped to the realm', async () => {
      const r = await runAuthorization(ts, { query: { prompt: 'login' } });
      void r;
      // Re-run the login step by hand to see the Set-Cookie header itself.
      const page = await inject(ts.app, r.jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?client_id=web-app&redirect_uri=${encodeURIComponent(ts.client.redirectUri)}&response_type=code&scope=openid&prompt=login`);
      const form = await inject(ts.app, r.jar, 'GET', page.headers.location as string);
      const action = /action="([^"]+)"/.exec(form.body)![1]!.replace(/&amp;/g, '&');
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)![1]!;
      const login = await inject(ts.app, r.jar, 'POST', action, { csrf, username: ts.user.username, password: ts.user.password });
      const header = ([] as string[]).concat(login.headers['set-cookie'] as string | string[]).find((c) => c.startsWith('RG_SESSION_STATE='));
      assert.ok(header);
      assert.doesNotMatch(header, /HttpOnly/i);
      assert.match(header, /SameSite=Lax/i);
      assert.match(header, new RegExp(`Path=/auth/realms/${REALM}/`));
    });
  });
}
