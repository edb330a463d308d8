import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM, PASSWORD } from '../helpers/server.js';
import { CookieJar, loginStatus as loginAttempt, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { errorOf, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const OIDC = '/protocol/openid-connect';

// @keycloak/keycloak-admin-client 26, unchanged, against a real server: users, their sessions, consents
// and lockout. Every change is checked where it matters: at the login page and the token endpoints.
for (const dialect of dialects()) {
  describe(`admin API: users (${dialect})`, () => {
    let ts: AdminTestServer;
    let auth: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    async function login(username: string, password = PASSWORD, jar = new CookieJar()): Promise<{ access_token: string; refresh_token: string; jar: CookieJar }> {
      const r = await runAuthorization(ts, { username, password, jar, query: { scope: 'openid profile email core_data' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return { ...res.json(), jar: r.jar };
    }
    const loginStatus = (username: string, password: string, ip?: string): Promise<number> => loginAttempt(ts, username, password, ip);
    const userinfo = async (token: string): Promise<number> => (await ts.app.inject({ method: 'GET', url: realmPath(`${OIDC}/userinfo`), headers: { authorization: `Bearer ${token}` } })).statusCode;
    const introspect = async (token: string): Promise<Record<string, unknown>> =>
      (
        await ts.app.inject({
          method: 'POST',
          url: realmPath(`${OIDC}/token/introspect`),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams({ token }).toString(),
        })
      ).json();
    const refresh = async (token: string): Promise<number> => (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: token }, { authorization: auth })).statusCode;

    async function createUser(username: string, extra: Record<string, unknown> = {}): Promise<string> {
      const { id } = await ts.kc.users.create({ realm: REALM, username, email: `${username}@example.com`, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }], ...extra });
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId: id });
      return id;
    }

    test('create, read, search, count, update and delete a user', async () => {
      const id = await createUser('quinn', { firstName: 'Quinn', lastName: 'Fabray', emailVerified: true });
      assert.match(id, /^[0-9a-f-]{36}$/);
      const u = await ts.kc.users.findOne({ realm: REALM, id });
      assert.equal(u?.username, 'quinn');
      assert.equal(u?.firstName, 'Quinn');
      assert.equal(u?.lastName, 'Fabray');
      assert.equal(u?.emailVerified, true);
      assert.deepEqual((await ts.kc.users.find({ realm: REALM, search: 'fabr' })).map((x) => x.username), ['quinn'], 'search covers names');
      assert.equal(u?.email, 'quinn@example.com');
      assert.equal(u?.enabled, true);
      assert.equal(typeof u?.createdTimestamp, 'number');
      assert.equal(u?.access?.manage, true);
      assert.equal(await ts.kc.users.findOne({ realm: REALM, id: '00000000-0000-0000-0000-000000000000' }), null);

      const found = await ts.kc.users.find({ realm: REALM, search: 'quin' });
      assert.deepEqual(found.map((x) => x.username), ['quinn']);
      assert.deepEqual((await ts.kc.users.find({ realm: REALM, username: 'quinn', exact: true, briefRepresentation: true })).map((x) => x.id), [id]);
      assert.deepEqual(await ts.kc.users.find({ realm: REALM, username: 'quin', exact: true }), []);
      assert.deepEqual((await ts.kc.users.find({ realm: REALM, email: 'quinn@example.com' })).map((x) => x.id), [id]);
      const all = await ts.kc.users.find({ realm: REALM, first: 0, max: 1 });
      assert.equal(all.length, 1);
      assert.equal(await ts.kc.users.count({ realm: REALM, search: 'quinn' }), 1);
      assert.ok((await ts.kc.users.count({ realm: REALM })) >= 2);

      await ts.kc.users.update({ realm: REALM, id }, { email: 'q@example.org', lastName: 'Smith', emailVerified: false });
      const up = await ts.kc.users.findOne({ realm: REALM, id });
      assert.equal(up?.email, 'q@example.org');
      assert.equal(up?.lastName, 'Smith');
      assert.equal(up?.firstName, 'Quinn', 'fields absent from the update stay');
      assert.equal(up?.emailVerified, false);
      // Invalid input is a 400 in Keycloak's error shape; the username cannot change.
      assert.equal(await statusOf(ts.kc.users.update({ realm: REALM, id }, { email: 'not-an-email' })), 400);
      assert.equal(await statusOf(ts.kc.users.update({ realm: REALM, id }, { username: 'other' })), 400);
      assert.equal(await statusOf(ts.kc.users.create({ realm: REALM, username: 'quinn', enabled: true })), 409);
      assert.equal(await statusOf(ts.kc.users.create({ realm: REALM, username: 'bad name!' })), 400);
      // A temporary password is Keycloak's UPDATE_PASSWORD required action (test/admin/temporary-password.test.ts).
      const tmp = await ts.kc.users.create({ realm: REALM, username: 'tmp', credentials: [{ type: 'password', value: 'temporary-password', temporary: true }] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id: tmp.id }))?.requiredActions, ['UPDATE_PASSWORD']);
      await ts.kc.users.del({ realm: REALM, id: tmp.id });

      const t = await login('quinn');
      const info = (await ts.app.inject({ method: 'GET', url: realmPath(`${OIDC}/userinfo`), headers: { authorization: `Bearer ${t.access_token}` } })).json();
      assert.equal(info.email, 'q@example.org', 'the new email is what a login sees');
      await ts.kc.users.del({ realm: REALM, id });
      assert.equal(await ts.kc.users.findOne({ realm: REALM, id }), null);
      assert.equal(await userinfo(t.access_token), 401);
      assert.equal(await refresh(t.refresh_token), 400);
      assert.equal(await statusOf(ts.kc.users.del({ realm: REALM, id })), 404);
      const events = await ts.store.adminEvents.list(REALM);
      const ops = events.filter((e) => e.resourcePath === `users/${id}`).map((e) => e.operation);
      assert.deepEqual(ops, ['DELETE', 'UPDATE', 'CREATE']);
    });

    test('a user created without enabled is disabled, as in Keycloak; one without credentials cannot log in', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'rita' });
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))?.enabled, false);
      await ts.kc.users.update({ realm: REALM, id }, { enabled: true });
      assert.equal(await loginStatus('rita', PASSWORD), 200);
    });

    test('a user created without credentials has no password, as in Keycloak: none listed, none verifies, until one is set', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'rhea', enabled: true });
      assert.deepEqual(await ts.kc.users.getCredentials({ realm: REALM, id }), [], 'no password credential listed');
      const stored = (await ts.store.users.get(id))!;
      assert.ok(stored.passwordHash.startsWith('!'), 'no hash of a password is stored');
      for (const guess of [PASSWORD, '!no-password']) {
        assert.equal(await loginStatus('rhea', guess, '10.9.8.6'), 200, `refused: ${JSON.stringify(guess)}`);
        ts.clock.advance(10); // apart, as a person types: the quick-login check does not lock the user
      }
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'rhea has one now', temporary: false } });
      assert.deepEqual((await ts.kc.users.getCredentials({ realm: REALM, id })).map((c) => c.type), ['password']);
      assert.equal(await loginStatus('rhea', 'rhea has one now', '10.9.8.6'), 303);
    });

    test('reset password: the old one is refused and the new one works at the login page', async () => {
      const id = await createUser('sam');
      const before = await login('sam');
      assert.equal(await loginStatus('sam', PASSWORD), 303);
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'a brand new password', temporary: false } });
      assert.equal(await loginStatus('sam', PASSWORD), 200, 'the old password is refused');
      assert.equal(await loginStatus('sam', 'a brand new password'), 303, 'the new password works');
      // Whoever held the old password loses the sessions and tokens it opened.
      assert.equal(await refresh(before.refresh_token), 400);
      assert.equal(await statusOf(ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'short', temporary: false } })), 400);
    });

    test('disable a user: their access token is refused at userinfo and introspection, and their refresh, at once', async () => {
      const id = await createUser('tina');
      const t = await login('tina');
      assert.equal(await userinfo(t.access_token), 200);
      assert.equal((await introspect(t.access_token)).active, true);
      await ts.kc.users.update({ realm: REALM, id }, { enabled: false });
      assert.equal(await userinfo(t.access_token), 401);
      assert.deepEqual(await introspect(t.access_token), { active: false });
      assert.deepEqual(await introspect(t.refresh_token), { active: false });
      assert.equal(await refresh(t.refresh_token), 400);
      assert.equal(await loginStatus('tina', PASSWORD), 200, 'a disabled user cannot log in');
      await ts.kc.users.update({ realm: REALM, id }, { enabled: true });
      assert.equal(await loginStatus('tina', PASSWORD), 303);
    });

    test('sessions, logout, client user-sessions and ending one session', async () => {
      const id = await createUser('uma');
      const a = await login('uma');
      const b = await login('uma');
      const sessions = await ts.kc.users.listSessions({ realm: REALM, id });
      assert.equal(sessions.length, 2);
      assert.equal(sessions[0]!.userId, id);
      assert.equal(sessions[0]!.username, 'uma');
      assert.deepEqual(Object.values(sessions[0]!.clients ?? {}), [ts.client.id]);
      assert.ok(sessions[0]!.start! > 1e12, 'milliseconds');
      // The address the session was signed in from (the test requests come from 127.0.0.1).
      assert.equal(sessions[0]!.ipAddress, '127.0.0.1');
      const sidA = decodeJwt(a.access_token).sid as string;
      assert.ok(sessions.some((s) => s.id === sidA));
      const ofClient = await ts.kc.clients.listSessions({ realm: REALM, id: ts.client.id });
      assert.ok(ofClient.some((s) => s.id === sidA));
      // An unknown client: Keycloak's 404 words.
      const unknown = await errorOf(ts.kc.clients.listSessions({ realm: REALM, id: 'no-such-client' }));
      assert.deepEqual([unknown.status, unknown.body.errorMessage], [404, 'Could not find client']);

      await ts.kc.realms.deleteSession({ realm: REALM, session: sidA, isOffline: false });
      assert.equal(await refresh(a.refresh_token), 400);
      assert.equal(await userinfo(a.access_token), 401);
      assert.equal(await userinfo(b.access_token), 200, 'the other session lives on');
      assert.equal((await ts.kc.users.listSessions({ realm: REALM, id })).length, 1);

      await ts.kc.users.logout({ realm: REALM, id });
      assert.equal(await refresh(b.refresh_token), 400);
      assert.equal(await userinfo(b.access_token), 401);
      assert.deepEqual(await ts.kc.users.listSessions({ realm: REALM, id }), []);
    });

    test('consents are listed and revoked', async () => {
      const id = await createUser('vic');
      const t = await login('vic');
      const consents = await ts.kc.users.listConsents({ realm: REALM, id });
      assert.equal(consents.length, 1);
      assert.equal(consents[0]!.clientId, ts.client.id);
      assert.ok(consents[0]!.grantedClientScopes!.includes('core_data'));
      await ts.kc.users.revokeConsent({ realm: REALM, id, clientId: ts.client.id });
      assert.deepEqual(await ts.kc.users.listConsents({ realm: REALM, id }), []);
      assert.equal(await refresh(t.refresh_token), 400);
    });

    test('brute-force status and unlock', async () => {
      const id = await createUser('wes');
      const ip = '10.9.8.7';
      const status0 = await ts.kc.attackDetection.findOne({ realm: REALM, id });
      assert.deepEqual(status0, { numFailures: 0, disabled: false, lastIPFailure: 'n/a', lastFailure: 0 });
      for (let i = 0; i < 5; i++) {
        assert.equal(await loginStatus('wes', 'wrong password', ip), 200);
        ts.clock.advance(10);
      }
      assert.equal(await loginStatus('wes', PASSWORD, ip), 429, 'locked');
      const locked = await ts.kc.attackDetection.findOne({ realm: REALM, id });
      assert.equal(locked?.disabled, true);
      assert.ok((locked?.lastFailure as number) > 1e12);
      await ts.kc.attackDetection.del({ realm: REALM, id });
      assert.equal((await ts.kc.attackDetection.findOne({ realm: REALM, id }))?.disabled, false);
      assert.equal(await loginStatus('wes', PASSWORD, ip), 303, 'unlocked at once');
    });

    test("a username changes through PUT only under the realm's editUsernameAllowed (keycloak-admin-client, realm representation)", async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'olga', enabled: true, email: 'olga@example.com', credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))!.editUsernameAllowed, false);
      const off = await errorOf(ts.kc.users.update({ realm: REALM, id }, { username: 'olga2', firstName: 'Olga' }));
      assert.equal(off.status, 400);
      assert.match(String(off.body.errorMessage ?? off.body.error), /editUsernameAllowed/);
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))!.firstName, undefined, 'nothing of the PUT applied');

      await ts.kc.realms.update({ realm: REALM }, { editUsernameAllowed: true });
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))!.editUsernameAllowed, true);
      assert.equal((await errorOf(ts.kc.users.update({ realm: REALM, id }, { username: 'alice' }))).status, 409, "another user's");
      assert.equal((await errorOf(ts.kc.users.update({ realm: REALM, id }, { username: 'no way' }))).status, 400);
      await ts.kc.users.update({ realm: REALM, id }, { username: 'Olga.K', firstName: 'Olga' });
      const renamed = await ts.kc.users.findOne({ realm: REALM, id });
      assert.equal(renamed!.username, 'olga.k');
      assert.equal(renamed!.firstName, 'Olga');
      assert.equal(await loginStatus('olga.k', PASSWORD), 303);
      assert.equal(await loginStatus('olga', PASSWORD), 200, 'the old name no longer signs in');
      const events = await ts.store.adminEvents.list(REALM, { resourceType: 'USER' });
      assert.ok(events.some((e) => e.resourcePath === `users/${id}` && e.representation !== null && (JSON.parse(e.representation) as { previousUsername?: string }).previousUsername === 'olga'));
      await ts.kc.realms.update({ realm: REALM }, { editUsernameAllowed: false });
      await ts.kc.users.del({ realm: REALM, id });
    });

    test('401 without a token, 403 without the role, 404 for a user of another realm', async () => {
      const r = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/users`);
      assert.equal(r.status, 401);
      const doc = (await (await fetch(`${ts.baseUrl}/auth/admin/openapi.json`)).json()) as { paths: Record<string, unknown> };
      for (const p of ['/auth/admin/realms/{realm}/users', '/auth/admin/realms/{realm}/users/{id}/reset-password', '/auth/admin/realms/{realm}/organizations/{id}/members', '/auth/admin/realms/{realm}/sessions/{id}', '/auth/admin/realms/{realm}/attack-detection/brute-force/users/{id}']) {
        assert.ok(doc.paths[p], `${p} in the OpenAPI document`);
      }
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
      const alice = ts.newClient(REALM);
      await alice.auth({ username: 'alice', password: PASSWORD, grantType: 'password', clientId: ts.publicClient.id });
      assert.equal(await statusOf(alice.users.find({ realm: REALM })), 403);
      assert.equal(await statusOf(alice.users.findOne({ realm: REALM, id: ts.user.id })), 403);
      assert.equal(await statusOf(alice.users.del({ realm: REALM, id: ts.user.id })), 403);
      const master = await ts.kc.users.find({ realm: 'master', username: 'admin', exact: true });
      assert.equal(await statusOf(ts.kc.users.findOne({ realm: REALM, id: master[0]!.id! }, { catchNotFound: false })), 404);
    });
  });
}
