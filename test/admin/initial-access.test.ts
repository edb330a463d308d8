import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { tokenHash } from '../../src/crypto/random.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

type Presentation = { id?: string; token?: string; timestamp?: number; expiration?: number; count?: number; remainingCount?: number };

// Keycloak's client initial access tokens (ClientInitialAccessResource, /{realm}/clients-initial-access)
// through @keycloak/keycloak-admin-client 26, unchanged: realms.createClientsInitialAccess,
// getClientsInitialAccess and delClientsInitialAccess; the stored rows; who may do what; admin events.
for (const dialect of dialects()) {
  describe(`admin API: client initial access tokens (${dialect})`, () => {
    let ts: AdminTestServer;
    const realm = REALM;
    const db = (): AdminTestServer['store']['db']['kysely'] => ts.store.db.kysely;
    const list = (): Promise<Presentation[]> => ts.kc.realms.getClientsInitialAccess({ realm });
    const create = (body: object): Promise<Presentation> => ts.kc.realms.createClientsInitialAccess({ realm }, body as never);

    /** A raw POST of `payload` (JSON text) as the bootstrap admin, for bodies keycloak-admin-client would not send. */
    async function post(payload: string | undefined): Promise<{ status: number; body: Record<string, unknown> }> {
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients-initial-access`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ts.kc.accessToken!}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(payload !== undefined ? { body: payload } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }

    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('create with the defaults: 201, the token once, never expires, count 1; the row holds only its hash', async () => {
      const before = Math.floor(Date.now() / 1000);
      const rep = await create({});
      const after = Math.ceil(Date.now() / 1000);
      assert.deepEqual(Object.keys(rep).sort(), ['count', 'expiration', 'id', 'remainingCount', 'timestamp', 'token']);
      assert.equal(rep.expiration, 0);
      assert.equal(rep.count, 1);
      assert.equal(rep.remainingCount, 1);
      assert.ok(rep.timestamp! >= before && rep.timestamp! <= after, String(rep.timestamp));
      assert.match(rep.token!, /^[A-Za-z0-9_-]{40,}$/);

      const rows = await db().selectFrom('client_initial_access').selectAll().where('id', '=', rep.id!).execute();
      assert.equal(rows.length, 1);
      const row = rows[0]! as Record<string, unknown>;
      assert.deepEqual(Object.keys(row).sort(), ['count', 'created_at', 'expires_at', 'id', 'realm_id', 'remaining', 'token_hash']);
      assert.equal(row.token_hash, tokenHash(rep.token!));
      assert.ok(!Object.values(row).some((v) => String(v).includes(rep.token!)), 'no column holds the token');
      assert.equal(Number(row.expires_at), 0);

      // Listed without its token.
      const listed = (await list()).find((x) => x.id === rep.id);
      const { token: _token, ...withoutToken } = rep;
      assert.deepEqual(listed, withoutToken);
    });

    test('create with values: Location, expiration and count as given; listed newest first, never with a token', async () => {
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients-initial-access`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ts.kc.accessToken!}`, 'content-type': 'application/json' },
        body: JSON.stringify({ expiration: 3600, count: 5 }),
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const raw = (await res.json()) as Presentation;
      assert.equal(res.headers.get('location'), `${ts.baseUrl}/auth/admin/realms/${realm}/clients-initial-access/${raw.id}`);
      assert.deepEqual([raw.expiration, raw.count, raw.remainingCount], [3600, 5, 5]);
      const row = await db().selectFrom('client_initial_access').selectAll().where('id', '=', raw.id!).executeTakeFirstOrThrow();
      assert.equal(Number(row.expires_at), Number(row.created_at) + 3600);

      // keycloak-admin-client returns the body, token included.
      const rep = await create({ expiration: 60, count: 2 });
      assert.deepEqual([rep.expiration, rep.count, rep.remainingCount, typeof rep.token], [60, 2, 2, 'string']);
      // null is Keycloak's "left out".
      const nulls = await create({ expiration: null, count: null, webOrigins: ['https://app.example'] });
      assert.deepEqual([nulls.expiration, nulls.count], [0, 1]);

      const all = await list();
      assert.ok(all.length >= 4);
      for (const x of all) assert.equal('token' in x, false);
      assert.deepEqual(
        all.map((x) => x.timestamp),
        all.map((x) => x.timestamp).sort((a, b) => b! - a!),
      );
    });

    test('bad bodies are a 400 in the API error form, and make nothing', async () => {
      const count = async (): Promise<number> => Number((await db().selectFrom('client_initial_access').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const start = await count();
      for (const body of [
        { expiration: -1 },
        { expiration: 1.5 },
        { expiration: '60' },
        { expiration: true },
        { expiration: 1e20 },
        { expiration: 11 * 365 * 24 * 3600 },
        { expiration: [60] },
        { count: 0 },
        { count: -3 },
        { count: 2.5 },
        { count: '2' },
        { count: 1_000_001 },
        { count: 2 ** 53 },
        { count: {} },
      ]) {
        const e = await errorOf(create(body));
        assert.equal(e.status, 400, JSON.stringify(body));
        assert.equal(e.body.error, 'invalid_request', JSON.stringify(body));
        assert.match(String(e.body.errorMessage), /expiration|count/, JSON.stringify(body));
      }
      // A body is required, as for the other creates ({} for the defaults).
      for (const payload of [undefined, '[1]', '"x"', '42', 'null', '{"count":', '{"count": 1e400}']) {
        const r = await post(payload);
        assert.equal(r.status, 400, `${String(payload)}: ${JSON.stringify(r.body)}`);
        assert.equal(typeof r.body.errorMessage, 'string', String(payload));
      }
      assert.equal(await count(), start);
    });

    test('delete: 204, then gone from the list and the table; an unknown id is a 404', async () => {
      const rep = await create({ count: 3 });
      await ts.kc.realms.delClientsInitialAccess({ realm, id: rep.id! });
      assert.equal((await list()).some((x) => x.id === rep.id), false);
      assert.equal(await db().selectFrom('client_initial_access').select('id').where('id', '=', rep.id!).executeTakeFirst(), undefined);
      for (const id of [rep.id!, 'no-such-id', 'x'.repeat(200)]) {
        const e = await errorOf(ts.kc.realms.delClientsInitialAccess({ realm, id }));
        assert.equal(e.status, 404, id);
        assert.equal(e.body.error, 'HTTP 404 Not Found');
        assert.match(String(e.body.errorMessage), /initial access token/);
      }
      assert.equal(await statusOf(ts.kc.realms.getClientsInitialAccess({ realm: 'no-such-realm' })), 404);
    });

    test('an expired or used-up token is not listed', async () => {
      const now = Math.floor(Date.now() / 1000);
      const old = { realmId: realm, createdAt: now - 7200, count: 1, remaining: 1 };
      await ts.store.clientRegistration.createInitialAccess({ ...old, id: 'expired-one', expiresAt: now - 10, tokenHash: tokenHash('expired-one-token') });
      await ts.store.clientRegistration.createInitialAccess({ ...old, id: 'used-up-one', expiresAt: 0, remaining: 0, tokenHash: tokenHash('used-up-one-token') });
      // Two seconds: listed at once (its timestamp is whole seconds, so it may expire just over one second later).
      const short = await create({ expiration: 2 });
      assert.ok((await list()).some((x) => x.id === short.id));
      // Then gone once the clock (whole seconds) is past timestamp + expiration.
      await new Promise((r) => setTimeout(r, (short.timestamp! + short.expiration! + 1) * 1000 - Date.now() + 50));
      const ids = (await list()).map((x) => x.id);
      for (const id of ['expired-one', 'used-up-one', short.id]) assert.equal(ids.includes(id), false, id);
    });

    test('rights: manage-clients creates, lists and deletes; view-clients only lists; query-clients nothing; another realm nothing', async () => {
      const manager = await serviceAccountAdmin(ts, realm, 'ia-manager', ['manage-clients']);
      const viewer = await serviceAccountAdmin(ts, realm, 'ia-viewer', ['view-clients']);
      const querier = await serviceAccountAdmin(ts, realm, 'ia-querier', ['query-clients']);
      await ts.kc.realms.create({ realm: 'elsewhere', enabled: true });
      const outsider = await serviceAccountAdmin(ts, 'elsewhere', 'ia-outsider', ['realm-admin']);

      const mine = await manager.kc.realms.createClientsInitialAccess({ realm }, { count: 2 });
      assert.equal(typeof mine.token, 'string');
      assert.ok((await manager.kc.realms.getClientsInitialAccess({ realm })).some((x) => x.id === mine.id));
      // Keycloak's list needs clients().requireView(): view-clients (or manage-clients) is enough.
      assert.ok((await viewer.kc.realms.getClientsInitialAccess({ realm })).some((x) => x.id === mine.id));

      for (const who of [viewer, querier, outsider]) {
        assert.equal(await statusOf(who.kc.realms.createClientsInitialAccess({ realm }, {})), 403);
        assert.equal(await statusOf(who.kc.realms.delClientsInitialAccess({ realm, id: mine.id! })), 403);
      }
      for (const who of [querier, outsider]) assert.equal(await statusOf(who.kc.realms.getClientsInitialAccess({ realm })), 403);
      assert.ok((await list()).some((x) => x.id === mine.id), 'still there');

      // The outsider's own realm is its own: a token made there is not this realm's.
      const theirs = await outsider.kc.realms.createClientsInitialAccess({ realm: 'elsewhere' }, {});
      assert.equal((await list()).some((x) => x.id === theirs.id), false);
      assert.equal(await statusOf(ts.kc.realms.delClientsInitialAccess({ realm, id: theirs.id! })), 404);
      assert.equal(await statusOf(manager.kc.realms.delClientsInitialAccess({ realm, id: theirs.id! })), 404);
      await manager.kc.realms.delClientsInitialAccess({ realm, id: mine.id! });
      assert.equal((await list()).some((x) => x.id === mine.id), false);
      // The registration policy providers: none to configure (fixed rules), for whoever may view the realm.
      assert.deepEqual(await ts.kc.realms.getClientRegistrationPolicyProviders({ realm }), []);
      const realmViewer = await serviceAccountAdmin(ts, realm, 'ia-realm-viewer', ['view-realm']);
      assert.deepEqual(await realmViewer.kc.realms.getClientRegistrationPolicyProviders({ realm }), []);
      for (const who of [querier, outsider]) assert.equal(await statusOf(who.kc.realms.getClientRegistrationPolicyProviders({ realm })), 403);
    });

    test('admin events: CREATE and DELETE of CLIENT_INITIAL_ACCESS_MODEL, by whom, without the token', async () => {
      const rep = await create({ expiration: 600, count: 4 });
      await ts.kc.realms.delClientsInitialAccess({ realm, id: rep.id! });
      const events = (await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['CLIENT_INITIAL_ACCESS_MODEL'], resourcePath: `clients-initial-access/${rep.id}` } as never)) as Array<{
        operationType: string;
        resourcePath: string;
        representation?: string;
        authDetails: { realmId?: string; clientId?: string };
      }>;
      assert.deepEqual(events.map((e) => e.operationType).sort(), ['CREATE', 'DELETE']);
      for (const e of events) {
        assert.equal(e.resourcePath, `clients-initial-access/${rep.id}`);
        assert.deepEqual([e.authDetails.realmId, e.authDetails.clientId], ['master', 'admin-cli']);
        assert.ok(!(e.representation ?? '').includes(rep.token!));
      }
      const created = events.find((e) => e.operationType === 'CREATE')!;
      assert.deepEqual(JSON.parse(created.representation!), { id: rep.id, timestamp: rep.timestamp, expiration: 600, count: 4, remainingCount: 4 });
    });

    test('clients.generateRegistrationAccessToken: a token the configuration endpoint takes (RFC 7592), the one before refused; manage-clients only; an admin event', async () => {
      await ts.kc.clients.create({ realm, clientId: 'rat-app', redirectUris: ['https://rat.example/cb'] });
      // keycloak-admin-client types the answer as { registrationAccessToken }; Keycloak's is the whole client.
      const rep = (await ts.kc.clients.generateRegistrationAccessToken({ realm, id: 'rat-app' })) as { clientId?: string; registrationAccessToken: string };
      assert.equal(rep.clientId, 'rat-app');
      const first = rep.registrationAccessToken!;
      assert.match(first, /^[A-Za-z0-9_-]{40,}$/);
      const row = await db().selectFrom('clients').select('registration_token_hash').where('realm_id', '=', realm).where('client_id', '=', 'rat-app').executeTakeFirstOrThrow();
      assert.equal(row.registration_token_hash, tokenHash(first));

      const uri = `${ts.baseUrl}/auth/realms/${realm}/clients-registrations/openid-connect/rat-app`;
      const read = await fetch(uri, { headers: { authorization: `Bearer ${first}` } });
      assert.equal(read.status, 200);
      const body = (await read.json()) as { client_id: string; redirect_uris: string[]; registration_access_token: string };
      assert.deepEqual([body.client_id, body.redirect_uris], ['rat-app', ['https://rat.example/cb']]);
      // A new one from the admin: the token the client holds now is refused, the new one taken.
      const again = (await ts.kc.clients.generateRegistrationAccessToken({ realm, id: 'rat-app' })).registrationAccessToken!;
      assert.equal((await fetch(uri, { headers: { authorization: `Bearer ${body.registration_access_token}` } })).status, 401);
      assert.equal((await fetch(uri, { headers: { authorization: `Bearer ${again}` } })).status, 200);

      const viewer = await serviceAccountAdmin(ts, realm, 'rat-viewer', ['view-clients']);
      assert.equal(await statusOf(viewer.kc.clients.generateRegistrationAccessToken({ realm, id: 'rat-app' })), 403);
      assert.equal(await statusOf(ts.kc.clients.generateRegistrationAccessToken({ realm, id: 'no-such-client' })), 404);
      const events = (await ts.kc.realms.findAdminEvents({ realm, resourcePath: 'clients/rat-app/registration-access-token' } as never)) as Array<{ operationType: string; representation?: string }>;
      assert.equal(events.length, 2);
      assert.ok(events.every((e) => e.operationType === 'ACTION' && !(e.representation ?? '').includes(first)));
    });

    test("deleting the realm removes its initial access tokens", async () => {
      await ts.kc.realms.create({ realm: 'doomed', enabled: true });
      await ts.kc.realms.createClientsInitialAccess({ realm: 'doomed' }, { count: 2 });
      await ts.kc.realms.createClientsInitialAccess({ realm: 'doomed' }, {});
      const rows = (): Promise<unknown[]> => db().selectFrom('client_initial_access').select('id').where('realm_id', '=', 'doomed').execute();
      assert.equal((await rows()).length, 2);
      await ts.kc.realms.del({ realm: 'doomed' });
      assert.equal((await rows()).length, 0);
    });
  });
}
