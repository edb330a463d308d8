import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { ValidationError } from '../../src/admin/validation.js';
import { Harness, assertNoRedirect, redirectedError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 3.1.2 redirection endpoint (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    const withQuery = 'https://q.example/cb?tenant=a%20b&x=';
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
      await createClient(ts.store, { realmId: REALM, clientId: 'q-app', redirectUris: [withQuery, 'https://q.example/other'], secret: 'q-app-secret' });
    });
    after(() => ts.close());

    const register = (uri: string) => createClient(ts.store, { realmId: REALM, clientId: `c-${Math.random().toString(36).slice(2)}`, redirectUris: [uri] });

    test('RFC 6749 3.1.2: a redirect URI must be absolute and must not include a fragment', async () => {
      for (const uri of ['/callback', 'callback', 'app.example.com/callback', 'https://app.example.com/cb#', 'https://app.example.com/cb#frag']) {
        await assert.rejects(register(uri), ValidationError, uri);
      }
    });

    test('RFC 6749 3.1.2.1 (RFC 9700 2.6): http: is refused except for loopback hosts', async () => {
      await assert.rejects(register('http://app.example.com/cb'), ValidationError);
      await register('http://127.0.0.1:8000/cb');
      await register('https://app.example.com/cb');
    });

    test('RFC 6749 3.1.2: the query component of the redirect URI is retained when the code is added', async () => {
      const r = await h.flow({ client_id: 'q-app', redirect_uri: withQuery, state: 's' });
      assert.ok(r.location.href.startsWith(`${withQuery}&code=`), r.location.href);
      assert.equal(r.location.searchParams.get('tenant'), 'a b');
      assert.equal(r.location.searchParams.get('x'), '');
      assert.equal(r.location.searchParams.get('state'), 's');
      // The token request repeats the redirect URI with its query, byte for byte.
      const res = await h.token({ grant_type: 'authorization_code', code: r.code!, redirect_uri: withQuery }, { authorization: basic('q-app', 'q-app-secret') });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('RFC 6749 3.1.2: the query component is retained in an error redirect too', async () => {
      const p = redirectedError(await h.authorize({ client_id: 'q-app', redirect_uri: withQuery, response_type: 'token' }), withQuery);
      assert.equal(p.get('tenant'), 'a b');
      assert.equal(p.get('error'), 'unsupported_response_type');
    });

    test('RFC 6749 3.1.2.2: only a registered URI is used; another client\'s URI is not', async () => {
      assertNoRedirect(await h.authorize({ redirect_uri: 'https://evil.example/cb' }));
      assertNoRedirect(await h.authorize({ redirect_uri: withQuery }));
      assertNoRedirect(await h.authorize({ client_id: 'q-app', redirect_uri: ts.client.redirectUri }));
    });

    test('RFC 6749 3.1.2.3: with several registered URIs the response goes to the one requested', async () => {
      const p = redirectedError(await h.authorize({ client_id: 'q-app', redirect_uri: 'https://q.example/other', response_type: 'token' }), 'https://q.example/other');
      assert.equal(p.get('error'), 'unsupported_response_type');
      const r = await h.flow({ client_id: 'q-app', redirect_uri: 'https://q.example/other' });
      assert.equal(`${r.location.origin}${r.location.pathname}`, 'https://q.example/other');
      assert.ok(r.code);
    });

    test('RFC 6749 3.1.2.3: the comparison is a simple string comparison', async () => {
      // Each of these names the same resource after normalization (RFC 3986 6.2.2), and is still refused.
      for (const uri of ['https://q.example/cb?x=&tenant=a%20b', 'https://q.example/cb?tenant=a+b&x=', 'https://Q.example/cb?tenant=a%20b&x=', 'https://q.example:443/cb?tenant=a%20b&x=']) {
        assertNoRedirect(await h.authorize({ client_id: 'q-app', redirect_uri: uri }));
      }
    });

    test('RFC 6749 3.1.2.4: an invalid redirect URI is reported to the user, never redirected to, whatever else is wrong', async () => {
      for (const extra of [{}, { response_type: 'token' }, { scope: 'nope' }, { prompt: 'none' }, { code_challenge_method: 'plain' }]) {
        const res = await h.authorize({ redirect_uri: 'https://evil.example/cb', ...extra });
        assertNoRedirect(res);
        assert.match(res.body, /not registered/);
        assert.doesNotMatch(res.body, /evil\.example/);
      }
    });
  });
}
