import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { CookieJar, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { ADMIN_USERNAME, adminRoleRef, errorOf, serviceAccountAdmin, startAdminServer, type AdminTestServer } from './helpers.js';

/** The realm cookies a response set (name to value), as a browser keeps them. */
function cookiesOf(res: Response): CookieJar {
  const jar = new CookieJar();
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return jar;
}

for (const dialect of dialects()) {
  describe(`admin API: impersonation (${dialect})`, () => {
    let ts: AdminTestServer;
    const url = (path: string): string => `${ts.baseUrl}/auth/admin${path}`;
    const impersonate = (token: string, realm: string, userId: string): Promise<Response> =>
      fetch(url(`/realms/${realm}/users/${userId}/impersonation`), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ user: userId, realm }) });
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("keycloak-admin-client's users.impersonation: alice's session in this browser, her account page, single sign-on, the events", async () => {
      const answer = await ts.kc.users.impersonation({ realm: 'test', id: ts.user.id }, { user: ts.user.id, realm: 'test' });
      assert.deepEqual(answer, { sameRealm: false, redirect: `${ts.baseUrl}/auth/realms/test/account` });

      const res = await impersonate(ts.kc.accessToken!, 'test', ts.user.id);
      assert.equal(res.status, 200);
      const jar = cookiesOf(res);
      assert.ok(jar.cookies.get('RG_SESSION'), 'the session cookie is set for the caller');
      assert.match(res.headers.getSetCookie().find((c) => c.startsWith('RG_SESSION='))!, /Path=\/auth\/realms\/test\/; HttpOnly; SameSite=Lax/);

      const account = await ts.app.inject({ method: 'GET', url: '/auth/realms/test/account', headers: { cookie: jar.header() } });
      assert.equal(account.statusCode, 200);
      assert.match(account.body, /Signed in as <strong>alice<\/strong>/);
      assert.match(account.body, new RegExp(`Administrator ${ADMIN_USERNAME} signed in as you in this browser \\(impersonation\\)`));
      assert.match(account.body, new RegExp(`opened by administrator ${ADMIN_USERNAME}`));

      // The session signs in to the realm's applications without a password: a code for alice.
      const flow = await runAuthorization(ts, { jar });
      assert.ok(flow.code);
      assert.ok(!flow.pages.includes('login'), `no login page: ${flow.pages.join(', ')}`);
      const tokens = await tokenRequest(ts, { grant_type: 'authorization_code', code: flow.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(tokens.statusCode, 200, tokens.body);
      assert.equal(decodeJwt(tokens.json().access_token as string).sub, ts.user.id);

      // It is no sign-in of alice's: a request for a recent one (max_age, a kc_action) asks for her password.
      const recent = await runAuthorization(ts, { jar, query: { max_age: '3600' } });
      assert.equal(recent.pages[0], 'login', `max_age: ${recent.pages.join(', ')}`);

      const events = await ts.kc.realms.findEvents({ realm: 'test', type: 'IMPERSONATE' });
      assert.equal(events.length, 2, 'one per impersonation, stored whatever the realm stores');
      assert.equal(events[0]!.userId, ts.user.id);
      assert.match(String(events[0]!.details?.reason), new RegExp(`started by ${ADMIN_USERNAME} of realm master`));
      const adminEvents = await ts.kc.realms.findAdminEvents({ realm: 'test', operationTypes: 'ACTION' } as never);
      assert.ok(adminEvents.some((e) => e.resourcePath === `users/${ts.user.id}/impersonation`), 'and an admin event');
    });

    test('access.impersonate and the IMPERSONATION feature say what the caller may do', async () => {
      const alice = await ts.kc.users.findOne({ realm: 'test', id: ts.user.id });
      assert.equal(alice!.access?.impersonate, true);
      const info = await ts.kc.serverInfo.find();
      assert.equal(info.features?.find((f) => f.name === 'IMPERSONATION')?.enabled, true);
      const viewer = await serviceAccountAdmin(ts, 'test', 'imp-viewer', ['view-users']);
      assert.equal((await viewer.kc.users.findOne({ realm: 'test', id: ts.user.id }))!.access?.impersonate, false);
    });

    test('refusals: without the impersonation role, a user with admin roles the caller lacks, a disabled user, a service account, another realm', async () => {
      const viewer = await serviceAccountAdmin(ts, 'test', 'imp-refused', ['view-users', 'manage-users']);
      const refused = await errorOf(viewer.kc.users.impersonation({ realm: 'test', id: ts.user.id }, { user: ts.user.id, realm: 'test' }));
      assert.equal(refused.status, 403);
      assert.match(String(refused.body.errorMessage), /impersonation role/);

      const support = await serviceAccountAdmin(ts, 'test', 'imp-support', ['impersonation', 'view-users']);
      assert.equal((await support.kc.users.impersonation({ realm: 'test', id: ts.user.id }, { user: ts.user.id, realm: 'test' })).sameRealm, false, 'alice holds no admin role: allowed');

      // A realm administrator: impersonating them would give `support` realm-admin's power.
      const { id: bossId } = await ts.kc.users.create({ realm: 'test', username: 'boss', enabled: true, email: 'boss@example.com', firstName: 'B', lastName: 'Oss' });
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: bossId, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, 'test', 'realm-admin')] });
      const escalation = await errorOf(support.kc.users.impersonation({ realm: 'test', id: bossId }, { user: bossId, realm: 'test' }));
      assert.equal(escalation.status, 403);
      assert.match(String(escalation.body.errorMessage), /boss holds administrator roles you do not hold/);
      assert.equal((await support.kc.users.findOne({ realm: 'test', id: bossId }))!.access?.impersonate, false);
      assert.equal((await ts.kc.users.impersonation({ realm: 'test', id: bossId }, { user: bossId, realm: 'test' })).sameRealm, false, "master's admin holds every role");

      const { id: offId } = await ts.kc.users.create({ realm: 'test', username: 'off', enabled: false });
      const disabled = await errorOf(ts.kc.users.impersonation({ realm: 'test', id: offId }, { user: offId, realm: 'test' }));
      assert.deepEqual([disabled.status, disabled.body.errorMessage], [400, 'User is disabled']);

      const sa = await ts.kc.clients.getServiceAccountUser({ realm: 'test', id: 'imp-support' });
      const service = await errorOf(ts.kc.users.impersonation({ realm: 'test', id: sa.id! }, { user: sa.id!, realm: 'test' }));
      assert.deepEqual([service.status, service.body.errorMessage], [400, 'Service accounts cannot be impersonated']);

      assert.equal((await errorOf(ts.kc.users.impersonation({ realm: 'test', id: 'no-such-user' }, { user: 'x', realm: 'test' }))).status, 404);
      // A token of realm test administers nothing in master.
      const master = await ts.kc.users.find({ realm: 'master', username: ADMIN_USERNAME, exact: true });
      assert.equal((await impersonate((support.kc as unknown as { accessToken: string }).accessToken, 'master', master[0]!.id!)).status, 403);
      assert.equal((await fetch(url(`/realms/test/users/${ts.user.id}/impersonation`), { method: 'POST' })).status, 401);
    });

    test("an administrator of the same realm is signed out of their own session there first (Keycloak's sameRealm)", async () => {
      const { id: carolId } = await ts.kc.users.create({ realm: 'test', username: 'carol', enabled: true, email: 'carol@example.com', firstName: 'Carol', lastName: 'Admin', credentials: [{ type: 'password', value: 'carol password 42', temporary: false }] });
      await ts.kc.users.addClientRoleMappings({ realm: 'test', id: carolId, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, 'test', 'impersonation')] });
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { directAccessGrantsEnabled: true });
      const grant = await tokenRequest(ts, { grant_type: 'password', username: 'carol', password: 'carol password 42', scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(grant.statusCode, 200, grant.body);
      const { access_token: carolToken, refresh_token: carolRefresh } = grant.json() as { access_token: string; refresh_token: string };

      const res = await impersonate(carolToken, 'test', ts.user.id);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as { sameRealm: boolean }).sameRealm, true);
      const again = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: carolRefresh }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(again.statusCode, 400, "carol's own session ended, with its tokens");
      assert.equal(again.json().error, 'invalid_grant');
      const events = await ts.kc.realms.findEvents({ realm: 'test', type: 'IMPERSONATE', user: ts.user.id });
      assert.match(String(events[0]!.details?.reason), /started by carol of realm test/);
    });

    test("a User Session Note mapper puts the impersonator in the tokens (Keycloak's way for applications to tell)", async () => {
      const note = (name: string, claim: string): Record<string, unknown> => ({
        name,
        protocol: 'openid-connect',
        protocolMapper: 'oidc-usersessionmodel-note-mapper',
        config: { 'user.session.note': name, 'claim.name': claim, 'jsonType.label': 'String', 'access.token.claim': 'true', 'id.token.claim': 'true' },
      });
      await ts.kc.clients.addProtocolMapper({ realm: 'test', id: 'web-app' }, note('IMPERSONATOR_USERNAME', 'impersonator.username'));
      await ts.kc.clients.addProtocolMapper({ realm: 'test', id: 'web-app' }, note('IMPERSONATOR_ID', 'impersonator.id'));
      const unknown = await errorOf(ts.kc.clients.addProtocolMapper({ realm: 'test', id: 'web-app' }, note('clientAddress', 'ip')));
      assert.equal(unknown.status, 400);
      assert.match(String(unknown.body.errorMessage), /keep the notes IMPERSONATOR_ID, IMPERSONATOR_USERNAME, AUTH_TIME; "clientAddress" is not one of them/);
      const adminId = (await ts.kc.users.find({ realm: 'master', username: ADMIN_USERNAME, exact: true }))[0]!.id!;
      const codeTokens = async (jar: CookieJar): Promise<{ access_token: string; id_token: string; refresh_token: string }> => {
        const flow = await runAuthorization(ts, { jar });
        const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: flow.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(res.statusCode, 200, res.body);
        return res.json();
      };

      const impersonated = await codeTokens(cookiesOf(await impersonate(ts.kc.accessToken!, 'test', ts.user.id)));
      const expected = { username: ADMIN_USERNAME, id: adminId };
      assert.deepEqual(decodeJwt(impersonated.access_token).impersonator, expected);
      assert.deepEqual(decodeJwt(impersonated.id_token).impersonator, expected);
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: impersonated.refresh_token }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.deepEqual(decodeJwt(refreshed.json().access_token as string).impersonator, expected, 'and on every refresh of the chain');
      const info = await ts.app.inject({ method: 'GET', url: '/auth/realms/test/protocol/openid-connect/userinfo', headers: { authorization: `Bearer ${refreshed.json().access_token as string}` } });
      assert.deepEqual(info.json().impersonator, expected, 'userinfo.token.claim follows id.token.claim');

      const own = await codeTokens(new CookieJar());
      assert.equal(decodeJwt(own.access_token).impersonator, undefined, "alice's own sign-in: no such claim");
      assert.equal(decodeJwt(own.id_token).impersonator, undefined);
    });
  });
}
