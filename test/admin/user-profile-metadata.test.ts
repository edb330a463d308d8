import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { createUserStorage } from '../../src/admin/operations/user-storage.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * Keycloak's user profile as the admin API reads it, through keycloak-admin-client unchanged:
 * users.getProfileMetadata (GET users/profile/metadata: Realmgate's fixed profile, the four root
 * attributes with their validators, and the group user-metadata) and users.getUnmanagedAttributes
 * (GET users/{id}/unmanagedAttributes: the attributes the profile does not declare; for a user of an
 * LDAP provider, not those the provider declares).
 */
for (const dialect of dialects()) {
  describe(`admin API: user profile metadata and unmanaged attributes (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("getProfileMetadata: username, email, firstName, lastName with Realmgate's limits; the email as username makes the username read-only and the email required", async () => {
      const md = await ts.kc.users.getProfileMetadata({ realm: REALM });
      assert.deepEqual(md.attributes!.map((a) => a.name), ['username', 'email', 'firstName', 'lastName']);
      const byName = Object.fromEntries(md.attributes!.map((a) => [a.name!, a]));
      assert.deepEqual(
        md.attributes!.map((a) => [a.name, a.required, a.readOnly, a.multivalued]),
        [
          ['username', true, false, false],
          ['email', false, false, false],
          ['firstName', false, false, false],
          ['lastName', false, false, false],
        ],
      );
      assert.equal(byName.username!.displayName, '${username}');
      assert.deepEqual(byName.username!.validators!.length, { min: 1, max: 255 });
      assert.deepEqual(byName.email!.validators, { email: {}, length: { max: 320 } });
      assert.deepEqual(byName.lastName!.validators!.length, { max: 255 });
      assert.deepEqual(md.groups, [{ name: 'user-metadata', displayHeader: 'User metadata', displayDescription: 'Attributes, which refer to user metadata' }]);

      await ts.kc.realms.update({ realm: REALM }, { registrationEmailAsUsername: true });
      try {
        const asEmail = await ts.kc.users.getProfileMetadata({ realm: REALM });
        const u = asEmail.attributes!.find((a) => a.name === 'username')!;
        const e = asEmail.attributes!.find((a) => a.name === 'email')!;
        assert.deepEqual([u.required, u.readOnly, e.required, e.readOnly], [false, true, true, false]);
      } finally {
        await ts.kc.realms.update({ realm: REALM }, { registrationEmailAsUsername: false });
      }
    });

    test('getProfileMetadata needs any admin role of the realm (as Keycloak); an unknown realm is 404 for a master admin', async () => {
      const { kc: reader } = await serviceAccountAdmin(ts, REALM, 'md-realm-reader', ['view-realm']);
      assert.equal((await reader.users.getProfileMetadata({ realm: REALM })).attributes!.length, 4);
      const { kc: nobody } = await serviceAccountAdmin(ts, REALM, 'md-nobody', []);
      assert.equal(await statusOf(nobody.users.getProfileMetadata({ realm: REALM })), 403);
      // A realm-test admin does not read master's.
      assert.equal(await statusOf(reader.users.getProfileMetadata({ realm: 'master' })), 403);
      assert.equal(await statusOf(ts.kc.users.getProfileMetadata({ realm: 'no-such-realm' })), 404);
    });

    test("getProfile: the profile's configuration (Keycloak's UPConfig) under view-realm; updateProfile is refused in words, under manage-realm", async () => {
      const config = await ts.kc.users.getProfile({ realm: REALM });
      assert.deepEqual(config.attributes!.map((a) => a.name), ['username', 'email', 'firstName', 'lastName']);
      assert.equal(config.unmanagedAttributePolicy, 'ADMIN_EDIT');
      const email = config.attributes!.find((a) => a.name === 'email')!;
      assert.deepEqual(email.validations, { email: {}, length: { max: 320 } });
      assert.deepEqual(email.permissions, { view: ['admin', 'user'], edit: ['admin', 'user'] });
      assert.equal(email.required, undefined, 'the email is optional unless it is the username');
      assert.deepEqual(config.groups!.map((g) => g.name), ['user-metadata']);
      // The metadata is derived from the same configuration.
      const md = await ts.kc.users.getProfileMetadata({ realm: REALM });
      assert.deepEqual(md.attributes!.map((a) => a.validators), config.attributes!.map((a) => a.validations));
      await ts.kc.realms.update({ realm: REALM }, { registrationEmailAsUsername: true });
      try {
        const asEmail = await ts.kc.users.getProfile({ realm: REALM });
        assert.deepEqual(asEmail.attributes!.find((a) => a.name === 'email')!.required, { roles: ['admin', 'user'] });
      } finally {
        await ts.kc.realms.update({ realm: REALM }, { registrationEmailAsUsername: false });
      }

      const e = await errorOf(ts.kc.users.updateProfile({ realm: REALM, ...config }));
      assert.equal(e.status, 400);
      assert.match(String(e.body.errorMessage), /user profile is fixed/);
      assert.deepEqual(await ts.kc.users.getProfile({ realm: REALM }), config, 'nothing changed');

      const { kc: reader } = await serviceAccountAdmin(ts, REALM, 'up-realm-reader', ['view-realm']);
      assert.equal((await reader.users.getProfile({ realm: REALM })).attributes!.length, 4);
      assert.equal(await statusOf(reader.users.updateProfile({ realm: REALM, ...config })), 403, 'a change needs manage-realm, checked first');
      const { kc: usersOnly } = await serviceAccountAdmin(ts, REALM, 'up-users-only', ['view-users']);
      assert.equal(await statusOf(usersOnly.users.getProfile({ realm: REALM })), 403);
      assert.equal(await statusOf(ts.kc.users.getProfile({ realm: 'no-such-realm' })), 404);
    });

    test('getUnmanagedAttributes: every attribute of a local user (the profile declares only the root ones), none for a user without', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'un-ann', email: 'ann@example.org', firstName: 'Ann', attributes: { department: ['sales'], skills: ['java', 'go'] } });
      assert.deepEqual(await ts.kc.users.getUnmanagedAttributes({ realm: REALM, id }), { department: ['sales'], skills: ['java', 'go'] });
      // The root attributes are never unmanaged, even given as attributes.
      await ts.kc.users.update({ realm: REALM, id }, { attributes: { department: ['support'], firstName: ['Anna'], email: ['x@example.org'] } });
      assert.deepEqual(await ts.kc.users.getUnmanagedAttributes({ realm: REALM, id }), { department: ['support'] });
      const { id: bare } = await ts.kc.users.create({ realm: REALM, username: 'un-bare' });
      assert.deepEqual(await ts.kc.users.getUnmanagedAttributes({ realm: REALM, id: bare }), {});
    });

    test("a user of an LDAP provider: the provider's own attributes are declared (not unmanaged); unlinked, they are unmanaged again", async () => {
      const p = await createUserStorage(ts.store, cliActor(), REALM, {
        name: 'md-ldap',
        config: { connectionUrl: ['ldap://127.0.0.1:1'], usersDn: ['ou=People,dc=example,dc=org'], bindDn: ['cn=admin,dc=example,dc=org'], bindCredential: ['x'] },
      });
      const mapper = await ts.kc.components.create({ realm: REALM, name: 'phone', providerId: 'user-attribute-ldap-mapper', providerType: 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper', parentId: p.id, config: { 'ldap.attribute': ['telephoneNumber'], 'user.model.attribute': ['phone'] } });
      assert.ok(mapper.id);
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'un-lena' });
      const attributes = { LDAP_ID: ['6d1c0c1e-0000-4000-8000-000000000001'], LDAP_ENTRY_DN: ['uid=lena,ou=People,dc=example,dc=org'], modifyTimestamp: ['20260101000000Z'], phone: ['+1 555'], badge: ['42'] };
      await ts.store.users.update(id, { federationLink: p.id, attributes });
      assert.deepEqual(await ts.kc.users.getUnmanagedAttributes({ realm: REALM, id }), { badge: ['42'] });
      await ts.store.users.update(id, { federationLink: null });
      assert.deepEqual(await ts.kc.users.getUnmanagedAttributes({ realm: REALM, id }), attributes);
    });

    test('getUnmanagedAttributes needs view-users; an unknown user, or one of another realm, is 404', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'un-cy', attributes: { floor: ['3'] } });
      const { kc: viewer } = await serviceAccountAdmin(ts, REALM, 'un-viewer', ['view-users']);
      assert.deepEqual(await viewer.users.getUnmanagedAttributes({ realm: REALM, id }), { floor: ['3'] });
      const { kc: querier } = await serviceAccountAdmin(ts, REALM, 'un-querier', ['query-users', 'view-realm']);
      assert.equal(await statusOf(querier.users.getUnmanagedAttributes({ realm: REALM, id })), 403);
      const missing = await errorOf(ts.kc.users.getUnmanagedAttributes({ realm: REALM, id: 'no-such-user' }));
      assert.deepEqual([missing.status, missing.body.errorMessage], [404, 'User not found']);
      const masterAdminId = (await ts.kc.users.find({ realm: 'master', username: 'admin', exact: true }))[0]!.id!;
      assert.equal(await statusOf(ts.kc.users.getUnmanagedAttributes({ realm: REALM, id: masterAdminId })), 404);
      assert.equal(await statusOf(ts.kc.users.getUnmanagedAttributes({ realm: REALM, id: 'x'.repeat(65) })), 400);
    });
  });
}
