import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { changeClient, createClient, createRealm, createRole, grantRolesByName, setClientEnabled, updateClient, updateUser } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { logoutSession } from '../../src/oidc/end-session.js';
import { registry } from '../../src/metrics.js';

// RFC 8693 token exchange as Keycloak's standard token exchange (V2): the service `api` receives a user's
// access token issued to `web-app` (whose aud names `api`) and exchanges it for a token for `backend`.
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const RT = 'urn:ietf:params:oauth:token-type:refresh_token';

function metric(text: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    const m = /^realmgate_grants_total\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return 0;
}

for (const dialect of dialects()) {
  describe(`token exchange, RFC 8693 (${dialect})`, () => {
    let ts: TestServer;
    const secrets: Record<string, string> = {};
    const make = async (clientId: string, extra: Record<string, unknown> = {}): Promise<void> => {
      const r = await createClient(ts.store, { realmId: REALM, clientId, redirectUris: [], standardFlowEnabled: false, ...extra });
      if (r.secret) secrets[clientId] = r.secret;
    };
    before(async () => {
      ts = await startTestServer({ dialect });
      await make('api', { standardTokenExchange: true, audiences: ['backend', 'retired', 'https://files.example.com/'], scopes: 'openid profile email core_data offline_access' });
      await make('api-refresh', { standardTokenExchange: true, tokenExchangeRefresh: 'SAME_SESSION' });
      await make('api-off');
      await make('outsider', { standardTokenExchange: true });
      await make('pub', { public: true, standardTokenExchange: true });
      await make('backend');
      await make('reports');
      await make('retired');
      await setClientEnabled(ts.store, { realmId: REALM, clientId: 'retired', enabled: false });
      // alice holds a role of `reports`: Keycloak puts such a client in her tokens' audience.
      await createRole(ts.store, { realmId: REALM, clientId: 'reports', name: 'reader' }, cliActor());
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'reports', names: ['reader'] }, cliActor());
      // The web application's tokens are meant for the services it calls.
      await updateClient(ts.store, { realmId: REALM, clientId: ts.client.id, audiences: { add: ['api', 'api-refresh', 'api-off', 'pub'] } });
    });
    after(() => ts.close());

    /** A user's access token issued to web-app through the code flow (organization acme). */
    async function userTokens(scope = 'openid profile core_data exports'): Promise<{ access_token: string; refresh_token: string }> {
      const r = await runAuthorization(ts, { query: { scope } });
      assert.ok(r.code);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    function exchange(clientId: string, form: Record<string, string | string[]>, authorization: string | null = secrets[clientId] ? basic(clientId, secrets[clientId]!) : null, extraHeaders: Record<string, string> = {}) {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries({ grant_type: GRANT, subject_token_type: AT, ...form })) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
      if (!authorization) body.append('client_id', clientId);
      return ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}), ...extraHeaders },
        payload: body.toString(),
      });
    }

    function refused(res: { statusCode: number; body: string; json(): unknown }, status: number, error: string, description?: string | RegExp): void {
      assert.equal(res.statusCode, status, res.body);
      const b = res.json() as { error: string; error_description: string };
      assert.equal(b.error, error, res.body);
      if (typeof description === 'string') assert.equal(b.error_description, description);
      else if (description) assert.match(b.error_description, description);
    }

    test('discovery lists the grant type', async () => {
      const meta = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json();
      assert.ok(meta.grant_types_supported.includes(GRANT));
    });

    test('success: RFC 8693 2.2.1 response, same user, session and organization, aud the requested audience, azp the requester', async () => {
      const before = await registry.metrics();
      const subject = await userTokens();
      const sub = decodeJwt(subject.access_token);
      const res = await exchange('api', { subject_token: subject.access_token, audience: 'backend' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'id_token', 'issued_token_type', 'not-before-policy', 'refresh_expires_in', 'scope', 'session_state', 'token_type']);
      assert.equal(body.issued_token_type, AT);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.refresh_expires_in, 0);
      assert.equal(body.session_state, sub.sid);
      // exports is not among api's scopes: the new token has the subject's scopes that api may have.
      assert.equal(body.scope, 'openid profile core_data');
      const jwks = (await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/certs') })).json();
      const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), { issuer: `${ts.config.authUrl}/auth/realms/${REALM}`, audience: 'backend' });
      assert.equal(payload.aud, 'backend');
      assert.equal(payload.azp, 'api');
      assert.equal(payload.sub, ts.user.id);
      assert.equal(payload.sid, sub.sid);
      assert.deepEqual(payload.organization, ['acme']);
      assert.equal(payload.preferred_username, 'alice');
      // The exchanged token is active at introspection (backend checks it).
      const intro = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token/introspect'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('backend', secrets.backend!) },
        payload: new URLSearchParams({ token: body.access_token }).toString(),
      });
      assert.equal(intro.json().active, true);
      assert.equal(intro.json().client_id, 'api');
      // Audited as Keycloak's TOKEN_EXCHANGE; counted as a grant.
      const events = await ts.store.events.list(REALM, { types: ['TOKEN_EXCHANGE'] });
      assert.ok(events.some((e) => e.clientId === 'api' && e.userId === ts.user.id && e.outcome === 'success' && /audience backend/.test(e.reason ?? '')));
      const after = await registry.metrics();
      assert.equal(metric(after, { grant_type: GRANT, outcome: 'success' }) - metric(before, { grant_type: GRANT, outcome: 'success' }), 1);
    });

    test('a DPoP proof sent with the exchange (RFC 9449) binds the new access token to its key', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const jwk = await exportJWK(publicKey);
      const dpop = await new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: `${ts.config.authUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, iat: Math.floor(ts.clock.nowMs() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey);
      const subject = await userTokens();
      const res = await exchange('api', { subject_token: subject.access_token, audience: 'backend' }, basic('api', secrets.api!), { dpop });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().token_type, 'DPoP');
      assert.deepEqual(decodeJwt(res.json().access_token).cnf, { jkt: await calculateJwkThumbprint(jwk) });
      // The same proof again: a replay.
      const again = await exchange('api', { subject_token: subject.access_token, audience: 'backend' }, basic('api', secrets.api!), { dpop });
      refused(again, 400, 'invalid_dpop_proof');
    });

    test('scope narrows; without audience aud is the requester\'s usual one; several audiences; one available by the user\'s client roles', async () => {
      const subject = await userTokens();
      const narrow = await exchange('api', { subject_token: subject.access_token, scope: 'core_data' });
      assert.equal(narrow.statusCode, 200, narrow.body);
      assert.equal(narrow.json().scope, 'core_data');
      assert.equal(narrow.json().id_token, undefined);
      assert.deepEqual(decodeJwt(narrow.json().access_token).aud, ['backend', 'retired', 'https://files.example.com/']);
      const two = await exchange('api', { subject_token: subject.access_token, audience: ['backend', 'reports'] });
      assert.equal(two.statusCode, 200, two.body);
      assert.deepEqual(decodeJwt(two.json().access_token).aud, ['backend', 'reports']);
      // RFC 8693 2.1: resource (RFC 8707) names targets too, among the requester's audiences.
      const withResource = await exchange('api', { subject_token: subject.access_token, audience: 'backend', resource: 'https://files.example.com/' });
      assert.equal(withResource.statusCode, 200, withResource.body);
      assert.deepEqual(decodeJwt(withResource.json().access_token).aud, ['backend', 'https://files.example.com/']);
      refused(await exchange('api', { subject_token: subject.access_token, resource: 'https://elsewhere.example.com/' }), 400, 'invalid_target');
    });

    test('refusals of the request: other exchanges, attribute off, actor_token, missing or unsupported token types', async () => {
      const { access_token } = await userTokens();
      refused(await exchange('api-off', { subject_token: access_token }), 400, 'invalid_request', 'Standard token exchange is not enabled for the requested client');
      refused(await exchange('api', { subject_token: access_token, requested_subject: 'bob' }), 400, 'invalid_request', "Parameter 'requested_subject' is not supported for standard token exchange");
      refused(await exchange('api', { subject_token: access_token, subject_issuer: 'google' }), 400, 'invalid_request', "Parameter 'subject_issuer' is not supported for standard token exchange");
      refused(await exchange('api', { subject_token: access_token, actor_token: access_token, actor_token_type: AT }), 400, 'invalid_request', "Parameter 'actor_token' is not supported for standard token exchange");
      refused(await exchange('api', {}), 400, 'invalid_request', "Parameter 'subject_token' required for standard token exchange");
      refused(await exchange('api', { subject_token: access_token, subject_token_type: '' }), 400, 'invalid_request', "Parameter 'subject_token_type' required for standard token exchange");
      refused(await exchange('api', { subject_token: access_token, subject_token_type: RT }), 400, 'invalid_request', "Parameter 'subject_token' supports access tokens only");
      refused(await exchange('api', { subject_token: access_token, subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' }), 400, 'invalid_request', "Parameter 'subject_token' supports access tokens only");
      refused(await exchange('api', { subject_token: access_token, requested_token_type: 'urn:ietf:params:oauth:token-type:id_token' }), 400, 'invalid_request', 'requested_token_type unsupported');
      refused(await exchange('api', { subject_token: access_token, requested_token_type: 'urn:ietf:params:oauth:token-type:saml2' }), 400, 'invalid_request', 'requested_token_type unsupported');
      // api's attribute is NO: no refresh token.
      refused(await exchange('api', { subject_token: access_token, requested_token_type: RT }), 400, 'invalid_request', 'requested_token_type unsupported');
      refused(await exchange('api', { subject_token: access_token, subject_token_type: [AT, AT] }), 400, 'invalid_request');
    });

    test('refusals of the client: public, wrong credentials, not in the subject token\'s audience', async () => {
      const { access_token } = await userTokens();
      refused(await exchange('pub', { subject_token: access_token }), 400, 'invalid_client', 'Public client is not allowed to exchange token');
      refused(await exchange('api', { subject_token: access_token }, basic('api', 'wrong secret')), 401, 'invalid_client');
      refused(await exchange('api', { subject_token: access_token, client_secret: 'wrong' }, null), 401, 'invalid_client');
      refused(await exchange('outsider', { subject_token: access_token }), 403, 'access_denied', 'Client is not within the token audience');
      // The client the token was issued to (its azp) may exchange it, as in Keycloak, once enabled.
      await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { standardTokenExchange: true } });
      try {
        const own = await exchange(ts.client.id, { subject_token: access_token, scope: 'core_data' }, basic(ts.client.id, ts.client.secret));
        assert.equal(own.statusCode, 200, own.body);
      } finally {
        await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { standardTokenExchange: false } });
      }
    });

    test('refusals of the audience and scope: unknown, disabled, not available; scope widening', async () => {
      const { access_token } = await userTokens();
      refused(await exchange('api', { subject_token: access_token, audience: 'nobody' }), 400, 'invalid_client', 'Audience not found');
      refused(await exchange('api', { subject_token: access_token, audience: 'retired' }), 400, 'invalid_client', 'Client disabled');
      refused(await exchange('api', { subject_token: access_token, audience: ['backend', 'web-app'] }), 400, 'invalid_request', 'Requested audience not available: web-app');
      // exports was granted to the subject token but api may not have it; email api may have but was not granted.
      refused(await exchange('api', { subject_token: access_token, scope: 'core_data exports' }), 400, 'invalid_scope', 'Invalid scopes: core_data exports');
      refused(await exchange('api', { subject_token: access_token, scope: 'email' }), 400, 'invalid_scope', 'Invalid scopes: email');
      refused(await exchange('api', { subject_token: access_token, scope: 'nonexistent' }), 400, 'invalid_scope');
    });

    test('hostile and dead subject tokens: never a 500, always invalid_request "Invalid token"', async () => {
      const { access_token } = await userTokens();
      const [h, p, s] = access_token.split('.') as [string, string, string];
      const flip = (x: string): string => x.slice(0, -2) + (x.at(-2) === 'A' ? 'B' : 'A') + x.at(-1);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
      await createRealm(ts.store, { id: 'elsewhere' });
      const claims = decodeJwt(access_token);
      // A token signed by another realm's key, once with its own issuer, once claiming ours.
      const foreign = await ts.services.keys.sign('elsewhere', { ...claims, iss: `${ts.config.authUrl}/auth/realms/elsewhere` });
      const forged = await ts.services.keys.sign('elsewhere', claims);
      for (const bad of ['abc', 'a.b.c', `${h}.${p}.${flip(s)}`, `${h}.${flip(p)}.${s}`, none, foreign, forged, `${access_token}x`, '\u00e9'.repeat(100)]) {
        refused(await exchange('api', { subject_token: bad }), 400, 'invalid_request', 'Invalid token');
      }
      refused(await exchange('api', { subject_token: 'x'.repeat(9000) }), 400, 'invalid_request');
      // A disabled user's token is no subject any more.
      await updateUser(ts.store, { realmId: REALM, user: 'alice', enabled: false });
      try {
        refused(await exchange('api', { subject_token: access_token }), 400, 'invalid_request', 'Invalid token');
      } finally {
        await updateUser(ts.store, { realmId: REALM, user: 'alice', enabled: true });
      }
      // A client_credentials token has no user session to follow (it names api in its aud here).
      await make('svc', { serviceAccountsEnabled: true, audiences: ['api'] });
      const service = await tokenRequest(ts, { grant_type: 'client_credentials' }, { authorization: basic('svc', secrets.svc!) });
      assert.equal(service.statusCode, 200, service.body);
      refused(await exchange('api', { subject_token: service.json().access_token }), 400, 'invalid_request', 'Invalid token: the subject token has no user session');
      // Revoked (RFC 7009), then expired.
      const revoked = await userTokens();
      const rv = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/revoke'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) },
        payload: new URLSearchParams({ token: revoked.access_token, token_type_hint: 'access_token' }).toString(),
      });
      assert.equal(rv.statusCode, 200);
      refused(await exchange('api', { subject_token: revoked.access_token }), 400, 'invalid_request', 'Invalid token');
      const failures = await ts.store.events.list(REALM, { types: ['TOKEN_EXCHANGE_ERROR'] });
      assert.ok(failures.some((e) => e.clientId === 'api' && e.outcome === 'failure' && /Invalid token/.test(e.reason ?? '')));
      ts.clock.advance(259_200 + 1);
      refused(await exchange('api', { subject_token: access_token }), 400, 'invalid_request', 'Invalid token');
    });

    test('refresh_token with SAME_SESSION: a new chain for the same session and user; its refresh works; logout of the session revokes it', async () => {
      const subject = await userTokens('openid core_data');
      const sid = decodeJwt(subject.access_token).sid as string;
      const res = await exchange('api-refresh', { subject_token: subject.access_token, requested_token_type: RT });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.issued_token_type, AT);
      assert.ok(body.refresh_token);
      assert.ok(body.refresh_expires_in > 0);
      assert.equal(body.session_state, sid);
      const rt = decodeJwt(body.refresh_token);
      assert.equal(rt.azp, 'api-refresh');
      assert.equal(rt.sid, sid);
      assert.notEqual(rt.chain, decodeJwt(subject.refresh_token).chain);
      const auth = basic('api-refresh', secrets['api-refresh']!);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, { authorization: auth });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(decodeJwt(refreshed.json().access_token).sid, sid);
      // Offline tokens cannot give one (Keycloak: a new session would be needed).
      const offline = await userTokens('openid core_data offline_access');
      refused(await exchange('api-refresh', { subject_token: offline.access_token, requested_token_type: RT }), 400, 'invalid_request', 'Refresh token not valid as requested_token_type because creating a new session is needed');
      // The user's logout of the session ends the exchanged chain.
      await logoutSession(ts.services, REALM, { id: sid, userId: ts.user.id }, 'test logout');
      const after = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshed.json().refresh_token }, { authorization: auth });
      refused(after, 400, 'invalid_grant');
      refused(await exchange('api-refresh', { subject_token: subject.access_token, requested_token_type: RT }), 400, 'invalid_request', 'Invalid token');
    });

    test('an access token from an exchange dies with the subject\'s session', async () => {
      const subject = await userTokens();
      const sid = decodeJwt(subject.access_token).sid as string;
      const res = await exchange('api', { subject_token: subject.access_token, audience: 'backend' });
      assert.equal(res.statusCode, 200, res.body);
      const exchanged = res.json().access_token as string;
      // It can itself be exchanged by a client it names (backend, once enabled), then both die with the session.
      await changeClient(ts.store, { realmId: REALM, clientId: 'backend', changes: { standardTokenExchange: true } });
      const again = await exchange('backend', { subject_token: exchanged, scope: 'core_data' });
      assert.equal(again.statusCode, 200, again.body);
      await logoutSession(ts.services, REALM, { id: sid, userId: ts.user.id }, 'test logout');
      const introspect = (token: string) =>
        ts.app.inject({
          method: 'POST',
          url: realmPath('/protocol/openid-connect/token/introspect'),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('backend', secrets.backend!) },
          payload: new URLSearchParams({ token }).toString(),
        });
      assert.equal((await introspect(exchanged)).json().active, false);
      assert.equal((await introspect(again.json().access_token)).json().active, false);
      refused(await exchange('backend', { subject_token: exchanged }), 400, 'invalid_request', 'Invalid token');
    });
  });
}
