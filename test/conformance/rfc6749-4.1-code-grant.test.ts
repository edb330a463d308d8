import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { createClient, createRealm } from '../../src/admin/operations.js';
import { AUTHORIZE_ERRORS, ERROR_DESCRIPTION, Harness, assertNoRedirect, assertTokenError, pkce, redirectedError } from './helpers.js';

// Every visible ASCII character and the space (RFC 6749 A.5: state = 1*VSCHAR), then some UTF-8.
const VSCHAR_STATE = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
const NASTY_STATE = `${VSCHAR_STATE}é😀%zz+%2B`;

for (const dialect of dialects()) {
  describe(`RFC 6749 4.1 authorization code grant (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
      await createClient(ts.store, { realmId: REALM, clientId: 'other-app', redirectUris: [ts.client.redirectUri], secret: 'other-secret' });
      await createClient(ts.store, { realmId: REALM, clientId: 'native-2', redirectUris: [ts.publicClient.redirectUri], public: true });
    });
    after(() => ts.close());

    test('RFC 6749 4.1.2: the code and state are added to the query component of the redirect URI', async () => {
      const r = await h.flow({ state: 'st' });
      assert.equal(`${r.location.origin}${r.location.pathname}`, ts.client.redirectUri);
      assert.equal(r.location.hash, '');
      assert.deepEqual(r.location.searchParams.getAll('code'), [r.code]);
      assert.equal(r.location.searchParams.get('state'), 'st');
    });

    test('RFC 6749 4.1.2: state is echoed byte for byte in the success redirect', async () => {
      for (const state of [NASTY_STATE, 'x'.repeat(2000), ' leading and trailing ']) {
        assert.equal((await h.flow({ state })).location.searchParams.get('state'), state);
      }
      // Without state in the request there is none in the response.
      assert.equal((await h.flow({ state: undefined })).location.searchParams.has('state'), false);
    });

    test('RFC 6749 4.1.2.1: state is echoed byte for byte in an error redirect', async () => {
      const errors: Array<Record<string, string | undefined>> = [
        { response_type: 'token' },
        { response_type: undefined },
        { scope: 'no-such-scope' },
        { code_challenge_method: 'plain', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
        { prompt: 'none' },
      ];
      for (const extra of errors) {
        const p = redirectedError(await h.authorize({ ...extra, state: NASTY_STATE }), ts.client.redirectUri);
        assert.equal(p.get('state'), NASTY_STATE, JSON.stringify(extra));
      }
      // After a duplicated parameter too, and after the user says no.
      const dup = redirectedError(await h.authorizeRaw(`${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: NASTY_STATE })}&scope=openid`), ts.client.redirectUri);
      assert.equal(dup.get('state'), NASTY_STATE);
      const denied = await h.flow({ state: NASTY_STATE, scope: 'openid exports' }, { consent: 'deny' });
      assert.equal(denied.location.searchParams.get('error'), 'access_denied');
      assert.equal(denied.location.searchParams.get('state'), NASTY_STATE);
    });

    test('RFC 6749 4.1.2.1: error codes are those of the RFC (and of OIDC for prompt=none)', async () => {
      for (const extra of [{ response_type: 'token' }, { scope: 'nope' }, { prompt: 'none' }, { max_age: 'x' }, { code_challenge_method: 'S256' }]) {
        const p = redirectedError(await h.authorize(extra), ts.client.redirectUri);
        assert.ok(AUTHORIZE_ERRORS.includes(p.get('error')!), p.get('error')!);
        assert.equal(p.getAll('error').length, 1);
      }
    });

    test('RFC 6749 4.1.2.1: error_description uses only %x20-21 / %x23-5B / %x5D-7E', async () => {
      for (const extra of [{ response_type: 'token' }, { scope: 'nope' }, { response_mode: 'web_message' }, { prompt: 'bogus' }, { prompt: 'é"\\' }]) {
        const p = redirectedError(await h.authorize(extra), ts.client.redirectUri);
        assert.match(p.get('error_description') ?? ' ', ERROR_DESCRIPTION, JSON.stringify(extra));
      }
    });

    test('RFC 6749 4.1.2.1: a missing or invalid client_id is reported to the user, not redirected', async () => {
      assertNoRedirect(await h.authorize({ client_id: undefined }));
      assertNoRedirect(await h.authorize({ client_id: 'no-such-client', response_type: 'token' }));
      assertNoRedirect(await h.authorize({ client_id: ts.client.id.toUpperCase() }));
    });

    test('RFC 6749 4.1.2: a code may be used once; a second use is denied and revokes the tokens issued from it', async () => {
      const code = await h.code();
      const first = await h.exchange(code);
      assert.equal(first.statusCode, 200, first.body);
      const t = first.json();
      const rotated = (await h.refresh(t.refresh_token)).json();
      assert.ok(await h.active(rotated.access_token));
      assertTokenError(await h.exchange(code), 400, 'invalid_grant');
      // Every token of the grant is dead: the first refresh token, its successor, both access tokens.
      assertTokenError(await h.refresh(rotated.refresh_token), 400, 'invalid_grant');
      assert.equal(await h.active(t.access_token), false);
      assert.equal(await h.active(rotated.access_token), false);
      // Other grants of the same user and client are untouched.
      const other = await h.tokens();
      assert.equal((await h.refresh(other.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 4.1.2: a code expires shortly (the realm code lifetime, at most the recommended 10 minutes)', async () => {
      const lifetime = (await ts.store.realms.get(REALM))!.codeLifetime;
      assert.ok(lifetime > 0 && lifetime <= 600, String(lifetime));
      const early = await h.code();
      ts.clock.advance(lifetime - 1);
      assert.equal((await h.exchange(early)).statusCode, 200);
      const late = await h.code();
      ts.clock.advance(lifetime);
      assertTokenError(await h.exchange(late), 400, 'invalid_grant');
    });

    test('RFC 6749 4.1.3: grant_type, code and redirect_uri are required', async () => {
      const code = await h.code();
      assertTokenError(await h.token({ code, redirect_uri: ts.client.redirectUri }, { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.token({ grant_type: 'authorization_code', redirect_uri: ts.client.redirectUri }, { authorization: h.auth }), 400, 'invalid_request');
      assertTokenError(await h.token({ grant_type: 'authorization_code', code }, { authorization: h.auth }), 400, 'invalid_request');
      assert.equal((await h.exchange(code)).statusCode, 200);
    });

    test('RFC 6749 4.1.3: redirect_uri must be identical to the one of the authorization request', async () => {
      // Another URI registered for the same client, the same URI with another loopback port, near misses.
      for (const redirect_uri of ['http://127.0.0.1:9999/cb', ts.client.redirectUri + '/', ts.client.redirectUri.toUpperCase()]) {
        assertTokenError(await h.exchange(await h.code(), { redirect_uri }), 400, 'invalid_grant');
      }
      const loopback = await h.code({ redirect_uri: 'http://127.0.0.1:5555/cb' });
      assertTokenError(await h.exchange(loopback, { redirect_uri: 'http://127.0.0.1:9999/cb' }), 400, 'invalid_grant');
      assert.equal((await h.exchange(await h.code({ redirect_uri: 'http://127.0.0.1:5555/cb' }), { redirect_uri: 'http://127.0.0.1:5555/cb' })).statusCode, 200);
    });

    test('RFC 6749 4.1.3: the code must have been issued to the authenticated confidential client', async () => {
      assertTokenError(await h.exchange(await h.code(), {}, basic('other-app', 'other-secret')), 400, 'invalid_grant');
      // ... and the other way round.
      const theirs = await h.code({ client_id: 'other-app' });
      assertTokenError(await h.exchange(theirs), 400, 'invalid_grant');
    });

    test('RFC 6749 4.1.3: a public client must send client_id, and the code must have been issued to it', async () => {
      const { verifier, challenge } = pkce();
      const code = await h.publicCode(challenge);
      const form = { grant_type: 'authorization_code', code, redirect_uri: ts.publicClient.redirectUri, code_verifier: verifier };
      assertTokenError(await h.token(form), 401, 'invalid_client');
      assertTokenError(await h.token({ ...form, client_id: 'native-2' }), 400, 'invalid_grant');
      const own = await h.publicCode(challenge);
      assert.equal((await h.publicExchange(own, verifier)).statusCode, 200);
    });

    test('RFC 6749 4.1.3: a code is valid only in the realm that issued it', async () => {
      await createRealm(ts.store, { id: 'elsewhere' });
      await createClient(ts.store, { realmId: 'elsewhere', clientId: ts.client.id, redirectUris: [ts.client.redirectUri], secret: 'elsewhere-secret' });
      const code = await h.code();
      const res = await h.tokenRaw(new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }).toString(), { authorization: basic(ts.client.id, 'elsewhere-secret') }, '/auth/realms/elsewhere/protocol/openid-connect/token');
      assertTokenError(res, 400, 'invalid_grant');
    });
  });
}
