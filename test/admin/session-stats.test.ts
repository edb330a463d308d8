// Keycloak's session statistics, offline sessions and realm-wide logout through keycloak-admin-client 26,
// unchanged, against a real server: sessions made by real sign-ins and token requests, ended by the real
// logout and revocation endpoints, refresh tokens tried at the real token endpoint, back-channel logout
// received by a real HTTP server in the test.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM, PASSWORD } from '../helpers/server.js';
import { CookieJar, inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';
import { createUser } from '../../src/admin/operations/users.js';
import { startAdminServer, errorOf, serviceAccountAdmin, type AdminTestServer } from './helpers.js';

const LOGOUT = realmPath('/protocol/openid-connect/logout');
const REVOKE = realmPath('/protocol/openid-connect/revoke');

/** A relying party's back-channel logout endpoint: /ok answers 204, /fail 500. */
class Receiver {
  readonly got: string[] = [];
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.got.push(req.url ?? '');
      res.writeHead(req.url?.startsWith('/ok') ? 204 : 500).end();
    });
  });
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

interface SignedIn {
  jar: CookieJar;
  refresh: string;
  idToken: string;
  clientId: string;
  secret: string;
}

for (const dialect of dialects()) {
  describe(`session counts, offline sessions and logout-all (${dialect})`, () => {
    let ts: AdminTestServer;
    const rp = new Receiver();
    const secrets = new Map<string, string>();
    const ids: Record<string, string> = {};

    before(async () => {
      ts = await startAdminServer({ dialect });
      await rp.start();
      secrets.set(ts.client.id, ts.client.secret);
      const redirectUris = [ts.client.redirectUri];
      // told: a back-channel URL that answers 204; broken: one that answers 500; quiet: none.
      await createClient(ts.store, { realmId: REALM, clientId: 'told', redirectUris, secret: 'told-secret', backchannelLogout: { url: rp.url('/ok/told') } });
      await createClient(ts.store, { realmId: REALM, clientId: 'broken', redirectUris, secret: 'broken-secret', backchannelLogout: { url: rp.url('/fail/broken') } });
      await createClient(ts.store, { realmId: REALM, clientId: 'quiet', redirectUris, secret: 'quiet-secret' });
      secrets.set('told', 'told-secret').set('broken', 'broken-secret').set('quiet', 'quiet-secret');
      ids.alice = ts.user.id;
      for (const name of ['bob', 'carol']) ids[name] = (await createUser(ts.store, { realmId: REALM, username: name, password: PASSWORD, email: `${name}@example.com`, orgAliases: ['acme'] })).id;
    });
    after(async () => {
      await ts.close();
      await rp.stop();
    });

    /** Signs `username` in through `clientId` (in `jar`'s browser session when given) and redeems the code. */
    async function signIn(username: string, scope: string, o: { clientId?: string; jar?: CookieJar } = {}): Promise<SignedIn> {
      const clientId = o.clientId ?? ts.client.id;
      const secret = secrets.get(clientId)!;
      const r = await runAuthorization(ts, { username, password: PASSWORD, jar: o.jar, query: { client_id: clientId, redirect_uri: ts.client.redirectUri, scope } });
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(clientId, secret) });
      assert.equal(t.statusCode, 200, t.body);
      return { jar: r.jar, refresh: t.json().refresh_token as string, idToken: t.json().id_token as string, clientId, secret };
    }

    /** The refresh grant with the session's current refresh token: its status and error (rotates the token on success). */
    async function refresh(s: SignedIn): Promise<{ status: number; error?: string }> {
      const t = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: s.refresh }, { authorization: basic(s.clientId, s.secret) });
      if (t.statusCode === 200) s.refresh = t.json().refresh_token as string;
      return { status: t.statusCode, error: t.statusCode === 200 ? undefined : (t.json().error as string) };
    }

    const sessionCount = async (id = ts.client.id): Promise<number> => (await ts.kc.clients.getSessionCount({ realm: REALM, id })).count;
    const offlineCount = async (id = ts.client.id): Promise<number> => (await ts.kc.clients.getOfflineSessionCount({ realm: REALM, id })).count;
    const stats = async (): Promise<Array<Record<string, unknown>>> => {
      const list = (await ts.kc.realms.getClientSessionStats({ realm: REALM })) as unknown as Array<Record<string, unknown>>;
      return [...list].sort((a, b) => String(a.clientId).localeCompare(String(b.clientId)));
    };
    /** A raw admin API GET with the admin's token (for what keycloak-admin-client would not send). */
    const rawGet = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}${path}`, { headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    test('session-count, offline-session-count, offline sessions and client-session-stats follow sign-ins and session ends', async () => {
      assert.deepEqual(await ts.kc.clients.getSessionCount({ realm: REALM, id: ts.client.id }), { count: 0 });
      assert.deepEqual(await ts.kc.clients.getOfflineSessionCount({ realm: REALM, id: ts.client.id }), { count: 0 });
      assert.deepEqual(await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id }), []);
      assert.deepEqual(await stats(), []);

      // alice: an online session only.
      const alice = await signIn('alice', 'openid');
      assert.equal(await sessionCount(), 1);
      assert.equal(await offlineCount(), 0);
      assert.deepEqual(await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.alice!, clientId: ts.client.id }), []);

      // bob: offline access, and in the same browser session the quiet client too (online).
      const bob = await signIn('bob', 'openid offline_access');
      await signIn('bob', 'openid', { clientId: 'quiet', jar: bob.jar });
      assert.equal(await sessionCount(), 2);
      assert.equal(await offlineCount(), 1);
      assert.equal(await sessionCount('quiet'), 1);
      assert.equal(await offlineCount('quiet'), 0);
      const bobSession = (await ts.kc.users.listSessions({ realm: REALM, id: ids.bob! }))[0]!;
      const offline = await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id });
      assert.equal(offline.length, 1);
      assert.equal(offline[0]!.id, bobSession.id, 'the offline session is named by the browser session it started in');
      assert.equal(offline[0]!.userId, ids.bob);
      assert.equal(offline[0]!.username, 'bob');
      // Only the clients holding offline access in it.
      assert.deepEqual(offline[0]!.clients, { [ts.client.id]: ts.client.id });
      assert.ok(typeof offline[0]!.start === 'number' && offline[0]!.start > 0 && offline[0]!.lastAccess! >= offline[0]!.start);
      const bobsOffline = await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.bob!, clientId: ts.client.id });
      assert.deepEqual(bobsOffline.map((s) => [s.id, s.userId]), [[bobSession.id, ids.bob]]);
      assert.deepEqual(await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.bob!, clientId: 'quiet' }), []);
      assert.deepEqual(await stats(), [
        { id: 'quiet', clientId: 'quiet', active: '1', offline: '0' },
        { id: ts.client.id, clientId: ts.client.id, active: '2', offline: '1' },
      ]);

      // carol: a second offline session; paging with first and max, newest first.
      const carol = await signIn('carol', 'openid offline_access');
      assert.equal(await offlineCount(), 2);
      const page1 = await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id, first: 0, max: 1 });
      const page2 = await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id, first: 1, max: 1 });
      assert.equal(page1.length, 1);
      assert.equal(page2.length, 1);
      assert.deepEqual(new Set([page1[0]!.username, page2[0]!.username]), new Set(['bob', 'carol']));
      assert.deepEqual(await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id, first: 5 }), []);

      // alice's refresh token revoked: the client holds nothing from her session any more.
      const revoked = await inject(ts.app, new CookieJar(), 'POST', REVOKE, { token: alice.refresh, client_id: ts.client.id, client_secret: ts.client.secret });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.equal(await sessionCount(), 2);
      assert.equal(await offlineCount(), 2);

      // bob logs out (RP-initiated logout): his browser session ends, his offline access outlives it.
      const out = await inject(ts.app, bob.jar, 'GET', `${LOGOUT}?id_token_hint=${bob.idToken}`);
      assert.ok(out.statusCode < 400, out.body);
      assert.equal(await sessionCount(), 1);
      assert.equal(await sessionCount('quiet'), 0);
      assert.equal(await offlineCount(), 2);
      assert.deepEqual((await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.bob!, clientId: ts.client.id })).map((s) => s.id), [bobSession.id]);
      assert.deepEqual((await refresh(bob)).status, 200, 'the offline token still works');
      assert.deepEqual(await stats(), [{ id: ts.client.id, clientId: ts.client.id, active: '1', offline: '2' }]);

      // The admin ends carol's offline access (per-user logout): both counts drop.
      await ts.kc.users.logout({ realm: REALM, id: ids.carol! });
      assert.equal(await sessionCount(), 0);
      assert.equal(await offlineCount(), 1);
      assert.deepEqual(await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.carol!, clientId: ts.client.id }), []);
      assert.equal((await refresh(carol)).error, 'invalid_grant');
      // Clean slate for the next test.
      await ts.kc.users.logout({ realm: REALM, id: ids.bob! });
      assert.deepEqual(await stats(), []);
    });

    test('logout-all ends every session and refresh token of the realm, offline ones too, and reports the back-channel URLs', async () => {
      const alice = await signIn('alice', 'openid');
      const bobOffline = await signIn('bob', 'openid offline_access');
      const bobTold = await signIn('bob', 'openid', { clientId: 'told', jar: bobOffline.jar });
      const carolBroken = await signIn('carol', 'openid', { clientId: 'broken' });
      assert.equal(await sessionCount(), 2);
      assert.equal(await offlineCount(), 1);
      assert.equal((await stats()).length, 3);
      rp.got.length = 0;
      const before = (await ts.store.adminEvents.list(REALM)).length;

      const result = await ts.kc.realms.logoutAll({ realm: REALM });
      assert.deepEqual(result, { successRequests: [rp.url('/ok/told')], failedRequests: [rp.url('/fail/broken')] });
      assert.deepEqual(rp.got.sort(), ['/fail/broken', '/ok/told']);

      assert.equal(await sessionCount(), 0);
      assert.equal(await offlineCount(), 0);
      assert.equal(await sessionCount('told'), 0);
      assert.deepEqual(await ts.kc.clients.listOfflineSessions({ realm: REALM, id: ts.client.id }), []);
      assert.deepEqual(await stats(), []);
      for (const id of [ids.alice!, ids.bob!, ids.carol!]) assert.deepEqual(await ts.kc.users.listSessions({ realm: REALM, id }), []);
      // Every refresh token, the offline one included, is refused at the token endpoint.
      for (const s of [alice, bobOffline, bobTold, carolBroken]) assert.deepEqual(await refresh(s), { status: 400, error: 'invalid_grant' }, s.clientId);
      // The browser is signed out: the next authorization asks for the password again.
      const again = await runAuthorization(ts, { jar: alice.jar, query: { scope: 'openid' } });
      assert.ok(again.pages.includes('login'), again.pages.join());

      const events = (await ts.store.adminEvents.list(REALM)).slice(0, (await ts.store.adminEvents.list(REALM)).length - before);
      const event = events.find((e) => e.resourcePath === 'logout-all');
      assert.ok(event, JSON.stringify(events));
      assert.equal(event.operation, 'ACTION');
      assert.match(String(event.representation), /ok\/told/);

      // The realm is not poisoned: a new sign-in works and counts (the realm's not-before is untouched).
      const fresh = await signIn('alice', 'openid offline_access');
      assert.equal(await sessionCount(), 1);
      assert.equal(await offlineCount(), 1);
      assert.equal((await refresh(fresh)).status, 200);
      assert.deepEqual(await ts.kc.realms.logoutAll({ realm: REALM }), { successRequests: [], failedRequests: [] });
      assert.equal(await sessionCount(), 0);
    });

    test('DELETE /sessions/{id} ends the session and keeps its offline tokens; isOffline=true revokes only them', async () => {
      // carol: offline access and an online token in one browser session.
      const offline = await signIn('carol', 'openid offline_access');
      const online = await signIn('carol', 'openid', { clientId: 'quiet', jar: offline.jar });
      const sid = (await ts.kc.users.listSessions({ realm: REALM, id: ids.carol! }))[0]!.id!;

      // Keycloak's online delete (the client's default, isOffline=false): the offline token outlives it.
      await ts.kc.realms.deleteSession({ realm: REALM, session: sid, isOffline: false });
      assert.deepEqual(await refresh(online), { status: 400, error: 'invalid_grant' });
      assert.deepEqual(await refresh(offline), { status: 200, error: undefined });
      assert.deepEqual(await ts.kc.users.listSessions({ realm: REALM, id: ids.carol! }), []);
      assert.equal((await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.carol!, clientId: ts.client.id })).length, 1);
      // Again online: the session exists (ended), nothing changes.
      await ts.kc.realms.deleteSession({ realm: REALM, session: sid, isOffline: false });
      assert.deepEqual(await refresh(offline), { status: 200, error: undefined });

      // The offline session of the same id: its offline tokens go.
      await ts.kc.realms.deleteSession({ realm: REALM, session: sid, isOffline: true });
      assert.deepEqual(await refresh(offline), { status: 400, error: 'invalid_grant' });
      assert.deepEqual(await ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.carol!, clientId: ts.client.id }), []);
      // None left: 404, as Keycloak's "Session not found".
      assert.equal((await errorOf(ts.kc.realms.deleteSession({ realm: REALM, session: sid, isOffline: true }))).status, 404);

      // isOffline=true leaves the browser session and its online tokens alone.
      const again = await signIn('carol', 'openid offline_access');
      const web = await signIn('carol', 'openid', { clientId: 'quiet', jar: again.jar });
      const sid2 = (await ts.kc.users.listSessions({ realm: REALM, id: ids.carol! }))[0]!.id!;
      await ts.kc.realms.deleteSession({ realm: REALM, session: sid2, isOffline: true });
      assert.deepEqual(await refresh(again), { status: 400, error: 'invalid_grant' });
      assert.deepEqual(await refresh(web), { status: 200, error: undefined });
      assert.equal((await ts.kc.users.listSessions({ realm: REALM, id: ids.carol! })).length, 1);
      // An unknown session: 404 either way; a value of isOffline that is not a boolean: 400.
      for (const isOffline of [false, true]) assert.equal((await errorOf(ts.kc.realms.deleteSession({ realm: REALM, session: 'no-such-session', isOffline }))).status, 404);
      const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/sessions/${sid2}?isOffline=maybe`, { method: 'DELETE', headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      assert.equal(res.status, 400);
      assert.deepEqual(await refresh(web), { status: 200, error: undefined });
    });

    test('each endpoint needs the role Keycloak checks: view-clients, view-users, view-realm, manage-users', async () => {
      const viewClients = await serviceAccountAdmin(ts, REALM, 'sa-view-clients', ['view-clients']);
      const viewUsers = await serviceAccountAdmin(ts, REALM, 'sa-view-users', ['view-users']);
      const viewRealm = await serviceAccountAdmin(ts, REALM, 'sa-view-realm', ['view-realm']);
      const manageUsers = await serviceAccountAdmin(ts, REALM, 'sa-manage-users', ['manage-users']);
      const carol = await signIn('carol', 'openid offline_access');
      const id = ts.client.id;
      const calls = {
        sessionCount: (kc: typeof ts.kc) => kc.clients.getSessionCount({ realm: REALM, id }),
        offlineCount: (kc: typeof ts.kc) => kc.clients.getOfflineSessionCount({ realm: REALM, id }),
        clientOffline: (kc: typeof ts.kc) => kc.clients.listOfflineSessions({ realm: REALM, id }),
        userOffline: (kc: typeof ts.kc) => kc.users.listOfflineSessions({ realm: REALM, id: ids.carol!, clientId: id }),
        stats: (kc: typeof ts.kc) => kc.realms.getClientSessionStats({ realm: REALM }),
      };
      const allowed: Record<string, Array<keyof typeof calls>> = {
        'view-clients': ['sessionCount', 'offlineCount', 'clientOffline'],
        'view-users': ['userOffline'],
        'view-realm': ['stats'],
        'manage-users': ['userOffline'],
      };
      for (const [role, admin] of [['view-clients', viewClients], ['view-users', viewUsers], ['view-realm', viewRealm], ['manage-users', manageUsers]] as const) {
        for (const [name, call] of Object.entries(calls) as Array<[keyof typeof calls, (kc: typeof ts.kc) => Promise<unknown>]>) {
          if (allowed[role]!.includes(name)) await call(admin.kc);
          else assert.equal((await errorOf(call(admin.kc))).status, 403, `${role} ${name}`);
        }
        if (role !== 'manage-users') {
          const e = await errorOf(admin.kc.realms.logoutAll({ realm: REALM }));
          assert.equal(e.status, 403, role);
          assert.equal(e.body.error, 'HTTP 403 Forbidden');
        }
      }
      // Nothing was ended by the refused calls.
      assert.equal(await offlineCount(), 1);
      assert.equal((await refresh(carol)).status, 200);
      // manage-users may: carol is signed out; the caller's own token (client credentials) still works.
      await manageUsers.kc.realms.logoutAll({ realm: REALM });
      assert.equal(await offlineCount(), 0);
      assert.equal((await refresh(carol)).error, 'invalid_grant');
      await manageUsers.kc.users.listOfflineSessions({ realm: REALM, id: ids.carol!, clientId: id });
    });

    test('unknown client, user or realm: 404 with Keycloak words; bad paging: 400, never 500', async () => {
      const notFound = async (p: Promise<unknown>, message: string): Promise<void> => {
        const e = await errorOf(p);
        assert.equal(e.status, 404);
        assert.deepEqual(e.body, { error: 'HTTP 404 Not Found', errorMessage: message });
      };
      await notFound(ts.kc.clients.getSessionCount({ realm: REALM, id: 'no-such-client' }), 'Could not find client');
      await notFound(ts.kc.clients.getOfflineSessionCount({ realm: REALM, id: 'no-such-client' }), 'Could not find client');
      await notFound(ts.kc.clients.listOfflineSessions({ realm: REALM, id: 'no-such-client' }), 'Could not find client');
      await notFound(ts.kc.users.listOfflineSessions({ realm: REALM, id: 'no-such-user', clientId: ts.client.id }), 'User not found');
      await notFound(ts.kc.users.listOfflineSessions({ realm: REALM, id: ids.alice!, clientId: 'no-such-client' }), 'Client not found');
      // A client of another realm is not one of this realm.
      await notFound(ts.kc.clients.getSessionCount({ realm: 'master', id: ts.client.id }), 'Could not find client');
      await notFound(ts.kc.realms.getClientSessionStats({ realm: 'no-such-realm' }), 'realm no-such-realm not found');
      await notFound(ts.kc.realms.logoutAll({ realm: 'no-such-realm' }), 'realm no-such-realm not found');

      for (const q of ['first=-1', 'max=-1', 'max=1001', 'first=abc', 'max=1.5', 'first=99999999999999999999999']) {
        const r = await rawGet(`/clients/${ts.client.id}/offline-sessions?${q}`);
        assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, 'invalid_request');
      }
      for (const path of [`/clients/${'x'.repeat(300)}/session-count`, `/users/${'x'.repeat(100)}/offline-sessions/${ts.client.id}`, '/clients/%00/offline-session-count', '/users/%20/offline-sessions/%22%3Cx%3E']) {
        const r = await rawGet(path);
        // 414: Fastify's bound on a path parameter's length.
        assert.ok([400, 404, 414].includes(r.status), `${path}: ${r.status}`);
      }
    });
  });
}
