import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { Harness, TOKEN, assertTokenError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 3.2 token endpoint (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    const codeForm = (code: string): string => new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }).toString();

    test('RFC 6749 3.2: GET is refused (405, Allow: POST) and does not consume the code', async () => {
      const code = await h.code();
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const res = await ts.app.inject({ method, url: `${TOKEN}?${codeForm(code)}`, headers: { authorization: h.auth } });
        assertTokenError(res, 405, 'invalid_request');
        assert.equal(res.headers.allow, 'POST');
      }
      assert.equal((await h.exchange(code)).statusCode, 200);
    });

    test('RFC 6749 3.2: the body must be application/x-www-form-urlencoded; JSON and others are refused without consuming the code', async () => {
      const code = await h.code();
      const json = JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri });
      for (const [type, payload] of [['application/json', json], ['text/plain', codeForm(code)], ['multipart/form-data; boundary=x', '--x--']]) {
        assertTokenError(await ts.app.inject({ method: 'POST', url: TOKEN, headers: { 'content-type': type!, authorization: h.auth }, payload }), 400, 'invalid_request');
      }
      // Media types are case-insensitive and may carry a charset.
      const res = await h.tokenRaw(codeForm(code), { 'content-type': 'Application/X-WWW-Form-URLEncoded; charset=UTF-8', authorization: h.auth });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('RFC 6749 3.2: parameters in the request URI are not read', async () => {
      const code = await h.code();
      assertTokenError(await h.tokenRaw('', { authorization: h.auth }, `${TOKEN}?${codeForm(code)}`), 400, 'invalid_request');
      assertTokenError(await h.tokenRaw('grant_type=authorization_code', { authorization: h.auth }, `${TOKEN}?${codeForm(code)}`), 400, 'invalid_request');
      assert.equal((await h.exchange(code)).statusCode, 200);
    });

    test('RFC 6749 3.2: parameters sent without a value are treated as omitted', async () => {
      const code = await h.code();
      assertTokenError(await h.exchange(code, { grant_type: '' }), 400, 'invalid_request');
      assertTokenError(await h.exchange(code, { redirect_uri: '' }), 400, 'invalid_request');
      assertTokenError(await h.exchange('', {}), 400, 'invalid_request');
      // An empty code_verifier is no verifier (no downgrade is detected), an empty client_secret no second method.
      const ok = await h.exchange(code, { code_verifier: '', client_secret: '', client_id: '', scope: '' });
      assert.equal(ok.statusCode, 200, ok.body);
      // An empty scope at refresh is no scope: the original grant.
      const again = await h.refresh(ok.json().refresh_token, { scope: '' });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().scope, ok.json().scope);
    });

    test('RFC 6749 3.2: unrecognized parameters are ignored, even repeated', async () => {
      const code = await h.code();
      const res = await h.tokenRaw(`${codeForm(code)}&foo=1&foo=2&state=x&state=y&resource_hint=`, { authorization: h.auth });
      assert.equal(res.statusCode, 200, res.body);
    });

    test('RFC 6749 3.2: a parameter included more than once is invalid_request, and the code survives', async () => {
      const code = await h.code();
      const verifier = 'v'.repeat(43);
      for (const extra of [
        'grant_type=authorization_code',
        `code=${code}`,
        `redirect_uri=${encodeURIComponent(ts.client.redirectUri)}`,
        `code_verifier=${verifier}&code_verifier=${verifier}`,
        `client_id=${ts.client.id}&client_id=${ts.client.id}`,
      ]) {
        assertTokenError(await h.tokenRaw(`${codeForm(code)}&${extra}`, { authorization: h.auth }), 400, 'invalid_request');
      }
      assert.equal((await h.exchange(code)).statusCode, 200);
      const t = await h.tokens();
      for (const extra of [`refresh_token=${t.refresh_token}`, 'scope=openid&scope=openid', 'grant_type=refresh_token']) {
        assertTokenError(await h.tokenRaw(`grant_type=refresh_token&refresh_token=${t.refresh_token}&${extra}`, { authorization: h.auth }), 400, 'invalid_request');
      }
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 3.2.1: a confidential client must authenticate; naming itself is not enough', async () => {
      const code = await h.code();
      assertTokenError(await h.exchange(code, { client_id: ts.client.id }, null), 401, 'invalid_client');
      assertTokenError(await h.exchange(code, {}, null), 401, 'invalid_client');
      assert.equal((await h.exchange(code)).statusCode, 200);
    });

    test('RFC 6749 3.2.1: a public client identifies itself with client_id', async () => {
      const t = await h.publicTokens();
      assertTokenError(await h.refresh(t.refresh_token, {}, null), 401, 'invalid_client');
      assert.equal((await h.publicRefresh(t.refresh_token)).statusCode, 200);
    });
  });
}
