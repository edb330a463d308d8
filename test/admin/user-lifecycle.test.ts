import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import {
  addMember,
  bruteForceStatus,
  countUsers,
  createOrganization,
  createUser,
  deleteOrganization,
  deleteUser,
  disableOrganization,
  disableUser,
  enableUser,
  listMembers,
  listUsers,
  logoutUser,
  removeMember,
  revokeConsent,
  revokeTokens,
  unlockUser,
  updateOrganization,
  updateUser,
  userConsents,
  userOrganizations,
  userSessions,
} from '../../src/admin/operations.js';
import { NotFound, ValidationError } from '../../src/admin/validation.js';
import { ConflictError } from '../../src/storage/types.js';

const OIDC = '/protocol/openid-connect';

// The admin operations (src/admin/operations) against a real server: each change is seen at once by
// the token, userinfo and introspection endpoints and by the login pages.
for (const dialect of dialects()) {
  describe(`user and organization lifecycle (${dialect})`, () => {
    let ts: TestServer;
    let auth: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    async function login(opts: { username?: string; organization?: string; jar?: CookieJar } = {}): Promise<{ access_token: string; refresh_token: string; jar: CookieJar }> {
      const r = await runAuthorization(ts, { query: { scope: 'openid profile email core_data' }, ...opts });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return { ...res.json(), jar: r.jar };
    }
    const userinfo = (token: string) => ts.app.inject({ method: 'GET', url: realmPath(`${OIDC}/userinfo`), headers: { authorization: `Bearer ${token}` } });
    const introspect = async (token: string): Promise<{ active: boolean; organization?: string[] }> =>
      (
        await ts.app.inject({
          method: 'POST',
          url: realmPath(`${OIDC}/token/introspect`),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams({ token }).toString(),
        })
      ).json();
    const refresh = (token: string) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: token }, { authorization: auth });
    /** Whether the browser holding `jar` is still signed in: an authorization request skips the login page. */
    async function signedIn(jar: CookieJar): Promise<boolean> {
      const res = await inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', res.headers.location as string);
      return !/name="password"/.test(page.body);
    }

    async function newUser(username: string, orgAliases = ['acme']): Promise<string> {
      return (await createUser(ts.store, { realmId: REALM, username, password: PASSWORD, email: `${username}@example.com`, orgAliases })).id;
    }

    test('disabling a user refuses their tokens at once and ends their sessions; enabling lets them log in again', async () => {
      await newUser('dana');
      const t = await login({ username: 'dana' });
      assert.equal((await userinfo(t.access_token)).statusCode, 200);
      assert.equal((await introspect(t.access_token)).active, true);
      assert.equal(await signedIn(t.jar), true);

      const u = await disableUser(ts.store, { realmId: REALM, user: 'dana' });
      assert.equal(u.enabled, false);
      assert.equal((await userinfo(t.access_token)).statusCode, 401);
      assert.equal((await introspect(t.access_token)).active, false);
      assert.equal((await introspect(t.refresh_token)).active, false);
      const r = await refresh(t.refresh_token);
      assert.equal(r.statusCode, 400);
      assert.equal(r.json().error, 'invalid_grant');
      assert.equal(await signedIn(t.jar), false, 'the browser session ended');
      await assert.rejects(login({ username: 'dana' }), /login failed/);

      await enableUser(ts.store, { realmId: REALM, user: 'dana' });
      // Tokens issued before the disable stay dead: their chains were revoked, not just suspended.
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      const again = await login({ username: 'dana' });
      assert.equal((await userinfo(again.access_token)).statusCode, 200);
    });

    test('logout ends every session and revokes every chain; sessions lists what is live', async () => {
      await newUser('erin');
      const a = await login({ username: 'erin' });
      const b = await login({ username: 'erin' });
      const sessions = await userSessions(ts.store, { realmId: REALM, user: 'erin' });
      assert.equal(sessions.length, 2);
      assert.deepEqual(sessions[0]!.clients, [ts.client.id]);
      const r = await logoutUser(ts.store, { realmId: REALM, user: 'erin' });
      assert.deepEqual(r, { sessions: 2, chains: 2 });
      for (const t of [a, b]) {
        assert.equal((await userinfo(t.access_token)).statusCode, 401);
        assert.equal((await introspect(t.access_token)).active, false);
        assert.equal((await refresh(t.refresh_token)).statusCode, 400);
        assert.equal(await signedIn(t.jar), false);
      }
      assert.deepEqual(await userSessions(ts.store, { realmId: REALM, user: 'erin' }), []);
    });

    test('deleting a user removes them and everything of theirs; their tokens are refused', async () => {
      const id = await newUser('fred');
      const t = await login({ username: 'fred' });
      assert.equal((await userConsents(ts.store, { realmId: REALM, user: 'fred' })).length, 1);
      await deleteUser(ts.store, { realmId: REALM, user: id });
      assert.equal(await ts.store.users.get(id), undefined);
      assert.equal((await userinfo(t.access_token)).statusCode, 401);
      assert.equal((await introspect(t.access_token)).active, false);
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      assert.deepEqual(await ts.store.consents.listForUser(REALM, id), []);
      assert.deepEqual(await ts.store.sessions.listActive(REALM, id, 0), []);
      const chains = await ts.store.db.kysely.selectFrom('refresh_chains').select('id').where('user_id', '=', id).execute();
      assert.deepEqual(chains, []);
      // The username is free again, and the new user has none of the old one's grants.
      await newUser('fred');
      assert.deepEqual(await userConsents(ts.store, { realmId: REALM, user: 'fred' }), []);
      await assert.rejects(deleteUser(ts.store, { realmId: REALM, user: id }), NotFound);
    });

    test('update validates and changes email and organizations; leaving an organization revokes its tokens', async () => {
      await createOrganization(ts.store, { realmId: REALM, alias: 'globex', name: 'Globex' });
      await newUser('gina');
      const t = await login({ username: 'gina' });
      assert.deepEqual((await introspect(t.access_token)).organization, ['acme']);
      await assert.rejects(updateUser(ts.store, { realmId: REALM, user: 'gina', email: 'not an email' }), ValidationError);
      await assert.rejects(updateUser(ts.store, { realmId: REALM, user: 'gina', organizations: ['nope'] }), ValidationError);
      await assert.rejects(updateUser(ts.store, { realmId: 'nope', user: 'gina' }), ValidationError);
      const u = await updateUser(ts.store, { realmId: REALM, user: 'gina', email: 'gina@globex.example', organizations: ['globex'] });
      assert.equal(u.email, 'gina@globex.example');
      assert.deepEqual((await userOrganizations(ts.store, { realmId: REALM, user: 'gina' })).map((o) => o.alias), ['globex']);
      assert.equal((await refresh(t.refresh_token)).statusCode, 400, 'the chain bound to acme is revoked');
      assert.equal((await introspect(t.access_token)).active, false);
      const n = await login({ username: 'gina', organization: 'globex' });
      assert.deepEqual((await introspect(n.access_token)).organization, ['globex']);
      const info = (await userinfo(n.access_token)).json();
      assert.equal(info.email, 'gina@globex.example');
    });

    test('search, count and paging', async () => {
      for (const n of ['hal-1', 'hal-2', 'hal-3']) await newUser(n);
      assert.deepEqual((await listUsers(ts.store, { realmId: REALM, search: 'hal-' })).map((u) => u.username), ['hal-1', 'hal-2', 'hal-3']);
      assert.deepEqual((await listUsers(ts.store, { realmId: REALM, search: 'hal-', first: 1, max: 1 })).map((u) => u.username), ['hal-2']);
      assert.deepEqual((await listUsers(ts.store, { realmId: REALM, username: 'HAL-2', exact: true })).map((u) => u.username), ['hal-2']);
      assert.deepEqual((await listUsers(ts.store, { realmId: REALM, email: 'hal-3@example' })).map((u) => u.username), ['hal-3']);
      // LIKE wildcards in the search text match themselves only.
      assert.deepEqual(await listUsers(ts.store, { realmId: REALM, search: 'h%l' }), []);
      assert.deepEqual(await listUsers(ts.store, { realmId: REALM, search: 'hal_' }), []);
      assert.equal(await countUsers(ts.store, { realmId: REALM, search: 'hal' }), 3);
      await assert.rejects(listUsers(ts.store, { realmId: 'nope' }), ValidationError);
      await assert.rejects(listUsers(ts.store, { realmId: REALM, max: -1 }), ValidationError);
    });

    test('brute-force status and unlock', async () => {
      await newUser('ivan');
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts)}`);
      const form = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const attempt = (password: string) =>
        ts.app.inject({
          method: 'POST',
          url: form.action,
          remoteAddress: '10.1.2.3',
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username: 'ivan', password }).toString(),
        });
      assert.deepEqual(await bruteForceStatus(ts.store, { realmId: REALM, user: 'ivan' }), { numFailures: 0, disabled: false, lastFailure: 0, lockedFor: 0 });
      for (let i = 0; i < 2; i++) await attempt('wrong-password');
      const s = await bruteForceStatus(ts.store, { realmId: REALM, user: 'ivan' });
      assert.equal(s.numFailures, 2);
      assert.ok(s.lastFailure > 0);
      for (let i = 0; i < 3; i++) {
        await attempt('wrong-password');
        ts.clock.advance(10);
      }
      assert.equal((await attempt(PASSWORD)).statusCode, 429, 'locked');
      assert.equal((await bruteForceStatus(ts.store, { realmId: REALM, user: 'ivan' })).disabled, true);
      await unlockUser(ts.store, { realmId: REALM, user: 'ivan' });
      assert.equal((await bruteForceStatus(ts.store, { realmId: REALM, user: 'ivan' })).disabled, false);
      assert.equal((await attempt(PASSWORD)).statusCode, 303, 'the right password works at once after the unlock');
    });

    test('consents: revoking one withdraws it and the client tokens of the user', async () => {
      await newUser('jane');
      const t = await login({ username: 'jane' });
      const consents = await userConsents(ts.store, { realmId: REALM, user: 'jane' });
      assert.deepEqual(consents.map((c) => c.clientId), [ts.client.id]);
      await revokeConsent(ts.store, { realmId: REALM, user: 'jane', clientId: ts.client.id });
      assert.deepEqual(await userConsents(ts.store, { realmId: REALM, user: 'jane' }), []);
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      await assert.rejects(revokeConsent(ts.store, { realmId: REALM, user: 'jane', clientId: ts.client.id }), NotFound);
      // The next login asks for consent again.
      const r = await runAuthorization(ts, { username: 'jane', jar: t.jar });
      assert.ok(r.pages.includes('consent'));
    });

    test('token revoke by user and by client', async () => {
      await newUser('karl');
      const k = await login({ username: 'karl' });
      const l = await login({ username: 'karl' });
      assert.deepEqual(await revokeTokens(ts.store, { realmId: REALM, user: 'karl' }), { chains: 2 });
      for (const t of [k, l]) assert.equal((await introspect(t.access_token)).active, false);
      const a = await login();
      assert.ok((await revokeTokens(ts.store, { realmId: REALM, clientId: ts.client.id })).chains >= 1);
      assert.equal((await refresh(a.refresh_token)).statusCode, 400);
      await assert.rejects(revokeTokens(ts.store, { realmId: REALM }), ValidationError);
      await assert.rejects(revokeTokens(ts.store, { realmId: REALM, clientId: 'nope' }), ValidationError);
    });

    test('organizations: update, domains, members, disable and delete', async () => {
      const org = await createOrganization(ts.store, { realmId: REALM, alias: 'initech', name: 'Initech', domains: [{ name: 'Initech.example', verified: false }] });
      await assert.rejects(createOrganization(ts.store, { realmId: REALM, alias: 'dup', domains: [{ name: 'initech.example', verified: false }] }), ConflictError);
      assert.equal(await ts.store.organizations.findByAlias(REALM, 'dup'), undefined, 'a failed create leaves nothing behind');
      const up = await updateOrganization(ts.store, { realmId: REALM, organization: 'initech', description: 'TPS reports', domains: [{ name: 'initech.example', verified: true }, { name: 'initrode.example', verified: false }] });
      assert.equal(up.description, 'TPS reports');
      assert.deepEqual(up.domains, [{ name: 'initech.example', verified: true }, { name: 'initrode.example', verified: false }]);
      await assert.rejects(updateOrganization(ts.store, { realmId: REALM, organization: org.id, domains: [{ name: 'not a domain', verified: false }] }), ValidationError);
      await assert.rejects(updateOrganization(ts.store, { realmId: REALM, organization: org.id, alias: 'acme' }), ConflictError);

      const id = await newUser('lena', []);
      await addMember(ts.store, { realmId: REALM, organization: 'initech', user: id });
      await assert.rejects(addMember(ts.store, { realmId: REALM, organization: 'initech', user: id }), ConflictError);
      assert.deepEqual((await listMembers(ts.store, { realmId: REALM, organization: org.id })).map((u) => u.username), ['lena']);
      const t = await login({ username: 'lena', organization: 'initech' });
      assert.deepEqual((await introspect(t.access_token)).organization, ['initech']);

      // Disabled: tokens for it are refused, and its members cannot choose it.
      await disableOrganization(ts.store, { realmId: REALM, organization: 'initech' });
      assert.equal((await introspect(t.access_token)).active, false);
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      const blocked = await runAuthorization(ts, { username: 'lena', jar: new CookieJar() });
      assert.equal(blocked.code, undefined);
      assert.equal(blocked.location.searchParams.get('error'), 'access_denied');
      await updateOrganization(ts.store, { realmId: REALM, organization: 'initech', enabled: true });
      const t2 = await login({ username: 'lena', organization: 'initech', jar: new CookieJar() });

      await removeMember(ts.store, { realmId: REALM, organization: 'initech', user: 'lena' });
      await assert.rejects(removeMember(ts.store, { realmId: REALM, organization: 'initech', user: 'lena' }), NotFound);
      assert.equal((await introspect(t2.access_token)).active, false, 'a removed member loses the tokens of the organization');

      await addMember(ts.store, { realmId: REALM, organization: 'initech', user: 'lena' });
      const t3 = await login({ username: 'lena', organization: 'initech', jar: new CookieJar() });
      await deleteOrganization(ts.store, { realmId: REALM, organization: 'initech' });
      assert.equal((await introspect(t3.access_token)).active, false);
      assert.deepEqual(await userOrganizations(ts.store, { realmId: REALM, user: 'lena' }), []);
      assert.equal(await ts.store.organizationAdmin.get(org.id), undefined);
      await assert.rejects(deleteOrganization(ts.store, { realmId: REALM, organization: org.id }), NotFound);
    });
  });
}
