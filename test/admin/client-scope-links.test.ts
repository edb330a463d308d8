import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { tokenRequest } from '../helpers/flow.js';
import { startAdminServer, errorOf, serviceAccountAdmin, type AdminTestServer } from './helpers.js';

// Keycloak's default and optional client scopes, through @keycloak/keycloak-admin-client 26, unchanged,
// against a real server: a client's (default-client-scopes, optional-client-scopes) and the realm's for
// new clients (default-default-client-scopes, default-optional-client-scopes), and what each kind means
// at the real token endpoint.
for (const dialect of dialects()) {
  describe(`default and optional client scopes (${dialect})`, () => {
    let ts: AdminTestServer;
    const realm = REALM;
    const id = 'native-app';
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.kc.clients.update({ realm, id }, { directAccessGrantsEnabled: true });
      await ts.kc.clientScopes.create({ realm, name: 'address', attributes: { 'consent.screen.text': 'See your postal address' } });
    });
    after(() => ts.close());

    // The realm lists' payload type takes no realm (the client's realmName); the call takes one as every other does.
    type RealmList = (p: { realm: string }) => Promise<Array<{ id?: string; name?: string }>>;
    const realmList = (kc: AdminTestServer['kc'], which: 'listDefaultClientScopes' | 'listDefaultOptionalClientScopes', r: string) => (kc.clientScopes[which] as unknown as RealmList)({ realm: r });
    const names = (list: Array<{ id?: string; name?: string }>): string[] => list.map((s) => s.name!).sort();
    const defaults = async (): Promise<string[]> => names(await ts.kc.clients.listDefaultClientScopes({ realm, id }));
    const optional = async (): Promise<string[]> => names(await ts.kc.clients.listOptionalClientScopes({ realm, id }));
    /** A password grant of alice for the public client; `scope` left out when undefined. */
    async function grant(scope?: string): Promise<{ status: number; body: Record<string, unknown> }> {
      const res = await tokenRequest(ts, { grant_type: 'password', client_id: id, username: ts.user.username, password: ts.user.password, ...(scope !== undefined ? { scope } : {}) });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    }

    test('a client lists its default scopes (openid implied, not listed) and no optional ones; each kind is a brief representation', async () => {
      const list = await ts.kc.clients.listDefaultClientScopes({ realm, id });
      assert.deepEqual(names(list), ['core_data', 'email', 'exports', 'offline_access', 'profile']);
      assert.deepEqual(list.find((s) => s.name === 'profile'), { id: 'profile', name: 'profile' });
      assert.deepEqual(await optional(), []);
      const rep = (await ts.kc.clients.findOne({ realm, id }))!;
      assert.deepEqual(rep.optionalClientScopes, []);
    });

    test('an optional scope is granted only when asked for; moved to default, it is granted without being asked; unlinked, it is refused', async () => {
      await ts.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'address' });
      assert.deepEqual(await optional(), ['address']);
      assert.ok(!(await defaults()).includes('address'));
      const rep = (await ts.kc.clients.findOne({ realm, id }))!;
      assert.deepEqual(rep.optionalClientScopes, ['address']);
      assert.ok(!rep.defaultClientScopes!.includes('address'));

      // RFC 6749 3.3: a grant that asks for no scope gets the client's default ones, not its optional ones.
      const byDefault = await grant();
      assert.equal(byDefault.status, 200, JSON.stringify(byDefault.body));
      const defaultScope = String(byDefault.body.scope).split(' ');
      assert.ok(defaultScope.includes('core_data'), String(byDefault.body.scope));
      assert.ok(!defaultScope.includes('address'), String(byDefault.body.scope));
      const asked = await grant('openid address');
      assert.equal(asked.status, 200, JSON.stringify(asked.body));
      assert.deepEqual(String(asked.body.scope).split(' ').sort(), ['address', 'openid']);

      // PUT as a default one moves it (Keycloak keeps one link per client and scope).
      await ts.kc.clients.addDefaultClientScope({ realm, id, clientScopeId: 'address' });
      assert.deepEqual(await optional(), []);
      assert.ok((await defaults()).includes('address'));
      assert.ok(String((await grant()).body.scope).split(' ').includes('address'));

      // Unlinking it as an optional one changes nothing (it is a default one now); as a default one, it goes.
      await ts.kc.clients.delOptionalClientScope({ realm, id, clientScopeId: 'address' });
      assert.ok((await defaults()).includes('address'));
      await ts.kc.clients.delDefaultClientScope({ realm, id, clientScopeId: 'address' });
      assert.ok(!(await defaults()).includes('address'));
      const refused = await grant('openid address');
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'invalid_scope');
    });

    test('profile as an optional scope: openid alone no longer releases its claims; asked for, it does', async () => {
      const claimsOf = (body: Record<string, unknown>): Record<string, unknown> => decodeJwt(String(body.id_token));
      const before = await grant('openid');
      assert.equal(before.status, 200);
      assert.equal(claimsOf(before.body).preferred_username, ts.user.username, 'a default profile scope is implied by openid');

      await ts.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'profile' });
      assert.ok(!(await defaults()).includes('profile'));
      const optionalOnly = await grant('openid');
      assert.equal(optionalOnly.status, 200);
      assert.equal(claimsOf(optionalOnly.body).preferred_username, undefined, 'an optional profile is not implied');
      const asked = await grant('openid profile');
      assert.equal(claimsOf(asked.body).preferred_username, ts.user.username);
      // userinfo follows the same rule.
      const userinfo = await ts.app.inject({ method: 'GET', url: `/auth/realms/${realm}/protocol/openid-connect/userinfo`, headers: { authorization: `Bearer ${String(optionalOnly.body.access_token)}` } });
      assert.equal(userinfo.statusCode, 200);
      assert.equal(userinfo.json().preferred_username, undefined);

      await ts.kc.clients.addDefaultClientScope({ realm, id, clientScopeId: 'profile' });
      assert.equal(claimsOf((await grant('openid')).body).preferred_username, ts.user.username);
    });

    test("a client representation's two lists round-trip through PUT, and each change is an admin event", async () => {
      const rep = (await ts.kc.clients.findOne({ realm, id }))!;
      await ts.kc.clients.update({ realm, id }, { ...rep, defaultClientScopes: ['openid', 'profile', 'email'], optionalClientScopes: ['address', 'core_data'] });
      assert.deepEqual(await defaults(), ['email', 'profile']);
      assert.deepEqual(await optional(), ['address', 'core_data']);
      const after = (await ts.kc.clients.findOne({ realm, id }))!;
      assert.deepEqual([...after.defaultClientScopes!].sort(), ['email', 'openid', 'profile']);
      assert.deepEqual([...after.optionalClientScopes!].sort(), ['address', 'core_data']);
      // A PUT of defaultClientScopes alone keeps the optional ones.
      await ts.kc.clients.update({ realm, id }, { defaultClientScopes: ['openid', 'profile', 'email', 'exports'] });
      assert.deepEqual(await optional(), ['address', 'core_data']);
      await ts.kc.clients.update({ realm, id }, { defaultClientScopes: ['openid', 'profile', 'email', 'core_data', 'exports', 'offline_access'], optionalClientScopes: [] });
      assert.deepEqual(await optional(), []);

      await ts.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'address' });
      const deadline = Date.now() + 5000;
      let paths: string[] = [];
      while (Date.now() < deadline) {
        paths = (await ts.kc.realms.findAdminEvents({ realm, resourceTypes: 'CLIENT' })).map((e) => String(e.resourcePath));
        if (paths.includes(`clients/${id}/optional-client-scopes/address`)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(paths.includes(`clients/${id}/optional-client-scopes/address`), paths.join(' '));
      await ts.kc.clients.delOptionalClientScope({ realm, id, clientScopeId: 'address' });
    });

    test('refusals: an unknown scope or client is 404, openid cannot be optional (400), and the roles are those Keycloak checks', async () => {
      let e = await errorOf(ts.kc.clients.addDefaultClientScope({ realm, id, clientScopeId: 'no-such-scope' }));
      assert.equal(e.status, 404);
      assert.equal(e.body.errorMessage ?? e.body.error, 'Client scope not found');
      e = await errorOf(ts.kc.clients.listOptionalClientScopes({ realm, id: 'no-such-client' }));
      assert.equal(e.status, 404);
      e = await errorOf(ts.kc.clients.addOptionalClientScope({ realm, id: 'no-such-client', clientScopeId: 'address' }));
      assert.equal(e.status, 404);
      e = await errorOf(ts.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'openid' }));
      assert.equal(e.status, 400);
      e = await errorOf(ts.kc.clientScopes.addDefaultOptionalClientScope({ realm, id: 'openid' }));
      assert.equal(e.status, 400);
      e = await errorOf(ts.kc.clientScopes.addDefaultClientScope({ realm, id: 'no-such-scope' }));
      assert.equal(e.status, 404);

      const viewer = await serviceAccountAdmin(ts, realm, 'sa-scope-viewer', ['view-clients']);
      assert.deepEqual(names(await viewer.kc.clients.listDefaultClientScopes({ realm, id })), await defaults());
      assert.equal((await errorOf(viewer.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'address' }))).status, 403);
      assert.equal((await errorOf(viewer.kc.clients.delDefaultClientScope({ realm, id, clientScopeId: 'profile' }))).status, 403);
      assert.equal((await errorOf(realmList(viewer.kc, 'listDefaultClientScopes', realm))).status, 403, 'the realm lists need view-realm');
      assert.equal((await errorOf(viewer.kc.clientScopes.addDefaultClientScope({ realm, id: 'address' }))).status, 403);
      assert.deepEqual(await optional(), [], 'a refused call changed nothing');
      assert.ok((await defaults()).includes('profile'));
    });

    test("the realm's scopes for new clients: listed without openid, changed by kind, given to a new client, forgotten with a deleted scope", async () => {
      const realmDefaults = async (): Promise<string[]> => names(await realmList(ts.kc, 'listDefaultClientScopes', realm));
      const realmOptional = async (): Promise<string[]> => names(await realmList(ts.kc, 'listDefaultOptionalClientScopes', realm));
      assert.deepEqual(await realmDefaults(), ['core_data', 'email', 'exports', 'offline_access', 'profile']);
      assert.deepEqual(await realmOptional(), []);

      await ts.kc.clientScopes.addDefaultOptionalClientScope({ realm, id: 'address' });
      await ts.kc.clientScopes.addDefaultOptionalClientScope({ realm, id: 'offline_access' });
      await ts.kc.clientScopes.delDefaultClientScope({ realm, id: 'exports' });
      assert.deepEqual(await realmDefaults(), ['core_data', 'email', 'profile']);
      assert.deepEqual(await realmOptional(), ['address', 'offline_access']);

      await ts.kc.clients.create({ realm, clientId: 'new-spa', publicClient: true, redirectUris: ['http://127.0.0.1:5173/cb'] });
      assert.deepEqual(names(await ts.kc.clients.listDefaultClientScopes({ realm, id: 'new-spa' })), ['core_data', 'email', 'profile']);
      assert.deepEqual(names(await ts.kc.clients.listOptionalClientScopes({ realm, id: 'new-spa' })), ['address', 'offline_access']);
      const rep = (await ts.kc.clients.findOne({ realm, id: 'new-spa' }))!;
      assert.ok(rep.defaultClientScopes!.includes('openid'), 'every new client gets openid');
      // Clients that exist keep theirs.
      assert.ok((await defaults()).includes('exports'));
      // A create body with its own lists takes them instead.
      await ts.kc.clients.create({ realm, clientId: 'own-lists', publicClient: true, redirectUris: ['http://127.0.0.1:5174/cb'], defaultClientScopes: ['openid', 'profile'], optionalClientScopes: ['email'] });
      assert.deepEqual(names(await ts.kc.clients.listDefaultClientScopes({ realm, id: 'own-lists' })), ['profile']);
      assert.deepEqual(names(await ts.kc.clients.listOptionalClientScopes({ realm, id: 'own-lists' })), ['email']);

      // A scope no client uses any more may be deleted: new clients no longer get it either.
      await ts.kc.clients.del({ realm, id: 'new-spa' });
      await ts.kc.clientScopes.del({ realm, id: 'address' });
      assert.deepEqual(await realmOptional(), ['offline_access']);
      await ts.kc.clientScopes.create({ realm, name: 'address', attributes: { 'consent.screen.text': 'See your postal address' } });
      assert.deepEqual(await realmOptional(), ['offline_access'], 'a scope made again under the same name is not a default for new clients');

      await ts.kc.clientScopes.delDefaultOptionalClientScope({ realm, id: 'offline_access' });
      await ts.kc.clientScopes.addDefaultClientScope({ realm, id: 'offline_access' });
      await ts.kc.clientScopes.addDefaultClientScope({ realm, id: 'exports' });
      assert.deepEqual(await realmDefaults(), ['core_data', 'email', 'exports', 'offline_access', 'profile']);
      assert.deepEqual(await realmOptional(), []);
    });

    test('a partial export writes both kinds, for clients and for the realm, and an import keeps them apart', async () => {
      await ts.kc.clients.addOptionalClientScope({ realm, id, clientScopeId: 'address' });
      await ts.kc.clientScopes.addDefaultOptionalClientScope({ realm, id: 'address' });
      const exported = (await ts.kc.realms.export({ realm, exportClients: true })) as Record<string, unknown>;
      assert.deepEqual(exported.defaultOptionalClientScopes, ['address']);
      assert.ok((exported.defaultDefaultClientScopes as string[]).includes('profile'));
      const client = (exported.clients as Array<Record<string, unknown>>).find((c) => c.clientId === id)!;
      assert.deepEqual(client.optionalClientScopes, ['address']);
      assert.ok(!(client.defaultClientScopes as string[]).includes('address'));

      await ts.kc.realms.create({ ...exported, id: 'copy', realm: 'copy' });
      assert.deepEqual(names(await ts.kc.clients.listOptionalClientScopes({ realm: 'copy', id })), ['address']);
      assert.ok(!names(await ts.kc.clients.listDefaultClientScopes({ realm: 'copy', id })).includes('address'));
      assert.deepEqual(names(await realmList(ts.kc, 'listDefaultOptionalClientScopes', 'copy')), ['address']);
      await ts.kc.clients.delOptionalClientScope({ realm, id, clientScopeId: 'address' });
      await ts.kc.clientScopes.delDefaultOptionalClientScope({ realm, id: 'address' });
    });
  });
}
