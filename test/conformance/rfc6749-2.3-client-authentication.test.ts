import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { ValidationError } from '../../src/admin/validation.js';
import { Harness, TOKEN, assertNoRedirect, assertTokenError } from './helpers.js';

// Characters that form-urlencoding changes: ':' separates id and secret in Basic, '+' means a space.
const ODD_ID = 'odd:id+% &x';
const ODD_SECRET = 'p@ss:w+rd %2B/é&=';

/** Basic without the form-urlencoding of RFC 6749 2.3.1 (what a naive client sends). */
const rawBasic = (id: string, secret: string): string => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');

for (const dialect of dialects()) {
  describe(`RFC 6749 2.3 client authentication (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
      await createClient(ts.store, { realmId: REALM, clientId: ODD_ID, redirectUris: [ts.client.redirectUri], secret: ODD_SECRET });
      await createClient(ts.store, { realmId: REALM, clientId: 'post-app', redirectUris: [ts.client.redirectUri], secret: 'post-secret', authMethod: 'client_secret_post' });
    });
    after(() => ts.close());

    const refreshWith = (headers: Record<string, string>, form: Record<string, string> = {}) => h.token({ grant_type: 'refresh_token', refresh_token: 'not-a-token', ...form }, headers);

    test('RFC 6749 2.3.1: Basic carries the form-urlencoded client_id and secret', async () => {
      const code = await h.code({ client_id: ODD_ID });
      const res = await h.exchange(code, {}, basic(ODD_ID, ODD_SECRET));
      assert.equal(res.statusCode, 200, res.body);
      // Reaching the grant (invalid_grant) proves authentication succeeded.
      assertTokenError(await refreshWith({ authorization: basic(ODD_ID, ODD_SECRET) }), 400, 'invalid_grant');
      // Sent raw (RFC 7617), an id with a colon cannot be told from its secret (RFC 7617 2 forbids it).
      assertTokenError(await refreshWith({ authorization: rawBasic(ODD_ID, ODD_SECRET) }), 401, 'invalid_client');
      // A raw secret is tried when the decoded reading does not match (what curl and Authlib send).
      assertTokenError(await refreshWith({ authorization: rawBasic(encodeURIComponent(ODD_ID), ODD_SECRET) }), 400, 'invalid_grant');
      // Neither reading of a wrong secret matches.
      assertTokenError(await refreshWith({ authorization: rawBasic(encodeURIComponent(ODD_ID), ODD_SECRET.replace('+', ' ')) }), 401, 'invalid_client');
      h.forgetClientFailures();
    });

    test('RFC 6749 2.3.1 (RFC 7617 2, RFC 9110 11.1): the scheme name is case-insensitive', async () => {
      const b64 = basic(ts.client.id, ts.client.secret).slice('Basic '.length);
      for (const scheme of ['basic', 'BASIC', 'bAsIc']) assertTokenError(await refreshWith({ authorization: `${scheme} ${b64}` }), 400, 'invalid_grant');
    });

    test('RFC 6749 2.3.1: a wrong, empty or malformed secret is invalid_client', async () => {
      for (const authorization of [basic(ts.client.id, 'wrong'), basic(ts.client.id, ''), basic('', ts.client.secret), basic('nobody', 'x'), 'Basic', 'Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64')]) {
        assertTokenError(await refreshWith({ authorization }), 401, 'invalid_client');
      }
      h.forgetClientFailures();
    });

    test('RFC 6749 2.3.1: credentials are read only from the request body, never from the request URI', async () => {
      const query = (q: Record<string, string>) => `${TOKEN}?${new URLSearchParams(q)}`;
      const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x' }).toString();
      assertTokenError(await h.tokenRaw(body, {}, query({ client_id: ts.client.id, client_secret: ts.client.secret })), 401, 'invalid_client');
      assertTokenError(await h.tokenRaw(body, {}, query({ client_id: 'post-app', client_secret: 'post-secret' })), 401, 'invalid_client');
      assertTokenError(await h.tokenRaw(`${body}&client_id=post-app`, {}, query({ client_secret: 'post-secret' })), 401, 'invalid_client');
      // In the body, client_secret_post works for the client registered with it (OIDC Core 9).
      assertTokenError(await refreshWith({}, { client_id: 'post-app', client_secret: 'post-secret' }), 400, 'invalid_grant');
    });

    test('RFC 6749 2.3 / 5.2: using more than one authentication method is invalid_request', async () => {
      assertTokenError(await refreshWith({ authorization: h.auth }, { client_secret: ts.client.secret }), 400, 'invalid_request');
      assertTokenError(await refreshWith({ authorization: h.auth }, { client_id: ts.client.id, client_secret: ts.client.secret }), 400, 'invalid_request');
      assertTokenError(await refreshWith({ authorization: basic('post-app', 'post-secret') }, { client_id: 'post-app', client_secret: 'post-secret' }), 400, 'invalid_request');
      // Basic for one client and client_id naming another: which client is this?
      assertTokenError(await refreshWith({ authorization: h.auth }, { client_id: 'post-app' }), 400, 'invalid_request');
      // Repeating the authenticated client_id in the body is allowed (RFC 6749 4.1.3 names it).
      assertTokenError(await refreshWith({ authorization: h.auth }, { client_id: ts.client.id }), 400, 'invalid_grant');
    });

    test('RFC 6749 2.1 / 2.3: a public client has no secret and cannot authenticate with one', async () => {
      await assert.rejects(createClient(ts.store, { realmId: REALM, clientId: 'pub-secret', redirectUris: ['http://127.0.0.1/cb'], public: true, secret: 's' }), ValidationError);
      assertTokenError(await refreshWith({ authorization: basic(ts.publicClient.id, '') }), 401, 'invalid_client');
      assertTokenError(await refreshWith({}, { client_id: ts.publicClient.id, client_secret: 'anything' }), 401, 'invalid_client');
      h.forgetClientFailures();
    });

    test('RFC 6749 2.3: a disabled client cannot authenticate, nor start an authorization; its tokens wait for it', async () => {
      const t = await h.tokens();
      const pub = await h.publicTokens();
      await ts.store.clients.update(REALM, ts.client.id, { enabled: false });
      await ts.store.clients.update(REALM, ts.publicClient.id, { enabled: false });
      try {
        assertTokenError(await h.refresh(t.refresh_token), 401, 'invalid_client');
        assertTokenError(await h.publicRefresh(pub.refresh_token), 401, 'invalid_client');
        // RFC 6749 4.1.2.1: an invalid client identifier is never redirected to.
        assertNoRedirect(await h.authorize({ response_type: 'token' }));
        assertNoRedirect(await h.authorize({ client_id: ts.publicClient.id, redirect_uri: ts.publicClient.redirectUri }));
      } finally {
        await ts.store.clients.update(REALM, ts.client.id, { enabled: true });
        await ts.store.clients.update(REALM, ts.publicClient.id, { enabled: true });
        h.forgetClientFailures();
      }
      // The refused requests consumed nothing.
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
      assert.equal((await h.publicRefresh(pub.refresh_token)).statusCode, 200);
    });

    test('RFC 6749 2.3.1: password authentication is protected against brute force', async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'guessed', redirectUris: [ts.client.redirectUri], secret: 'the-real-secret' });
      let retryAfter: string | undefined;
      for (let i = 0; i < 30 && retryAfter === undefined; i++) {
        const res = await refreshWith({ authorization: basic('guessed', `guess-${i}`) });
        assert.equal(res.statusCode, 401);
        retryAfter = res.headers['retry-after'] as string | undefined;
      }
      assert.ok(retryAfter !== undefined, 'guessing is never slowed down');
      // Even the right secret waits now: still a 401 (RFC 6749 5.2), with Retry-After.
      const waiting = await refreshWith({ authorization: basic('guessed', 'the-real-secret') });
      assert.equal(waiting.statusCode, 401);
      assert.ok(Number(waiting.headers['retry-after']) > 0);
      h.forgetClientFailures();
      assertTokenError(await refreshWith({ authorization: basic('guessed', 'the-real-secret') }), 400, 'invalid_grant');
    });
  });
}
