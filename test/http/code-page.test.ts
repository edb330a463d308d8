import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';

for (const dialect of dialects()) {
  describe(`code display page for limited clients (${dialect})`, () => {
    let ts: TestServer;
    let pageUri: string;
    const secret = 'desktop-secret-value';
    before(async () => {
      ts = await startTestServer({ dialect });
      pageUri = `${ts.config.appUrl}/authentication_code`;
      await createClient(ts.store, { realmId: REALM, clientId: 'desktop', name: 'Desk Tool', redirectUris: [pageUri], secret });
      await createClient(ts.store, { realmId: REALM, clientId: 'oob', redirectUris: ['urn:ietf:wg:oauth:2.0:oob'], secret });
    });
    after(() => ts.close());

    const page = (query: string) => ts.app.inject({ method: 'GET', url: `/authentication_code?${query}` });
    const exchange = (clientId: string, code: string, redirectUri: string) =>
      tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: redirectUri }, { authorization: basic(clientId, secret) });

    test('the flow ends on the page, which shows the code, the application and the seconds left', async () => {
      const r = await runAuthorization(ts, { query: { client_id: 'desktop', redirect_uri: pageUri, state: 'st' } });
      assert.equal(r.location.href.startsWith(pageUri + '?'), true);
      const res = await page(r.location.search.slice(1));
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.includes(`>${r.code}</textarea>`));
      assert.match(res.body, /Desk Tool/);
      assert.match(res.body, /data-seconds-left="45"/);
      assert.match(res.body, /id="copy"/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(res.headers['content-security-policy'] as string, /default-src 'none'.*script-src 'self'/);
      // Nothing is loaded from another origin.
      for (const m of res.body.matchAll(/(?:src|href)="([^"]*)"/g)) assert.ok(m[1]!.startsWith('/'), m[1]);
      // The token request uses the page as redirect_uri, exactly as the specification says.
      const tok = await exchange('desktop', r.code!, pageUri);
      assert.equal(tok.statusCode, 200, tok.body);
      // Once used, the page says the code is no longer valid.
      assert.match((await page(`code=${encodeURIComponent(r.code!)}`)).body, /expired or was already used/);
    });

    test('an expired code is shown as expired', async () => {
      const r = await runAuthorization(ts, { query: { client_id: 'desktop', redirect_uri: pageUri } });
      ts.clock.advance(46);
      const res = await page(`code=${encodeURIComponent(r.code!)}`);
      assert.match(res.body, /expired or was already used/);
      assert.doesNotMatch(res.body, /id="countdown"/);
    });

    test('an error is shown in plain words', async () => {
      const res = await page('error=access_denied&error_description=the+user+denied+access&state=x');
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Access was denied/);
      const xss = await page('error=%3Cscript%3E&error_description=%3Cimg+src%3Dx%3E');
      assert.doesNotMatch(xss.body, /<script>|<img src=x>/);
      // An error code that is a member of every object is an unknown code, shown in the general words.
      for (const error of ['constructor', 'toString', '__proto__', 'valueOf']) {
        const res = await page(`error=${error}`);
        assert.equal(res.statusCode, 400, error);
        assert.doesNotMatch(res.body, /native code|\[object Object\]/, error);
        assert.match(res.body, /The sign-in did not complete\./, error);
      }
    });

    test('the script is served from our origin', async () => {
      const res = await ts.app.inject({ method: 'GET', url: '/auth/resources/code-page.js' });
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /javascript/);
      assert.match(res.body, /clipboard/);
    });

    test('a code exchanged with another redirect_uri fails', async () => {
      const r = await runAuthorization(ts, { query: { client_id: 'desktop', redirect_uri: pageUri } });
      const res = await exchange('desktop', r.code!, 'https://app.example.com/callback');
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_grant');
    });

    test("Keycloak's urn:ietf:wg:oauth:2.0:oob shows the same page", async () => {
      const oob = 'urn:ietf:wg:oauth:2.0:oob';
      const r = await runAuthorization(ts, { query: { client_id: 'oob', redirect_uri: oob, state: 'o1' } });
      assert.equal(`${r.location.origin}${r.location.pathname}`, pageUri);
      assert.equal(r.location.searchParams.get('state'), 'o1');
      const res = await page(r.location.search.slice(1));
      assert.ok(res.body.includes(`>${r.code}</textarea>`));
      assert.equal((await exchange('oob', r.code!, oob)).statusCode, 200);
      // Errors for an OOB client go to the page too, never to the URN.
      const denied = await runAuthorization(ts, { consent: 'deny', query: { client_id: 'oob', redirect_uri: oob, scope: 'openid exports' } });
      assert.equal(`${denied.location.origin}${denied.location.pathname}`, pageUri);
      assert.equal(denied.location.searchParams.get('error'), 'access_denied');
    });
  });
}
