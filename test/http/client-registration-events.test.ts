import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { dialects } from '../helpers/db.js';
import { realmPath, REALM } from '../helpers/server.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { registrationCallers } from '../helpers/client-registration.js';
import { createInitialAccess } from '../../src/admin/operations/initial-access.js';
import type { StoredEvent } from '../../src/storage/repos/events.js';

// Keycloak's login events of dynamic client registration (RFC 7591/7592): CLIENT_REGISTER, CLIENT_INFO,
// CLIENT_UPDATE, CLIENT_DELETE and their _ERROR forms, over the real HTTP handling and a real database.
const REGISTER = realmPath('/clients-registrations/openid-connect');
const REDIRECT = 'https://rp.example.org/cb';

type Json = Record<string, unknown>;

for (const dialect of dialects()) {
  describe(`client registration events (${dialect})`, () => {
    let ts: AdminTestServer;
    let adminToken: string;
    let carolId: string;
    let userToken: string;
    /** Every token the tests sent: none may appear in a stored event. */
    const sentTokens: string[] = [];
    before(async () => {
      ts = await startAdminServer({ dialect });
      ({ adminToken, adminId: carolId, userToken } = await registrationCallers(ts));
      sentTokens.push(adminToken, userToken);
    });
    after(async () => {
      // No event, of any test, carries a token that was sent or answered.
      const all = await ts.store.events.list(REALM, { limit: 10_000 });
      for (const e of all) for (const t of sentTokens) assert.ok(!JSON.stringify(e).includes(t), `${e.type} carries a token`);
      await ts.close();
    });

    const initialToken = async (): Promise<{ token: string; id: string }> => {
      const { access, token } = await createInitialAccess(ts.store, { realmId: REALM, count: 50 });
      sentTokens.push(token);
      return { token, id: access.id };
    };
    const post = (body: unknown, token: string | null, remoteAddress = '127.0.0.1'): Promise<LightMyRequestResponse> =>
      ts.app.inject({ method: 'POST', url: REGISTER, remoteAddress, headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) }, payload: JSON.stringify(body) });
    const manage = (method: 'GET' | 'PUT' | 'DELETE', uri: string, token: string, body?: unknown, remoteAddress = '127.0.0.1'): Promise<LightMyRequestResponse> =>
      ts.app.inject({
        method,
        url: new URL(uri).pathname,
        remoteAddress,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    async function registered(token: string, remoteAddress?: string): Promise<Json> {
      const res = await post({ redirect_uris: [REDIRECT] }, token, remoteAddress);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json() as Json;
      sentTokens.push(body.registration_access_token as string, body.client_secret as string);
      return body;
    }
    const events = async (type: string, f: { clientId?: string; ip?: string } = {}): Promise<StoredEvent[]> => ts.store.events.list(REALM, { types: [type], limit: 10_000, ...f });
    /** A fresh sampling minute for the realm's anonymous failures. */
    const nextMinute = (): void => ts.clock.advance(120);

    test('a registration with an initial access token: CLIENT_REGISTER with the new client, the address and the token id (never the token)', async () => {
      const { token, id } = await initialToken();
      const reg = await registered(token, '10.20.0.1');
      const [e, ...rest] = await events('CLIENT_REGISTER', { clientId: reg.client_id as string });
      assert.equal(rest.length, 0);
      assert.ok(e);
      assert.equal(e.outcome, 'success');
      assert.equal(e.ip, '10.20.0.1');
      assert.equal(e.userId, null);
      assert.equal(e.reason, `registered with initial access token ${id}`);
      // The admin API lists it under Keycloak's type name.
      const listed = await ts.kc.realms.findEvents({ realm: REALM, type: ['CLIENT_REGISTER' as never], client: reg.client_id as string });
      assert.equal(listed.length, 1);
      assert.equal(listed[0]!.type, 'CLIENT_REGISTER');
      assert.equal(listed[0]!.ipAddress, '10.20.0.1');
    });

    test("a registration with an administrator's token names the administrator", async () => {
      const reg = await registered(adminToken);
      const [e] = await events('CLIENT_REGISTER', { clientId: reg.client_id as string });
      assert.ok(e);
      assert.equal(e.userId, carolId);
      assert.equal(e.username, 'carol');
    });

    test('read, update and delete leave CLIENT_INFO (only counted by default), CLIENT_UPDATE and CLIENT_DELETE', async () => {
      const reg = await registered((await initialToken()).token);
      const clientId = reg.client_id as string;
      const uri = reg.registration_client_uri as string;
      let rat = reg.registration_access_token as string;

      const counted = ts.services.audit.counter.get(REALM, 'CLIENT_INFO', 'success');
      const read = await manage('GET', uri, rat, undefined, '10.20.1.1');
      assert.equal(read.statusCode, 200, read.body);
      rat = read.json().registration_access_token;
      sentTokens.push(rat);
      assert.equal((await events('CLIENT_INFO', { clientId })).length, 0, 'a read is not stored by default');
      assert.equal(ts.services.audit.counter.get(REALM, 'CLIENT_INFO', 'success'), counted + 1, 'but it is counted');

      // The realm asks for CLIENT_INFO (Keycloak's events config): the next read is stored.
      const config = await ts.kc.realms.getConfigEvents({ realm: REALM });
      assert.ok(!config.enabledEventTypes!.includes('CLIENT_INFO'));
      assert.ok(config.enabledEventTypes!.includes('CLIENT_REGISTER') && config.enabledEventTypes!.includes('CLIENT_INFO_ERROR'), 'always stored');
      await ts.kc.realms.updateConfigEvents({ realm: REALM }, { ...config, enabledEventTypes: [...config.enabledEventTypes!, 'CLIENT_INFO'] });
      const again = await manage('GET', uri, rat, undefined, '10.20.1.2');
      assert.equal(again.statusCode, 200, again.body);
      rat = again.json().registration_access_token;
      sentTokens.push(rat);
      const [info, ...more] = await events('CLIENT_INFO', { clientId });
      assert.equal(more.length, 0);
      assert.ok(info);
      assert.equal(info.ip, '10.20.1.2');
      assert.equal(info.outcome, 'success');
      await ts.kc.realms.updateConfigEvents({ realm: REALM }, config);

      const put = await manage('PUT', uri, rat, { client_id: clientId, redirect_uris: [REDIRECT, `${REDIRECT}/2`] }, '10.20.1.3');
      assert.equal(put.statusCode, 200, put.body);
      rat = put.json().registration_access_token;
      sentTokens.push(rat);
      const [updated] = await events('CLIENT_UPDATE', { clientId });
      assert.ok(updated);
      assert.equal(updated.ip, '10.20.1.3');
      assert.equal(updated.outcome, 'success');

      // A refused update by the client itself (its token was good): recorded as its own, with the reason.
      const bad = await manage('PUT', uri, rat, { client_id: 'someone-else', redirect_uris: [REDIRECT] });
      assert.equal(bad.statusCode, 400, bad.body);
      const [refused] = await events('CLIENT_UPDATE_ERROR', { clientId });
      assert.ok(refused);
      assert.equal(refused.outcome, 'failure');
      assert.match(refused.reason!, /^invalid_client_metadata: client_id does not match/);

      const del = await manage('DELETE', uri, rat, undefined, '10.20.1.4');
      assert.equal(del.statusCode, 204, del.body);
      const [deleted] = await events('CLIENT_DELETE', { clientId });
      assert.ok(deleted);
      assert.equal(deleted.ip, '10.20.1.4');
      assert.equal(deleted.outcome, 'success');
    });

    test('bad metadata from an authenticated registrant: one CLIENT_REGISTER_ERROR each, with the reason, none sampled away', async () => {
      nextMinute();
      const { token } = await initialToken();
      const before = (await events('CLIENT_REGISTER_ERROR', { ip: '10.30.0.1' })).length;
      const res = await post({ redirect_uris: ['not a url'] }, token, '10.30.0.1');
      assert.equal(res.statusCode, 400, res.body);
      const error = res.json().error as string;
      assert.equal(error, 'invalid_redirect_uri');
      const rows = await events('CLIENT_REGISTER_ERROR', { ip: '10.30.0.1' });
      assert.equal(rows.length, before + 1);
      assert.equal(rows[0]!.outcome, 'failure');
      assert.equal(rows[0]!.reason, 'invalid_redirect_uri: redirect_uris: redirect URI "not a url" is not an absolute URI (scheme:...)');
      // Attributable: a registrant's twelfth refusal of the minute is stored too (the anonymous sample is 10).
      for (let i = 0; i < 11; i++) assert.equal((await post({ redirect_uris: ['not a url'] }, token, '10.30.0.1')).statusCode, 400);
      assert.equal((await events('CLIENT_REGISTER_ERROR', { ip: '10.30.0.1' })).length, before + 12);
      // An administrator's refusal names them.
      assert.equal((await post({ redirect_uris: ['not a url'] }, adminToken, '10.30.0.2')).statusCode, 400);
      const [admin] = await events('CLIENT_REGISTER_ERROR', { ip: '10.30.0.2' });
      assert.ok(admin);
      assert.equal(admin.userId, carolId);
      assert.equal(admin.username, 'carol');
    });

    test('a flood of made-up initial access tokens: all refused, all counted, a bounded sample stored', async () => {
      nextMinute();
      const before = (await events('CLIENT_REGISTER_ERROR')).length;
      const counted = ts.services.audit.counter.get(REALM, 'CLIENT_REGISTER_ERROR', 'failure');
      for (let i = 0; i < 200; i++) {
        const fake = `made-up-initial-access-token-${i}`;
        sentTokens.push(fake);
        const res = await post({ redirect_uris: [REDIRECT] }, fake, `10.40.${i >> 8}.${i & 255}`);
        assert.equal(res.statusCode, 401, res.body);
      }
      assert.equal(ts.services.audit.counter.get(REALM, 'CLIENT_REGISTER_ERROR', 'failure'), counted + 200);
      const all = await events('CLIENT_REGISTER_ERROR');
      const rows = all.slice(0, all.length - before);
      assert.ok(rows.length >= 1 && rows.length <= 10, `${rows.length} rows stored for 200 refusals`);
      for (const r of rows) assert.match(r.reason!, /^invalid_token: the initial access token is invalid, expired or used up/);
      // The next stored one, a minute later, says how many were not stored.
      nextMinute();
      assert.equal((await post({ redirect_uris: [REDIRECT] }, 'one-more-made-up-token', '10.40.9.9')).statusCode, 401);
      const [latest] = await events('CLIENT_REGISTER_ERROR', { ip: '10.40.9.9' });
      assert.match(latest?.reason ?? '', /\(190 more not stored\)$/);
    });

    test("a flood of made-up tokens at a client's registration (and a user without create-client): sampled", async () => {
      const reg = await registered((await initialToken()).token);
      const uri = reg.registration_client_uri as string;
      nextMinute();
      const before = { info: (await events('CLIENT_INFO_ERROR')).length, del: (await events('CLIENT_DELETE_ERROR')).length };
      for (let i = 0; i < 50; i++) {
        assert.equal((await manage('GET', uri, `made-up-rat-${i}`)).statusCode, 401);
        assert.equal((await manage('DELETE', uri, `made-up-rat-${i}`)).statusCode, 401);
      }
      const info = (await events('CLIENT_INFO_ERROR')).length - before.info;
      const del = (await events('CLIENT_DELETE_ERROR')).length - before.del;
      assert.ok(info >= 1 && info <= 10, `${info} CLIENT_INFO_ERROR rows for 50 refusals`);
      assert.ok(del >= 1 && del <= 10, `${del} CLIENT_DELETE_ERROR rows for 50 refusals`);
      // The client the path named is kept (a client id's shape), the client still there.
      assert.equal((await events('CLIENT_DELETE_ERROR', { clientId: reg.client_id as string })).length, del);
      assert.ok(await ts.store.clients.get(REALM, reg.client_id as string));

      // A realm user without the role: known, but anyone of the realm can send it: sampled, and named.
      nextMinute();
      const beforeUser = (await events('CLIENT_REGISTER_ERROR', { ip: '10.50.0.1' })).length;
      for (let i = 0; i < 30; i++) assert.equal((await post({ redirect_uris: [REDIRECT] }, userToken, '10.50.0.1')).statusCode, 403);
      const all = await events('CLIENT_REGISTER_ERROR', { ip: '10.50.0.1' });
      const rows = all.slice(0, all.length - beforeUser);
      assert.ok(rows.length >= 1 && rows.length <= 10, `${rows.length} rows for 30 refusals`);
      assert.equal(rows[0]!.username, 'alice');
      assert.match(rows[0]!.reason!, /^insufficient_scope: /);
    });

    test('a realm that does not exist records nothing', async () => {
      const res = await ts.app.inject({ method: 'POST', url: '/auth/realms/no-such-realm/clients-registrations/openid-connect', headers: { 'content-type': 'application/json', authorization: 'Bearer x' }, payload: '{}' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(await ts.store.events.list('no-such-realm', { limit: 10 }), []);
    });
  });
}
