import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { dialects } from '../helpers/db.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { kcCredential, signIn } from './helpers.js';

const RP = 'https://rp.example.com/callback';
const VICTIM_SECRET = 'victim-app-secret-5d1e77';

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
        users: [{ id: '5f0e7a8e-1111-4222-8333-944455556666', username: 'bob', enabled: true, email: 'bob@example.com', credentials: [await kcCredential('pbkdf2-sha512', 'bob-password', { iterations: 1000 })], realmRoles: ['buyer'], clientRoles: { app: ['orders'] } }],
        roles: { realm: [{ name: 'buyer', composite: true, composites: { client: { app: ['orders'] } } }, { name: 'seller' }], client: { app: [{ name: 'orders' }, { name: 'refunds' }] } },
      };
      await ts.kc.realms.create(rep as never);
      const realm = (await ts.store.realms.get('moved'))!;
      assert.equal(realm.codeLifetime, 50);
      assert.equal(realm.organizationRequired, false);
      const r = await signIn(ts, { realm: 'moved', clientId: 'app', redirectUri: RP, secret: 'moved-app-secret-93ab1', username: 'bob', password: 'bob-password' });
      assert.equal(r.claims?.sub, "5f0e7a8e-1111-4222-8333-944455556666", JSON.stringify(r));
      // The roles came with the realm, and bob's token carries his.
      assert.deepEqual((await ts.kc.roles.find({ realm: 'moved' })).map((x) => x.name).sort(), ['buyer', 'seller']);
      assert.deepEqual(r.claims?.realm_access, { roles: ['buyer'] });
      assert.deepEqual(r.claims?.resource_access, { app: { roles: ['orders'] } });
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
    test('partialImport OVERWRITE: an entry that is skipped leaves the stored user and client as they were', async () => {
      await ts.kc.realms.create({ realm: 'pi', enabled: true, organizationsEnabled: false, clients: [{ clientId: 'victim-app', publicClient: false, secret: VICTIM_SECRET, redirectUris: [RP] }] } as never);
      const { id } = await ts.kc.users.create({ realm: 'pi', username: 'victim', enabled: true, credentials: [{ type: 'password', value: 'victim-password', temporary: false }] });
      const other = await ts.kc.users.create({ realm: 'pi', username: 'other', enabled: true });
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ username: 'victim' }, /no usable id/],
        [{ username: 'victim', id: other.id, enabled: true }, /two different users/],
        [{ username: 'victim', id, enabled: true, credentials: [{ type: 'password', value: 'short' }] }, /at least 8 characters/],
        [{ username: 'Victim!', id }, /characters Realmgate does not accept/],
      ];
      for (const [user, reason] of cases) {
        // No secret in the client entry: a confidential client that cannot be imported.
        const r = await ts.kc.realms.partialImport({ realm: 'pi', rep: { ifResourceExists: 'OVERWRITE', users: [user], clients: [{ clientId: 'victim-app' }] } as never });
        assert.equal((await ts.store.users.findByUsername('pi', 'victim'))?.id, id, `user lost or replaced by ${JSON.stringify(user)}: ${JSON.stringify(r)}`);
        assert.equal((await ts.store.clients.get('pi', 'victim-app'))?.public, false, `client lost: ${JSON.stringify(r)}`);
        assert.deepEqual({ overwritten: r.overwritten, added: r.added, skipped: r.skipped }, { overwritten: 0, added: 0, skipped: 2 }, JSON.stringify(r));
        const results = r.results as Array<{ action: string; resourceType: string; reason?: string }>;
        assert.match(results.find((x) => x.resourceType === 'USER')?.reason ?? '', reason, JSON.stringify(r));
        assert.match(results.find((x) => x.resourceType === 'CLIENT')?.reason ?? '', /without a secret/, JSON.stringify(r));
      }
      // Both are still usable as they were: the user signs in with their password through the client's secret.
      const before = await signIn(ts, { realm: 'pi', clientId: 'victim-app', redirectUri: RP, secret: VICTIM_SECRET, username: 'victim', password: 'victim-password' });
      assert.equal(before.claims?.sub, id, JSON.stringify(before));
      // A usable entry replaces the user.
      const over = await ts.kc.realms.partialImport({ realm: 'pi', rep: { ifResourceExists: 'OVERWRITE', users: [{ username: 'victim', id, enabled: true, credentials: [{ type: 'password', value: 'victim-new-password' }] }] } as never });
      assert.deepEqual(over.results, [{ action: 'OVERWRITTEN', resourceType: 'USER', resourceName: 'victim', id }]);
      const after = await signIn(ts, { realm: 'pi', clientId: 'victim-app', redirectUri: RP, secret: VICTIM_SECRET, username: 'victim', password: 'victim-new-password' });
      assert.equal(after.claims?.sub, id, JSON.stringify(after));
    });

    test('partialImport does not move groups: each top-level group is SKIPPED with the reason, and nothing of it is stored', async () => {
      const body = {
        ifResourceExists: 'FAIL',
        groups: [{ id: '0d0d0d0d-0000-4000-8000-000000000001', name: 'team', realmRoles: ['buyer'], subGroups: [{ name: 'core' }] }, { name: 'other' }],
        users: [{ id: 'grace-id', username: 'grace', enabled: true, groups: ['/team'] }],
      };
      const r = await ts.kc.realms.partialImport({ realm: 'moved', rep: body as never });
      assert.deepEqual({ added: r.added, skipped: r.skipped, overwritten: r.overwritten }, { added: 1, skipped: 2, overwritten: 0 });
      const reason = 'partialImport does not move groups (nor their subgroups, role mappings and members): the realm import does';
      assert.deepEqual(
        r.results.filter((x) => x.resourceType === 'GROUP').map((x) => ({ ...x })),
        [
          { action: 'SKIPPED', resourceType: 'GROUP', resourceName: 'team', id: '0d0d0d0d-0000-4000-8000-000000000001', reason },
          { action: 'SKIPPED', resourceType: 'GROUP', resourceName: 'other', id: 'other', reason },
        ],
      );
      assert.deepEqual(await ts.store.groups.all('moved'), []);
      assert.deepEqual(await ts.store.groups.userGroups('grace-id'), []);
      assert.equal(await statusOf(ts.kc.realms.partialImport({ realm: 'moved', rep: { groups: { name: 'team' } } as never })), 400);
    });

    test('partialImport refuses a plain-text password the admin API refuses: the entry is skipped with the same reason', async () => {
      const short = { username: 'shorty', id: 'shorty-id', enabled: true, credentials: [{ type: 'password', value: 'seven77' }] };
      assert.equal(await statusOf(ts.kc.users.create({ realm: 'pi', username: 'shorty', enabled: true, credentials: [{ type: 'password', value: 'seven77' }] })), 400);
      const r = await ts.kc.realms.partialImport({ realm: 'pi', rep: { ifResourceExists: 'FAIL', users: [short, { ...short, username: 'longer', id: 'longer-id', credentials: [{ type: 'password', value: 'eight888' }] }] } as never });
      assert.deepEqual(
        r.results.map((x) => ({ ...x })),
        [
          { action: 'SKIPPED', resourceType: 'USER', resourceName: 'shorty', id: 'shorty-id', reason: 'the password must have at least 8 characters' },
          { action: 'ADDED', resourceType: 'USER', resourceName: 'longer', id: 'longer-id' },
        ],
      );
      assert.equal(await ts.store.users.findByUsername('pi', 'shorty'), undefined);
    });

    test('partialImport and POST /realms: a list of the wrong type is a 400; an entry with a field of the wrong type or a NUL is SKIPPED naming the field, never coerced', async () => {
      const call = async (path: string, body: unknown) => {
        const res = await fetch(`${ts.baseUrl}/auth/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, json: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined };
      };
      assert.equal((await call('/realms', { realm: 'pi-typed' })).status, 201);
      const wrongList = await call('/realms/pi-typed/partialImport', { ifResourceExists: 'SKIP', users: 'alice' });
      assert.equal(wrongList.status, 400);
      assert.match(String(wrongList.json?.errorMessage), /users must be a list, not a string/);
      const realm = await call('/realms', { realm: 'typed-api', clients: 'x', users: [{ username: 'u', id: 'u-id' }] });
      assert.equal(realm.status, 400);
      assert.match(String(realm.json?.errorMessage), /clients must be a list, not a string/);
      assert.equal(await ts.store.realms.get('typed-api'), undefined);
      // (A NUL is refused at the API's door already, "malformed request"; the CLI's import is tested with them.)
      const r = await call('/realms/pi-typed/partialImport', {
        ifResourceExists: 'FAIL',
        users: [
          { username: 'zero-enabled', id: 'zero-enabled-id', enabled: 0, credentials: [{ type: 'password', value: 'zero-password-1' }] },
          { username: 'esc-mail', id: 'esc-mail-id', enabled: true, email: 'a\x1b[2Jb@x.example' },
          { username: 'string-verified', id: 'string-verified-id', enabled: true, emailVerified: 'yes' },
        ],
        clients: [{ clientId: 'weak-secret', publicClient: false, secret: 'x', redirectUris: [RP] }],
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(
        (r.json?.results as Array<Record<string, unknown>>).map((x) => [x.resourceName, x.action, x.reason]),
        [
          ['weak-secret', 'SKIPPED', 'a chosen client secret must have at least 16 characters (give the client a generated secret in Keycloak and export again, or create it here)'],
          ['zero-enabled', 'SKIPPED', 'enabled must be true or false, not a number (0)'],
          ['esc-mail', 'SKIPPED', 'email must not contain control characters'],
          ['string-verified', 'SKIPPED', 'emailVerified must be true or false, not a string ("yes")'],
        ],
      );
      for (const u of ['zero-enabled', 'esc-mail', 'string-verified']) assert.equal(await ts.store.users.findByUsername('pi-typed', u), undefined);
      assert.equal(await ts.store.clients.get('pi-typed', 'weak-secret'), undefined);
    });

    test('partialImport hashes plain-text passwords before its transaction: the server answers other requests meanwhile', async (t) => {
      const n = 200;
      const users = Array.from({ length: n }, (_, i) => ({ username: `pwc${i}`, id: `pwc-id-${i}`, enabled: true, credentials: [{ type: 'password', value: `pwc-password-${i}` }] }));
      const started = performance.now();
      let done = false;
      const importing = ts.kc.realms.partialImport({ realm: 'pi', rep: { ifResourceExists: 'FAIL', users } as never }).finally(() => {
        done = true;
      });
      // While it runs: the readiness check (a database query) and the JWKS, one after the other.
      const waits: number[] = [];
      const urls = [`${ts.baseUrl}/health/ready`, `${ts.baseUrl}/auth/realms/pi/protocol/openid-connect/certs`];
      for (let i = 0; !done; i++) {
        const t = performance.now();
        const res = await fetch(urls[i % 2]!);
        assert.equal(res.status, 200, await res.text());
        await res.arrayBuffer().catch(() => undefined);
        waits.push(performance.now() - t);
        await sleep(10);
      }
      const result = await importing;
      const duration = performance.now() - started;
      assert.equal(result.added, n);
      const worst = Math.max(...waits);
      t.diagnostic(`${waits.length} requests during an import of ${Math.round(duration)} ms, the slowest answered in ${Math.round(worst)} ms`);
      assert.ok(worst < duration / 4, `a request waited ${Math.round(worst)} ms during an import of ${Math.round(duration)} ms`);
      assert.ok(waits.length >= 4, `only ${waits.length} request(s) during an import of ${Math.round(duration)} ms`);
      const r = await signIn(ts, { realm: 'pi', clientId: 'victim-app', redirectUri: RP, secret: VICTIM_SECRET, username: 'pwc7', password: 'pwc-password-7' });
      assert.equal(r.claims?.sub, 'pwc-id-7', JSON.stringify(r));
    });
  });
}
