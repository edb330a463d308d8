import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { Harness, assertNoRedirect, pkce } from './helpers.js';

// The registered URIs of web-app are https://app.example.com/callback and http://127.0.0.1:9999/cb.
const HTTPS_TRICKS: Array<[string, string]> = [
  ['path traversal', 'https://app.example.com/callback/../callback'],
  ['path traversal through another directory', 'https://app.example.com/x/../callback'],
  ['dot segment', 'https://app.example.com/./callback'],
  ['encoded path traversal', 'https://app.example.com/callback/..%2Fcallback'],
  ['encoded slash to another path', 'https://app.example.com/callback%2F..%2F..%2Fevil'],
  ['upper-case scheme', 'HTTPS://app.example.com/callback'],
  ['upper-case host', 'https://APP.EXAMPLE.COM/callback'],
  ['upper-case path', 'https://app.example.com/CALLBACK'],
  ['explicit default port', 'https://app.example.com:443/callback'],
  ['other port', 'https://app.example.com:8443/callback'],
  ['userinfo before the attacker host', 'https://app.example.com@evil.example/callback'],
  ['attacker userinfo', 'https://evil.example@app.example.com/callback'],
  ['userinfo with password', 'https://user:pw@app.example.com/callback'],
  ['backslash authority confusion', 'https://app.example.com\\@evil.example/callback'],
  ['subdomain', 'https://evil.app.example.com/callback'],
  ['registered host as subdomain of the attacker', 'https://app.example.com.evil.example/callback'],
  ['trailing dot in the host', 'https://app.example.com./callback'],
  ['homograph host', 'https://\u0430pp.example.com/callback'],
  ['percent-encoded path character', 'https://app.example.com/%63allback'],
  ['percent-encoded authority', 'https://app.example.com%2Fcallback'],
  ['double-encoded URI', 'https%3A%2F%2Fapp.example.com%2Fcallback'],
  ['encoded NUL', 'https://app.example.com/callback%00'],
  ['empty fragment', 'https://app.example.com/callback#'],
  ['fragment', 'https://app.example.com/callback#frag'],
  ['empty query added', 'https://app.example.com/callback?'],
  ['query added', 'https://app.example.com/callback?next=https://evil.example'],
  ['code parameter added', 'https://app.example.com/callback?code=attacker'],
  ['path parameter', 'https://app.example.com/callback;x=1'],
  ['path suffix', 'https://app.example.com/callback/evil'],
  ['trailing slash', 'https://app.example.com/callback/'],
  ['path prefix', 'https://app.example.com/callbac'],
  ['name suffix', 'https://app.example.com/callbackevil'],
  ['scheme change to http', 'http://app.example.com/callback'],
  ['scheme change to wss', 'wss://app.example.com/callback'],
  ['javascript scheme', 'javascript://app.example.com/callback%0aalert(1)'],
  ['scheme-relative', '//app.example.com/callback'],
  ['leading space', ' https://app.example.com/callback'],
  ['trailing space', 'https://app.example.com/callback '],
  ['embedded newline (stripped by URL parsers)', 'https://app.example.com/call\nback'],
  ['embedded tab (stripped by URL parsers)', 'https://app.example.com/call\tback'],
];

const LOOPBACK_TRICKS: Array<[string, string]> = [
  ['localhost instead of the IP literal', 'http://localhost:9999/cb'],
  ['IPv6 loopback instead of IPv4', 'http://[::1]:9999/cb'],
  ['short IPv4 form', 'http://127.1:9999/cb'],
  ['decimal IPv4 form', 'http://2130706433:9999/cb'],
  ['other loopback address', 'http://127.0.0.2:9999/cb'],
  ['path traversal', 'http://127.0.0.1:9999/cb/../cb'],
  ['upper-case path', 'http://127.0.0.1:9999/CB'],
  ['trailing slash', 'http://127.0.0.1:9999/cb/'],
  ['query added', 'http://127.0.0.1:9999/cb?x'],
  ['fragment', 'http://127.0.0.1:9999/cb#x'],
  ['userinfo', 'http://127.0.0.1:9999@evil.example/cb'],
  ['loopback literal as subdomain', 'http://127.0.0.1.evil.example:9999/cb'],
  ['scheme change to https', 'https://127.0.0.1:9999/cb'],
  ['port out of range', 'http://127.0.0.1:65536/cb'],
  ['empty port', 'http://127.0.0.1:/cb'],
];

for (const dialect of dialects()) {
  describe(`RFC 9700 4.1 insufficient redirect URI validation (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    for (const [trick, uri] of HTTPS_TRICKS) {
      test(`RFC 9700 4.1.3: exact matching refuses ${trick} without a redirect (${JSON.stringify(uri)})`, async () => {
        assertNoRedirect(await h.authorize({ redirect_uri: uri }));
      });
    }

    for (const [trick, uri] of LOOPBACK_TRICKS) {
      test(`RFC 9700 4.1.3 / RFC 8252 7.3: a loopback redirect URI refuses ${trick} without a redirect (${JSON.stringify(uri)})`, async () => {
        assertNoRedirect(await h.authorize({ redirect_uri: uri }));
      });
    }

    test('RFC 9700 4.1.3 / RFC 8252 7.3: a loopback IP redirect URI may use any port, the rest matching exactly', async () => {
      for (const uri of ['http://127.0.0.1:9999/cb', 'http://127.0.0.1:1/cb', 'http://127.0.0.1:65535/cb', 'http://127.0.0.1/cb']) {
        const res = await h.authorize({ redirect_uri: uri });
        assert.equal(res.statusCode, 303, uri);
        assert.match(String(res.headers.location), /\/login-actions\//, uri);
      }
      // The public client registered http://127.0.0.1/callback without a port: its app picks one at run time.
      const { challenge } = pkce();
      const res = await h.authorize({ client_id: ts.publicClient.id, redirect_uri: 'http://127.0.0.1:53124/callback', code_challenge: challenge, code_challenge_method: 'S256' });
      assert.equal(res.statusCode, 303);
    });

    test('RFC 9700 4.1.1: an attacker redirect URI never gets an error redirect either (no open redirector, 4.11.2)', async () => {
      for (const extra of [{ response_type: 'token' }, { prompt: 'none' }, { scope: 'admin' }, { code_challenge_method: 'S256' }]) {
        assertNoRedirect(await h.authorize({ redirect_uri: 'https://evil.example/callback', ...extra }));
      }
      // An unknown client cannot use the endpoint as a redirector either.
      assertNoRedirect(await h.authorize({ client_id: 'no-such-client', redirect_uri: 'https://evil.example/callback', response_type: 'token' }));
    });
  });
}
