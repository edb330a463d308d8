import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, ADMIN_USERNAME, type AdminTestServer } from './helpers.js';

for (const dialect of dialects()) {
  describe(`admin API base (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('the bootstrap admin logs in with the password grant of admin-cli; the token carries the master admin role', async () => {
      const token = decodeJwt((await ts.kc.getAccessToken())!);
      assert.equal(token.iss, `${ts.baseUrl}/auth/realms/master`);
      assert.equal(token.azp, 'admin-cli');
      assert.deepEqual((token.realm_access as { roles: string[] }).roles.sort(), ['admin', 'create-realm']);
      assert.equal(token.preferred_username, ADMIN_USERNAME);
    });

    test('realms are listed and read in Keycloak representation', async () => {
      const realms = await ts.kc.realms.find();
      assert.deepEqual(realms.map((r) => r.realm).sort(), ['master', 'test']);
      const test = await ts.kc.realms.findOne({ realm: 'test' });
      assert.equal(test?.enabled, true);
      assert.equal(test?.accessCodeLifespan, 45);
      assert.equal(await ts.kc.realms.findOne({ realm: 'nope' }), null);
    });

    test('401 without a token or with a bad one, in Keycloak error shape', async () => {
      for (const authorization of [undefined, 'Bearer abc.def.ghi', 'Basic Zm9vOmJhcg==']) {
        const r = await fetch(`${ts.baseUrl}/auth/admin/realms`, { headers: authorization ? { authorization } : {} });
        assert.equal(r.status, 401);
        const body = (await r.json()) as { error: string; errorMessage: string };
        assert.equal(typeof body.error, 'string');
        assert.equal(typeof body.errorMessage, 'string');
      }
    });

    test('403 for a user of the realm without an admin role; 403 for another realm; trailing slash tolerated', async () => {
      const alice = ts.newClient('test');
      // The password grant is off by default: unauthorized_client.
      await assert.rejects(alice.auth({ username: 'alice', password: ts.user.password, grantType: 'password', clientId: 'native-app' }), /unauthorized_client/);
      await ts.store.clients.update('test', 'native-app', { directAccessGrantsEnabled: true });
      await alice.auth({ username: 'alice', password: ts.user.password, grantType: 'password', clientId: 'native-app' });
      assert.equal(await statusOf(alice.realms.findOne({ realm: 'test' })), 403);
      assert.equal(await statusOf(alice.realms.findOne({ realm: 'master' })), 403);
      assert.deepEqual(await alice.realms.find(), []);
      const token = await ts.kc.getAccessToken();
      const r1 = await fetch(`${ts.baseUrl}/auth/admin/realms/`, { headers: { authorization: `Bearer ${token}` } });
      const r2 = await fetch(`${ts.baseUrl}/auth/admin/realms`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r1.status, 200);
      assert.deepEqual(await r1.json(), await r2.json());
    });

    test('bodies: empty with a JSON content type, `{}`, and a bare JSON string are accepted; malformed JSON is a 400', async () => {
      const token = await ts.kc.getAccessToken();
      const call = (method: string, path: string, body?: string): Promise<Response> =>
        fetch(`${ts.baseUrl}/auth/admin/realms${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body } : {}) });
      await ts.kc.realms.create({ realm: 'bodies' });
      assert.equal((await call('POST', '/bodies/push-revocation', '{}')).status, 200);
      assert.equal((await call('POST', '/bodies/push-revocation', '"a bare string"')).status, 200);
      assert.equal((await call('POST', '/bodies/push-revocation')).status, 200);
      const bad = await call('PUT', '/bodies', '{"realm": ');
      assert.equal(bad.status, 400);
      assert.equal(typeof ((await bad.json()) as { errorMessage: unknown }).errorMessage, 'string');
      assert.equal((await call('PUT', '/bodies', '"not an object"')).status, 400);
      assert.equal((await call('DELETE', '/bodies', '')).status, 204);
    });

    test('the OpenAPI 3 document lists the admin routes', async () => {
      const r = await fetch(`${ts.baseUrl}/auth/admin/openapi.json`);
      assert.equal(r.status, 200);
      const doc = (await r.json()) as { openapi: string; paths: Record<string, unknown> };
      assert.match(doc.openapi, /^3\./);
      assert.ok(doc.paths['/auth/admin/realms'], Object.keys(doc.paths).join(', '));
      assert.ok(doc.paths['/auth/admin/realms/{realm}']);
      assert.ok(!doc.paths['/auth/realms/{realm}/protocol/openid-connect/token']);
    });

    test('create, update and delete a realm; 201 with Location; admin events record who and what', async () => {
      const r = await ts.kc.realms.create({ realm: 'shop', displayName: 'Shop', accessTokenLifespan: 600, failureFactor: 3 });
      assert.equal(r.realmName, 'shop');
      await ts.kc.realms.update({ realm: 'shop' }, { accessTokenLifespan: 900, waitIncrementSeconds: 120 });
      const shop = await ts.kc.realms.findOne({ realm: 'shop' });
      assert.equal(shop?.accessTokenLifespan, 900);
      assert.equal(shop?.failureFactor, 3);
      assert.equal(shop?.waitIncrementSeconds, 120);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'shop' }, { accessTokenLifespan: -1 })), 400);
      // The whole representation sent back with one idle timeout changed: that one counts.
      await ts.kc.realms.update({ realm: 'shop' }, { ...shop, ssoSessionIdleTimeout: 86_400 });
      const idle = await ts.kc.realms.findOne({ realm: 'shop' });
      assert.equal(idle?.offlineSessionIdleTimeout, 86_400);
      assert.equal(idle?.accessTokenLifespan, 900);
      const events = await ts.store.adminEvents.list('shop');
      // Newest first: the update, then the creation.
      assert.deepEqual(events.filter((e) => e.resourceType === 'REALM').map((e) => e.operation), ['UPDATE', 'UPDATE', 'CREATE']);
      const create = events.find((e) => e.resourceType === 'REALM' && e.operation === 'CREATE')!;
      assert.equal(create.authUsername, ADMIN_USERNAME);
      assert.equal(create.authRealmId, 'master');
      assert.equal(create.ip, '127.0.0.1');
      assert.equal(create.via, 'api');
      await ts.kc.realms.del({ realm: 'shop' });
      assert.equal(await ts.kc.realms.findOne({ realm: 'shop' }), null);
      const master = await ts.store.adminEvents.list('master');
      assert.ok(master.some((e) => e.operation === 'DELETE' && e.resourcePath === 'realms/shop'));
    });
  });
}
