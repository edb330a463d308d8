import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { runAuthorization } from '../helpers/flow.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * Keycloak's filters of GET /{realm}/events and /{realm}/admin-events (RealmAdminResource.getEvents):
 * type (repeatable), client, user, ipAddress, dateFrom/dateTo (yyyy-MM-dd in UTC, both inclusive, or
 * epoch milliseconds), first, max, direction; operationTypes, resourceTypes, resourcePath (`*` a
 * wildcard), authRealm, authClient, authUser, authIpAddress for admin events.
 */
const REALM = 'audit';
const at = (iso: string): number => Date.parse(iso);
/** Our representations carry the event's id; keycloak-admin-client's types do not list it. */
const idOf = (e: object): string => (e as { id: string }).id;

// Login events: time in seconds, ids in time order.
const EVENTS = [
  { id: 'ev-1', time: at('2024-03-01T00:00:00Z') / 1000, type: 'LOGIN', ip: '10.0.0.1' },
  { id: 'ev-2', time: at('2024-03-01T23:59:59Z') / 1000, type: 'LOGIN_ERROR', ip: '10.0.0.2' },
  { id: 'ev-3', time: at('2024-03-02T12:00:00Z') / 1000, type: 'CODE_TO_TOKEN', ip: '10.0.0.1' },
  { id: 'ev-4', time: at('2024-03-02T23:59:59Z') / 1000, type: 'LOGIN', ip: '10.0.0.2' },
  { id: 'ev-5', time: at('2024-03-03T00:00:00Z') / 1000, type: 'LOGIN_ERROR', ip: '10.0.0.1' },
  { id: 'ev-6', time: at('2024-03-03T06:00:00Z') / 1000, type: 'REFRESH_TOKEN', ip: '10.0.0.1' },
];

// Admin events: time in milliseconds.
const ADMIN_EVENTS: Array<[id: string, iso: string, operation: string, resourceType: string, path: string, authRealm: string, authClient: string, authUser: string, ip: string]> = [
  ['ad-1', '2024-03-01T10:00:00.000Z', 'CREATE', 'CLIENT', 'clients/billing', 'master', 'admin-cli', 'u-admin', '10.0.0.1'],
  ['ad-2', '2024-03-02T10:00:00.250Z', 'UPDATE', 'CLIENT', 'clients/billing', 'master', 'admin-cli', 'u-admin', '10.0.0.2'],
  ['ad-3', '2024-03-02T11:00:00.500Z', 'UPDATE', 'USER', 'users/u1', 'audit', 'console', 'u-ops', '10.0.0.1'],
  ['ad-4', '2024-03-03T10:00:00.000Z', 'DELETE', 'CLIENT', 'clients/bill_ng', 'master', 'admin-cli', 'u-admin', '10.0.0.1'],
  ['ad-5', '2024-03-04T10:00:00.000Z', 'ACTION', 'REALM', '', 'master', 'admin-cli', 'u-admin', '10.0.0.2'],
];

