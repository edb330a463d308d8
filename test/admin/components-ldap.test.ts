import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';
import { bindCredentialOf } from '../../src/admin/operations/user-storage.js';
import { startRecorder } from '../helpers/recorder.js';
import { MAPPER_TYPES as LDAP_MAPPERS } from '../../src/oauth/ldap/mapper-config.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const USER_STORAGE = 'org.keycloak.storage.UserStorageProvider';
const MAPPER = 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper';

// Keycloak's components API for LDAP user federation, through @keycloak/keycloak-admin-client unchanged.
for (const dialect of dialects()) {
  describe(`admin API: LDAP user storage components (${dialect})`, () => {
    let ts: AdminTestServer;
    let ldap: LdapServer | undefined;
    before(async () => {
      ts = await startAdminServer({ dialect });
      if (!LDAP_MISSING) ldap = await startLdap({ people: [{ uid: 'lena', password: 'lena-pw', mail: 'lena@example.org' }, { uid: 'sam', password: 'sam-pw', mail: 'sam@example.org', givenName: 'Sam' }, { uid: 'bad name', password: 'x' }] });
    });
    after(async () => {
      await ts.close();
      await ldap?.stop();
    });
    const config = (url = 'ldap://127.0.0.1:1') => ({
      connectionUrl: [url],
      usersDn: [PEOPLE],
      bindDn: [ROOT_DN],
      bindCredential: [ROOT_PASSWORD],
      editMode: ['READ_ONLY'],
      vendor: ['other'],
      usernameLDAPAttribute: ['uid'],
      rdnLDAPAttribute: ['uid'],
      uuidLDAPAttribute: ['entryUUID'],
      userObjectClasses: ['inetOrgPerson, organizationalPerson'],
      searchScope: ['1'],
    });

    test('create (201, Location), find by type and parent, read, replace, delete; bindCredential never shown, kept when masked', async () => {
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'corp-ldap', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config() });
      assert.ok(id);
      const list = await ts.kc.components.find({ realm: REALM, type: USER_STORAGE });
      assert.equal(list.length, 1);
      assert.equal(list[0]!.id, id);
      assert.equal(list[0]!.parentId, REALM);
      assert.deepEqual(list[0]!.config!.bindCredential, ['**********']);
      assert.ok(!JSON.stringify(list).includes(ROOT_PASSWORD));
      assert.deepEqual((await ts.kc.components.find({ realm: REALM, parent: REALM, type: USER_STORAGE })).map((c) => c.id), [id]);
      // Keycloak's default mappers, as subcomponents.
      const mappers = await ts.kc.components.find({ realm: REALM, parent: id, type: MAPPER });
      assert.deepEqual(mappers.map((m) => m.name).sort(), ['creation date', 'email', 'first name', 'last name', 'modify date', 'username']);
      assert.ok(mappers.every((m) => m.parentId === id && m.providerId === 'user-attribute-ldap-mapper'));
      const one = await ts.kc.components.findOne({ realm: REALM, id: id });
      assert.equal(one!.providerId, 'ldap');
      assert.equal(one!.providerType, USER_STORAGE);
      assert.deepEqual(one!.config!.enabled, ['true']);
      // The stored credential is sealed, not the text.
      const stored = (await ts.store.userStorage.get(REALM, id))!;
      assert.ok(stored.sealedBindCredential && !stored.sealedBindCredential.includes(ROOT_PASSWORD));
      // PUT with the mask keeps it; a new one replaces it.
      await ts.kc.components.update({ realm: REALM, id }, { ...one!, name: 'renamed', config: { ...one!.config, bindCredential: ['**********'] } });
      assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, id))!), ROOT_PASSWORD);
      assert.equal((await ts.kc.components.findOne({ realm: REALM, id }))!.name, 'renamed');
      await ts.kc.components.update({ realm: REALM, id }, { ...one!, config: { ...one!.config, bindCredential: ['other'] } });
      assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, id))!), 'other');
      // Admin events, without the credential.
      const events = (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourceType === 'COMPONENT');
      assert.ok(events.length >= 3);
      assert.ok(!JSON.stringify(events).includes(ROOT_PASSWORD) && !JSON.stringify(events).includes('"other"'));
      // A mapper of its own.
      const m = await ts.kc.components.create({ realm: REALM, name: 'phone', providerId: 'user-attribute-ldap-mapper', providerType: MAPPER, parentId: id, config: { 'ldap.attribute': ['telephoneNumber'], 'user.model.attribute': ['phone'] } });
      assert.equal((await ts.kc.components.findOne({ realm: REALM, id: m.id }))!.parentId, id);
      await ts.kc.components.del({ realm: REALM, id: m.id });
      await ts.kc.components.del({ realm: REALM, id });
      // keycloak-admin-client answers a 404 of findOne with null.
      assert.equal(await ts.kc.components.findOne({ realm: REALM, id }), null);
    });

    test('the stored bind credential goes only to the directory and as the bind DN it was given for: a new one is asked for, and tests and capability reads never send it elsewhere', async () => {
      const elsewhere = await startRecorder();
      try {
        const elsewhereUrl = `ldap://127.0.0.1:${elsewhere.port}`;
        const { id } = await ts.kc.components.create({ realm: REALM, name: 'kept', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config() });
        const one = (await ts.kc.components.findOne({ realm: REALM, id }))!;
        const put = (c: Record<string, string[]>) => ts.kc.components.update({ realm: REALM, id }, { ...one, config: { ...one.config, ...c } });
        const refused = async (c: Record<string, string[]>): Promise<void> => {
          const e = await errorOf(put(c));
          assert.equal(e.status, 400, JSON.stringify(c));
          assert.match(String(e.body.errorMessage), /bindCredential must be given again .* config\.connectionUrl or config\.bindDn/);
        };
        // Masked (as the console sends it back) or left out, with another URL or bind DN: refused.
        await refused({ connectionUrl: [elsewhereUrl] });
        await refused({ bindDn: ['cn=someone,dc=example,dc=org'] });
        await refused({ connectionUrl: [elsewhereUrl], bindCredential: [] });
        // Even anonymous now: a later change back to simple would send the kept credential to the new URL.
        await refused({ connectionUrl: [elsewhereUrl], authType: ['none'] });
        assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, id))!), ROOT_PASSWORD, 'nothing changed');
        // The same directory written otherwise (case, spaces) keeps it.
        await put({ connectionUrl: ['LDAP://127.0.0.1:1 '], bindDn: [ROOT_DN.toUpperCase().replace(',', ', ')] });
        assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, id))!), ROOT_PASSWORD);
        // The test and the capability read with the stored credential (componentId, mask) and another URL
        // or bind DN: refused before any connection.
        const probe = { componentId: id, connectionUrl: elsewhereUrl, bindDn: ROOT_DN, bindCredential: '**********', authType: 'simple' };
        const test1 = await errorOf(ts.kc.realms.testLDAPConnection({ realm: REALM }, { ...probe, action: 'testAuthentication' }));
        assert.equal(test1.status, 400);
        assert.match(String(test1.body.errorMessage), /stored bindCredential is used only with its provider's own connectionUrl and bindDn/);
        assert.equal((await errorOf(ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { ...probe, action: 'queryServerCapabilities' }))).status, 400);
        assert.equal((await errorOf(ts.kc.realms.testLDAPConnection({ realm: REALM }, { ...probe, connectionUrl: 'ldap://127.0.0.1:1', bindDn: 'cn=other', action: 'testAuthentication' }))).status, 400);
        assert.equal(elsewhere.connections(), 0, 'nothing reached the other host');
        // A new credential with the new URL is what it takes; an empty one drops it (anonymous).
        await put({ connectionUrl: [elsewhereUrl], bindCredential: ['for-elsewhere'] });
        assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, id))!), 'for-elsewhere');
        await put({ connectionUrl: ['ldap://127.0.0.1:1'], authType: ['none'], bindCredential: [''] });
        assert.equal((await ts.store.userStorage.get(REALM, id))!.sealedBindCredential, null);
        await ts.kc.components.del({ realm: REALM, id });
      } finally {
        await elsewhere.close();
      }
    });

    test("ldap-server-capabilities: the root DSE's controls, extensions and features, after the provider's bind", { skip: LDAP_MISSING }, async () => {
      const body = { action: 'queryServerCapabilities', connectionUrl: ldap!.url, authType: 'simple', bindDn: ROOT_DN, bindCredential: ROOT_PASSWORD };
      const caps = (await ts.kc.realms.ldapServerCapabilities({ realm: REALM }, body)) as Array<{ oid: string; type: string }>;
      // RFC 3062's password modify (what usePasswordModifyExtendedOp needs) and RFC 2696's paged results,
      // both of which OpenLDAP lists.
      assert.ok(caps.some((c) => c.oid === '1.3.6.1.4.1.4203.1.11.1' && c.type === 'EXTENSION'), JSON.stringify(caps));
      assert.ok(caps.some((c) => c.oid === '1.2.840.113556.1.4.319' && c.type === 'CONTROL'), JSON.stringify(caps));
      assert.ok(caps.some((c) => c.type === 'FEATURE'));
      assert.ok(caps.every((c) => /^\d+(\.\d+)+$/.test(c.oid) && ['CONTROL', 'EXTENSION', 'FEATURE'].includes(c.type)));
      // Anonymously, and with the stored credential of a provider of the same directory.
      assert.equal(((await ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { action: 'queryServerCapabilities', connectionUrl: ldap!.url, authType: 'none' })) as unknown[]).length, caps.length);
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'caps', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config(ldap!.url) });
      assert.equal(((await ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { ...body, componentId: id, bindCredential: '**********' })) as unknown[]).length, caps.length);
      await ts.kc.components.del({ realm: REALM, id });
      // A bind the directory refuses, an unreachable one, another action: 400 with the reason.
      const wrong = await errorOf(ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { ...body, bindCredential: 'wrong' }));
      assert.equal(wrong.status, 400);
      assert.match(String(wrong.body.errorMessage), /^ldapServerCapabilities error: .*LDAP result 49/);
      assert.equal((await errorOf(ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { ...body, connectionUrl: 'ldap://127.0.0.1:1' }))).status, 400);
      assert.match(String((await errorOf(ts.kc.realms.ldapServerCapabilities({ realm: REALM }, { ...body, action: 'testConnection' }))).body.errorMessage), /queryServerCapabilities/);
      // manage-realm, as Keycloak asks.
      const viewer = await serviceAccountAdmin(ts, REALM, 'caps-viewer', ['view-realm']);
      assert.equal(await statusOf(viewer.kc.realms.ldapServerCapabilities({ realm: REALM }, body)), 403);
    });

    test("sub-component-types: an LDAP provider's mapper types with the config each reads; their defaults make a valid mapper", async () => {
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'types', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config() });
      const types = await ts.kc.components.listSubComponents({ realm: REALM, id, type: MAPPER });
      assert.deepEqual(types.map((t) => t.id).sort(), [...LDAP_MAPPERS].sort());
      const group = types.find((t) => t.id === 'group-ldap-mapper')!;
      const prop = (name: string) => group.properties!.find((x) => x.name === name)!;
      assert.equal(prop('groups.dn').required, true);
      assert.deepEqual(prop('mode').options, ['READ_ONLY', 'LDAP_ONLY', 'IMPORT']);
      assert.equal(prop('membership.ldap.attribute').defaultValue, 'member');
      assert.ok(types.every((t) => t.helpText && t.properties!.every((x) => x.name && x.label && x.helpText && x.type)));
      // Each type, with its required keys given and every other at its default, is a mapper the
      // provider takes: what the representation offers is what Realmgate accepts.
      await ts.kc.roles.create({ realm: REALM, name: 'ldap-staff' });
      const { id: groupId } = await ts.kc.groups.create({ realm: REALM, name: 'ldap-people' });
      const required: Record<string, string> = { 'user.model.attribute': 'phone', 'ldap.attribute': 'telephoneNumber', 'groups.dn': 'ou=Groups,dc=example,dc=org', 'roles.dn': 'ou=Roles,dc=example,dc=org', role: 'ldap-staff', group: '/ldap-people' };
      for (const t of types) {
        const c: Record<string, string[]> = {};
        for (const x of t.properties!) {
          const v = x.required ? required[x.name!] : x.defaultValue;
          if (v !== undefined) c[x.name!] = [String(v)];
        }
        const m = await ts.kc.components.create({ realm: REALM, name: `default ${t.id}`, providerId: t.id, providerType: MAPPER, parentId: id, config: c });
        // A mapper has no sub-component types.
        assert.deepEqual(await ts.kc.components.listSubComponents({ realm: REALM, id: m.id, type: MAPPER }), []);
      }
      assert.deepEqual(await ts.kc.components.listSubComponents({ realm: REALM, id, type: 'org.keycloak.keys.KeyProvider' }), []);
      assert.equal((await errorOf(ts.kc.components.listSubComponents({ realm: REALM, id, type: '' }))).status, 400);
      assert.equal((await errorOf(ts.kc.components.listSubComponents({ realm: REALM, id: 'nope', type: MAPPER }))).status, 404);
      const viewer = await serviceAccountAdmin(ts, REALM, 'types-viewer', ['view-realm']);
      assert.equal((await viewer.kc.components.listSubComponents({ realm: REALM, id, type: MAPPER })).length, LDAP_MAPPERS.length);
      const other = await serviceAccountAdmin(ts, REALM, 'types-other', ['view-users']);
      assert.equal(await statusOf(other.kc.components.listSubComponents({ realm: REALM, id, type: MAPPER })), 403);
      await ts.kc.components.del({ realm: REALM, id });
      await ts.kc.groups.del({ realm: REALM, id: groupId });
      await ts.kc.roles.delByName({ realm: REALM, name: 'ldap-staff' });
    });

    test("validation in Keycloak's error shape", async () => {
      const bad = async (c: Record<string, string[]>, re: RegExp): Promise<void> => {
        const e = await errorOf(ts.kc.components.create({ realm: REALM, name: 'x', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: c }));
        assert.equal(e.status, 400);
        assert.match(String(e.body.errorMessage), re);
      };
      await bad({ ...config(), connectionUrl: ['http://x'] }, /ldap:\/\/ or ldaps:\/\//);
      await bad({ ...config(), usersDn: [''] }, /Users DN/);
      await bad({ ...config(), editMode: ['SOMETIMES'] }, /editMode/);
      await bad({ ...config(), usernameLDAPAttribute: ['uid)(cn=*'] }, /usernameLDAPAttribute/);
      await bad({ ...config(), bindCredential: [] }, /bindCredential/);
      const e = await errorOf(ts.kc.components.create({ realm: REALM, name: 'x', providerId: 'groups', providerType: MAPPER, parentId: 'nope', config: {} }));
      assert.equal(e.status, 404);
    });

    test("a federated user's password cannot be reset through the API; deleting the provider unlinks its users", async () => {
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'fed', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config() });
      await ts.store.users.create({ id: 'fed-user-1', realmId: REALM, username: 'fed-one', email: null, firstName: null, lastName: null, emailVerified: false, passwordHash: '!no-password', now: 1, organizationIds: [], federationLink: id });
      const e = await errorOf(ts.kc.users.resetPassword({ realm: REALM, id: 'fed-user-1', credential: { type: 'password', value: 'a-new-password-1', temporary: false } }));
      assert.equal(e.status, 400);
      assert.match(String(e.body.errorMessage), /user directory \(LDAP\)/);
      await ts.kc.components.del({ realm: REALM, id });
      assert.equal((await ts.store.users.get('fed-user-1'))!.federationLink, null);
    });

    test("user-storage sync: triggerFullSync imports every entry, triggerChangedUsersSync what changed; never a password", { skip: LDAP_MISSING }, async () => {
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'sync', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config(ldap!.url) });
      const full = await ts.kc.userStorageProvider.sync({ realm: REALM, id, action: 'triggerFullSync' });
      assert.equal(full.added, 2, JSON.stringify(full));
      assert.equal(full.failed, 1, 'a name Realmgate does not accept');
      const sam = (await ts.store.users.findByUsername(REALM, 'sam'))!;
      assert.equal(sam.federationLink, id);
      assert.equal(sam.firstName, 'Sam');
      assert.ok(sam.passwordHash.startsWith('!'));
      await ldap!.modify(`dn: uid=sam,${PEOPLE}\nchangetype: modify\nreplace: mail\nmail: sam.new@example.org\n`);
      const changed = await ts.kc.userStorageProvider.sync({ realm: REALM, id, action: 'triggerChangedUsersSync' });
      assert.ok((changed.updated ?? 0) >= 1, JSON.stringify(changed));
      assert.equal(changed.added, 0);
      assert.equal((await ts.store.users.findByUsername(REALM, 'sam'))!.email, 'sam.new@example.org');
      const e = await errorOf(ts.kc.userStorageProvider.sync({ realm: REALM, id, action: 'nope' as 'triggerFullSync' }));
      assert.equal(e.status, 400);
      await ts.kc.components.del({ realm: REALM, id });
    });

    test('view-realm reads, manage-realm changes', async () => {
      const viewer = await serviceAccountAdmin(ts, REALM, 'ldap-viewer', ['view-realm']);
      const manager = await serviceAccountAdmin(ts, REALM, 'ldap-manager', ['manage-realm']);
      const other = await serviceAccountAdmin(ts, REALM, 'ldap-other', ['view-users']);
      const body = { realm: REALM, name: 'p', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config() };
      assert.equal(await statusOf(viewer.kc.components.create(body)), 403);
      assert.equal(await statusOf(other.kc.components.find({ realm: REALM })), 403);
      const { id } = await manager.kc.components.create(body);
      assert.equal((await viewer.kc.components.find({ realm: REALM, type: USER_STORAGE })).length, 1);
      assert.equal(await statusOf(viewer.kc.components.del({ realm: REALM, id })), 403);
      await manager.kc.components.del({ realm: REALM, id });
    });

    test('testLDAPConnection: testConnection and testAuthentication', { skip: LDAP_MISSING }, async () => {
      const call = async (body: Record<string, unknown>): Promise<number> => {
        const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/testLDAPConnection`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return res.status;
      };
      assert.equal(await call({ action: 'testConnection', connectionUrl: ldap!.url }), 204);
      assert.equal(await call({ action: 'testAuthentication', connectionUrl: ldap!.url, bindDn: ROOT_DN, bindCredential: ROOT_PASSWORD }), 204);
      assert.equal(await call({ action: 'testAuthentication', connectionUrl: ldap!.url, bindDn: ROOT_DN, bindCredential: 'wrong' }), 400);
      assert.equal(await call({ action: 'testConnection', connectionUrl: 'ldap://127.0.0.1:1' }), 400);
      // The stored credential, by componentId, when the mask is sent.
      const { id } = await ts.kc.components.create({ realm: REALM, name: 'live', providerId: 'ldap', providerType: USER_STORAGE, parentId: REALM, config: config(ldap!.url) });
      assert.equal(await call({ action: 'testAuthentication', componentId: id, connectionUrl: ldap!.url, bindDn: ROOT_DN, bindCredential: '**********' }), 204);
      await ts.kc.components.del({ realm: REALM, id });
    });
  });
}
