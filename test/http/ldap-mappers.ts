// LDAP group, role, hardcoded and full-name mappers through a real OpenLDAP (test/helpers/ldap.ts): the
// directory's groupOfNames entries become groups and roles at sign-in (password grant) and at the mapper
// sync (keycloak-admin-client's userStorageProvider.mappersSync), on the database this file's variant
// names (ldap-mappers-sqlite / -postgres).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { REALM, basic, realmPath } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, SUFFIX, startLdap, type LdapServer } from '../helpers/ldap.js';
import { errorOf, startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { ldapSettings } from '../../src/oauth/ldap/federation.js';
import { normDn, userDirectoryGroups } from '../../src/oauth/ldap/group-mapping.js';
import { readGroupMapping } from '../../src/oauth/ldap/mapper-config.js';

const USER_STORAGE = 'org.keycloak.storage.UserStorageProvider';
const MAPPER = 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper';
const GROUPS = `ou=Groups,${SUFFIX}`;
const POSIX = `ou=Posix,${SUFFIX}`;
const ROLES = `ou=Roles,${SUFFIX}`;
const CLIENT_ROLES = `ou=ClientRoles,${SUFFIX}`;
const dn = (uid: string): string => `uid=${uid},${PEOPLE}`;
const ou = (name: string): string => `dn: ou=${name},${SUFFIX}\nobjectClass: organizationalUnit\nou: ${name}\n\n`;
const groupOfNames = (cn: string, base: string, members: string[]): string => `dn: cn=${cn},${base}\nobjectClass: groupOfNames\ncn: ${cn}\n${members.map((m) => `member: ${m}`).join('\n')}\n\n`;

// ou=Groups: engineers (lena; and the group platform, nested), platform (mo), admins (lena).
// ou=Posix: posixGroup ops with memberUid pat (UID membership). ou=Roles: auditor (lena).
// ou=ClientRoles: deployer (mo), for the web-app client's roles.
const LDIF =
  ou('Groups') +
  ou('Posix') +
  ou('Roles') +
  ou('ClientRoles') +
  groupOfNames('platform', GROUPS, [dn('mo')]) +
  groupOfNames('engineers', GROUPS, [dn('lena'), `cn=platform,${GROUPS}`]) +
  groupOfNames('admins', GROUPS, [dn('lena')]) +
  `dn: cn=ops,${POSIX}\nobjectClass: posixGroup\ncn: ops\ngidNumber: 1000\nmemberUid: pat\n\n` +
  groupOfNames('auditor', ROLES, [dn('lena')]) +
  groupOfNames('deployer', CLIENT_ROLES, [dn('mo')]);

export function ldapMapperTests(dialect: 'sqlite' | 'postgres'): void {
  describe(`LDAP group and role mappers (${dialect})`, { skip: LDAP_MISSING }, () => {
    let ts: AdminTestServer;
    let ldap: LdapServer;
    let providerId: string;
    let groupMapperId: string;
    let ip = 0;

    before(async () => {
      ldap = await startLdap({
        extraLdif: LDIF,
        people: [
          { uid: 'lena', password: 'lena-pw', mail: 'lena@example.org', givenName: 'Lena', sn: 'Ldap' },
          { uid: 'mo', password: 'mo-pw', mail: 'mo@example.org', givenName: 'Mo', sn: 'Dir' },
          { uid: 'pat', password: 'pat-pw', mail: 'pat@example.org' },
        ],
      });
      ts = await startAdminServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      ts.kc.setConfig({ realmName: REALM });
      const created = await ts.kc.components.create({
        name: 'corp-ldap',
        providerId: 'ldap',
        providerType: USER_STORAGE,
        parentId: REALM,
        config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD], editMode: ['READ_ONLY'], connectionTimeout: ['1000'], readTimeout: ['1000'] },
      });
      providerId = created.id;
      // The Migration2 fixture's group mapper, under groups.path /ldap.
      groupMapperId = (
        await ts.kc.components.create({
          name: 'groups',
          providerId: 'group-ldap-mapper',
          providerType: MAPPER,
          parentId: providerId,
          config: {
            'groups.dn': [GROUPS],
            'group.name.ldap.attribute': ['cn'],
            'group.object.classes': ['groupOfNames'],
            'preserve.group.inheritance': ['true'],
            'membership.ldap.attribute': ['member'],
            'membership.attribute.type': ['DN'],
            'membership.user.ldap.attribute': ['uid'],
            mode: ['READ_ONLY'],
            'user.roles.retrieve.strategy': ['LOAD_GROUPS_BY_MEMBER_ATTRIBUTE'],
            'groups.path': ['/ldap'],
            'drop.non.existing.groups.during.sync': ['false'],
          },
        })
      ).id;
    });
    after(async () => {
      await ldap?.stop();
      await ts?.close();
    });

    /** A password grant; the access token's claims. */
    async function signIn(username: string, password: string): Promise<{ status: number; body: Record<string, unknown>; claims?: { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> } }> {
      ip++;
      const res = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        remoteAddress: `10.30.${Math.floor(ip / 200)}.${ip % 200}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) },
        payload: new URLSearchParams({ grant_type: 'password', username, password, scope: 'openid' }).toString(),
      });
      const body = res.json() as Record<string, unknown>;
      return { status: res.statusCode, body, ...(res.statusCode === 200 ? { claims: decodeJwt(body.access_token as string) } : {}) };
    }
    const userId = async (name: string): Promise<string> => (await ts.store.users.findByUsername(REALM, name))!.id;
    const groupPaths = async (name: string): Promise<string[]> => (await ts.kc.users.listGroups({ id: await userId(name) })).map((g) => g.path!).sort();
    const groupId = async (path: string): Promise<string> => (await ts.kc.groups.find({ search: path.split('/').pop()!, briefRepresentation: true, exact: true })).flatMap(function all(g): Array<{ id?: string; path?: string }> {
      return [g, ...(g.subGroups ?? []).flatMap(all)];
    }).find((g) => g.path === path)!.id!;
    const mapper = (name: string, providerIdOf: string, config: Record<string, string[]>) => ts.kc.components.create({ name, providerId: providerIdOf, providerType: MAPPER, parentId: providerId, config });

    test('the mapper sync (fedToKeycloak) makes the directory groups under groups.path, nested; keycloakToFed is refused', async () => {
      const r = await ts.kc.userStorageProvider.mappersSync({ parentId: providerId, id: groupMapperId, direction: 'fedToKeycloak' });
      assert.equal(r.added, 3, JSON.stringify(r));
      assert.match(r.status!, /3 imported groups/);
      const tree = (await ts.store.groups.all(REALM)).map((g) => g.name).sort();
      assert.deepEqual(tree, ['admins', 'engineers', 'ldap', 'platform']);
      await groupId('/ldap/engineers/platform');
      const again = await ts.kc.userStorageProvider.mappersSync({ parentId: providerId, id: groupMapperId, direction: 'fedToKeycloak' });
      assert.equal(again.added, 0);
      assert.equal(again.updated, 3);
      const refused = await errorOf(ts.kc.userStorageProvider.mappersSync({ parentId: providerId, id: groupMapperId, direction: 'keycloakToFed' }));
      assert.equal(refused.status, 400);
      assert.match(String(refused.body.errorMessage), /direction must be fedToKeycloak/);
    });

    test('a sign-in sets the memberships from the directory; the groups\' roles (inherited too) are in the token', async () => {
      await ts.kc.roles.create({ name: 'eng-role' });
      const engRole = await ts.kc.roles.findOneByName({ name: 'eng-role' });
      await ts.kc.groups.addRealmRoleMappings({ id: await groupId('/ldap/engineers'), roles: [{ id: engRole!.id!, name: 'eng-role' }] });
      const lena = await signIn('lena', 'lena-pw');
      assert.equal(lena.status, 200, JSON.stringify(lena.body));
      assert.ok(lena.claims!.realm_access!.roles.includes('eng-role'));
      assert.deepEqual(await groupPaths('lena'), ['/ldap/admins', '/ldap/engineers']);
      // mo is in platform, engineers' subgroup: its member holds engineers' roles.
      const mo = await signIn('mo', 'mo-pw');
      assert.deepEqual(await groupPaths('mo'), ['/ldap/engineers/platform']);
      assert.ok(mo.claims!.realm_access!.roles.includes('eng-role'));
    });

    test('removed from a directory group, the next sign-in removes the membership; a local membership survives', async () => {
      const local = await ts.kc.groups.create({ name: 'local-team' });
      await ts.kc.users.addToGroup({ id: await userId('lena'), groupId: local.id });
      await ldap.modify(`dn: cn=admins,${GROUPS}\nchangetype: modify\ndelete: member\nmember: ${dn('lena')}\n-\nadd: member\nmember: ${dn('mo')}\n`);
      assert.equal((await signIn('lena', 'lena-pw')).status, 200);
      assert.deepEqual(await groupPaths('lena'), ['/ldap/engineers', '/local-team']);
    });

    test('READ_ONLY: a federated user\'s membership of a mapped group cannot be changed here (400), a local group\'s can', async () => {
      const lena = await userId('lena');
      const add = await errorOf(ts.kc.users.addToGroup({ id: lena, groupId: await groupId('/ldap/admins') }));
      assert.equal(add.status, 400);
      assert.match(String(add.body.errorMessage), /group admins of user lena is mapped from LDAP by mapper groups \(mode READ_ONLY\)/);
      const remove = await errorOf(ts.kc.users.delFromGroup({ id: lena, groupId: await groupId('/ldap/engineers') }));
      assert.equal(remove.status, 400);
      assert.deepEqual(await groupPaths('lena'), ['/ldap/engineers', '/local-team']);
      // A local user may join a mapped group (the directory does not speak for local users).
      await ts.kc.users.addToGroup({ id: ts.user.id, groupId: await groupId('/ldap/admins') });
    });

    test('a new nested directory group met at sign-in is made with its parents (preserve.group.inheritance)', async () => {
      await ldap.modify(groupOfNames('sre', GROUPS, [dn('lena')]), { add: true });
      await ldap.modify(`dn: cn=platform,${GROUPS}\nchangetype: modify\nadd: member\nmember: cn=sre,${GROUPS}\n`);
      assert.equal((await signIn('lena', 'lena-pw')).status, 200);
      assert.deepEqual(await groupPaths('lena'), ['/ldap/engineers', '/ldap/engineers/platform/sre', '/local-team']);
    });

    test('the group lookup failing (groups.dn gone from the directory): 503 "try again later", memberships unchanged, never a 500', async () => {
      const m = (await ts.kc.components.findOne({ id: groupMapperId }))!;
      await ts.kc.components.update({ id: groupMapperId }, { ...m, config: { ...m.config, 'groups.dn': [`ou=Nowhere,${SUFFIX}`] } });
      await ldap.modify(`dn: cn=engineers,${GROUPS}\nchangetype: modify\ndelete: member\nmember: ${dn('lena')}\n`);
      const r = await signIn('lena', 'lena-pw');
      assert.equal(r.status, 503);
      assert.equal(r.body.error, 'temporarily_unavailable');
      assert.deepEqual(await groupPaths('lena'), ['/ldap/engineers', '/ldap/engineers/platform/sre', '/local-team']);
      await ts.kc.components.update({ id: groupMapperId }, m);
      assert.equal((await signIn('lena', 'lena-pw')).status, 200);
      assert.deepEqual(await groupPaths('lena'), ['/ldap/engineers/platform/sre', '/local-team']);
    });

    test('drop.non.existing.groups.during.sync: the mapper\'s groups gone from the directory are deleted; local groups stay', async () => {
      const m = (await ts.kc.components.findOne({ id: groupMapperId }))!;
      await ts.kc.components.update({ id: groupMapperId }, { ...m, config: { ...m.config, 'drop.non.existing.groups.during.sync': ['true'] } });
      await ldap.remove(`cn=admins,${GROUPS}`);
      const r = await ts.kc.userStorageProvider.mappersSync({ parentId: providerId, id: groupMapperId, direction: 'fedToKeycloak' });
      assert.equal(r.removed, 1, JSON.stringify(r));
      const names = (await ts.store.groups.all(REALM)).map((g) => g.name).sort();
      assert.deepEqual(names, ['engineers', 'ldap', 'local-team', 'platform', 'sre']);
    });

    test('UID membership (posixGroup memberUid): three first sign-ins at once make the group once', async () => {
      await mapper('posix', 'group-ldap-mapper', { 'groups.dn': [POSIX], 'group.object.classes': ['posixGroup'], 'membership.ldap.attribute': ['memberUid'], 'membership.attribute.type': ['UID'], 'preserve.group.inheritance': ['false'], mode: ['LDAP_ONLY'] });
      const results = await Promise.all([1, 2, 3].map(() => signIn('pat', 'pat-pw')));
      assert.deepEqual(results.map((r) => r.status), [200, 200, 200], JSON.stringify(results.map((r) => r.body)));
      assert.equal((await ts.store.groups.all(REALM)).filter((g) => g.name === 'ops').length, 1);
      assert.deepEqual(await groupPaths('pat'), ['/ops']);
      // LDAP_ONLY: refused too (Realmgate does not write memberships to the directory).
      const refused = await errorOf(ts.kc.users.delFromGroup({ id: await userId('pat'), groupId: await groupId('/ops') }));
      assert.equal(refused.status, 400);
      assert.match(String(refused.body.errorMessage), /mode LDAP_ONLY/);
    });

    test('role-ldap-mapper: directory groups become realm roles, or a client\'s roles; a removal takes effect at the next sign-in', async () => {
      await mapper('realm roles', 'role-ldap-mapper', { 'roles.dn': [ROLES], 'use.realm.roles.mapping': ['true'] });
      await mapper('client roles', 'role-ldap-mapper', { 'roles.dn': [CLIENT_ROLES], 'use.realm.roles.mapping': ['false'], 'client.id': [ts.client.id] });
      const lena = await signIn('lena', 'lena-pw');
      assert.ok(lena.claims!.realm_access!.roles.includes('auditor'), JSON.stringify(lena.claims));
      const mo = await signIn('mo', 'mo-pw');
      assert.deepEqual(mo.claims!.resource_access?.[ts.client.id]?.roles, ['deployer']);
      assert.ok(!(mo.claims!.realm_access?.roles ?? []).includes('auditor'));
      const refused = await errorOf(ts.kc.users.delRealmRoleMappings({ id: await userId('lena'), roles: [{ id: (await ts.kc.roles.findOneByName({ name: 'auditor' }))!.id!, name: 'auditor' }] }));
      assert.equal(refused.status, 400);
      assert.match(String(refused.body.errorMessage), /role auditor of user lena is mapped from LDAP by mapper realm roles/);
      await ldap.modify(`dn: cn=auditor,${ROLES}\nchangetype: modify\nreplace: member\nmember: ${dn('mo')}\n`);
      assert.ok(!((await signIn('lena', 'lena-pw')).claims!.realm_access?.roles ?? []).includes('auditor'));
      // A client that does not exist is refused when the mapper is made.
      const bad = await errorOf(mapper('nowhere', 'role-ldap-mapper', { 'roles.dn': [ROLES], 'use.realm.roles.mapping': ['false'], 'client.id': ['no-such-client'] }));
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.errorMessage), /client "no-such-client" does not exist/);
    });

    test('hardcoded role and group mappers: every user of the provider has them; a missing role or group is refused', async () => {
      await ts.kc.roles.create({ name: 'federated' });
      await ts.kc.groups.create({ name: 'federated-users' });
      await mapper('everyone role', 'hardcoded-ldap-role-mapper', { role: ['federated'] });
      await mapper('everyone group', 'hardcoded-ldap-group-mapper', { group: ['/federated-users'] });
      const mo = await signIn('mo', 'mo-pw');
      assert.ok(mo.claims!.realm_access!.roles.includes('federated'));
      assert.ok((await groupPaths('mo')).includes('/federated-users'));
      const role = await errorOf(mapper('bad role', 'hardcoded-ldap-role-mapper', { role: ['no-such-role'] }));
      assert.equal(role.status, 400);
      assert.match(String(role.body.errorMessage), /role "no-such-role" does not exist/);
      const group = await errorOf(mapper('bad group', 'hardcoded-ldap-group-mapper', { group: ['/no/such'] }));
      assert.equal(group.status, 400);
      assert.match(String(group.body.errorMessage), /group "\/no\/such" does not exist/);
    });

    test('full-name-ldap-mapper: first and last name from cn ("First Last"), not givenName and sn', async () => {
      await ldap.modify(`dn: ${dn('mo')}\nchangetype: modify\nreplace: cn\ncn: Maurice de Dir\n`);
      await mapper('full name', 'full-name-ldap-mapper', { 'ldap.full.name.attribute': ['cn'] });
      assert.equal((await signIn('mo', 'mo-pw')).status, 200);
      const mo = (await ts.store.users.findByUsername(REALM, 'mo'))!;
      assert.equal(mo.firstName, 'Maurice de');
      assert.equal(mo.lastName, 'Dir');
    });

    test('bad mapper config: clear 400s (DN syntax, attribute names, mode, unknown mapper type)', async () => {
      const cases: Array<[string, Record<string, string[]>, RegExp, string?]> = [
        ['group-ldap-mapper', { 'groups.dn': ['not a dn'] }, /config\["groups.dn"\] must be a DN/],
        ['group-ldap-mapper', { 'groups.dn': [GROUPS], 'group.name.ldap.attribute': ['c n'] }, /config\["group.name.ldap.attribute"\] must be an LDAP attribute name/],
        ['group-ldap-mapper', { 'groups.dn': [GROUPS], mode: ['WRITE'] }, /config\["mode"\] must be one of READ_ONLY, LDAP_ONLY, IMPORT/],
        ['group-ldap-mapper', { 'groups.dn': [GROUPS], 'groups.ldap.filter': ['cn=x'] }, /must be an LDAP filter in parentheses/],
        ['role-ldap-mapper', { 'roles.dn': [ROLES], 'membership.attribute.type': ['CN'] }, /config\["membership.attribute.type"\] must be one of DN, UID/],
        ['msad-user-account-control-mapper', {}, /is not supported/],
      ];
      for (const [type, config, message] of cases) {
        const e = await errorOf(mapper(`bad ${type}`, type, config));
        assert.equal(e.status, 400, type);
        assert.match(String(e.body.errorMessage), message);
      }
    });

    test('fuzz: LDAP filter syntax in a user DN or uid never finds another user\'s groups', async () => {
      const p = (await ts.store.userStorage.get(REALM, providerId))!;
      const s = ldapSettings(p);
      const byDn = readGroupMapping(p.mappers.find((m) => m.name === 'groups')!).mapping;
      const byUid = readGroupMapping(p.mappers.find((m) => m.name === 'posix')!).mapping;
      const piece = fc.constantFrom('*', '(', ')', '\\', '|', '&', '!', '=', ',', ' ', 'uid=', 'member=', 'memberUid=', 'lena', 'pat', 'mo', dn('lena'), 'ou=People', SUFFIX, '\\2a', '\u0000');
      const value = fc.array(piece, { minLength: 1, maxLength: 6 }).map((x) => x.join(''));
      await fc.assert(
        fc.asyncProperty(value, async (v) => {
          const viaDn = await userDirectoryGroups(s, ROOT_PASSWORD, byDn, { dn: v, attributes: {} });
          // Only a value that is a real member's DN finds groups (those it is a member of).
          if (normDn(v) !== normDn(dn('lena'))) assert.deepEqual(viaDn, [], JSON.stringify(v));
          const viaUid = await userDirectoryGroups(s, ROOT_PASSWORD, byUid, { dn: 'uid=x', attributes: { uid: [v] } });
          if (v.trim() !== 'pat') assert.deepEqual(viaUid, [], JSON.stringify(v));
        }),
        // A NUL ends the value for OpenLDAP (pat's groups were found for "pat\0*" in CI): always tried.
        { numRuns: Number(process.env.FUZZ_SCALE ?? 1) * 60, examples: [['pat\u0000*'], ['pat\u0000'], [`${dn('lena')}\u0000`]], ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
      );
    });
  });
}
