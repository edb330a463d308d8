import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { ADMIN_USERNAME, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';
import { REALM_MANAGEMENT_ROLES } from '../../src/admin/authorization.js';

const ALL_ROLES = Object.keys(REALM_MANAGEMENT_ROLES).sort();
const sorted = (list: readonly string[] | undefined): string[] => [...(list ?? [])].sort();

for (const dialect of dialects()) {
  describe(`admin API: whoami (${dialect})`, () => {
    let ts: AdminTestServer;
    let adminId: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      adminId = (await ts.kc.users.find({ realm: 'master', username: ADMIN_USERNAME, exact: true }))[0]!.id!;
    });
    after(() => ts.close());

    test("keycloak-admin-client's whoAmI.find as master's admin: every admin role, of the realm asked for only", async () => {
      const me = await ts.kc.whoAmI.find();
      assert.equal(me.userId, adminId);
      assert.equal(me.realm, 'master');
      assert.equal(me.displayName, ADMIN_USERNAME, 'no first or last name: the username');
      assert.equal(me.createRealm, true);
      assert.equal(me.temporary, false);
      assert.equal(me.locale, 'en');
      assert.deepEqual(Object.keys(me.realm_access), ['master']);
      assert.deepEqual(sorted(me.realm_access.master as string[]), ALL_ROLES);

      const inTest = await ts.kc.whoAmI.find({ currentRealm: 'test' });
      assert.deepEqual(Object.keys(inTest.realm_access), ['test']);
      assert.deepEqual(sorted(inTest.realm_access.test as string[]), ALL_ROLES);
      assert.equal(inTest.realm, 'master', 'the realm signed in to, not the one asked about');
      assert.deepEqual((await ts.kc.whoAmI.find({ currentRealm: 'no-such-realm' })).realm_access, {});
    });

    test("the display name, the user's locale and Keycloak's temporary admin flag come from the user", async () => {
      const user = await ts.kc.users.findOne({ realm: 'master', id: adminId });
      await ts.kc.users.update({ realm: 'master', id: adminId }, { ...user, firstName: 'Ada', lastName: 'Lovelace' });
      assert.equal((await ts.kc.whoAmI.find()).displayName, 'Ada Lovelace');
      await ts.kc.users.update({ realm: 'master', id: adminId }, { ...user, firstName: '  ', lastName: 'Lovelace' });
      assert.equal((await ts.kc.whoAmI.find()).displayName, 'Lovelace', 'a blank first name is no name');

      await ts.kc.users.update({ realm: 'master', id: adminId }, { ...user, attributes: { locale: ['de'], is_temporary_admin: ['true'] } });
      let me = await ts.kc.whoAmI.find();
      assert.equal(me.locale, 'en', 'a realm without internationalization speaks English');
      assert.equal(me.temporary, true);
      await ts.kc.realms.update({ realm: 'master' }, { internationalizationEnabled: true, supportedLocales: ['en', 'de'], defaultLocale: 'en' });
      try {
        me = await ts.kc.whoAmI.find();
        assert.equal(me.locale, 'de', "the user's locale, one of the realm's");
      } finally {
        await ts.kc.realms.update({ realm: 'master' }, { internationalizationEnabled: false });
        await ts.kc.users.update({ realm: 'master', id: adminId }, { ...user, attributes: {} });
      }
    });

    test("a realm's administrator: its own realm's roles with those they imply, no other realm, no realm creation", async () => {
      const sa = await serviceAccountAdmin(ts, 'test', 'whoami-users', ['manage-users']);
      const me = await sa.kc.whoAmI.find();
      assert.equal(me.userId, sa.userId);
      assert.equal(me.realm, 'test');
      assert.equal(me.displayName, 'service-account-whoami-users');
      assert.equal(me.createRealm, false);
      assert.deepEqual(sorted(me.realm_access.test as string[]), ['manage-users', 'query-groups', 'query-users', 'view-users']);
      assert.deepEqual((await sa.kc.whoAmI.find({ currentRealm: 'master' })).realm_access, {});

      const none = await serviceAccountAdmin(ts, 'test', 'whoami-none', []);
      assert.deepEqual((await none.kc.whoAmI.find()).realm_access, {}, 'not an administrator: nothing held, still answered');
    });

    test("refusals: a token of another realm than the path's, no token", async () => {
      const sa = await serviceAccountAdmin(ts, 'test', 'whoami-other', ['view-realm']);
      // keycloak-admin-client takes the path's realm from the payload.
      assert.equal(await statusOf(sa.kc.whoAmI.find({ realm: 'master' } as never)), 401);
      assert.equal(await statusOf(ts.kc.whoAmI.find({ realm: 'test' } as never)), 401, "master's admin signed in to master, not test");
      const anonymous = await fetch(`${ts.baseUrl}/auth/admin/master/console/whoami`);
      assert.equal(anonymous.status, 401);
      const body = (await anonymous.json()) as Record<string, unknown>;
      assert.equal(typeof body.error, 'string');
    });
  });
}
