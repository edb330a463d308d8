import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { errorOf, startAdminServer, type AdminTestServer } from './helpers.js';

/**
 * A name that is a path segment of the admin API cannot be "." or "..": HTTP clients resolve such a
 * segment away with the one before it (RFC 3986 5.2.4), so keycloak-admin-client's
 * roles.delByName({name: '..'}) sent DELETE /admin/realms/{realm}/ and the realm was deleted. Each door
 * that makes such a name refuses it; a DELETE that arrives on a path ending in '/' is refused too. (Groups
 * are named by id in the API's paths: a group may be called "..".)
 */
for (const dialect of dialects()) {
  describe(`admin API: "." and ".." are no names (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    /** A request whose path goes out exactly as written (no dot segment resolved). */
    const rawRequest = (method: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const { hostname, port } = new URL(ts.baseUrl);
        const req = http.request({ host: hostname, port, method, path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });

    const refused = async (p: Promise<unknown>, what: RegExp): Promise<void> => {
      const e = await errorOf(p);
      assert.equal(e.status, 400, JSON.stringify(e.body));
      assert.match(String(e.body.errorMessage), what);
      assert.match(String(e.body.errorMessage), /RFC 3986 5\.2\.4/);
    };

    test('roles, clients, client scopes and localization keys named "." or ".." are refused, with keycloak-admin-client unchanged', async () => {
      const { kc } = ts;
      const client = (await kc.clients.find({ realm: REALM, clientId: ts.client.id }))[0]!;
      for (const name of ['.', '..']) {
        await refused(kc.roles.create({ realm: REALM, name }), /the role name must not be/);
        // A client role: the client's own roles' path (POST .../clients/{id}/roles).
        await refused(kc.clients.createRole({ realm: REALM, id: client.id!, name }), /the role name must not be/);
        await refused(kc.clients.create({ realm: REALM, clientId: name, redirectUris: ['https://dots.example/cb'] }), /the client id must not be/);
        await refused(kc.clientScopes.create({ realm: REALM, name, protocol: 'openid-connect' }), /the scope name must not be/);
      }
      // A localization key: a client that resolves URLs sends .../localization/en/.. as .../localization/en/,
      // so the server never sees the key; sent as it is (node:http, as curl --path-as-is), it is refused.
      const token = await kc.getAccessToken();
      for (const key of ['.', '..']) {
        const res = await rawRequest('PUT', `/auth/admin/realms/${REALM}/localization/en/${key}`, { authorization: `Bearer ${token!}`, 'content-type': 'text/plain' }, 'text');
        assert.equal(res.status, 400, res.body);
        assert.match(res.body, /the localization key must not be/);
      }
      // Renaming into one is refused as well.
      await kc.roles.create({ realm: REALM, name: 'dots-role' });
      await refused(kc.roles.updateByName({ realm: REALM, name: 'dots-role' }, { name: '..' }), /the role name must not be/);
      // Nothing of those names was made; names merely containing dots still are fine.
      assert.equal((await kc.roles.find({ realm: REALM })).some((r) => r.name === '.' || r.name === '..'), false);
      await kc.roles.create({ realm: REALM, name: '...' });
      await kc.roles.create({ realm: REALM, name: 'a..b' });
      assert.ok((await kc.roles.findOneByName({ realm: REALM, name: 'a..b' }))?.id);
    });

    test('any other name goes through keycloak-admin-client and back: spaces, %, ?, #, +, dots inside, non-ASCII', async () => {
      const { kc } = ts;
      // Each is encoded once by the client and decoded once by the server: "%2e%2e" stays those six characters.
      const names = ['a b', '100%', '%2e%2e', '%2F', 'q?x=1', 'h#x', 'a+b', '.hidden', 'x.', "it's", 'semi;colon', 'a\\b', '....'];
      for (const name of names) {
        await kc.roles.create({ realm: REALM, name });
        assert.equal((await kc.roles.findOneByName({ realm: REALM, name }))?.name, name);
        await kc.roles.updateByName({ realm: REALM, name }, { name, description: 'described' });
        assert.equal((await kc.roles.findOneByName({ realm: REALM, name }))?.description, 'described');
        await kc.roles.delByName({ realm: REALM, name });
        assert.equal(await kc.roles.findOneByName({ realm: REALM, name }), null, name);
        // A client id is the {id} of the client's paths.
        await kc.clients.create({ realm: REALM, clientId: name, publicClient: true, redirectUris: ['https://names.example/cb'] });
        assert.equal((await kc.clients.findOne({ realm: REALM, id: name }))?.clientId, name);
        await kc.clients.del({ realm: REALM, id: name });
        assert.equal((await kc.clients.find({ realm: REALM, clientId: name })).length, 0, name);
      }
      // A role name in any script, too.
      await kc.roles.create({ realm: REALM, name: 'é ü 中' });
      await kc.roles.delByName({ realm: REALM, name: 'é ü 中' });
      assert.equal(await kc.roles.findOneByName({ realm: REALM, name: 'é ü 中' }), null);
      assert.equal((await kc.realms.findOne({ realm: REALM }))?.realm, REALM);
    });

    test('a DELETE whose path ends in "/" is refused: roles.delByName({name: ".."}) leaves the realm alone', async () => {
      // The client resolves .../roles/.. to .../realms/test/ before sending.
      const e = await errorOf(ts.kc.roles.delByName({ realm: REALM, name: '..' }));
      assert.equal(e.status, 400, JSON.stringify(e.body));
      assert.match(String(e.body.errorMessage), /a DELETE path must not end with '\/'/);
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))?.realm, REALM);
      // The same for a user's groups (.../users/{id}/groups/.. is the user).
      const [user] = await ts.kc.users.find({ realm: REALM, username: 'alice' });
      assert.equal((await errorOf(ts.kc.users.delFromGroup({ realm: REALM, id: user!.id!, groupId: '..' }))).status, 400);
      assert.ok(await ts.kc.users.findOne({ realm: REALM, id: user!.id! }));
      // An ordinary DELETE still works.
      await ts.kc.roles.create({ realm: REALM, name: 'to-delete' });
      await ts.kc.roles.delByName({ realm: REALM, name: 'to-delete' });
      assert.equal(await ts.kc.roles.findOneByName({ realm: REALM, name: 'to-delete' }), null);
    });

    test('an imported realm leaves out what is named "." or ".."', async () => {
      const res = await ts.app.inject({
        method: 'POST',
        url: '/auth/admin/realms',
        headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          realm: 'dots',
          enabled: true,
          roles: { realm: [{ name: '..' }, { name: 'kept-role' }] },
          clients: [{ clientId: '..', publicClient: true, redirectUris: ['https://dots.example/cb'] }, { clientId: 'kept-client', publicClient: true, redirectUris: ['https://dots.example/cb'] }],
          clientScopes: [{ name: '.', protocol: 'openid-connect' }, { name: 'kept-scope', protocol: 'openid-connect' }],
          internationalizationEnabled: true,
          supportedLocales: ['en'],
          localizationTexts: { en: { '..': 'dots', 'kept-key': 'kept' } },
        }),
      });
      assert.equal(res.statusCode, 201, res.body);
      const roles = (await ts.kc.roles.find({ realm: 'dots' })).map((r) => r.name);
      assert.ok(roles.includes('kept-role'));
      assert.ok(!roles.includes('..'));
      const clients = (await ts.kc.clients.find({ realm: 'dots' })).map((c) => c.clientId);
      assert.ok(clients.includes('kept-client'));
      assert.ok(!clients.includes('..'));
      const scopes = (await ts.kc.clientScopes.find({ realm: 'dots' })).map((s) => s.name);
      assert.ok(scopes.includes('kept-scope'));
      assert.ok(!scopes.includes('.'));
      assert.deepEqual(await ts.kc.realms.getRealmLocalizationTexts({ realm: 'dots', selectedLocale: 'en' }), { 'kept-key': 'kept' });
    });
  });
}
