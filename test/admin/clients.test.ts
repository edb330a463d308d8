import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, realmPath } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { ADMIN_PASSWORD, ADMIN_USERNAME, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';
import { registry } from '../../src/metrics.js';
import { changeClient, createClient, updateClient } from '../../src/admin/operations/clients.js';

/** POSTs to a realm's token endpoint over the real port, as a client library would. */
async function token(ts: AdminTestServer, realm: string, form: Record<string, string>, authorization?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(form).toString(),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

for (const dialect of dialects()) {
  describe(`admin API: clients, secrets, service accounts, not-before (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('client create, read, update, delete with keycloak-admin-client; changes show in the next login through the pages', async () => {
      const { id } = await ts.kc.clients.create({ realm: 'test', clientId: 'billing', redirectUris: ['https://billing.example.com/cb'], webOrigins: ['https://billing.example.com'], publicClient: false, attributes: { 'pkce.code.challenge.method': 'S256' } });
      assert.equal(id, 'billing');
      const found = await ts.kc.clients.find({ realm: 'test', clientId: 'billing' });
      assert.equal(found.length, 1);
      assert.equal(found[0]!.attributes?.['pkce.code.challenge.method'], 'S256');
      assert.equal(found[0]!.standardFlowEnabled, true);
      assert.deepEqual(found[0]!.webOrigins, ['https://billing.example.com']);
      assert.equal(found[0]!.directAccessGrantsEnabled, false);

      // Whitelisting a redirect URI of web-app: a login to it works at once through the pages.
      const extra = 'https://app.example.com/other';
      const before = await runAuthorization(ts, { query: { redirect_uri: extra } }).catch((e: Error) => e);
      assert.ok(before instanceof Error, 'the URI is not whitelisted yet');
      const webApp = await ts.kc.clients.findOne({ realm: 'test', id: 'web-app' });
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { ...webApp, redirectUris: [...webApp!.redirectUris!, extra] });
      const after = await runAuthorization(ts, { query: { redirect_uri: extra } });
      assert.equal(after.location.origin + after.location.pathname, extra);
      assert.ok(after.code);

      // A disabled client is refused at the token endpoint; enabled again it works.
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { enabled: false });
      const refused = await tokenRequest(ts, { grant_type: 'authorization_code', code: after.code!, redirect_uri: extra }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(refused.statusCode, 401);
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { enabled: true });

      assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'billing' }, { redirectUris: ['http://evil.example.com/cb'] })), 400);
      assert.equal(await statusOf(ts.kc.clients.create({ realm: 'test', clientId: 'billing', redirectUris: ['https://x.example.com/'] })), 409);
      await ts.kc.clients.del({ realm: 'test', id: 'billing' });
      assert.equal(await ts.kc.clients.findOne({ realm: 'test', id: 'billing' }), null);
      const events = await ts.store.adminEvents.list('test', { resourceType: 'CLIENT' });
      assert.deepEqual(events.map((e) => e.operation).slice(0, 2), ['DELETE', 'UPDATE']);
    });

    test('every door changes a client through one path: the rules of the CLI hold in the API, and public and back brings a new secret', async () => {
      await ts.kc.clients.create({ realm: 'test', clientId: 'ledger', redirectUris: ['https://ledger.example.com/cb'], publicClient: false });
      // A control character in a name: refused by the API as by the CLI (one check), and nothing changes.
      assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'ledger' }, { name: 'Led\u0007ger' })), 400);
      await assert.rejects(updateClient(ts.store, { realmId: 'test', clientId: 'ledger', name: 'Led\u0007ger' }), /no control characters/);
      assert.equal((await ts.store.clients.get('test', 'ledger'))?.name, null);
      // Emptying the redirect URIs of a client with the code flow: the same refusal through both doors.
      assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'ledger' }, { redirectUris: [] })), 400);
      await assert.rejects(updateClient(ts.store, { realmId: 'test', clientId: 'ledger', redirectUris: { remove: ['https://ledger.example.com/cb'] } }), /needs at least one redirect URI/);
      // Public: no secret, no authentication methods; a public client takes no --auth-method.
      const pub = await changeClient(ts.store, { realmId: 'test', clientId: 'ledger', changes: { public: true } });
      assert.equal(pub.secret, undefined);
      assert.deepEqual([pub.client.public, pub.client.secretHash, pub.client.authMethods], [true, null, ['none']]);
      await assert.rejects(updateClient(ts.store, { realmId: 'test', clientId: 'ledger', authMethods: ['client_secret_post'] }), /does not authenticate/);
      // Confidential again: a new secret, returned once, that authenticates at the token endpoint.
      const { client: conf, secret } = await changeClient(ts.store, { realmId: 'test', clientId: 'ledger', changes: { public: false } });
      assert.deepEqual([conf.public, conf.authMethods.includes('client_secret_basic')], [false, true]);
      assert.ok(secret && secret.length >= 32);
      const r = await token(ts, 'test', { grant_type: 'refresh_token', refresh_token: 'not-a-token' }, basic('ledger', secret));
      assert.deepEqual([r.status, r.body.error], [400, 'invalid_grant'], 'authenticated with the new secret');
      await ts.kc.clients.del({ realm: 'test', id: 'ledger' });
    });

    test('token endpoint authentication: the representation names the methods a client allows, and GET then PUT or POST of it keeps them', async () => {
      const METHODS = 'realmgate.token.endpoint.auth.methods';
      const redirectUris = ['https://auth-methods.example.com/cb'];
      const { secret: postSecret } = await createClient(ts.store, { realmId: 'test', clientId: 'post-only', redirectUris, authMethods: ['client_secret_post'] });
      const { secret: bothSecret } = await createClient(ts.store, { realmId: 'test', clientId: 'both-methods', redirectUris });
      await createClient(ts.store, { realmId: 'test', clientId: 'no-secret', redirectUris, public: true });
      const methods = async (id: string) => (await ts.store.clients.get('test', id))!.authMethods;
      /** Whether the token endpoint takes the client's secret sent this way (invalid_grant: the client was authenticated). */
      const accepts = async (id: string, secret: string, how: 'basic' | 'post') => {
        const r = how === 'basic' ? await token(ts, 'test', { grant_type: 'refresh_token', refresh_token: 'x' }, basic(id, secret)) : await token(ts, 'test', { grant_type: 'refresh_token', refresh_token: 'x', client_id: id, client_secret: secret });
        return r.body.error === 'invalid_grant';
      };
      assert.deepEqual([await accepts('post-only', postSecret!, 'basic'), await accepts('post-only', postSecret!, 'post')], [false, true]);

      // Keycloak's authenticator "client-secret" takes the secret both ways (client_secret_basic and
      // client_secret_post); which of them a Realmgate client allows is a realmgate. attribute.
      const postOnly = (await ts.kc.clients.findOne({ realm: 'test', id: 'post-only' }))!;
      const both = (await ts.kc.clients.findOne({ realm: 'test', id: 'both-methods' }))!;
      const pub = (await ts.kc.clients.findOne({ realm: 'test', id: 'no-secret' }))!;
      assert.equal(postOnly.clientAuthenticatorType, 'client-secret');
      assert.equal(postOnly.attributes?.[METHODS], 'client_secret_post');
      assert.equal(both.attributes?.[METHODS], 'client_secret_basic client_secret_post');
      assert.equal(pub.attributes?.[METHODS], undefined);
      assert.equal(postOnly.attributes?.['token.endpoint.auth.method'], undefined, 'no attribute of one method for a client of two');

      // GET then PUT of the same representation changes nothing.
      for (const rep of [postOnly, both, pub]) await ts.kc.clients.update({ realm: 'test', id: rep.clientId! }, rep);
      assert.deepEqual([await methods('post-only'), await methods('both-methods'), await methods('no-secret')], [['client_secret_post'], ['client_secret_basic', 'client_secret_post'], ['none']]);
      assert.deepEqual(await ts.kc.clients.findOne({ realm: 'test', id: 'post-only' }), postOnly);
      // POST of it under another client id: a copy with the same methods.
      await ts.kc.clients.create({ realm: 'test', ...postOnly, clientId: 'post-only-copy' });
      assert.deepEqual(await methods('post-only-copy'), ['client_secret_post']);

      // The attribute is written as the CLI's --auth-method is: a change takes effect at the token endpoint.
      await ts.kc.clients.update({ realm: 'test', id: 'both-methods' }, { ...both, attributes: { ...both.attributes, [METHODS]: 'client_secret_basic' } });
      assert.deepEqual(await methods('both-methods'), ['client_secret_basic']);
      assert.deepEqual([await accepts('both-methods', bothSecret!, 'basic'), await accepts('both-methods', bothSecret!, 'post')], [true, false]);
      for (const bad of ['', 'private_key_jwt', 'none', 'client_secret_basic tls_client_auth']) {
        assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'both-methods' }, { attributes: { [METHODS]: bad } })), 400, JSON.stringify(bad));
      }
      assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'no-secret' }, { attributes: { [METHODS]: 'client_secret_post' } })), 400, 'a public client does not authenticate');
      // Another Keycloak authenticator (HMAC-signed JWTs, mutual TLS) cannot be honoured: refused, not
      // ignored (client-jwt is: test/admin/client-jwt.test.ts).
      for (const other of ['client-secret-jwt', 'client-x509', 'something-else']) {
        assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'both-methods' }, { clientAuthenticatorType: other })), 400, other);
        assert.equal(await statusOf(ts.kc.clients.create({ realm: 'test', clientId: `jwt-${other}`, redirectUris, clientAuthenticatorType: other })), 400, other);
      }
      assert.deepEqual(await methods('both-methods'), ['client_secret_basic']);
      // Turned public by a PUT of its representation: the methods it had go with its secret.
      await ts.kc.clients.update({ realm: 'test', id: 'post-only-copy' }, { ...postOnly, clientId: 'post-only-copy', publicClient: true });
      assert.deepEqual(await methods('post-only-copy'), ['none']);
      for (const id of ['post-only', 'post-only-copy', 'both-methods', 'no-secret']) await ts.kc.clients.del({ realm: 'test', id });
    });

    test('regenerating a secret refuses the old one at the token endpoint at once', async () => {
      await ts.kc.clients.create({ realm: 'test', clientId: 'worker', serviceAccountsEnabled: true, standardFlowEnabled: false });
      const first = await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'worker' });
      assert.equal(first.type, 'secret');
      assert.ok(first.value && first.value.length >= 43);
      assert.equal((await token(ts, 'test', { grant_type: 'client_credentials' }, basic('worker', first.value))).status, 200);
      const second = await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'worker' });
      assert.notEqual(second.value, first.value);
      const old = await token(ts, 'test', { grant_type: 'client_credentials' }, basic('worker', first.value));
      assert.equal(old.status, 401);
      assert.equal(old.body.error, 'invalid_client');
      assert.equal((await token(ts, 'test', { grant_type: 'client_credentials' }, basic('worker', second.value!))).status, 200);
      // The secret is stored only as a hash: reading it gives no value.
      assert.equal((await ts.kc.clients.getClientSecret({ realm: 'test', id: 'worker' })).value, undefined);
    });

    test('a rotation that keeps the old secret: both work until it expires or is invalidated, then the old one is refused (both databases, every door the API has)', async () => {
      await ts.kc.clients.create({ realm: 'test', clientId: 'rolling', serviceAccountsEnabled: true, standardFlowEnabled: false });
      const cc = async (secret: string): Promise<number> => (await token(ts, 'test', { grant_type: 'client_credentials' }, basic('rolling', secret))).status;
      const used = async (): Promise<number> => Number(/^realmgate_client_previous_secret_used_total\{realm="test",client="rolling"\} (\d+)$/m.exec(await registry.metrics())?.[1] ?? 0);
      const admin = async (method: string, path: string): Promise<Response> =>
        fetch(`${ts.baseUrl}/auth/admin/realms/test/clients/rolling/${path}`, { method, headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      const rotate = async (query = ''): Promise<string> => {
        const r = await admin('POST', `client-secret${query}`);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('cache-control'), 'no-store');
        const body = (await r.json()) as { type: string; value: string };
        assert.equal(body.type, 'secret');
        return body.value;
      };
      const first = await rotate();
      assert.equal((await admin('GET', 'client-secret/rotated')).status, 404, 'no rotated secret yet');

      // Kept for an hour: the old secret and the new one both authenticate, and each use of the old one is counted.
      const second = await rotate('?rotatedExpirationPeriod=3600');
      const start = Math.floor(ts.clock.nowMs() / 1000);
      const usedBefore = await used();
      assert.equal(await cc(first), 200);
      assert.equal(await cc(second), 200);
      assert.equal(await cc(first), 200);
      assert.equal((await used()) - usedBefore, 2);
      assert.equal(await cc('not-the-secret'), 401);
      const rotated = await admin('GET', 'client-secret/rotated');
      assert.equal(rotated.status, 200);
      const { expiresAt } = (await rotated.json()) as { expiresAt: number };
      assert.ok(expiresAt >= start + 3600 && expiresAt <= start + 3601, `${expiresAt} is an hour from ${start}`);
      const rep = await ts.kc.clients.findOne({ realm: 'test', id: 'rolling' });
      assert.equal(rep!.attributes!['client.secret.rotated.expiration.time'], String(expiresAt));
      // A PUT of the representation back (with that attribute) changes nothing of the secrets.
      await ts.kc.clients.update({ realm: 'test', id: 'rolling' }, rep!);
      assert.equal(await cc(first), 200);
      assert.equal(await cc(second), 200);

      // keycloak-admin-client's invalidateSecret: the old one is refused at once, the new one still works.
      await ts.kc.clients.invalidateSecret({ realm: 'test', id: 'rolling' });
      assert.equal(await cc(first), 401);
      assert.equal(await cc(second), 200);
      assert.equal((await admin('GET', 'client-secret/rotated')).status, 404);
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'rolling' }))!.attributes!['client.secret.rotated.expiration.time'], undefined);

      // A rotation without the period refuses the old secret and any previous one still kept.
      const third = await rotate('?rotatedExpirationPeriod=600');
      assert.equal(await cc(second), 200);
      const fourth = await rotate();
      assert.equal(await cc(second), 401);
      assert.equal(await cc(third), 401);
      assert.equal(await cc(fourth), 200);

      // One previous secret at most: rotating twice with a period keeps only the one just replaced.
      const fifth = await rotate('?rotatedExpirationPeriod=600');
      const sixth = await rotate('?rotatedExpirationPeriod=600');
      assert.equal(await cc(fourth), 401);
      assert.equal(await cc(fifth), 200);
      assert.equal(await cc(sixth), 200);

      // Refused periods: not a whole number of seconds, or over 30 days; nothing changes.
      for (const bad of ['abc', '-1', '2592001', '1.5']) {
        const r = await admin('POST', `client-secret?rotatedExpirationPeriod=${encodeURIComponent(bad)}`);
        assert.equal(r.status, 400, bad);
      }
      assert.equal(await cc(fifth), 200);
      assert.equal(await cc(sixth), 200);

      // Past its expiry (the server's clock), the previous secret is refused; the admin events name each door.
      ts.clock.advance(601);
      assert.equal(await cc(fifth), 401);
      assert.equal(await cc(sixth), 200);
      await ts.kc.auth({ username: ADMIN_USERNAME, password: ADMIN_PASSWORD, grantType: 'password', clientId: 'admin-cli' });
      assert.equal((await admin('GET', 'client-secret/rotated')).status, 404);
      const paths = (await ts.store.adminEvents.list('test', { resourceType: 'CLIENT' })).map((e) => `${e.operation} ${e.resourcePath}`);
      assert.ok(paths.includes('DELETE clients/rolling/client-secret/rotated'), paths.join(', '));
      assert.ok(paths.filter((p) => p === 'ACTION clients/rolling/client-secret').length >= 6);
      await ts.kc.clients.del({ realm: 'test', id: 'rolling' });
    });

    test('a service account without a role gets 403; with view-clients it reads clients; its token has no refresh token', async () => {
      await ts.kc.clients.create({ realm: 'test', clientId: 'robot', serviceAccountsEnabled: true, standardFlowEnabled: false });
      const { value: secret } = await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'robot' });
      const robot = ts.newClient('test');
      await robot.auth({ grantType: 'client_credentials', clientId: 'robot', clientSecret: secret! });
      const t = await token(ts, 'test', { grant_type: 'client_credentials' }, basic('robot', secret!));
      assert.equal(t.body.refresh_token, undefined);
      assert.equal(t.body.token_type, 'Bearer');
      assert.equal(t.body.refresh_expires_in, 0);
      assert.equal(decodeJwt(t.body.access_token as string).preferred_username, 'service-account-robot');
      assert.equal(await statusOf(robot.clients.find({ realm: 'test' })), 403);

      const sa = await ts.kc.clients.getServiceAccountUser({ realm: 'test', id: 'robot' });
      assert.equal(sa.username, 'service-account-robot');
      const rm = await ts.kc.clients.find({ realm: 'test', clientId: 'realm-management' });
      const role = await ts.kc.clients.findRole({ realm: 'test', id: rm[0]!.id!, roleName: 'view-clients' });
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: sa.id!, clientUniqueId: rm[0]!.id!, roles: [{ id: role!.id!, name: role!.name! }] });
      const mapped = await ts.kc.users.listClientRoleMappings({ realm: 'test', id: sa.id!, clientUniqueId: rm[0]!.id! });
      assert.deepEqual(mapped.map((r) => r.name), ['view-clients']);
      // The admin API reads the caller's roles as they are now, not from the token: the token issued
      // before the mapping may already read; a new token also carries the role in its claims.
      assert.ok((await robot.clients.find({ realm: 'test' })).some((c) => c.clientId === 'web-app'));
      await robot.auth({ grantType: 'client_credentials', clientId: 'robot', clientSecret: secret! });
      const seen = await robot.clients.find({ realm: 'test' });
      assert.ok(seen.some((c) => c.clientId === 'web-app'));
      // view-clients does not allow changes, nor another realm.
      assert.equal(await statusOf(robot.clients.update({ realm: 'test', id: 'web-app' }, { enabled: false })), 403);
      assert.equal(await statusOf(robot.realms.findOne({ realm: 'master' })), 403);
      const claims = decodeJwt((await robot.getAccessToken())!);
      assert.deepEqual((claims.resource_access as Record<string, { roles: string[] }>)['realm-management']!.roles, ['view-clients']);
      // Taken away, the role no longer counts, though the token still claims it (for three days).
      await ts.kc.users.delClientRoleMappings({ realm: 'test', id: sa.id!, clientUniqueId: rm[0]!.id!, roles: [{ id: role!.id!, name: role!.name! }] });
      assert.equal(await statusOf(robot.clients.find({ realm: 'test' })), 403);
      // Given back, then the service account disabled: its token has no chain to revoke, and no roles either.
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: sa.id!, clientUniqueId: rm[0]!.id!, roles: [{ id: role!.id!, name: role!.name! }] });
      assert.equal(await statusOf(robot.clients.find({ realm: 'test' })), 200);
      await ts.kc.users.update({ realm: 'test', id: sa.id! }, { enabled: false });
      assert.equal(await statusOf(robot.clients.find({ realm: 'test' })), 403);
    });

    test("an administrator whose admin role is taken away is refused at once with the token still unexpired", async () => {
      const other = await ts.kc.users.create({ realm: 'master', username: 'second-admin', enabled: true, credentials: [{ type: 'password', value: 'second admin password', temporary: false }] });
      const admin = (await ts.kc.roles.findOneByName({ realm: 'master', name: 'admin' }))!;
      await ts.kc.users.addRealmRoleMappings({ realm: 'master', id: other.id, roles: [{ id: admin.id!, name: admin.name! }] });
      const second = ts.newClient();
      await second.auth({ username: 'second-admin', password: 'second admin password', grantType: 'password', clientId: 'admin-cli' });
      assert.equal(await statusOf(second.users.find({ realm: 'test' })), 200);
      await ts.kc.users.delRealmRoleMappings({ realm: 'master', id: other.id, roles: [{ id: admin.id!, name: admin.name! }] });
      assert.equal(await statusOf(second.users.find({ realm: 'test' })), 403);
      assert.equal(await statusOf(second.realms.findOne({ realm: 'test' })), 403);
      assert.deepEqual(await second.realms.find(), []);
    });

    test('not-before push refuses every token issued before it, including earlier in the same second', async () => {
      const before = await runAuthorization(ts);
      const issued = await tokenRequest(ts, { grant_type: 'authorization_code', code: before.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      const { access_token, refresh_token } = issued.json() as { access_token: string; refresh_token: string };
      const userinfo = (): Promise<Response> => fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/userinfo')}`, { headers: { authorization: `Bearer ${access_token}` } });
      assert.equal((await userinfo()).status, 200);
      // No clock movement between issuing and the push: same second (the test server's clock is manual).
      await ts.kc.realms.pushRevocation({ realm: 'test' });
      assert.equal((await userinfo()).status, 401);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(refreshed.json().error, 'invalid_grant');
      const realm = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(realm!.notBefore, Math.floor(ts.clock.nowMs() / 1000) + 1);
      // The push returned once the boundary second began; the manual clock is moved there too, and new
      // logins work.
      ts.clock.advance(1);
      const again = await runAuthorization(ts);
      const fresh = await tokenRequest(ts, { grant_type: 'authorization_code', code: again.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(fresh.statusCode, 200);
    });

    test("a client's not-before (push revocation): every token issued to it until then is refused, other clients' are not", async () => {
      const auth = basic(ts.client.id, ts.client.secret);
      const login = await runAuthorization(ts);
      const issued = (await tokenRequest(ts, { grant_type: 'authorization_code', code: login.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json() as { access_token: string; refresh_token: string };
      const pendingCode = (await runAuthorization(ts)).code!;
      await ts.kc.clients.create({ realm: 'test', clientId: 'svc', serviceAccountsEnabled: true, standardFlowEnabled: false });
      await ts.kc.clients.create({ realm: 'test', clientId: 'bystander', serviceAccountsEnabled: true, standardFlowEnabled: false });
      const svcSecret = (await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'svc' })).value!;
      const bySecret = (await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'bystander' })).value!;
      const svcToken = (await token(ts, 'test', { grant_type: 'client_credentials' }, basic('svc', svcSecret))).body.access_token as string;
      const byToken = (await token(ts, 'test', { grant_type: 'client_credentials' }, basic('bystander', bySecret))).body.access_token as string;
      const active = async (t: string, id: string, secret: string): Promise<boolean> => {
        const r = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token/introspect')}`, { method: 'POST', headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: t }) });
        return ((await r.json()) as { active: boolean }).active;
      };
      const userinfo = async (t: string): Promise<number> => (await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/userinfo')}`, { headers: { authorization: `Bearer ${t}` } })).status;
      assert.equal(await userinfo(issued.access_token), 200);
      assert.equal(await active(svcToken, 'svc', svcSecret), true);

      // keycloak-admin-client's pushRevocation of web-app, then svc through a PUT of notBefore (Keycloak's "Set to now").
      assert.deepEqual(await ts.kc.clients.pushRevocation({ realm: 'test', id: ts.client.id }), { successRequests: [], failedRequests: [] });
      const at = Math.floor(ts.clock.nowMs() / 1000) + 1;
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: ts.client.id }))!.notBefore, at);
      await ts.kc.clients.update({ realm: 'test', id: 'svc' }, { notBefore: at });
      assert.equal(await userinfo(issued.access_token), 401, "web-app's access token");
      assert.equal(await active(issued.access_token, ts.client.id, ts.client.secret), false);
      assert.equal(await active(issued.refresh_token, ts.client.id, ts.client.secret), false);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: issued.refresh_token }, { authorization: auth });
      assert.equal(refreshed.json().error, 'invalid_grant');
      assert.match(refreshed.json().error_description, /revoked for this client/);
      const exchanged = await tokenRequest(ts, { grant_type: 'authorization_code', code: pendingCode, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(exchanged.json().error, 'invalid_grant', 'a code issued before it');
      assert.equal(await active(svcToken, 'svc', svcSecret), false, "svc's client_credentials token");
      assert.equal(await active(byToken, 'bystander', bySecret), true, "another client's token stays");

      // A not-before more than a day ahead, or not a number, is refused; the rest of the body is not applied.
      for (const notBefore of [at + 2 * 86_400, -1, 'soon'] as unknown as number[]) {
        assert.equal(await statusOf(ts.kc.clients.update({ realm: 'test', id: 'svc' }, { notBefore, name: 'renamed' })), 400, String(notBefore));
      }
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'svc' }))!.name, undefined);

      // From the boundary second on, new tokens work; notBefore 0 clears it.
      ts.clock.advance(1);
      const again = await runAuthorization(ts);
      const fresh = await tokenRequest(ts, { grant_type: 'authorization_code', code: again.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(fresh.statusCode, 200);
      assert.equal(await userinfo(fresh.json().access_token), 200);
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: fresh.json().refresh_token }, { authorization: auth })).statusCode, 200);
      await ts.kc.clients.update({ realm: 'test', id: 'svc' }, { notBefore: 0 });
      assert.equal(await active(svcToken, 'svc', svcSecret), true, 'cleared: accepted again (as Keycloak)');
      const events = (await ts.store.adminEvents.list('test', { resourceType: 'CLIENT' })).filter((e) => e.resourcePath === `clients/${ts.client.id}`);
      assert.ok(events.some((e) => e.operation === 'UPDATE' && e.representation !== null && (JSON.parse(e.representation) as { notBefore?: number }).notBefore === at));
      for (const id of ['svc', 'bystander']) await ts.kc.clients.del({ realm: 'test', id });
    });

    test('keys and events', async () => {
      const keys = await ts.kc.realms.getKeys({ realm: 'test' });
      assert.equal(keys.keys!.length, 1);
      assert.equal(keys.keys![0]!.status, 'ACTIVE');
      assert.equal(keys.active!.RS256, keys.keys![0]!.kid);
      // Keycloak's publicKey: the base64 DER SubjectPublicKeyInfo, the realm document's public_key.
      const doc = (await ts.app.inject({ method: 'GET', url: '/auth/realms/test' })).json() as { public_key: string };
      assert.equal(keys.keys![0]!.publicKey, doc.public_key);
      assert.equal(keys.keys![0]!.certificate, undefined, 'a key of Realmgate has no certificate');
      const events = await ts.kc.realms.findEvents({ realm: 'test', max: 500 });
      assert.ok(events.some((e) => e.type === 'CLIENT_LOGIN'));
      const adminEvents = await ts.kc.realms.findAdminEvents({ realm: 'test', max: 500 });
      const secretEvent = adminEvents.find((e) => e.resourcePath === 'clients/worker/client-secret');
      assert.equal(secretEvent?.operationType, 'ACTION');
      assert.equal(secretEvent?.authDetails?.realmId, 'master');
      // No secret ever lands in the admin log.
      assert.ok(!JSON.stringify(adminEvents).match(/sha256\$|\$argon2/));
    });
  });
}
