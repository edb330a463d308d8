import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, updateClient } from '../../src/admin/operations.js';
import { ValidationError } from '../../src/admin/validation.js';

const SPA = { id: 'spa', redirectUri: 'http://localhost:5173/app/', origin: 'http://localhost:5173' };
const OTHER = 'https://evil.example';
const verifier = 'v'.repeat(50);
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');

for (const dialect of dialects()) {
  describe(`CORS and web origins (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createClient(ts.store, { realmId: REALM, clientId: SPA.id, redirectUris: [SPA.redirectUri], public: true, webOrigins: ['+'] });
      await createClient(ts.store, { realmId: REALM, clientId: 'listed', redirectUris: ['https://a.example/cb'], public: true, webOrigins: ['https://b.example:8443'] });
    });
    after(() => ts.close());

    async function spaCode(): Promise<string> {
      const r = await runAuthorization(ts, { query: { client_id: SPA.id, redirect_uri: SPA.redirectUri, code_challenge: challenge, code_challenge_method: 'S256' } });
      assert.ok(r.code);
      return r.code;
    }
    const exchange = (code: string, origin?: string) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code, client_id: SPA.id, redirect_uri: SPA.redirectUri, code_verifier: verifier }, origin ? { origin } : {});

    test('web origins are validated: "*", paths and other schemes are refused', async () => {
      for (const bad of ['*', 'https://a.example/path', 'ftp://a.example', 'https://*.example', 'not an origin']) {
        await assert.rejects(createClient(ts.store, { realmId: REALM, clientId: `c-${bad}`, redirectUris: ['https://a.example/cb'], webOrigins: [bad] }), ValidationError, bad);
      }
      const stored = await ts.store.clients.get(REALM, 'listed');
      assert.deepEqual(stored?.webOrigins, ['https://b.example:8443']);
    });

    test('a token request from an allowed origin gets the exact origin, credentials and Vary', async () => {
      const res = await exchange(await spaCode(), SPA.origin);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['access-control-allow-origin'], SPA.origin);
      assert.equal(res.headers['access-control-allow-credentials'], 'true');
      assert.match(String(res.headers.vary), /Origin/);
    });

    test('a token request from another origin is refused before the code is consumed; the code still works', async () => {
      const code = await spaCode();
      const refused = await exchange(code, OTHER);
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().error, 'invalid_request');
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
      const ok = await exchange(code, SPA.origin);
      assert.equal(ok.statusCode, 200, ok.body);
      // Without Origin (a server, not a browser page) the same code is now used up.
      assert.equal((await exchange(code)).json().error, 'invalid_grant');
    });

    test('an explicit web origin is allowed and "+" does not leak into other clients', async () => {
      const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'listed' }, { origin: 'https://b.example:8443' });
      assert.equal(res.headers['access-control-allow-origin'], 'https://b.example:8443');
      assert.equal(res.json().error, 'invalid_grant');
      const other = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'listed' }, { origin: SPA.origin });
      assert.equal(other.statusCode, 400);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      // A client with no web origins refuses every browser origin.
      const none = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x', client_id: ts.publicClient.id }, { origin: 'http://127.0.0.1' });
      assert.equal(none.headers['access-control-allow-origin'], undefined);
      assert.equal(none.json().error, 'invalid_request');
    });

    test('preflights answer registered origins only, with the methods and headers', async () => {
      const pre = (url: string, origin: string) =>
        ts.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
      for (const p of ['/protocol/openid-connect/token', '/protocol/openid-connect/userinfo', '/protocol/openid-connect/revoke', '/account', '/protocol/openid-connect/logout']) {
        const ok = await pre(realmPath(p), SPA.origin);
        assert.equal(ok.statusCode, 204, p);
        assert.equal(ok.headers['access-control-allow-origin'], SPA.origin, p);
        assert.equal(ok.headers['access-control-allow-credentials'], 'true');
        assert.match(String(ok.headers['access-control-allow-headers']), /Authorization/);
        // RFC 9449: a browser application sends its proofs in the DPoP header.
        assert.match(String(ok.headers['access-control-allow-headers']), /\bDPoP\b/);
        const no = await pre(realmPath(p), OTHER);
        assert.equal(no.headers['access-control-allow-origin'], undefined, p);
      }
      // The account REST API's paths, with the methods each has.
      for (const [p, methods] of [['/account/sessions', 'GET, DELETE'], ['/account/sessions/abc', 'DELETE'], ['/account/credentials/abc/label', 'PUT'], ['/account/applications/x/consent', 'GET, DELETE']]) {
        const ok = await pre(realmPath(p!), SPA.origin);
        assert.equal(ok.headers['access-control-allow-origin'], SPA.origin, p);
        assert.equal(ok.headers['access-control-allow-methods'], methods, p);
        assert.equal((await pre(realmPath(p!), OTHER)).headers['access-control-allow-origin'], undefined, p);
      }
      // Public documents: any origin.
      for (const p of ['/.well-known/openid-configuration', '/protocol/openid-connect/certs', '']) {
        const res = await pre(realmPath(p), OTHER);
        assert.equal(res.headers['access-control-allow-origin'], OTHER, p);
        const get = await ts.app.inject({ method: 'GET', url: realmPath(p), headers: { origin: OTHER } });
        assert.equal(get.statusCode, 200, p);
        assert.equal(get.headers['access-control-allow-origin'], OTHER);
      }
    });

    test('userinfo and the account JSON answer the origins of the token\'s client only', async () => {
      const tokens = (await exchange(await spaCode(), SPA.origin)).json();
      for (const p of ['/protocol/openid-connect/userinfo', '/account']) {
        const res = await ts.app.inject({ method: 'GET', url: realmPath(p), headers: { origin: SPA.origin, authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' } });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['access-control-allow-origin'], SPA.origin);
        const other = await ts.app.inject({ method: 'GET', url: realmPath(p), headers: { origin: OTHER, authorization: `Bearer ${tokens.access_token}` } });
        assert.equal(other.headers['access-control-allow-origin'], undefined);
      }
    });

    test('client update --web-origin replaces, adds and removes origins; CORS follows at once', async () => {
      const { ok: cli, fails } = cliRunner(() => ts.db.url);
      const allowed = async (origin: string) =>
        (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'listed' }, { origin })).headers['access-control-allow-origin'] === origin;
      const out = cli(['client', 'update', REALM, 'listed', '--web-origin', 'https://c.example/', '--web-origin', '+']);
      assert.match(out, /web origins:\s+https:\/\/c\.example \+\n/);
      assert.ok(await allowed('https://c.example'));
      assert.ok(await allowed('https://a.example'), '+ = the origin of https://a.example/cb');
      assert.ok(!(await allowed('https://b.example:8443')));
      await updateClient(ts.store, { realmId: REALM, clientId: 'listed', webOrigins: { add: ['https://d.example'], remove: ['+'] } });
      assert.ok(await allowed('https://d.example'));
      assert.ok(!(await allowed('https://a.example')));
      fails(['client', 'update', REALM, 'listed', '--add-web-origin', '*'], /"\*" is not allowed/);
      const list = cli(['client', 'list', REALM]);
      assert.match(list, /listed\tpublic\thttps:\/\/a\.example\/cb\tweb origins: https:\/\/c\.example https:\/\/d\.example\n/);
    });

    test('the authorization endpoint and the login pages never answer CORS', async () => {
      const res = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?client_id=${SPA.id}`, headers: { origin: SPA.origin } });
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      const pre = await ts.app.inject({ method: 'OPTIONS', url: realmPath('/protocol/openid-connect/auth'), headers: { origin: SPA.origin, 'access-control-request-method': 'GET' } });
      assert.equal(pre.headers['access-control-allow-origin'], undefined);
    });
  });
}
