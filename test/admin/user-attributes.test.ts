import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM, PASSWORD } from '../helpers/server.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// Keycloak's user attributes through @keycloak/keycloak-admin-client 26, unchanged: created, read,
// replaced, cleared, searched with q=name:value, and refused whole when invalid.
for (const dialect of dialects()) {
  describe(`admin API: user attributes (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    const create = async (username: string, attributes?: Record<string, string[]>, extra: Record<string, unknown> = {}): Promise<string> =>
      (await ts.kc.users.create({ realm: REALM, username, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }], ...(attributes ? { attributes } : {}), ...extra })).id;
    const read = async (id: string): Promise<Record<string, unknown>> => (await ts.kc.users.findOne({ realm: REALM, id })) as Record<string, unknown>;

    test('users.create keeps the attributes; GET /users/{id} and the full listing show them, the brief listing does not', async () => {
      const id = await create('attr-ann', { department: ['sales'], skills: ['java', 'go'] });
      assert.deepEqual((await read(id)).attributes, { department: ['sales'], skills: ['java', 'go'] });
      const [full] = await ts.kc.users.find({ realm: REALM, username: 'attr-ann', exact: true });
      assert.deepEqual(full!.attributes, { department: ['sales'], skills: ['java', 'go'] });
      const [brief] = await ts.kc.users.find({ realm: REALM, username: 'attr-ann', exact: true, briefRepresentation: true });
      assert.equal(brief!.attributes, undefined);
      // Keycloak 26 leaves `attributes` out for a user without any.
      assert.equal('attributes' in (await read(await create('attr-none'))), false);
    });

    test('users.update: attributes present replace the whole set, {} clears it, absent leaves it', async () => {
      const id = await create('attr-bo', { department: ['sales'], floor: ['3'] });
      await ts.kc.users.update({ realm: REALM, id }, { attributes: { department: ['support'] } });
      assert.deepEqual((await read(id)).attributes, { department: ['support'] });
      await ts.kc.users.update({ realm: REALM, id }, { firstName: 'Bo' });
      const after = await read(id);
      assert.equal(after.firstName, 'Bo');
      assert.deepEqual(after.attributes, { department: ['support'] });
      await ts.kc.users.update({ realm: REALM, id }, { attributes: {} });
      assert.equal((await read(id)).attributes, undefined);
      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, max: 500 });
      assert.ok(events.some((e) => e.operationType === 'UPDATE' && e.resourcePath === `users/${id}` && /"department":\["support"\]/.test(e.representation ?? '')), 'the update is an admin event with the new attributes');
    });

    test("root properties in attributes are Keycloak's: firstName and lastName fill absent fields, none is kept as an attribute", async () => {
      const id = await create('attr-cy', { firstName: ['Cy'], lastName: ['Young'], username: ['mallory'], email: ['m@example.com'], team: ['blue'] });
      const u = await read(id);
      assert.equal(u.username, 'attr-cy');
      assert.equal(u.firstName, 'Cy');
      assert.equal(u.lastName, 'Young');
      assert.equal(u.email, undefined);
      assert.deepEqual(u.attributes, { team: ['blue'] });
    });

    test('invalid attributes are refused with 400 in Keycloak\'s error shape, and nothing changes', async () => {
      const id = await create('attr-di', { team: ['red'] });
      const bad: Array<[unknown, RegExp]> = [
        [{ team: 'red' }, /must be a list of strings/],
        [{ team: [1] }, /must be a list of strings/],
        [{ '': ['x'] }, /attribute name/],
        [{ 'a\nb': ['x'] }, /attribute name/],
        [{ team: ['x'.repeat(2049)] }, /at most 2048 characters/],
        [{ team: ['bell\x07'] }, /control characters/],
        [{ team: Array.from({ length: 101 }, (_, i) => String(i)) }, /at most 100 values/],
        [Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`n${i}`, ['v']])), /at most 100 attributes/],
        [Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`n${i}`, ['v'.repeat(2000)]])), /64 KiB/],
        [['team'], /must be an object/],
      ];
      const url = `${ts.baseUrl}/auth/admin/realms/${REALM}/users`;
      const headers = { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' };
      for (const [attributes, message] of bad) {
        const put = await fetch(`${url}/${id}`, { method: 'PUT', headers, body: JSON.stringify({ attributes, firstName: 'Changed' }) });
        assert.equal(put.status, 400, JSON.stringify(attributes).slice(0, 80));
        const body = (await put.json()) as { error: string; errorMessage: string };
        assert.match(body.errorMessage, message);
        assert.equal(typeof body.error, 'string');
        const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ username: 'attr-never', enabled: true, attributes }) });
        assert.equal(post.status, 400);
      }
      const u = await read(id);
      assert.deepEqual(u.attributes, { team: ['red'] });
      assert.equal(u.firstName, undefined);
      assert.deepEqual(await ts.kc.users.find({ realm: REALM, username: 'attr-never', exact: true }), []);
      // Tab and newline are text (an address over several lines).
      await ts.kc.users.update({ realm: REALM, id }, { attributes: { formatted: ['1 Main St\nSpringfield'], note: ['a\tb'] } });
      assert.deepEqual((await read(id)).attributes, { formatted: ['1 Main St\nSpringfield'], note: ['a\tb'] });
    });

    test('q=name:value finds the users having that value (any of their values, ignoring case); every pair must match; count agrees; paging stays right', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await create(`attr-q${i}`, { dept: [i % 2 === 0 ? 'Ops' : 'dev'], level: [String(i)], 'two words': ['a b'] }));
      await create('attr-qx', { other: ['ops'], note: ['"dept":["ops"]'] });
      const names = async (q: Record<string, unknown>): Promise<string[]> => (await ts.kc.users.find({ realm: REALM, ...q })).map((u) => u.username!);
      assert.deepEqual(await names({ q: 'dept:ops' }), ['attr-q0', 'attr-q2', 'attr-q4']);
      assert.equal(await ts.kc.users.count({ realm: REALM, q: 'dept:ops' }), 3);
      assert.deepEqual(await names({ q: 'dept:ops level:2' }), ['attr-q2']);
      assert.equal(await ts.kc.users.count({ realm: REALM, q: 'dept:ops level:3' }), 0);
      assert.deepEqual(await names({ q: 'dept:op' }), [], 'exact by default');
      assert.deepEqual(await names({ q: 'dept:op', exact: false }), ['attr-q0', 'attr-q2', 'attr-q4']);
      assert.deepEqual(await names({ q: '"two words":"a b" level:1' }), ['attr-q1']);
      assert.deepEqual(await names({ q: 'dept:ops', first: 1, max: 1 }), ['attr-q2']);
      assert.deepEqual(await names({ q: 'dept:ops', first: 2, max: 5 }), ['attr-q4']);
      // A root property in q filters that field, as in Keycloak.
      assert.deepEqual(await names({ q: 'username:attr-q3', exact: true }), ['attr-q3']);
      assert.deepEqual(await names({ q: 'nope:ops' }), []);
      assert.equal(await statusOf(ts.kc.users.find({ realm: REALM, q: 'dept:"ops' })), 400);
    });
  });
}