for (const dialect of dialects()) {
  describe(`admin API: event filters (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.kc.realms.create({ realm: REALM });
      const db = ts.store.db.kysely;
      await db.deleteFrom('admin_events').where('realm_id', '=', REALM).execute();
      await db
        .insertInto('events')
        .values(EVENTS.map((e) => ({ id: e.id, realm_id: REALM, time: e.time, type: e.type, outcome: e.type.endsWith('_ERROR') ? 'failure' : 'success', client_id: 'web-app', user_id: 'u1', username: 'alice', ip: e.ip, reason: null })))
        .execute();
      await db
        .insertInto('admin_events')
        .values(
          ADMIN_EVENTS.map(([id, iso, op, rt, path, authRealm, authClient, authUser, ip]) => ({
            id,
            realm_id: REALM,
            time_ms: at(iso),
            operation_type: op,
            resource_type: rt,
            resource_path: path,
            auth_realm_id: authRealm,
            auth_client_id: authClient,
            auth_user_id: authUser,
            auth_username: authUser,
            ip,
            via: 'api',
            representation: null,
          })),
        )
        .execute();
    });
    after(() => ts.close());

    const events = async (query: Omit<Parameters<AdminTestServer['kc']['realms']['findEvents']>[0] & object, 'realm'>): Promise<string[]> =>
      (await ts.kc.realms.findEvents({ realm: REALM, ...query })).map(idOf);
    const adminEvents = async (query: Record<string, string>): Promise<string[]> =>
      (await ts.kc.realms.findAdminEvents({ realm: REALM, ...query } as never)).map(idOf);
    /** Plain HTTP for what keycloak-admin-client cannot send (direction, repeated admin filters, bad values). */
    const get = async (path: string, query: string): Promise<{ status: number; body: unknown }> => {
      const r = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/${path}?${query}`, { headers: { authorization: `Bearer ${ts.kc.accessToken}` } });
      return { status: r.status, body: await r.json() };
    };
    const ids = async (path: string, query: string): Promise<string[]> => {
      const r = await get(path, query);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body as Array<{ id: string }>).map((e) => e.id);
    };

    test('type: one or several names (repeated), newest first; an unknown name selects nothing; a real login is found by its type', async () => {
      assert.deepEqual(await events({}), ['ev-6', 'ev-5', 'ev-4', 'ev-3', 'ev-2', 'ev-1']);
      assert.deepEqual(await events({ type: 'LOGIN' }), ['ev-4', 'ev-1']);
      assert.deepEqual(await events({ type: ['LOGIN', 'LOGIN_ERROR'] }), ['ev-5', 'ev-4', 'ev-2', 'ev-1']);
      assert.deepEqual(await ids('events', 'type=LOGIN_ERROR&type=REFRESH_TOKEN'), ['ev-6', 'ev-5', 'ev-2']);
      assert.deepEqual(await ids('events', 'type=NO_SUCH_TYPE'), []);
      await runAuthorization(ts);
      const logins = await ts.kc.realms.findEvents({ realm: 'test', type: 'LOGIN' });
      assert.ok(logins.length >= 1 && logins.every((e) => e.type === 'LOGIN' && e.userId === ts.user.id));
      assert.deepEqual(await ts.kc.realms.findEvents({ realm: 'test', type: 'LOGIN_ERROR' }), []);
    });

    test('dateFrom and dateTo: UTC days, both inclusive, or epoch milliseconds', async () => {
      assert.deepEqual(await events({ dateFrom: '2024-03-02', dateTo: '2024-03-02' }), ['ev-4', 'ev-3']);
      assert.deepEqual(await events({ dateFrom: '2024-03-01', dateTo: '2024-03-02' }), ['ev-4', 'ev-3', 'ev-2', 'ev-1']);
      assert.deepEqual(await events({ dateTo: '2024-02-29' }), []);
      const ms = (iso: string): string => String(at(iso));
      assert.deepEqual(await events({ dateFrom: ms('2024-03-02T12:00:00Z'), dateTo: ms('2024-03-03T00:00:00Z') }), ['ev-5', 'ev-4', 'ev-3']);
      // Events are shown at whole seconds: one shown at 12:00:00.000 is not at or after 12:00:00.001.
      assert.deepEqual(await events({ dateFrom: ms('2024-03-02T12:00:00.001Z'), dateTo: ms('2024-03-02T23:59:59.999Z') }), ['ev-4']);
    });

    test('ipAddress and direction, with first and max paging over the filtered list', async () => {
      assert.deepEqual(await events({ ipAddress: '10.0.0.1' }), ['ev-6', 'ev-5', 'ev-3', 'ev-1']);
      assert.deepEqual(await events({ ipAddress: '10.0.0.1', type: 'LOGIN_ERROR' }), ['ev-5']);
      assert.deepEqual(await ids('events', 'direction=asc'), ['ev-1', 'ev-2', 'ev-3', 'ev-4', 'ev-5', 'ev-6']);
      assert.deepEqual(await ids('events', 'direction=desc&ipAddress=10.0.0.2'), ['ev-4', 'ev-2']);
      assert.deepEqual(await events({ type: ['LOGIN', 'LOGIN_ERROR'], first: 1, max: 2 }), ['ev-4', 'ev-2']);
      assert.deepEqual(await ids('events', 'type=LOGIN&type=LOGIN_ERROR&direction=asc&first=1&max=2'), ['ev-2', 'ev-4']);
      assert.deepEqual(await events({ ipAddress: '10.0.0.1', first: 3, max: 10 }), ['ev-1']);
      assert.deepEqual(await events({ max: 0 }), []);
    });

    test("admin events: Keycloak's filters, each alone and together, with direction and paging", async () => {
      assert.deepEqual(await adminEvents({}), ['ad-5', 'ad-4', 'ad-3', 'ad-2', 'ad-1']);
      assert.deepEqual(await adminEvents({ operationTypes: 'UPDATE' }), ['ad-3', 'ad-2']);
      assert.deepEqual(await ids('admin-events', 'operationTypes=CREATE&operationTypes=DELETE'), ['ad-4', 'ad-1']);
      assert.deepEqual(await adminEvents({ resourceTypes: 'USER' }), ['ad-3']);
      assert.deepEqual(await ids('admin-events', 'resourceTypes=USER&resourceTypes=REALM'), ['ad-5', 'ad-3']);
      assert.deepEqual(await adminEvents({ resourcePath: 'clients/billing' }), ['ad-2', 'ad-1']);
      assert.deepEqual(await adminEvents({ resourcePath: 'clients/*' }), ['ad-4', 'ad-2', 'ad-1']);
      // LIKE's own wildcards match only themselves.
      assert.deepEqual(await adminEvents({ resourcePath: 'clients/bill_*' }), ['ad-4']);
      assert.deepEqual(await adminEvents({ authRealm: 'audit' }), ['ad-3']);
      assert.deepEqual(await adminEvents({ authClient: 'console' }), ['ad-3']);
      assert.deepEqual(await adminEvents({ authUser: 'u-admin', authIpAddress: '10.0.0.2' }), ['ad-5', 'ad-2']);
      assert.deepEqual(await adminEvents({ dateFrom: '2024-03-02', dateTo: '2024-03-03' }), ['ad-4', 'ad-3', 'ad-2']);
      assert.deepEqual(await adminEvents({ dateFrom: String(at('2024-03-02T10:00:00.250Z')), dateTo: String(at('2024-03-02T11:00:00.500Z')) }), ['ad-3', 'ad-2']);
      assert.deepEqual(await adminEvents({ dateFrom: String(at('2024-03-02T10:00:00.251Z')) }), ['ad-5', 'ad-4', 'ad-3']);
      assert.deepEqual(await ids('admin-events', 'direction=asc&first=1&max=2'), ['ad-2', 'ad-3']);
      assert.deepEqual(await ids('admin-events', 'operationTypes=UPDATE&operationTypes=ACTION&direction=asc&first=1'), ['ad-3', 'ad-5']);
    });

    test('the OpenAPI document lists the query parameters of both routes', async () => {
      const doc = (await (await fetch(`${ts.baseUrl}/auth/admin/openapi.json`)).json()) as { paths: Record<string, { get: { parameters: Array<{ in: string; name: string; schema: { type: string } }> } }> };
      const query = (p: string): Record<string, string> =>
        Object.fromEntries(doc.paths[`/auth/admin/realms/{realm}/${p}`]!.get.parameters.filter((x) => x.in === 'query').map((x) => [x.name, x.schema.type]));
      assert.deepEqual(query('events'), { type: 'array', client: 'string', user: 'string', ipAddress: 'string', dateFrom: 'string', dateTo: 'string', first: 'integer', max: 'integer', direction: 'string' });
      assert.deepEqual(Object.keys(query('admin-events')).sort(), ['authClient', 'authIpAddress', 'authRealm', 'authUser', 'dateFrom', 'dateTo', 'direction', 'first', 'max', 'operationTypes', 'resourcePath', 'resourceTypes']);
    });

    test("invalid values answer 400 in Keycloak's error shape, never a 500", async () => {
      const bad: Array<[string, string, RegExp]> = [
        ['events', 'dateFrom=notadate', /^Invalid value for 'dateFrom', expected format is yyyy-MM-dd or an Epoch timestamp$/],
        ['events', 'dateTo=2024-02-30', /^Invalid value for 'dateTo'/],
        ['events', 'dateFrom=2024-03-01T10:00:00Z', /^Invalid value for 'dateFrom'/],
        ['events', 'direction=sideways', /direction/],
        ['events', 'max=-1', /max/],
        ['events', 'first=x', /first/],
        ['events', 'first=99999999999999999999', /first/],
        ['events', 'client=a&client=b', /client/],
        ['admin-events', 'dateTo=yesterday', /^Invalid value for 'dateTo'/],
        ['admin-events', 'direction=sideways', /direction/],
        ['admin-events', 'max=-1', /max/],
        ['admin-events', 'operationTypes=UPDATE&operationTypes=BOGUS', /operationTypes/],
      ];
      for (const [path, query, message] of bad) {
        const r = await get(path, query);
        assert.equal(r.status, 400, `${path}?${query}: ${JSON.stringify(r.body)}`);
        const body = r.body as { error: string; errorMessage: string };
        assert.deepEqual(Object.keys(body).sort(), ['error', 'errorMessage'], `${path}?${query}`);
        assert.equal(body.error, 'invalid_request');
        assert.match(body.errorMessage, message, `${path}?${query}`);
      }
      // keycloak-admin-client sees the 400 too.
      assert.equal(await statusOf(ts.kc.realms.findEvents({ realm: REALM, dateFrom: 'notadate' })), 400);
      assert.equal(await statusOf(ts.kc.realms.findEvents({ realm: REALM, max: -1 })), 400);
    });
  });
}
