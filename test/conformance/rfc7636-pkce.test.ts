import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { Harness, RFC7636_CHALLENGE, RFC7636_VERIFIER, assertTokenError, pkce, redirectedError, s256 } from './helpers.js';

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';

for (const dialect of dialects()) {
  describe(`RFC 7636 PKCE (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    /** `method: null` leaves code_challenge_method out. */
    const withPkce = (challenge: string, method: string | null = 'S256') => ({ code_challenge: challenge, code_challenge_method: method ?? undefined });
    const authError = async (extra: Record<string, string | undefined>): Promise<string | null> => redirectedError(await h.authorize(extra), ts.client.redirectUri).get('error');

    test('RFC 7636 4.6: the verifier is checked as BASE64URL(SHA256(verifier)) (the Appendix B example)', async () => {
      assert.equal(s256(RFC7636_VERIFIER), RFC7636_CHALLENGE);
      const code = await h.code(withPkce(RFC7636_CHALLENGE));
      assert.equal((await h.exchange(code, { code_verifier: RFC7636_VERIFIER })).statusCode, 200);
    });

    test('RFC 7636 4.4.1 / RFC 9700 2.1.1: a public client without code_challenge is refused with invalid_request', async () => {
      const p = redirectedError(await h.authorize({ client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri, state: 'pk' }), ts.publicClient.redirectUri);
      assert.equal(p.get('error'), 'invalid_request');
      assert.equal(p.get('state'), 'pk');
    });

    test('RFC 7636 4.3 / 4.4.1: plain (also by omitting the method) and unknown methods are refused; method names are case-sensitive', async () => {
      const { challenge } = pkce();
      for (const method of ['plain', null, 's256', 'S512', 'SHA256']) {
        assert.equal(await authError(withPkce(challenge, method)), 'invalid_request', String(method));
      }
      assert.equal(await authError({ code_challenge_method: 'S256' }), 'invalid_request');
    });

    test('RFC 7636 4.2: a malformed code_challenge is refused', async () => {
      const good = pkce().challenge;
      for (const challenge of [good.slice(0, 42), `${good}=`, good.replace(/[-_]/g, '+').slice(0, 42) + '/', 'a'.repeat(129), `${good.slice(0, 42)} `, `${good.slice(0, 42)}%`]) {
        assert.equal(await authError(withPkce(challenge)), 'invalid_request', challenge);
      }
    });

    test('RFC 7636 4.5 / 4.6: a missing or wrong verifier is invalid_grant', async () => {
      const { verifier, challenge } = pkce();
      assertTokenError(await h.exchange(await h.code(withPkce(challenge))), 400, 'invalid_grant');
      assertTokenError(await h.exchange(await h.code(withPkce(challenge)), { code_verifier: '' }), 400, 'invalid_grant');
      assertTokenError(await h.exchange(await h.code(withPkce(challenge)), { code_verifier: pkce().verifier }), 400, 'invalid_grant');
      // The challenge itself is not the verifier (that would be plain).
      assertTokenError(await h.exchange(await h.code(withPkce(challenge)), { code_verifier: challenge }), 400, 'invalid_grant');
      // The verifier belongs to its code, not to the client.
      const other = pkce();
      await h.code(withPkce(other.challenge));
      assertTokenError(await h.exchange(await h.code(withPkce(challenge)), { code_verifier: other.verifier }), 400, 'invalid_grant');
      assert.equal((await h.exchange(await h.code(withPkce(challenge)), { code_verifier: verifier })).statusCode, 200);
    });

    test('RFC 7636 4.1: the verifier is 43 to 128 unreserved characters, checked even when its hash matches', async () => {
      const sized = (n: number): string => UNRESERVED.repeat(3).slice(0, n);
      for (const verifier of [sized(43), sized(128), UNRESERVED]) {
        const res = await h.exchange(await h.code(withPkce(s256(verifier))), { code_verifier: verifier });
        assert.equal(res.statusCode, 200, `${verifier.length}: ${res.body}`);
      }
      for (const verifier of [sized(42), sized(129), `${sized(42)}+`, `${sized(42)}/`, `${sized(42)}=`, `${sized(42)}!`, `${sized(42)} `, `${sized(42)}é`]) {
        assertTokenError(await h.exchange(await h.code(withPkce(s256(verifier))), { code_verifier: verifier }), 400, 'invalid_grant');
      }
    });

    test('RFC 9700 4.8.2 / 2.1.1: a code_verifier for a code issued without code_challenge is refused (PKCE downgrade)', async () => {
      assertTokenError(await h.exchange(await h.code(), { code_verifier: pkce().verifier }), 400, 'invalid_grant');
      // Without a challenge and without a verifier a confidential client still succeeds.
      assert.equal((await h.exchange(await h.code())).statusCode, 200);
    });

    test('RFC 7636 1 / RFC 9700 2.1.1: an intercepted public-client code is useless without the verifier', async () => {
      const { verifier, challenge } = pkce();
      const stolen = await h.publicCode(challenge);
      assertTokenError(await h.publicExchange(stolen, pkce().verifier), 400, 'invalid_grant');
      // The failed attempt burned the code: the legitimate exchange fails too, and nothing was issued to anyone.
      assertTokenError(await h.publicExchange(stolen, verifier), 400, 'invalid_grant');
      assert.equal((await h.publicExchange(await h.publicCode(challenge), verifier)).statusCode, 200);
    });

    test('RFC 9700 2.1.1: the server advertises its PKCE support (code_challenge_methods_supported)', async () => {
      const oidc = await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') });
      assert.deepEqual(oidc.json().code_challenge_methods_supported, ['S256']);
      const rfc8414 = await ts.app.inject({ method: 'GET', url: `/.well-known/oauth-authorization-server/auth/realms/${REALM}` });
      assert.deepEqual(rfc8414.json().code_challenge_methods_supported, ['S256']);
    });
  });
}
