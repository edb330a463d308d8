import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { kcCredential, signIn } from './helpers.js';

const RP = 'https://rp.example.com/callback';

/** keycloak-admin-client 26 (Keycloak's own library) as the caller: realms.create and realms.partialImport. */
for (const dialect of dialects()) {
  describe(`Keycloak import through the admin API (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('POST /admin/realms with a full RealmRepresentation imports clients and users with their hashes', async () => {
      const rep = {
        realm: 'moved',
        enabled: true,
        organizationsEnabled: false,
        accessCodeLifespan: 60,
        clients: [{ clientId: 'app', publicClient: false, secret: 'moved-app-secret-93ab1', redirectUris: [RP], protocol: 'openid-connect' }],
        users: [{ id: '5f0e7a8e-1111-4222-8333-944455556666', username: 'bob', enabled: true, email: 'bob@example.com', credentials: [await kcCredential('pbkdf2-sha512', 'bob-password', { iterations: 1000 })] }],
      };
      await ts.kc.realms.create(rep as never);
      const realm = (await ts.store.realms.get('moved'))!;
      assert.equal(realm.codeLifetime, 50);
      assert.equal(realm.organizationRequired, false);
      const r = await signIn(ts, { realm: 'moved', clientId: 'app', redirectUri: RP, secret: 'moved-app-secret-93ab1', username: 'bob', password: 'bob-password' });
      assert.equal(r.claims?.sub, "5f0e7a8e-1111-4222-8333-944455556666", JSON.stringify(r));
      // The same again: Keycloak answers 409.
      assert.equal(await statusOf(ts.kc.realms.create(rep as never)), 409);
    });

    test("organization required is the realm attribute realmgate.organizationRequired (read and changed)", async () => {
      assert.equal((await ts.kc.realms.findOne({ realm: 'moved' }))?.attributes?.['realmgate.organizationRequired'], 'false');
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.attributes?.['realmgate.organizationRequired'], 'true');
      await ts.kc.realms.update({ realm: 'test' }, { attributes: { 'realmgate.organizationRequired': 'false' } });
      assert.equal((await ts.store.realms.get('test'))!.organizationRequired, false);
      await ts.kc.realms.update({ realm: 'test' }, { attributes: { 'realmgate.organizationRequired': 'true' } });
      assert.equal((await ts.store.realms.get('test'))!.organizationRequired, true);
    });

    test('a realm that cannot be imported is a 400 and stores nothing', async () => {
      const status = await statusOf(ts.kc.realms.create({ realm: 'broken', accessTokenLifespan: 'x', users: [{ id: 'u1', username: 'carol' }] } as never));
      assert.equal(status, 400);
      assert.equal(await ts.store.realms.get('broken'), undefined);
    });

    test('partialImport: FAIL refuses existing resources (409, nothing stored), SKIP adds the rest, OVERWRITE replaces', async () => {
      const dave = { id: '7a7a7a7a-0000-4000-8000-00000000000d', username: 'dave', enabled: true, credentials: [await kcCredential('argon2', 'dave-password')] };
      const body = { ifResourceExists: 'FAIL', users: [dave, { id: '5f0e7a8e-1111-4222-8333-944455556666', username: 'bob' }], clients: [{ clientId: 'app', publicClient: true, redirectUris: [RP] }] };
      assert.equal(await statusOf(ts.kc.realms.partialImport({ realm: 'moved', rep: body as never })), 409);
      assert.equal(await ts.store.users.findByUsername('moved', 'dave'), undefined);
      const skip = await ts.kc.realms.partialImport({ realm: 'moved', rep: { ...body, ifResourceExists: 'SKIP' } as never });
      assert.deepEqual({ added: skip.added, skipped: skip.skipped, overwritten: skip.overwritten }, { added: 1, skipped: 2, overwritten: 0 });
      assert.equal((await ts.store.users.findByUsername('moved', 'dave'))?.id, dave.id);
      const r = await signIn(ts, { realm: 'moved', clientId: 'app', redirectUri: RP, secret: 'moved-app-secret-93ab1', username: 'dave', password: 'dave-password' });
      assert.equal(r.claims?.sub, dave.id);
      const over = await ts.kc.realms.partialImport({ realm: 'moved', rep: { clients: body.clients, ifResourceExists: 'OVERWRITE' } as never });
      assert.deepEqual(over.results, [{ action: 'OVERWRITTEN', resourceType: 'CLIENT', resourceName: 'app', id: 'app' }]);
      assert.equal((await ts.store.clients.get('moved', 'app'))?.public, true);
    });
  });
}
