import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const USER_STORAGE = 'org.keycloak.storage.UserStorageProvider';

/**
 * Keycloak's UserStorageProviderResource actions through keycloak-admin-client unchanged
 * (userStorageProvider.name, removeImportedUsers, unlinkUsers), on users imported from a real OpenLDAP
 * (test/helpers/ldap.ts) by signing in at the real token endpoint (the password grant).
 */
for (const dialect of dialects()) {
  describe(`admin API: user storage actions on imported users (${dialect})`, { skip: LDAP_MISSING }, () => {
    let ts: AdminTestServer;
    let ldap: LdapServer;
    let providerId: string;
    before(async () => {
      ldap = await startLdap({
        people: [
          { uid: 'lena', password: 'lena-ldap-pw', mail: 'lena@example.org', givenName: 'Lena', sn: 'Ldap' },
          { uid: 'mo', password: 'mo-ldap-pw', mail: 'mo@example.org' },
          { uid: 'pat', password: 'pat-ldap-pw', mail: 'pat@example.org', givenName: 'Pat' },
        ],
      });
      ts = await startAdminServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      const created = await ts.kc.components.create({
        realm: REALM,
        name: 'corp-ldap',
        providerId: 'ldap',
        providerType: USER_STORAGE,
        parentId: REALM,
        config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD], editMode: ['READ_ONLY'], connectionTimeout: ['2000'], readTimeout: ['2000'] },
      });
      providerId = created.id;
    });
    after(async () => {
      await ts?.close();
      await ldap?.stop();
    });

    /** The real token endpoint: a password grant, or a refresh, of the test client. */
    async function token(params: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
      const res = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${ts.client.id}:${ts.client.secret}`).toString('base64')}` },
        body: new URLSearchParams(params).toString(),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }
    /** Signs in with the password grant (importing a directory entry at its first sign-in); its refresh token. */
    async function signIn(username: string, password: string): Promise<string> {
      const r = await token({ grant_type: 'password', username, password, scope: 'openid' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.refresh_token as string;
    }
    const refresh = (refreshToken: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken });
    const user = (username: string) => ts.store.users.findByUsername(REALM, username);
    const events = async (resourceType: string) => (await ts.store.adminEvents.list(REALM, { resourceType, max: 10000 })).map((e) => `${e.operation} ${e.resourcePath}`);

    test("name: the provider's id and name; query-users needed; an unknown id is 404", async () => {
      assert.deepEqual(await ts.kc.userStorageProvider.name({ realm: REALM, id: providerId }), { id: providerId, name: 'corp-ldap' });
      const { kc: querier } = await serviceAccountAdmin(ts, REALM, 'us-querier', ['query-users']);
      assert.deepEqual(await querier.userStorageProvider.name({ realm: REALM, id: providerId }), { id: providerId, name: 'corp-ldap' });
      const { kc: realmReader } = await serviceAccountAdmin(ts, REALM, 'us-realm-reader', ['view-realm']);
      assert.equal(await statusOf(realmReader.userStorageProvider.name({ realm: REALM, id: providerId })), 403);
      const missing = await errorOf(ts.kc.userStorageProvider.name({ realm: REALM, id: 'no-such-provider' }));
      assert.deepEqual([missing.status, missing.body.errorMessage], [404, 'Could not find component']);
      // A mapper is a component, not a provider.
      const mapper = (await ts.kc.components.find({ realm: REALM, parent: providerId }))[0]!;
      assert.equal(await statusOf(ts.kc.userStorageProvider.name({ realm: REALM, id: mapper.id! })), 404);
      assert.equal(await statusOf(ts.kc.userStorageProvider.name({ realm: REALM, id: 'x'.repeat(65) })), 400);
    });

    test('remove-imported-users: the imported users are deleted, their refresh tokens refused at the token endpoint; local users untouched; imported again at the next sign-in', async () => {
      const lenaToken = await signIn('lena', 'lena-ldap-pw');
      const moToken = await signIn('mo', 'mo-ldap-pw');
      const aliceToken = await signIn('alice', ts.user.password);
      const lena = (await user('lena'))!;
      const mo = (await user('mo'))!;
      assert.equal(lena.federationLink, providerId);
      assert.equal(mo.federationLink, providerId);
      assert.equal((await refresh(lenaToken)).status, 200);

      // manage-users, as Keycloak: view-users is not enough; an unknown provider is 404; nothing removed.
      const { kc: viewer } = await serviceAccountAdmin(ts, REALM, 'us-viewer', ['view-users']);
      assert.equal(await statusOf(viewer.userStorageProvider.removeImportedUsers({ realm: REALM, id: providerId })), 403);
      assert.equal(await statusOf(ts.kc.userStorageProvider.removeImportedUsers({ realm: REALM, id: 'no-such-provider' })), 404);
      assert.ok(await user('lena'));

      const { kc: userAdmin } = await serviceAccountAdmin(ts, REALM, 'us-user-admin', ['manage-users']);
      await userAdmin.userStorageProvider.removeImportedUsers({ realm: REALM, id: providerId });
      assert.equal(await user('lena'), undefined);
      assert.equal(await user('mo'), undefined);
      assert.deepEqual(await ts.kc.users.find({ realm: REALM, username: 'lena', exact: true }), []);
      assert.equal(await ts.kc.users.findOne({ realm: REALM, id: lena.id }), null);
      // Their sessions ended with them: their refresh tokens are refused.
      for (const rt of [lenaToken, moToken]) {
        const r = await refresh(rt);
        assert.equal(r.status, 400);
        assert.equal(r.body.error, 'invalid_grant');
      }
      // A local user keeps signing in and refreshing; the provider stays.
      assert.equal((await refresh(aliceToken)).status, 200);
      assert.ok(await user('alice'));
      assert.deepEqual(await ts.kc.userStorageProvider.name({ realm: REALM, id: providerId }), { id: providerId, name: 'corp-ldap' });
      // An admin event per user deleted, and the action.
      const userEvents = await events('USER');
      assert.ok(userEvents.includes(`DELETE users/${lena.id}`) && userEvents.includes(`DELETE users/${mo.id}`), userEvents.join('; '));
      assert.ok((await events('USER_STORAGE')).includes(`ACTION user-storage/${providerId}/remove-imported-users`));

      // The entry is still in the directory: the next sign-in imports it again, as a new user.
      await signIn('lena', 'lena-ldap-pw');
      const again = (await user('lena'))!;
      assert.notEqual(again.id, lena.id);
      assert.equal(again.federationLink, providerId);
      // Nothing imported now: 204, nothing else happens.
      await ts.kc.userStorageProvider.removeImportedUsers({ realm: REALM, id: providerId });
      assert.equal(await user('lena'), undefined);
      await ts.kc.userStorageProvider.removeImportedUsers({ realm: REALM, id: providerId });
      assert.ok(await user('alice'));
    });

    test('unlink-users: the imported users become local users with their data and sessions, and no password until one is set', async () => {
      const patToken = await signIn('pat', 'pat-ldap-pw');
      const before = (await user('pat'))!;
      assert.equal(before.federationLink, providerId);
      assert.ok(before.attributes.LDAP_ID?.[0]);

      const { kc: viewer } = await serviceAccountAdmin(ts, REALM, 'us-viewer-2', ['view-users']);
      assert.equal(await statusOf(viewer.userStorageProvider.unlinkUsers({ realm: REALM, id: providerId })), 403);
      assert.equal(await statusOf(ts.kc.userStorageProvider.unlinkUsers({ realm: REALM, id: 'no-such-provider' })), 404);
      assert.equal((await user('pat'))!.federationLink, providerId);
      // The representation names the provider, as Keycloak's (the console shows the provider's name from it).
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id: before.id }))?.federationLink, providerId);
      assert.equal((await ts.kc.users.find({ realm: REALM, username: 'pat', exact: true, briefRepresentation: true }))[0]?.federationLink, providerId);

      await ts.kc.userStorageProvider.unlinkUsers({ realm: REALM, id: providerId });
      const after = (await user('pat'))!;
      assert.equal(after.id, before.id);
      assert.equal(after.federationLink ?? null, null);
      // Its data stays, the directory's markers included (as Keycloak).
      assert.equal(after.email, 'pat@example.org');
      assert.equal(after.firstName, 'Pat');
      assert.deepEqual(after.attributes, before.attributes);
      const rep = await ts.kc.users.findOne({ realm: REALM, id: after.id });
      assert.equal(rep?.username, 'pat');
      assert.equal(rep?.federationLink, undefined, 'a local user names no provider');
      // Its session goes on.
      assert.equal((await refresh(patToken)).status, 200);
      // The directory no longer signs it in, and it has no password here yet.
      const refused = await token({ grant_type: 'password', username: 'pat', password: 'pat-ldap-pw' });
      assert.equal(refused.body.error, 'invalid_grant');
      // It is a local user now: an administrator may set its password (refused for a federated user), and it signs in with that.
      await ts.kc.users.resetPassword({ realm: REALM, id: after.id, credential: { type: 'password', value: 'pat-local-password-1', temporary: false } });
      await signIn('pat', 'pat-local-password-1');
      // The provider has no users any more: removing its imported users leaves pat alone.
      await ts.kc.userStorageProvider.removeImportedUsers({ realm: REALM, id: providerId });
      assert.equal((await user('pat'))!.id, before.id);
      assert.ok((await events('USER')).includes(`UPDATE users/${before.id}`));
      assert.ok((await events('USER_STORAGE')).includes(`ACTION user-storage/${providerId}/unlink-users`));
      // Nothing left to unlink: 204.
      await ts.kc.userStorageProvider.unlinkUsers({ realm: REALM, id: providerId });
    });
  });
}
