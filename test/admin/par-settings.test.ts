import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { errorOf, startAdminServer, type AdminTestServer } from './helpers.js';

// Keycloak's names through keycloak-admin-client: the client attribute require.pushed.authorization.requests
// and the realm attribute parRequestUriLifespan (RFC 9126), the client attributes request.object.required
// and request.object.signature.alg (RFC 9101), each seen at work over real HTTP.
const ATTR = 'require.pushed.authorization.requests';

for (const dialect of dialects()) {
  describe(`admin API: pushed authorization request settings (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    const authorize = (clientId: string, redirectUri: string): Promise<Response> =>
      fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/auth?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid' })}`, { redirect: 'manual' });
    const push = (clientId: string, secret: string, redirectUri: string): Promise<Response> =>
      fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/ext/par/request`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret) },
        body: new URLSearchParams({ response_type: 'code', redirect_uri: redirectUri, scope: 'openid' }).toString(),
      });

    test('require.pushed.authorization.requests: "false" by default, set on create and update, refused when not "true"/"false"; it rules the authorization endpoint', async () => {
      const existing = await ts.kc.clients.findOne({ realm: 'test', id: 'web-app' });
      assert.equal(existing!.attributes?.[ATTR], 'false');
      await ts.kc.clients.create({ realm: 'test', clientId: 'par-only', secret: 'par-only-secret-0123456789abcdef', redirectUris: ['https://par.example.com/cb'], attributes: { [ATTR]: 'true' } });
      let got = await ts.kc.clients.findOne({ realm: 'test', id: 'par-only' });
      assert.equal(got!.attributes?.[ATTR], 'true');
      const plain = await authorize('par-only', 'https://par.example.com/cb');
      assert.equal(plain.status, 303);
      assert.equal(new URL(plain.headers.get('location')!).searchParams.get('error'), 'invalid_request');
      const pushed = await push('par-only', 'par-only-secret-0123456789abcdef', 'https://par.example.com/cb');
      assert.equal(pushed.status, 201);
      const { request_uri } = (await pushed.json()) as { request_uri: string };
      const byRef = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/auth?${new URLSearchParams({ client_id: 'par-only', request_uri })}`, { redirect: 'manual' });
      assert.equal(byRef.status, 303);
      assert.match(byRef.headers.get('location')!, /login-actions/);

      // The whole representation sent back (as the Keycloak console does) with the switch off.
      await ts.kc.clients.update({ realm: 'test', id: 'par-only' }, { ...got, attributes: { ...got!.attributes, [ATTR]: 'false' } });
      got = await ts.kc.clients.findOne({ realm: 'test', id: 'par-only' });
      assert.equal(got!.attributes?.[ATTR], 'false');
      assert.match((await authorize('par-only', 'https://par.example.com/cb')).headers.get('location')!, /login-actions/);
      // An update without the attribute leaves it as it is.
      await ts.kc.clients.update({ realm: 'test', id: 'par-only' }, { attributes: { [ATTR]: 'true' } });
      await ts.kc.clients.update({ realm: 'test', id: 'par-only' }, { name: 'PAR only' });
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'par-only' }))!.attributes?.[ATTR], 'true');

      const bad = await errorOf(ts.kc.clients.update({ realm: 'test', id: 'par-only' }, { attributes: { [ATTR]: 'yes' } }));
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.errorMessage), /require\.pushed\.authorization\.requests must be "true" or "false"/);
    });

    test('request.object.required and request.object.signature.alg (RFC 9101): "not required" and "any" by default, set on create and update, refused when wrong; they rule the authorization endpoint', async () => {
      const REQUIRED = 'request.object.required';
      const ALG = 'request.object.signature.alg';
      const existing = await ts.kc.clients.findOne({ realm: 'test', id: 'web-app' });
      assert.equal(existing!.attributes?.[REQUIRED], 'not required');
      assert.equal(existing!.attributes?.[ALG], 'any');
      await ts.kc.clients.create({ realm: 'test', clientId: 'jar-only', secret: 'jar-only-secret-0123456789abcdef', redirectUris: ['https://jar.example.com/cb'], attributes: { [REQUIRED]: 'request only', [ALG]: 'ES256' } });
      let got = await ts.kc.clients.findOne({ realm: 'test', id: 'jar-only' });
      assert.equal(got!.attributes?.[REQUIRED], 'request only');
      assert.equal(got!.attributes?.[ALG], 'ES256');
      const plain = await authorize('jar-only', 'https://jar.example.com/cb');
      assert.equal(plain.status, 303);
      const location = new URL(plain.headers.get('location')!);
      assert.equal(location.searchParams.get('error'), 'invalid_request');
      assert.match(location.searchParams.get('error_description')!, /request object/);
      // The whole representation sent back with the requirement off and any algorithm.
      await ts.kc.clients.update({ realm: 'test', id: 'jar-only' }, { ...got, attributes: { ...got!.attributes, [REQUIRED]: 'not required', [ALG]: 'any' } });
      got = await ts.kc.clients.findOne({ realm: 'test', id: 'jar-only' });
      assert.equal(got!.attributes?.[REQUIRED], 'not required');
      assert.equal(got!.attributes?.[ALG], 'any');
      assert.match((await authorize('jar-only', 'https://jar.example.com/cb')).headers.get('location')!, /login-actions/);
      // Keycloak's other values, and "none" kept as it is set.
      await ts.kc.clients.update({ realm: 'test', id: 'jar-only' }, { attributes: { [REQUIRED]: 'request_uri only', [ALG]: 'none' } });
      await ts.kc.clients.update({ realm: 'test', id: 'jar-only' }, { name: 'JAR only' });
      got = await ts.kc.clients.findOne({ realm: 'test', id: 'jar-only' });
      assert.equal(got!.attributes?.[REQUIRED], 'request_uri only');
      assert.equal(got!.attributes?.[ALG], 'none');
      for (const [name, v, message] of [[REQUIRED, 'request', /request\.object\.required must be one of/], [ALG, 'HS256', /request\.object\.signature\.alg must be/]] as const) {
        const bad = await errorOf(ts.kc.clients.update({ realm: 'test', id: 'jar-only' }, { attributes: { [name]: v } }));
        assert.equal(bad.status, 400);
        assert.match(String(bad.body.errorMessage), message);
      }
    });

    test('standard.token.exchange.enabled and .enableRefreshRequestedTokenType (RFC 8693): "false" and "NO" by default, set on create and update, refused when wrong; they rule the token endpoint; server info reports TOKEN_EXCHANGE_STANDARD_V2', async () => {
      const ON = 'standard.token.exchange.enabled';
      const REFRESH = 'standard.token.exchange.enableRefreshRequestedTokenType';
      const existing = await ts.kc.clients.findOne({ realm: 'test', id: 'web-app' });
      assert.equal(existing!.attributes?.[ON], 'false');
      assert.equal(existing!.attributes?.[REFRESH], 'NO');
      const secret = 'exchanger-secret-0123456789abcdef';
      await ts.kc.clients.create({ realm: 'test', clientId: 'exchanger', secret, standardFlowEnabled: false, attributes: { [ON]: 'true', [REFRESH]: 'SAME_SESSION' } });
      let got = await ts.kc.clients.findOne({ realm: 'test', id: 'exchanger' });
      assert.equal(got!.attributes?.[ON], 'true');
      assert.equal(got!.attributes?.[REFRESH], 'SAME_SESSION');
      const exchange = async (): Promise<string> => {
        const res = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('exchanger', secret) },
          body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'not-a-token', subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }).toString(),
        });
        assert.equal(res.status, 400);
        return ((await res.json()) as { error_description: string }).error_description;
      };
      assert.equal(await exchange(), 'Invalid token');
      // The whole representation sent back with the switch off.
      await ts.kc.clients.update({ realm: 'test', id: 'exchanger' }, { ...got, attributes: { ...got!.attributes, [ON]: 'false' } });
      got = await ts.kc.clients.findOne({ realm: 'test', id: 'exchanger' });
      assert.equal(got!.attributes?.[ON], 'false');
      assert.equal(got!.attributes?.[REFRESH], 'SAME_SESSION');
      assert.equal(await exchange(), 'Standard token exchange is not enabled for the requested client');
      await ts.kc.clients.update({ realm: 'test', id: 'exchanger' }, { attributes: { [REFRESH]: 'NO' } });
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'exchanger' }))!.attributes?.[REFRESH], 'NO');
      const bad = await errorOf(ts.kc.clients.update({ realm: 'test', id: 'exchanger' }, { attributes: { [ON]: 'on' } }));
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.errorMessage), /standard\.token\.exchange\.enabled must be "true" or "false"/);
      const bad2 = await errorOf(ts.kc.clients.update({ realm: 'test', id: 'exchanger' }, { attributes: { [REFRESH]: 'ALWAYS' } }));
      assert.equal(bad2.status, 400);
      assert.match(String(bad2.body.errorMessage), /must be "NO" or "SAME_SESSION"/);
      const info = (await ts.kc.serverInfo.find()) as unknown as { features?: Array<{ name: string; enabled: boolean }> };
      assert.equal(info.features?.find((f) => f.name === 'TOKEN_EXCHANGE_STANDARD_V2')?.enabled, true);
    });

    test('dpop.bound.access.tokens: "false" by default, set on create and update, refused when not "true"/"false"; it rules the token endpoint (RFC 9449)', async () => {
      const DPOP = 'dpop.bound.access.tokens';
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'web-app' }))!.attributes?.[DPOP], 'false');
      const secret = 'dpop-only-secret-0123456789abcdef';
      await ts.kc.clients.create({ realm: 'test', clientId: 'dpop-only', secret, redirectUris: ['https://dpop.example.com/cb'], serviceAccountsEnabled: true, attributes: { [DPOP]: 'true' } });
      const got = await ts.kc.clients.findOne({ realm: 'test', id: 'dpop-only' });
      assert.equal(got!.attributes?.[DPOP], 'true');
      const grant = (): Promise<Response> =>
        fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('dpop-only', secret) }, body: 'grant_type=client_credentials' });
      let res = await grant();
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { error: 'invalid_request', error_description: 'DPoP proof is missing' });
      await ts.kc.clients.update({ realm: 'test', id: 'dpop-only' }, { ...got, attributes: { ...got!.attributes, [DPOP]: 'false' } });
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'dpop-only' }))!.attributes?.[DPOP], 'false');
      res = await grant();
      assert.equal(res.status, 200);
      await ts.kc.clients.update({ realm: 'test', id: 'dpop-only' }, { attributes: { [DPOP]: 'true' } });
      await ts.kc.clients.update({ realm: 'test', id: 'dpop-only' }, { name: 'DPoP only' });
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'dpop-only' }))!.attributes?.[DPOP], 'true');
      const bad = await errorOf(ts.kc.clients.update({ realm: 'test', id: 'dpop-only' }, { attributes: { [DPOP]: 'on' } }));
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.errorMessage), /dpop\.bound\.access\.tokens must be "true" or "false"/);
    });

    test('parRequestUriLifespan: a realm attribute (default "60"); it sets expires_in; out of range is refused', async () => {
      let realm = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(realm!.attributes?.parRequestUriLifespan, '60');
      await ts.kc.realms.update({ realm: 'test' }, { attributes: { ...realm!.attributes, parRequestUriLifespan: '90' } });
      realm = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(realm!.attributes?.parRequestUriLifespan, '90');
      const res = await push(ts.client.id, ts.client.secret, ts.client.redirectUri);
      assert.equal(res.status, 201);
      assert.equal(((await res.json()) as { expires_in: number }).expires_in, 90);
      for (const v of ['0', '3601', 'soon']) {
        const bad = await errorOf(ts.kc.realms.update({ realm: 'test' }, { attributes: { parRequestUriLifespan: v } }));
        assert.equal(bad.status, 400, v);
      }
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))!.attributes?.parRequestUriLifespan, '90');
    });
  });
}
