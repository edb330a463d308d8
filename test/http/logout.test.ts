import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

const LOGOUT = realmPath('/protocol/openid-connect/logout');
const BACK = 'https://rp.example/after-logout';

for (const dialect of dialects()) {
  describe(`RP-initiated logout (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createClient(ts.store, { realmId: REALM, clientId: 'rp', redirectUris: [ts.client.redirectUri], secret: 'rp-secret', postLogoutRedirectUris: [BACK] });
    });
    after(() => ts.close());

    /** Logs in through the rp client and returns the browser and an id token for its session. */
    async function loggedIn(): Promise<{ jar: CookieJar; idToken: string }> {
      const r = await runAuthorization(ts, { query: { client_id: 'rp' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic('rp', 'rp-secret') });
      return { jar: r.jar, idToken: res.json().id_token };
    }

    const stillLoggedIn = async (jar: CookieJar) => (await runAuthorization(ts, { jar, query: { client_id: 'rp' } })).pages.length === 0;

    test('a valid id_token_hint for the session logs out and returns with the state', async () => {
      const { jar, idToken } = await loggedIn();
      const q = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: BACK, state: 's-1' });
      const res = await inject(ts.app, jar, 'GET', `${LOGOUT}?${q}`);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${BACK}?state=s-1`);
      assert.equal(await stillLoggedIn(jar), false);
    });

    test('without a hint the user is asked, and the form is CSRF-protected', async () => {
      const { jar } = await loggedIn();
      const page = await inject(ts.app, jar, 'GET', `${LOGOUT}?client_id=rp&post_logout_redirect_uri=${encodeURIComponent(BACK)}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Do you want to sign out/);
      const form = parseForm(page.body);
      const fields = { client_id: 'rp', post_logout_redirect_uri: BACK };
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: 'forged', ...fields })).statusCode, 403);
      assert.equal(await stillLoggedIn(jar), true);
      const done = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, BACK);
      assert.equal(await stillLoggedIn(jar), false);
    });

    test('a hint for another session asks the user too', async () => {
      const first = await loggedIn();
      const second = await loggedIn();
      const res = await inject(ts.app, second.jar, 'GET', `${LOGOUT}?id_token_hint=${first.idToken}`);
      assert.match(res.body, /Do you want to sign out/);
      assert.equal(await stillLoggedIn(second.jar), true);
    });

    test('unregistered return addresses and bad hints get an error page, never a redirect', async () => {
      const { jar, idToken } = await loggedIn();
      const requests: Array<Record<string, string>> = [
        { id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' },
        { post_logout_redirect_uri: BACK },
        { id_token_hint: 'not-a-token' },
        { id_token_hint: idToken, client_id: ts.client.id },
      ];
      for (const q of requests) {
        const res = await inject(ts.app, jar, 'GET', `${LOGOUT}?${new URLSearchParams(q)}`);
        assert.equal(res.statusCode, 400, JSON.stringify(q));
        assert.equal(res.headers.location, undefined);
      }
      assert.equal(await stillLoggedIn(jar), true);
    });

    test('a state that is no text (an unpaired surrogate, a NUL) gets an error page, never a 500', async () => {
      const { jar } = await loggedIn();
      for (const state of ['\ud800', 'a\udfffb', 'x\u0000y']) {
        // Only a JSON body can carry an unpaired surrogate: percent-decoding never makes one.
        const res = await ts.app.inject({
          method: 'POST',
          url: LOGOUT,
          headers: { 'content-type': 'application/json', cookie: jar.header() },
          payload: JSON.stringify({ client_id: 'rp', post_logout_redirect_uri: BACK, state }),
        });
        assert.equal(res.statusCode, 400, JSON.stringify(state));
        assert.match(res.headers['content-type'] as string, /text\/html/);
        assert.equal(res.headers.location, undefined);
      }
      assert.equal(await stillLoggedIn(jar), true);
    });

    test('without a session the user is told they are signed out', async () => {
      const res = await ts.app.inject({ method: 'GET', url: LOGOUT });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /You are signed out/);
      const d = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json();
      assert.equal(d.end_session_endpoint, `${ts.config.authUrl}${LOGOUT}`);
    });
  });
}
