import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { authorizeQuery } from '../helpers/flow.js';
import { Harness, assertNoRedirect, redirectedError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 3.1 authorization endpoint (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    const startsInteraction = (res: { statusCode: number; headers: Record<string, unknown>; body: string }): void => {
      assert.equal(res.statusCode, 303, res.body);
      assert.match(String(res.headers.location), /\/login-actions\//);
    };

    test('RFC 6749 3.1: the endpoint supports GET', async () => {
      startsInteraction(await h.authorize());
    });

    test('RFC 6749 3.1 (OIDC Core 3.1.2.1): POST with form parameters works like GET', async () => {
      startsInteraction(await h.authorize({}, 'POST'));
      // Errors after client and redirect_uri are verified are redirected, with the state, as for GET.
      const p = redirectedError(await h.authorize({ response_type: 'token', state: 'post-state' }, 'POST'), ts.client.redirectUri);
      assert.equal(p.get('error'), 'unsupported_response_type');
      assert.equal(p.get('state'), 'post-state');
      // Duplicates in a POST body are duplicates too.
      const dup = redirectedError(await h.authorizeRaw(`${authorizeQuery(ts)}&response_type=code`, 'POST'), ts.client.redirectUri);
      assert.equal(dup.get('error'), 'invalid_request');
    });

    test('RFC 6749 3.1: parameters sent without a value are treated as omitted', async () => {
      // Optional parameters left empty change nothing.
      startsInteraction(await h.authorize({ nonce: '', prompt: '', max_age: '', login_hint: '', code_challenge: '', code_challenge_method: '', response_mode: '' }));
      // An empty state is no state: the redirect carries none.
      const p = redirectedError(await h.authorize({ state: '', response_type: 'token' }), ts.client.redirectUri);
      assert.equal(p.get('state'), null);
      assert.equal(p.has('state'), false);
      // Required parameters left empty are missing.
      assert.equal(redirectedError(await h.authorize({ response_type: '' }), ts.client.redirectUri).get('error'), 'invalid_request');
      assert.equal(redirectedError(await h.authorize({ scope: '' }), ts.client.redirectUri).get('error'), 'invalid_scope');
      assertNoRedirect(await h.authorize({ client_id: '' }));
      assertNoRedirect(await h.authorize({ redirect_uri: '' }));
    });

    test('RFC 6749 3.1: unrecognized parameters are ignored, even repeated or empty', async () => {
      startsInteraction(await h.authorizeRaw(`${authorizeQuery(ts)}&foo=1&foo=2&x-extension=&access_type=offline`));
      startsInteraction(await h.authorizeRaw(`${authorizeQuery(ts)}&foo=1&foo=2`, 'POST'));
    });

    test('RFC 6749 3.1: a parameter included more than once is invalid_request', async () => {
      // client_id and redirect_uri cannot be trusted when repeated: the user is told, nobody is redirected.
      for (const name of ['client_id', 'redirect_uri']) {
        const value = name === 'client_id' ? ts.client.id : ts.client.redirectUri;
        assertNoRedirect(await h.authorizeRaw(`${authorizeQuery(ts)}&${name}=${encodeURIComponent(value)}`));
      }
      // Every other parameter: invalid_request sent to the verified redirect URI.
      const repeats: Record<string, string> = {
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        nonce: 'n',
        prompt: 'login',
        max_age: '60',
        login_hint: 'alice',
      };
      for (const [name, value] of Object.entries(repeats)) {
        const res = await h.authorizeRaw(`${authorizeQuery(ts, { [name]: value, state: 'dup' })}&${name}=${encodeURIComponent(value)}`);
        const p = redirectedError(res, ts.client.redirectUri);
        assert.equal(p.get('error'), 'invalid_request', name);
        assert.equal(p.get('state'), 'dup', name);
      }
    });

    test('RFC 6749 3.1.1: response_type must be code; anything else is unsupported_response_type', async () => {
      // Values are case-sensitive; extension types are space-separated lists this server does not serve.
      for (const response_type of ['token', 'CODE', 'Code', 'code token', 'code id_token', 'id_token', 'none']) {
        const p = redirectedError(await h.authorize({ response_type, state: 'rt' }), ts.client.redirectUri);
        assert.equal(p.get('error'), 'unsupported_response_type', response_type);
        assert.equal(p.get('state'), 'rt');
      }
      assert.equal(redirectedError(await h.authorize({ response_type: undefined }), ts.client.redirectUri).get('error'), 'invalid_request');
    });

    test('RFC 6749 3.1: the response of the endpoint is never cached', async () => {
      for (const res of [await h.authorize(), await h.authorize({ response_type: 'token' })]) {
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    });
  });
}
