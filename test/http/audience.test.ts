import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JWK } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest, authorizeQuery } from '../helpers/flow.js';
import { createClient, updateClient } from '../../src/admin/operations.js';

const API = 'https://api.example.com';
const EXPORTS_API = 'https://exports.example.com/v1';
const BILLING_API = 'https://billing.example.com';

// Issue 8 item 4: access tokens name the APIs they are for (per-client audiences, RFC 8707 resource),
// optional RFC 9068 access tokens, and introspection by the API's own client.
for (const dialect of dialects()) {
  describe(`audiences, resource indicators and RFC 9068 (${dialect})`, () => {
    let ts: TestServer;
    let appSecret: string;
    const app = 'api-caller';
    before(async () => {
      ts = await startTestServer({ dialect });
      appSecret = (await createClient(ts.store, { realmId: REALM, clientId: app, redirectUris: [ts.client.redirectUri], audiences: [API, EXPORTS_API, 'reports', BILLING_API] })).secret!;
    });
    after(() => ts.close());

    const auth = (): string => basic(app, appSecret);
    const form = (url: string, body: string, authorization = auth()) =>
      ts.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization }, payload: body });
    const TOKEN = `/auth/realms/${REALM}/protocol/openid-connect/token`;

    async function code(extra: Record<string, string | string[]> = {}): Promise<string> {
      const r = await runAuthorization(ts, { query: { client_id: app, scope: 'core_data', ...extra } });
      assert.ok(r.code, `no code: ${r.location.href}`);
      return r.code;
    }

    function exchange(c: string, resources: string[] = []) {
      const body = new URLSearchParams({ grant_type: 'authorization_code', code: c, redirect_uri: ts.client.redirectUri });
      for (const r of resources) body.append('resource', r);
      return form(TOKEN, body.toString());
    }

    test('without resource the access token names every audience of the client; a client without any gets the realm audience', async () => {
      const res = await exchange(await code());
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(decodeJwt(res.json().access_token).aud, [API, EXPORTS_API, 'reports', BILLING_API]);
      const plain = await runAuthorization(ts);
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: plain.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(decodeJwt(t.json().access_token).aud, 'account');
    });

    test('resource at the token endpoint narrows the audience (RFC 8707 2.2), also on refresh', async () => {
      const res = await exchange(await code(), [API]);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(decodeJwt(res.json().access_token).aud, API);
      const two = await exchange(await code(), [API, EXPORTS_API]);
      assert.deepEqual(decodeJwt(two.json().access_token).aud, [API, EXPORTS_API]);
      const refreshed = await form(TOKEN, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: res.json().refresh_token, resource: EXPORTS_API }).toString());
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(decodeJwt(refreshed.json().access_token).aud, EXPORTS_API);
    });

    test('a resource the client may not ask for, or not an absolute URI, is invalid_target before the code is consumed', async () => {
      const c = await code();
      for (const bad of ['https://elsewhere.example.com', 'reports', `${API}#frag`, '/relative']) {
        const res = await exchange(c, [bad]);
        assert.equal(res.statusCode, 400, bad);
        assert.equal(res.json().error, 'invalid_target', bad);
      }
      // The code was not consumed by the refused requests.
      assert.equal((await exchange(c, [API])).statusCode, 200);
    });

    test('the authorization endpoint refuses a resource the client may not ask for, back at the client', async () => {
      const q = authorizeQuery(ts, { client_id: app, scope: 'core_data', resource: 'https://elsewhere.example.com' });
      const res = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/auth?${q}` });
      assert.equal(res.statusCode, 303);
      const loc = new URL(res.headers.location as string);
      assert.equal(`${loc.origin}${loc.pathname}`, ts.client.redirectUri);
      assert.equal(loc.searchParams.get('error'), 'invalid_target');
      // An allowed resource passes.
      assert.ok(await code({ resource: API }));
    });

    const refresh = (token: string, resources: string[] = []) => {
      const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token });
      for (const r of resources) body.append('resource', r);
      return form(TOKEN, body.toString());
    };

    test('resources named at the authorization request bind the grant (RFC 8707 2.1): a token request may narrow them, never widen them', async () => {
      // BILLING_API is one of the client's audiences, but not of this grant: refused, and the code is used
      // up, as by any refused redemption (one attempt per code).
      const c0 = await code({ resource: [API, EXPORTS_API] });
      const wider = await exchange(c0, [BILLING_API]);
      assert.equal(wider.statusCode, 400, wider.body);
      assert.equal(wider.json().error, 'invalid_target');
      assert.equal((await exchange(c0)).json().error, 'invalid_grant');
      const res = await exchange(await code({ resource: [API, EXPORTS_API] }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(decodeJwt(res.json().access_token).aud, [API, EXPORTS_API]);
      // The binding rides in the refresh token (signed: see the forged claim below).
      assert.deepEqual(decodeJwt(res.json().refresh_token).resource, [API, EXPORTS_API]);

      const refused = await refresh(res.json().refresh_token, [BILLING_API]);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error, 'invalid_target');
      // The refused refresh rotated nothing: the same token still works, narrowed to one resource.
      const narrowed = await refresh(res.json().refresh_token, [EXPORTS_API]);
      assert.equal(narrowed.statusCode, 200, narrowed.body);
      assert.equal(decodeJwt(narrowed.json().access_token).aud, EXPORTS_API);
      // A narrower token does not narrow the grant: the next refresh may name either, or both by default.
      assert.deepEqual(decodeJwt(narrowed.json().refresh_token).resource, [API, EXPORTS_API]);
      const again = await refresh(narrowed.json().refresh_token);
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(decodeJwt(again.json().access_token).aud, [API, EXPORTS_API]);

      // A grant whose authorization request named none stays unbound: its refresh tokens carry no resource.
      const unbound = await exchange(await code(), [API]);
      assert.equal(decodeJwt(unbound.json().refresh_token).resource, undefined);
    });

    test('a refresh token whose resource claim was altered is refused, and its chain is left as it was', async () => {
      const t = (await exchange(await code({ resource: API }))).json();
      const [h, p, sig] = t.refresh_token.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, resource: [API, BILLING_API] })).toString('base64url')}.${sig}`;
      const res = await refresh(forged, [BILLING_API]);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error, 'invalid_grant');
      const ok = await refresh(t.refresh_token);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(decodeJwt(ok.json().access_token).aud, API);
    });

    test('resources taken from the client after the grant leave its tokens; a grant left with none is refused, not widened', async () => {
      const t = (await exchange(await code({ resource: [API, EXPORTS_API] }))).json();
      await updateClient(ts.store, { realmId: REALM, clientId: app, audiences: { remove: [EXPORTS_API] } });
      try {
        const one = await refresh(t.refresh_token);
        assert.equal(one.statusCode, 200, one.body);
        assert.equal(decodeJwt(one.json().access_token).aud, API);
        await updateClient(ts.store, { realmId: REALM, clientId: app, audiences: { remove: [API] } });
        const none = await refresh(one.json().refresh_token);
        assert.equal(none.statusCode, 400, none.body);
        assert.equal(none.json().error, 'invalid_target');
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: app, audiences: { set: [API, EXPORTS_API, 'reports', BILLING_API] } });
      }
    });

    test('the resources of one authorization request are limited in length together (they ride in every refresh token)', async () => {
      const long = Array.from({ length: 10 }, (_, k) => `https://api${k}.example.com/${'p'.repeat(220)}`);
      await createClient(ts.store, { realmId: REALM, clientId: 'many-apis', redirectUris: [ts.client.redirectUri], audiences: long });
      const q = authorizeQuery(ts, { client_id: 'many-apis', scope: 'core_data', resource: long });
      const res = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/auth?${q}` });
      assert.equal(res.statusCode, 303);
      assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_target');
      const fewer = authorizeQuery(ts, { client_id: 'many-apis', scope: 'core_data', resource: long.slice(0, 5) });
      const ok = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/auth?${fewer}` });
      assert.equal(new URL(ok.headers.location as string, 'http://unused').searchParams.get('error'), null, ok.headers.location as string);
    });

    test('an API client introspects a token issued to another client and learns its client_id and audience', async () => {
      const { secret: apiSecret } = await createClient(ts.store, { realmId: REALM, clientId: 'the-api', redirectUris: ['https://api.example.com/unused'] });
      const t = (await exchange(await code(), [API])).json();
      const res = await form(`${TOKEN}/introspect`, new URLSearchParams({ token: t.access_token }).toString(), basic('the-api', apiSecret!));
      const body = res.json();
      assert.equal(body.active, true);
      assert.equal(body.client_id, app);
      assert.equal(body.azp, app);
      assert.equal(body.aud, API);
      assert.equal(body.iss, `${ts.config.authUrl}/auth/realms/${REALM}`);
      for (const k of ['sub', 'username', 'scope', 'exp', 'iat', 'typ', 'token_type']) assert.ok(body[k] !== undefined, k);
    });

    test('updating the audiences takes effect on the next token', async () => {
      await updateClient(ts.store, { realmId: REALM, clientId: app, audiences: { remove: ['reports'] } });
      const res = await exchange(await code());
      assert.deepEqual(decodeJwt(res.json().access_token).aud, [API, EXPORTS_API, BILLING_API]);
      assert.equal((await exchange(await code(), ['reports'])).json().error, 'invalid_target');
    });

    test('RFC 9068 access tokens per realm: header typ at+jwt and client_id; still accepted by userinfo and introspection', async () => {
      await ts.store.realms.update(REALM, { accessTokenFormat: 'rfc9068' });
      try {
        const r = await runAuthorization(ts, { query: { client_id: app, scope: 'openid core_data', resource: API } });
        const t = (await exchange(r.code!, [API])).json();
        const jwks = (await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/certs` })).json() as { keys: JWK[] };
        const { payload, protectedHeader } = await jwtVerify(t.access_token, createLocalJWKSet(jwks), {
          typ: 'at+jwt',
          issuer: `${ts.config.authUrl}/auth/realms/${REALM}`,
          audience: API,
          currentDate: new Date(ts.clock.nowMs()),
        });
        assert.equal(protectedHeader.typ, 'at+jwt');
        assert.equal(payload.client_id, app);
        for (const k of ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti', 'scope']) assert.ok(payload[k] !== undefined, k);
        const info = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/userinfo`, headers: { authorization: `Bearer ${t.access_token}` } });
        assert.equal(info.statusCode, 200, info.body);
        assert.equal((await form(`${TOKEN}/introspect`, `token=${t.access_token}`)).json().active, true);
      } finally {
        await ts.store.realms.update(REALM, { accessTokenFormat: 'jwt' });
      }
      const res = await exchange(await code());
      assert.equal(JSON.parse(Buffer.from(res.json().access_token.split('.')[0], 'base64url').toString()).typ, 'JWT');
    });
  });
}
