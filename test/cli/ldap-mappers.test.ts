import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, startTestServer, type TestServer } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, SUFFIX, startLdap, type LdapServer } from '../helpers/ldap.js';
import { createUserStorage } from '../../src/admin/operations/user-storage.js';
import { cliActor } from '../../src/admin/operations/common.js';

const GROUPS = `ou=Groups,${SUFFIX}`;

// The ldap mapper commands of the installed command (npm run build first) over the database of a running
// server, against a real slapd: a group mapper added from the command line, its groups synchronized.
for (const dialect of dialects()) {
  describe(`realmgate ldap mapper commands (${dialect})`, { skip: LDAP_MISSING }, () => {
    const { ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let ldap: LdapServer;
    const saved = process.env.REALMGATE_KEY_SECRET;
    before(async () => {
      process.env.REALMGATE_KEY_SECRET = 'ldap mapper commands test secret';
      ts = await startTestServer({ dialect });
      ldap = await startLdap({
        extraLdif: `dn: ${GROUPS}\nobjectClass: organizationalUnit\nou: Groups\n\ndn: cn=staff,${GROUPS}\nobjectClass: groupOfNames\ncn: staff\nmember: uid=lena,${PEOPLE}\n\n`,
        people: [{ uid: 'lena', password: 'lena-pw' }],
      });
      await createUserStorage(ts.store, cliActor(), REALM, { name: 'corp', config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD] } });
    });
    after(async () => {
      await ts.close();
      await ldap.stop();
      if (saved === undefined) delete process.env.REALMGATE_KEY_SECRET;
      else process.env.REALMGATE_KEY_SECRET = saved;
    });

    test('mapper-add (bad config refused in one line), mappers, sync-groups, mapper-remove', async () => {
      fails(['ldap', 'mapper-add', REALM, 'corp', 'groups', '--type', 'group-ldap-mapper', '--config', 'groups.dn=not a dn'], /mapper "groups": config\["groups.dn"\] must be a DN/);
      fails(['ldap', 'mapper-add', REALM, 'corp', 'groups', '--type', 'no-such-mapper'], /is not supported/);
      fails(['ldap', 'sync-groups', REALM, 'corp'], /has no group-ldap-mapper or role-ldap-mapper/);
      const added = ok(['ldap', 'mapper-add', REALM, 'corp', 'groups', '--type', 'group-ldap-mapper', '--config', `groups.dn=${GROUPS}`, '--config', 'groups.path=/ldap']);
      assert.match(added, /^added mapper groups \(group-ldap-mapper, id [0-9a-f-]+\) to LDAP provider corp: directory groups under ou=Groups,dc=example,dc=org become groups under \/ldap/m);
      const list = ok(['ldap', 'mappers', REALM, 'corp']);
      assert.match(list, /\tgroups\tgroup-ldap-mapper\tdirectory groups under/);
      assert.match(ok(['ldap', 'sync-groups', REALM, 'corp', '--mapper', 'groups']), /^mapper groups: 1 imported groups, 0 updated groups, 0 removed groups$/m);
      assert.deepEqual((await ts.store.groups.all(REALM)).map((g) => g.name).sort(), ['ldap', 'staff']);
      assert.match(ok(['ldap', 'sync-groups', REALM, 'corp']), /0 imported groups, 1 updated groups/);
      // The directory unreachable: one line, non-zero exit.
      await ldap.stop();
      fails(['ldap', 'sync-groups', REALM, 'corp'], /mapper groups: connect or service bind failed: .*ECONNREFUSED/);
      fails(['ldap', 'mapper-remove', REALM, 'corp', 'nope'], /has no mapper nope/);
      assert.match(ok(['ldap', 'mapper-remove', REALM, 'corp', 'groups']), /removed mapper groups/);
      assert.doesNotMatch(ok(['ldap', 'mappers', REALM, 'corp']), /group-ldap-mapper/);
      // Its groups stay, as local ones.
      assert.deepEqual((await ts.store.groups.all(REALM)).map((g) => g.name).sort(), ['ldap', 'staff']);
    });
  });
}
