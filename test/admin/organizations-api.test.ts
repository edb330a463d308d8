import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM, PASSWORD } from '../helpers/server.js';
import { CookieJar, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const OIDC = '/protocol/openid-connect';

// Keycloak 26's Organizations API through @keycloak/keycloak-admin-client 26, unchanged.
for (const dialect of dialects()) {
  describe(`admin API: organizations (${dialect})`, () => {
    let ts: AdminTestServer;
    let auth: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
    });
    after(() => ts.close());

    async function login(username: string, organization: string): Promise<{ access_token: string; refresh_token: string }> {
      const r = await runAuthorization(ts, { username, organization, jar: new CookieJar(), query: { scope: 'openid core_data' } });
      assert.ok(r.code, `no code: ${r.location.href}`);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }
    const claims = async (token: string): Promise<Record<string, unknown>> =>
      (
        await ts.app.inject({
          method: 'POST',
          url: realmPath(`${OIDC}/token/introspect`),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams({ token }).toString(),
        })
      ).json();
    const refresh = (token: string) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: token }, { authorization: auth });

    test('create, read, search, update and delete an organization with domains', async () => {
      const { id } = await ts.kc.organizations.create({ realm: REALM, name: 'Wayne Enterprises', description: 'Gotham', enabled: true, domains: [{ name: 'wayne.example', verified: true }] });
      assert.match(id, /^[0-9a-f-]{36}$/);
      const org = await ts.kc.organizations.findOne({ realm: REALM, id });
      assert.equal(org.name, 'Wayne Enterprises');
      assert.equal(org.alias, 'wayne-enterprises', 'the alias defaults to the name');
      assert.equal(org.description, 'Gotham');
      assert.equal(org.enabled, true);
      assert.deepEqual(org.domains, [{ name: 'wayne.example', verified: true }]);
      assert.deepEqual((await ts.kc.organizations.find({ realm: REALM, search: 'wayne' })).map((o) => o.id), [id]);
      assert.deepEqual((await ts.kc.organizations.find({ realm: REALM, search: 'wayne.example' })).map((o) => o.id), [id], 'domains are searched too');
      assert.deepEqual(await ts.kc.organizations.find({ realm: REALM, search: 'wayne', exact: true }), []);
      // Trailing slash (the client's own path for find) and without.
      const token = await ts.kc.getAccessToken();
      const bare = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/organizations`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(bare.status, 200);
      assert.ok(((await bare.json()) as unknown[]).length >= 2);

      await ts.kc.organizations.updateById({ realm: REALM, id }, { ...org, name: 'Wayne Corp', domains: [{ name: 'wayne.example', verified: true }, { name: 'wayne.test', verified: false }] });
      const up = await ts.kc.organizations.findOne({ realm: REALM, id });
      assert.equal(up.name, 'Wayne Corp');
      assert.deepEqual(up.domains?.map((d) => d.name), ['wayne.example', 'wayne.test']);
      // A domain belongs to one organization of the realm; names and domains are validated.
      assert.equal(await statusOf(ts.kc.organizations.create({ realm: REALM, name: 'Copycat', domains: [{ name: 'wayne.test' }] })), 409);
      assert.equal(await statusOf(ts.kc.organizations.create({ realm: REALM, name: 'Bad', domains: [{ name: 'not a domain' }] })), 400);
      assert.equal(await statusOf(ts.kc.organizations.create({ realm: REALM, description: 'no name' })), 400);
      assert.equal(await statusOf(ts.kc.organizations.create({ realm: REALM, name: 'Wayne Corp', alias: 'acme' })), 409);

      await ts.kc.organizations.delById({ realm: REALM, id });
      assert.equal(await statusOf(ts.kc.organizations.findOne({ realm: REALM, id })), 404);
      assert.equal(await statusOf(ts.kc.organizations.delById({ realm: REALM, id })), 404);
      const ops = (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourcePath === `organizations/${id}`).map((e) => e.operation);
      assert.deepEqual(ops, ['DELETE', 'UPDATE', 'CREATE']);
    });

    test("members: add (a bare string body), list, read, remove; the user's organization claim follows the membership", async () => {
      const { id: orgId } = await ts.kc.organizations.create({ realm: REALM, name: 'Stark', alias: 'stark' });
      const { id: userId } = await ts.kc.users.create({ realm: REALM, username: 'xena', enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
      await ts.kc.organizations.addMember({ realm: REALM, orgId, userId });
      assert.equal(await statusOf(ts.kc.organizations.addMember({ realm: REALM, orgId, userId })), 409);
      const members = await ts.kc.organizations.listMembers({ realm: REALM, orgId });
      assert.deepEqual(members.map((m) => m.username), ['xena']);
      assert.equal((members[0] as { membershipType?: string }).membershipType, 'UNMANAGED');
      assert.equal((await ts.kc.organizations.getMember({ realm: REALM, orgId, userId })).id, userId);
      assert.deepEqual((await ts.kc.organizations.memberOrganizations({ realm: REALM, userId })).map((o) => o.alias), ['stark']);

      const t = await login('xena', 'stark');
      assert.deepEqual((await claims(t.access_token)).organization, ['stark']);

      // A second organization: the next login may choose it, and its token says so.
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId });
      const t2 = await login('xena', 'acme');
      assert.deepEqual((await claims(t2.access_token)).organization, ['acme']);

      // Removed from stark: the tokens issued for stark stop working at once, acme's live on.
      await ts.kc.organizations.delMember({ realm: REALM, orgId, userId });
      assert.deepEqual(await ts.kc.organizations.listMembers({ realm: REALM, orgId }), []);
      assert.deepEqual(await claims(t.access_token), { active: false });
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      assert.equal((await claims(t2.access_token)).active, true);
      assert.equal(await statusOf(ts.kc.organizations.delMember({ realm: REALM, orgId, userId })), 404);
      assert.equal(await statusOf(ts.kc.organizations.addMember({ realm: REALM, orgId, userId: 'no-such-user' })), 404);

      // The member's id as a quoted JSON string is read the same; anything else is a 400, never a 500.
      const token = await ts.kc.getAccessToken();
      const post = (body: string) =>
        fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/organizations/${orgId}/members`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
      assert.equal((await post(JSON.stringify(userId))).status, 201);
      for (const bad of ['{}', '[]', '42', '"', 'not json at all']) assert.equal((await post(bad)).status, 400, bad);
      const del = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/sessions/no-such-session`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      assert.equal(del.status, 404);
    });

    test('a disabled organization cannot be chosen and its tokens are refused', async () => {
      const { id: orgId } = await ts.kc.organizations.create({ realm: REALM, name: 'Oscorp', alias: 'oscorp' });
      const { id: userId } = await ts.kc.users.create({ realm: REALM, username: 'yuri', enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
      await ts.kc.organizations.addMember({ realm: REALM, orgId, userId });
      const t = await login('yuri', 'oscorp');
      const org = await ts.kc.organizations.findOne({ realm: REALM, id: orgId });
      await ts.kc.organizations.updateById({ realm: REALM, id: orgId }, { ...org, enabled: false });
      assert.equal((await ts.kc.organizations.findOne({ realm: REALM, id: orgId })).enabled, false);
      assert.equal((await refresh(t.refresh_token)).statusCode, 400);
      const r = await runAuthorization(ts, { username: 'yuri', jar: new CookieJar() });
      assert.equal(r.location.searchParams.get('error'), 'access_denied', 'no enabled organization left to choose');
      await ts.kc.organizations.updateById({ realm: REALM, id: orgId }, { ...org, enabled: true });
      await login('yuri', 'oscorp');
    });

    test('a realm user without manage-realm cannot change organizations', async () => {
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
      const alice = ts.newClient(REALM);
      await alice.auth({ username: 'alice', password: PASSWORD, grantType: 'password', clientId: ts.publicClient.id });
      assert.equal(await statusOf(alice.organizations.find({ realm: REALM })), 403);
      assert.equal(await statusOf(alice.organizations.create({ realm: REALM, name: 'Evil' })), 403);
    });
  });
}
