import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { basic } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { FetchCookieJar, browse, consentUntil, followRedirects } from '../helpers/fetch-browser.js';
import { parseForm } from '../helpers/flow.js';
import { startUpstream, type Upstream, type UpstreamAccount } from '../helpers/upstream-provider.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { discoverProvider } from '../../src/admin/operations/identity-providers.js';

// Keycloak's identity provider mappers, made through keycloak-admin-client and applied at sign-ins through
// node-oidc-provider over real HTTP: roles (realm and client), attributes, user properties and groups from
// the provider's claims or hardcoded, with Keycloak's sync modes (IMPORT: when the user is made; FORCE: at
// every sign-in; LEGACY: a claim-to-role mapper only takes its role away), and what the tokens say after.
const REALM = 'test';
const EXTRA = ['groups', 'org', 'nick', 'level'];

for (const dialect of dialects()) {
  describe(`identity provider mappers (${dialect})`, () => {
    let ts: AdminTestServer;
    let up: Upstream;
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/${REALM}/broker/${alias}/endpoint`;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: callback('corp'), extraClaims: EXTRA });
      const endpoints = await discoverProvider(up.issuer);
      await ts.kc.identityProviders.create({
        realm: REALM,
        alias: 'corp',
        providerId: 'oidc',
        displayName: 'Corp SSO',
        config: { ...endpoints, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile', syncMode: 'IMPORT' },
      });
      for (const name of ['staff', 'ops', 'flagged']) await ts.kc.roles.create({ realm: REALM, name });
      await ts.kc.clients.createRole({ realm: REALM, id: 'web-app', name: 'viewer' });
      const { id: people } = await ts.kc.groups.create({ realm: REALM, name: 'people' });
      await ts.kc.groups.createChildGroup({ realm: REALM, id: people }, { name: 'engineers' });
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    /** Adds a mapper to corp through keycloak-admin-client; its id (from the Location header). */
    const add = async (name: string, type: string, config: Record<string, string>): Promise<string> =>
      (await ts.kc.identityProviders.createMapper({ realm: REALM, alias: 'corp', identityProviderMapper: { name, identityProviderAlias: 'corp', identityProviderMapper: type, config } })).id;

    /** Follows redirects as a browser does (GET), until a page, or a redirect to the client. */
    const follow = (jar: FetchCookieJar, url: URL): Promise<{ url: URL; res: Response }> => followRedirects(jar, url, (u) => u.host === 'app.example.com');

    /** Starts a sign-in of web-app with kc_idp_hint=corp; where the browser lands after the provider. */
    async function viaProvider(jar: FetchCookieJar, account: UpstreamAccount): Promise<{ url: URL; res: Response }> {
      up.nextAccount = account;
      const q = new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1', kc_idp_hint: 'corp' });
      return follow(jar, new URL(`/auth/realms/${REALM}/protocol/openid-connect/auth?${q}`, ts.baseUrl));
    }

    /** Consents until the code comes back; the ID token's and the access token's claims. */
    async function finish(jar: FetchCookieJar, at: { url: URL; res: Response }): Promise<{ id: Record<string, unknown>; access: { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> } }> {
      const code = (await consentUntil(jar, at, (u) => u.host === 'app.example.com')).searchParams.get('code')!;
      const tokens = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }),
      });
      assert.equal(tokens.status, 200);
      const body = (await tokens.json()) as { id_token: string; access_token: string };
      return { id: decodeJwt(body.id_token), access: decodeJwt(body.access_token) };
    }

    const signIn = async (account: UpstreamAccount) => {
      const jar = new FetchCookieJar();
      return finish(jar, await viaProvider(jar, account));
    };
    const realmRoles = (t: { realm_access?: { roles: string[] } }): string[] => (t.realm_access?.roles ?? []).filter((r) => ['staff', 'ops', 'flagged'].includes(r)).sort();
    const clientRoles = (t: { resource_access?: Record<string, { roles: string[] }> }): string[] => (t.resource_access?.['web-app']?.roles ?? []).sort();
    const userOf = async (username: string) => {
      const u = await ts.store.users.findByUsername(REALM, username);
      assert.ok(u, `user ${username}`);
      return u;
    };
    const mapped = async (userId: string) => ({
      realm: (await ts.store.roles.mappedRoles(userId)).filter((r) => r.clientId === '' && ['staff', 'ops', 'flagged'].includes(r.name)).map((r) => r.name).sort(),
      client: (await ts.store.roles.mappedRoles(userId)).filter((r) => r.clientId === 'web-app').map((r) => r.name).sort(),
      groups: await ts.store.groups.userGroupPaths(userId),
    });
    const clear = async (): Promise<void> => {
      for (const m of await ts.kc.identityProviders.findMappers({ realm: REALM, alias: 'corp' })) await ts.kc.identityProviders.delMapper({ realm: REALM, alias: 'corp', id: m.id! });
    };

    test('the admin API: create, list, read, update, delete, mapper types; refusals (400, 404, 409, 403); admin events', async () => {
      const id = await add('staff', 'oidc-hardcoded-role-idp-mapper', { role: 'staff', syncMode: 'INHERIT' });
      const one = await ts.kc.identityProviders.findOneMapper({ realm: REALM, alias: 'corp', id });
      assert.deepEqual(one, { id, name: 'staff', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff', syncMode: 'INHERIT' } });
      await add('viewer', 'oidc-role-idp-mapper', { claim: 'groups', 'claim.value': 'eng', role: 'web-app.viewer', syncMode: 'FORCE' });
      assert.deepEqual((await ts.kc.identityProviders.findMappers({ realm: REALM, alias: 'corp' })).map((m) => m.name), ['staff', 'viewer']);
      await ts.kc.identityProviders.updateMapper({ realm: REALM, alias: 'corp', id }, { id, name: 'staff role', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'ops', syncMode: 'FORCE' } });
      assert.deepEqual((await ts.kc.identityProviders.findOneMapper({ realm: REALM, alias: 'corp', id }))!.config, { role: 'ops', syncMode: 'FORCE' });
      const types = await ts.kc.identityProviders.findMapperTypes({ realm: REALM, alias: 'corp' });
      assert.deepEqual(Object.keys(types).sort(), ['hardcoded-attribute-idp-mapper', 'oidc-hardcoded-group-idp-mapper', 'oidc-hardcoded-role-idp-mapper', 'oidc-role-idp-mapper', 'oidc-user-attribute-idp-mapper']);
      assert.deepEqual(types['oidc-role-idp-mapper']!.properties!.map((p) => p.name), ['claim', 'claim.value', 'role']);

      // Refusals.
      const create = (rep: Record<string, unknown>) => ts.kc.identityProviders.createMapper({ realm: REALM, alias: 'corp', identityProviderMapper: { identityProviderAlias: 'corp', ...rep } });
      const bad = async (rep: Record<string, unknown>, pattern: RegExp): Promise<void> => {
        const e = await errorOf(create(rep));
        assert.equal(e.status, 400, JSON.stringify(rep));
        assert.match(String(e.body.errorMessage ?? e.body.error), pattern);
      };
      await bad({ name: 'x', identityProviderMapper: 'saml-role-idp-mapper', config: {} }, /not supported/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: {} }, /config\.role is required/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'no-such-role' } }, /no role "no-such-role"/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'web-app.no-such' } }, /no role/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-group-idp-mapper', config: { group: '/people/nobody' } }, /no group/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-role-idp-mapper', config: { role: 'staff', 'claim.value': 'a' } }, /config\.claim is required/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-user-attribute-idp-mapper', config: { claim: 'a', 'user.attribute': 'username' } }, /does not change the username/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff', syncMode: 'SOMETIMES' } }, /syncMode/);
      await bad({ name: 'x', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' }, identityProviderAlias: 'other' }, /identityProviderAlias/);
      await bad({ identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } }, /name is required/);
      assert.equal((await errorOf(create({ name: 'viewer', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } }))).status, 409, 'a name the provider has');
      assert.equal(await statusOf(ts.kc.identityProviders.updateMapper({ realm: REALM, alias: 'corp', id }, { name: 'viewer', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } })), 409);
      assert.equal(await statusOf(ts.kc.identityProviders.findMappers({ realm: REALM, alias: 'nope' })), 404);
      assert.equal(await ts.kc.identityProviders.findOneMapper({ realm: REALM, alias: 'corp', id: 'no-such-id' }), null, '404');
      assert.equal(await statusOf(ts.kc.identityProviders.delMapper({ realm: REALM, alias: 'corp', id: 'no-such-id' })), 404);
      assert.equal(await statusOf(ts.kc.identityProviders.updateMapper({ realm: REALM, alias: 'corp', id: 'no-such-id' }, { name: 'z', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } })), 404);

      // view-identity-providers reads, manage-identity-providers changes; an admin role only by an admin holding it.
      const viewer = await serviceAccountAdmin(ts, REALM, 'idp-viewer', ['view-identity-providers']);
      assert.equal((await viewer.kc.identityProviders.findMappers({ realm: REALM, alias: 'corp' })).length, 2);
      assert.equal(await statusOf(viewer.kc.identityProviders.createMapper({ realm: REALM, alias: 'corp', identityProviderMapper: { name: 'v', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } } })), 403);
      assert.equal(await statusOf(viewer.kc.identityProviders.delMapper({ realm: REALM, alias: 'corp', id })), 403);
      const manager = await serviceAccountAdmin(ts, REALM, 'idp-manager', ['manage-identity-providers']);
      const escalate = { name: 'admins', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'realm-management.realm-admin' } };
      assert.equal(await statusOf(manager.kc.identityProviders.createMapper({ realm: REALM, alias: 'corp', identityProviderMapper: escalate })), 403);
      assert.equal(await statusOf(manager.kc.identityProviders.createMapper({ realm: REALM, alias: 'corp', identityProviderMapper: { ...escalate, name: 'ok', config: { role: 'staff' } } })), 200);
      const nobody = await serviceAccountAdmin(ts, REALM, 'idp-nobody', ['view-users']);
      assert.equal(await statusOf(nobody.kc.identityProviders.findMappers({ realm: REALM, alias: 'corp' })), 403);

      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, resourceTypes: 'IDENTITY_PROVIDER_MAPPER', max: 100 });
      assert.deepEqual(events.map((e) => e.operationType).sort(), ['CREATE', 'CREATE', 'CREATE', 'UPDATE']);
      assert.ok(events.some((e) => e.resourcePath === `identity-provider/instances/corp/mappers/${id}`));
      await ts.kc.identityProviders.delMapper({ realm: REALM, alias: 'corp', id });
      assert.equal(await ts.kc.identityProviders.findOneMapper({ realm: REALM, alias: 'corp', id }), null);
      assert.ok((await ts.kc.realms.findAdminEvents({ realm: REALM, max: 100 })).some((e) => e.operationType === 'DELETE' && e.resourceType === 'IDENTITY_PROVIDER_MAPPER'));
      await clear();

      // Deleting a provider deletes its mappers: the same alias made again has none.
      const endpoints = await discoverProvider(up.issuer);
      const tmp = { realm: REALM, alias: 'tmp', providerId: 'oidc', config: { ...endpoints, clientId: 'c', clientSecret: 's' } };
      await ts.kc.identityProviders.create(tmp);
      await ts.kc.identityProviders.createMapper({ realm: REALM, alias: 'tmp', identityProviderMapper: { name: 't', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'staff' } } });
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'tmp' });
      await ts.kc.identityProviders.create(tmp);
      assert.deepEqual(await ts.kc.identityProviders.findMappers({ realm: REALM, alias: 'tmp' }), []);
      assert.deepEqual(await ts.store.identityProviders.mappers(REALM, 'tmp'), []);
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'tmp' });
    });

    test('first sign-in: every mapper applies; later sign-ins: FORCE applies again (and takes away), LEGACY only takes away, IMPORT does nothing; tokens say so at once', async () => {
      await clear();
      await add('staff', 'oidc-hardcoded-role-idp-mapper', { role: 'staff', syncMode: 'INHERIT' });
      await add('viewer', 'oidc-role-idp-mapper', { claim: 'groups', 'claim.value': 'eng', role: 'web-app.viewer', syncMode: 'FORCE' });
      await add('ops', 'oidc-role-idp-mapper', { claim: 'groups', 'claim.value': 'ops', role: 'ops' });
      await add('department', 'oidc-user-attribute-idp-mapper', { claim: 'org.dept', 'user.attribute': 'department', syncMode: 'FORCE' });
      await add('idp groups', 'oidc-user-attribute-idp-mapper', { claim: 'groups', 'user.attribute': 'idp_groups', syncMode: 'IMPORT' });
      await add('nick', 'oidc-user-attribute-idp-mapper', { claim: 'nick', 'user.attribute': 'firstName', syncMode: 'FORCE' });
      await add('tier', 'hardcoded-attribute-idp-mapper', { attribute: 'tier', 'attribute.value': 'gold', syncMode: 'IMPORT' });
      await add('engineers', 'oidc-hardcoded-group-idp-mapper', { group: '/people/engineers', syncMode: 'IMPORT' });
      try {
        const first = await signIn({ sub: 'm-1', email: 'mia@corp.example', preferred_username: 'mia', given_name: 'Mia', groups: ['eng', 'ops', { nested: 1 }, 42], org: { dept: 'R&D' }, nick: 'Mimi' });
        const mia = await userOf('mia');
        assert.equal(first.id.sub, mia.id);
        assert.deepEqual(await mapped(mia.id), { realm: ['ops', 'staff'], client: ['viewer'], groups: ['/people/engineers'] });
        assert.deepEqual(mia.attributes, { department: ['R&D'], idp_groups: ['eng', 'ops', '42'], tier: ['gold'] });
        assert.equal(mia.firstName, 'Mimi', 'firstName is the user property');
        // The tokens of this very sign-in carry what the mappers granted.
        assert.deepEqual(realmRoles(first.access), ['ops', 'staff']);
        assert.deepEqual(clientRoles(first.access), ['viewer']);

        // An administrator takes staff away and mia out of engineers; the provider's claims change.
        await ts.kc.users.delRealmRoleMappings({ realm: REALM, id: mia.id, roles: [{ id: (await ts.kc.roles.findOneByName({ realm: REALM, name: 'staff' }))!.id!, name: 'staff' }] });
        await ts.kc.users.delFromGroup({ realm: REALM, id: mia.id, groupId: (await ts.store.groups.userGroups(mia.id))[0]!.id });
        const second = await signIn({ sub: 'm-1', email: 'mia@corp.example', preferred_username: 'mia', groups: ['sales'], org: { dept: 'Sales' }, nick: 'Mia' });
        const again = await userOf('mia');
        assert.deepEqual(await mapped(mia.id), { realm: [], client: [], groups: [] }, 'IMPORT (staff, engineers) not again; FORCE and LEGACY took viewer and ops away');
        assert.deepEqual(again.attributes, { department: ['Sales'], idp_groups: ['eng', 'ops', '42'], tier: ['gold'] });
        assert.equal(again.firstName, 'Mia');
        assert.deepEqual(realmRoles(second.access), []);
        assert.deepEqual(clientRoles(second.access), []);

        // The provider's syncMode FORCE, inherited: staff is granted at every sign-in; a FORCE claim gone takes its attribute away.
        const p = (await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!;
        await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...p, config: { ...p.config, syncMode: 'FORCE' } });
        const third = await signIn({ sub: 'm-1', email: 'mia@corp.example', preferred_username: 'mia', groups: 'eng' });
        assert.deepEqual(await mapped(mia.id), { realm: ['staff'], client: ['viewer'], groups: [] }, 'a string claim equal to the value matches');
        assert.deepEqual((await userOf('mia')).attributes, { idp_groups: ['eng', 'ops', '42'], tier: ['gold'] });
        assert.deepEqual(realmRoles(third.access), ['staff']);
        assert.deepEqual(clientRoles(third.access), ['viewer']);
        await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...p, config: { ...p.config, syncMode: 'IMPORT' } });
      } finally {
        await clear();
      }
    });

    test("claims of odd shapes and sizes never fail a sign-in; a role another mapper grants is not taken away", async () => {
      await clear();
      await add('viewer', 'oidc-role-idp-mapper', { claim: 'groups', 'claim.value': 'eng', role: 'web-app.viewer', syncMode: 'FORCE' });
      await add('viewer by level', 'oidc-role-idp-mapper', { claim: 'level', 'claim.value': '3', role: 'web-app.viewer', syncMode: 'FORCE' });
      await add('flagged', 'oidc-role-idp-mapper', { claim: 'org.flags.on', 'claim.value': 'true', role: 'flagged', syncMode: 'FORCE' });
      await add('idp groups', 'oidc-user-attribute-idp-mapper', { claim: 'groups', 'user.attribute': 'idp_groups', syncMode: 'FORCE' });
      await add('department', 'oidc-user-attribute-idp-mapper', { claim: 'org.dept', 'user.attribute': 'department', syncMode: 'FORCE' });
      await add('nick', 'oidc-user-attribute-idp-mapper', { claim: 'nick', 'user.attribute': 'lastName', syncMode: 'FORCE' });
      try {
        const many = Array.from({ length: 5000 }, (_, i) => `g${i}`);
        many[4000] = 'eng';
        const odd = await signIn({ sub: 'o-1', email: 'odd@corp.example', preferred_username: 'odd', groups: many, level: 3, org: { dept: { deeper: ['x'] }, flags: { on: true } }, nick: 'n'.repeat(5000) });
        const user = await userOf('odd');
        assert.equal(odd.id.sub, user.id);
        // eng is past the first 1000 items looked at: the number 3 (level) matches "3" and grants viewer.
        assert.deepEqual(await mapped(user.id), { realm: ['flagged'], client: ['viewer'], groups: [] });
        assert.equal(user.attributes.idp_groups!.length, 100, 'at most 100 values');
        assert.equal(user.attributes.department, undefined, 'an object is not a value');
        assert.equal(user.lastName, 'User o-1', "a name too long is not kept: the provider's family_name stays");
        // level no longer matches but groups does (a list): viewer stays, granted by the other mapper.
        await signIn({ sub: 'o-1', email: 'odd@corp.example', groups: ['eng', null, [['deep']]], level: 'three', org: 'not an object', nick: '\u0000' });
        assert.deepEqual(await mapped(user.id), { realm: [], client: ['viewer'], groups: [] });
        assert.deepEqual((await userOf('odd')).attributes.idp_groups, ['eng']);
        // Neither matches: FORCE takes it away.
        await signIn({ sub: 'o-1', email: 'odd@corp.example', groups: [], level: 2 });
        assert.deepEqual(await mapped(user.id), { realm: [], client: [], groups: [] });
        assert.equal((await userOf('odd')).attributes.idp_groups, undefined, 'a FORCE claim gone takes its attribute away');
      } finally {
        await clear();
      }
    });

    test("an existing account linked after its password: the FORCE mappers apply from the provider's claims, not the IMPORT ones", async () => {
      await clear();
      await add('staff', 'oidc-hardcoded-role-idp-mapper', { role: 'staff', syncMode: 'IMPORT' });
      await add('viewer', 'oidc-role-idp-mapper', { claim: 'groups', 'claim.value': 'eng', role: 'web-app.viewer', syncMode: 'FORCE' });
      await add('department', 'oidc-user-attribute-idp-mapper', { claim: 'org.dept', 'user.attribute': 'department', syncMode: 'FORCE' });
      try {
        const { id } = await createUser(ts.store, { realmId: REALM, username: 'noor', password: 'noor password 1', email: 'noor@example.com' });
        const jar = new FetchCookieJar();
        const landed = await viaProvider(jar, { sub: 'n-1', email: 'noor@example.com', preferred_username: 'noor.n', groups: ['eng'], org: { dept: 'Labs' } });
        const html = await landed.res.text();
        assert.match(html, /Link your Corp SSO account/);
        assert.deepEqual(await mapped(id), { realm: [], client: [], groups: [] }, 'nothing before the password');
        const form = parseForm(html);
        const right = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, password: 'noor password 1' });
        const tokens = await finish(jar, await follow(jar, new URL(right.headers.get('location')!, ts.baseUrl)));
        assert.equal(tokens.id.sub, id);
        assert.deepEqual(await mapped(id), { realm: [], client: ['viewer'], groups: [] });
        assert.deepEqual((await ts.store.users.get(id))!.attributes, { department: ['Labs'] });
        assert.deepEqual(clientRoles(tokens.access), ['viewer']);
      } finally {
        await clear();
      }
    });
  });
}
