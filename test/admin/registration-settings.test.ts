import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// registrationAllowed, registrationEmailAsUsername and verifyEmail in the admin API's realm
// representation, through keycloak-admin-client (realms.findOne / realms.update), as Keycloak has them.
for (const dialect of dialects()) {
  describe(`admin API: registration settings (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('off by default; realms.update sets each, leaves the others; a representation sent back changes nothing; a wrong type is a 400', async () => {
      let rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
      assert.equal(rep.registrationAllowed, false);
      assert.equal(rep.registrationEmailAsUsername, false);
      assert.equal(rep.verifyEmail, false);
      await ts.kc.realms.update({ realm: REALM }, { registrationAllowed: true });
      await ts.kc.realms.update({ realm: REALM }, { verifyEmail: true });
      rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
      assert.deepEqual([rep.registrationAllowed, rep.registrationEmailAsUsername, rep.verifyEmail], [true, false, true]);
      await ts.kc.realms.update({ realm: REALM }, { ...rep, registrationEmailAsUsername: true });
      rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
      assert.deepEqual([rep.registrationAllowed, rep.registrationEmailAsUsername, rep.verifyEmail], [true, true, true]);
      const stored = (await ts.store.realms.get(REALM))!;
      assert.deepEqual([stored.registrationAllowed, stored.registrationEmailAsUsername, stored.verifyEmail], [true, true, true]);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: REALM }, { verifyEmail: 'yes' as unknown as boolean })), 400);
      await ts.kc.realms.update({ realm: REALM }, { registrationAllowed: false, registrationEmailAsUsername: false, verifyEmail: false });
      rep = (await ts.kc.realms.findOne({ realm: REALM }))!;
      assert.deepEqual([rep.registrationAllowed, rep.registrationEmailAsUsername, rep.verifyEmail], [false, false, false]);
      // A realm created with them (keycloak-admin-client realms.create).
      await ts.kc.realms.create({ realm: 'selfservice', enabled: true, registrationAllowed: true, verifyEmail: true });
      const created = (await ts.kc.realms.findOne({ realm: 'selfservice' }))!;
      assert.deepEqual([created.registrationAllowed, created.registrationEmailAsUsername, created.verifyEmail], [true, false, true]);
    });
  });
}
