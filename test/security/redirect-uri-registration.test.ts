import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, runAuthorization } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';
import { ValidationError } from '../../src/admin/validation.js';

// Issue 12 item 3: registration refuses what the authorization endpoint could not emit in a valid
// Location header (or what a browser would read differently from us).
const REFUSED = [
  'https://app.example.com/cb\r\nSet-Cookie: a=b',
  'https://app.example.com/cb\n',
  'https://app.example.com/c\tb',
  'https:///cb',
  'http:///cb',
  'https:/app.example.com/cb',
  'https://app.example.com/a b',
  'https://app.example.com/cb#',
  'https://app.example.com/cb#frag',
  'https://app.example.com/caf\u00e9',
  'https://app.example.com/\u4e2d',
  'https://app.example.com/?q=\u00ff',
  'https://app.example.com/\u202ebc',
  'https://app.example.com/\u0000',
  'https://app.example.com/\u007f',
  'https://app.example.com/%zz',
  'https://app.example.com/a\\b',
  'https://app.example.com/<script>',
  'https://app.example.com/"q"',
  'https://good.example@evil.example/cb',
  'https://app.example.com:99999/cb',
  'https://app.example.com:80x/cb',
  'https://[::1/cb',
  'https://exa mple.com/cb',
  'https://\u0000.example/cb',
  'https://xn--/cb',
  'com.example.app:/cb\r\n',
  '1bad:/cb',
  'https://app.example.com/cb*',
  'javascript:alert(1)',
];

const ACCEPTED: Array<[string, string]> = [
  ['https://app.example.com/cb', 'https://app.example.com/cb'],
  ['https://app.example.com:8443/cb?x=1&y=%20', 'https://app.example.com:8443/cb?x=1&y=%20'],
  ['http://127.0.0.1/cb', 'http://127.0.0.1/cb'],
  ['http://[::1]:9000/cb', 'http://[::1]:9000/cb'],
  ['http://localhost:3000/callback', 'http://localhost:3000/callback'],
  ['com.example.app:/oauth2redirect', 'com.example.app:/oauth2redirect'],
  ['urn:ietf:wg:oauth:2.0:oob', 'urn:ietf:wg:oauth:2.0:oob'],
  // Internationalized hosts are stored in their ASCII (punycode) form.
  ['https://b\u00fccher.example/cb', 'https://xn--bcher-kva.example/cb'],
  ['https://\u4f8b\u3048.\u30c6\u30b9\u30c8:8443/a?b=c', 'https://xn--r8jz45g.xn--zckzah:8443/a?b=c'],
];

for (const dialect of dialects()) {
  describe(`redirect URI registration (${dialect})`, () => {
    let ts: TestServer;
    let n = 0;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('refuses URIs that are not strict RFC 3986 absolute URIs with a host', async () => {
      for (const uri of REFUSED) {
        await assert.rejects(createClient(ts.store, { realmId: REALM, clientId: `bad-${n++}`, redirectUris: [uri] }), ValidationError, JSON.stringify(uri));
        await assert.rejects(
          createClient(ts.store, { realmId: REALM, clientId: `bad-${n++}`, redirectUris: ['https://ok.example/cb'], postLogoutRedirectUris: [uri] }),
          ValidationError,
          `post-logout ${JSON.stringify(uri)}`,
        );
      }
    });

    test('accepts valid URIs, storing internationalized hosts in ASCII form', async () => {
      for (const [uri, stored] of ACCEPTED) {
        const { client } = await createClient(ts.store, { realmId: REALM, clientId: `good-${n++}`, redirectUris: [uri], postLogoutRedirectUris: [uri], public: true });
        assert.deepEqual(client.redirectUris, [stored]);
        assert.deepEqual(client.postLogoutRedirectUris, [stored]);
        assert.deepEqual((await ts.store.clients.get(REALM, client.clientId))!.redirectUris, [stored]);
      }
    });

    test('an internationalized host registered is redirected to with a valid Location header', async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'idn-app', redirectUris: ['https://b\u00fccher.example/cb'], secret: 'idn-secret' });
      const r = await runAuthorization(ts, { query: { client_id: 'idn-app', redirect_uri: 'https://xn--bcher-kva.example/cb' } });
      assert.equal(r.location.origin, 'https://xn--bcher-kva.example');
      assert.ok(r.code);
    });

    test('a URI stored before these rules is refused with an error page, never a 500 or a broken Location', async () => {
      const bad = ['https://app.example.com/cb\r\nX: y', 'https://app.example.com/caf\u00e9', 'https://app.example.com/\u4e2d', 'https://app.example.com/cb#f'];
      await createClient(ts.store, { realmId: REALM, clientId: 'legacy-app', redirectUris: ['https://legacy.example/cb'], secret: 'legacy-secret' });
      await ts.store.db.kysely.updateTable('clients').set({ redirect_uris: JSON.stringify(bad) }).where('client_id', '=', 'legacy-app').execute();
      for (const uri of bad) {
        const res = await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { client_id: 'legacy-app', redirect_uri: uri })}`);
        assert.equal(res.statusCode, 400, `${JSON.stringify(uri)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        assert.equal(res.headers.location, undefined);
        assert.match(res.headers['content-type'] as string, /text\/html/);
      }
    });
  });
}
