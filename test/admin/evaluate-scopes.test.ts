import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, PASSWORD, realmPath } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createOrganization, createUser, updateClient } from '../../src/admin/operations.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const realm = 'test';
const OIDC = 'openid-connect';
const flags = { 'access.token.claim': 'true', 'id.token.claim': 'true', 'userinfo.token.claim': 'true', 'introspection.token.claim': 'true' };

type Claims = Record<string, unknown>;
/** Keycloak's ProtocolMapperEvaluationRepresentation. */
type MapperEvaluation = { mapperId: string; mapperName: string; containerId: string; containerName: string; containerType: string; protocolMapper: string };

/** Claims that differ between any two tokens (time, identifiers, the session): the rest must be equal. */
const PER_TOKEN = ['iat', 'exp', 'jti', 'sid', 'auth_time', 'at_hash', 'session_state'];
function stable(c: Claims): Claims {
  const out = { ...c };
  for (const k of PER_TOKEN) delete out[k];
  return out;
}

/** Tables an issued token, a sign-in or an event writes to: an example must write none of them. */
const WRITTEN = ['refresh_chains', 'refresh_tokens', 'browser_sessions', 'events', 'admin_events', 'authorization_codes', 'interactions', 'consents', 'signing_keys', 'hmac_keys', 'revoked_access_tokens'] as const;

// Keycloak's client scope evaluation (evaluate-scopes) through keycloak-admin-client 26, checked against
// the tokens and UserInfo answers the real endpoints give the same user and client for the same scope.
for (const dialect of dialects()) {
  describe(`client scope evaluation (${dialect})`, () => {
    let ts: AdminTestServer;
    let bobId: string;
    let carolId: string;
    let clientMapperId: string;
    let scopeMapperId: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      const kc = ts.kc;
      // tenancy: an optional scope of web-app with a mapper; web-app itself has a mapper too.
      await kc.clientScopes.create({ realm, name: 'tenancy', protocol: OIDC });
      await kc.clients.update({ realm, id: 'web-app' }, { directAccessGrantsEnabled: true });
      await kc.clients.addOptionalClientScope({ realm, id: 'web-app', clientScopeId: 'tenancy' });
      await kc.clientScopes.addProtocolMapper({ realm, id: 'tenancy' }, { name: 'tenant', protocol: OIDC, protocolMapper: 'oidc-usermodel-attribute-mapper', config: { 'user.attribute': 'tenant', 'claim.name': 'tenant', ...flags } });
      await kc.clients.addProtocolMapper({ realm, id: 'web-app' }, { name: 'plan', protocol: OIDC, protocolMapper: 'oidc-hardcoded-claim-mapper', config: { 'claim.name': 'plan', 'claim.value': 'gold', ...flags } });
      clientMapperId = (await kc.clients.listProtocolMappers({ realm, id: 'web-app' }))[0]!.id!;
      scopeMapperId = (await kc.clientScopes.listProtocolMappers({ realm, id: 'tenancy' }))[0]!.id!;
      await ts.store.users.update(ts.user.id, { attributes: { tenant: ['t-42'], nickname: ['al'] }, firstName: 'Alice', lastName: 'Liddell' });
      // Roles: one of the realm, one of web-app.
      await kc.roles.create({ realm, name: 'viewer' });
      await kc.clients.createRole({ realm, id: 'web-app', name: 'editor' });
      const viewer = await kc.roles.findOneByName({ realm, name: 'viewer' });
      const editor = await kc.clients.findRole({ realm, id: 'web-app', roleName: 'editor' });
      await kc.users.addRealmRoleMappings({ realm, id: ts.user.id, roles: [{ id: viewer!.id!, name: 'viewer' }] });
      await kc.users.addClientRoleMappings({ realm, id: ts.user.id, clientUniqueId: 'web-app', roles: [{ id: editor!.id!, name: 'editor' }] });
      // bob: no organization; carol: two, the first by name being aardvark.
      bobId = (await createUser(ts.store, { realmId: realm, username: 'bob', password: PASSWORD, email: 'bob@example.com' })).id;
      await createOrganization(ts.store, { realmId: realm, alias: 'aardvark', name: 'Aardvark Ltd' });
      carolId = (await createUser(ts.store, { realmId: realm, username: 'carol', password: PASSWORD, orgAliases: ['acme', 'aardvark'] })).id;
    });
    after(() => ts.close());

    /** The tokens and UserInfo answer of a real code flow (login, consent, organization choice). */
    async function codeFlow(scope: string, user: { username?: string; organization?: string } = {}): Promise<{ access: Claims; id: Claims | undefined; userinfo: Claims | undefined }> {
      const r = await runAuthorization(ts, { query: { scope }, ...(user.username ? { username: user.username, password: PASSWORD } : {}), ...(user.organization ? { organization: user.organization } : {}) });
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(t.statusCode, 200, t.body);
      const body = t.json() as { access_token: string; id_token?: string };
      const info = await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/userinfo'), headers: { authorization: `Bearer ${body.access_token}` } });
      return { access: decodeJwt(body.access_token), id: body.id_token ? decodeJwt(body.id_token) : undefined, userinfo: info.statusCode === 200 ? (info.json() as Claims) : undefined };
    }

    // keycloak-admin-client's typings ask for every query parameter; Keycloak's console leaves some out.
    type Query = { id?: string; userId?: string; scope?: string };
    const ev = {
      access: (q: Query, kc = ts.kc): Promise<Claims> => kc.clients.evaluateGenerateAccessToken({ realm, id: 'web-app', ...q } as never) as Promise<Claims>,
      id: (q: Query, kc = ts.kc): Promise<Claims> => kc.clients.evaluateGenerateIdToken({ realm, id: 'web-app', ...q } as never) as Promise<Claims>,
      userinfo: (q: Query, kc = ts.kc): Promise<Claims> => kc.clients.evaluateGenerateUserInfo({ realm, id: 'web-app', ...q } as never) as Promise<Claims>,
      mappers: (q: Query, kc = ts.kc): Promise<MapperEvaluation[]> => kc.clients.evaluateListProtocolMapper({ realm, id: 'web-app', ...q } as never) as unknown as Promise<MapperEvaluation[]>,
    };
    const example = {
      access: (userId: string, scope?: string): Promise<Claims> => ev.access({ userId, ...(scope !== undefined ? { scope } : {}) }),
      id: (userId: string, scope?: string): Promise<Claims> => ev.id({ userId, ...(scope !== undefined ? { scope } : {}) }),
      userinfo: (userId: string, scope?: string): Promise<Claims> => ev.userinfo({ userId, ...(scope !== undefined ? { scope } : {}) }),
    };

    test('the example access token, ID token and UserInfo answer are those of a real code flow, with an optional scope asked for', async () => {
      const real = await codeFlow('openid tenancy');
      const access = await example.access(ts.user.id, 'openid tenancy');
      const id = await example.id(ts.user.id, 'openid tenancy');
      const userinfo = await example.userinfo(ts.user.id, 'openid tenancy');
      assert.deepEqual(stable(access), stable(real.access));
      assert.deepEqual(stable(id), stable(real.id!));
      assert.deepEqual(userinfo, real.userinfo);
      // What the comparison covers: the mappers of the optional scope and of the client, roles, the organization.
      assert.equal(access.tenant, 't-42');
      assert.equal(access.plan, 'gold');
      assert.equal(id.tenant, 't-42');
      assert.equal(userinfo.plan, 'gold');
      assert.deepEqual(access.organization, ['acme']);
      assert.deepEqual(userinfo.organization, ['acme']);
      assert.deepEqual((access.realm_access as { roles: string[] }).roles.includes('viewer'), true);
      assert.deepEqual(access.resource_access, { 'web-app': { roles: ['editor'] } });
      assert.equal(access.scope, 'openid tenancy');
      assert.equal(id.nickname, 'al');
      assert.equal(id.name, 'Alice Liddell');
      // A token's per-token claims are there, as in Keycloak's example; an ID token's at_hash is not (no access token was signed).
      for (const k of ['iat', 'exp', 'jti', 'sid']) assert.ok(access[k] !== undefined, k);
      assert.equal(typeof id.auth_time, 'number');
      assert.equal(id.at_hash, undefined);
    });

    test('an optional scope not asked for is not applied; scopes the client may not ask for are ignored', async () => {
      const real = await codeFlow('openid');
      const access = await example.access(ts.user.id, 'openid');
      assert.deepEqual(stable(access), stable(real.access));
      assert.deepEqual(stable(await example.id(ts.user.id, 'openid')), stable(real.id!));
      assert.deepEqual(await example.userinfo(ts.user.id, 'openid'), real.userinfo);
      assert.equal(access.tenant, undefined);
      assert.equal(access.plan, 'gold');
      // An unknown scope, and one the realm has but the client may not ask for, change nothing (the token endpoint would refuse them).
      await ts.kc.clientScopes.create({ realm, name: 'elsewhere', protocol: OIDC });
      assert.deepEqual(stable(await example.access(ts.user.id, 'openid  nosuch elsewhere openid')), stable(access));
    });

    test('without a scope parameter, the default scopes, as a password grant without scope gets them (a user of no organization)', async () => {
      const t = await tokenRequest(ts, { grant_type: 'password', username: 'bob', password: PASSWORD }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(t.statusCode, 200, t.body);
      const body = t.json() as { access_token: string; id_token: string };
      const access = await example.access(bobId);
      assert.deepEqual(stable(access), stable(decodeJwt(body.access_token)));
      assert.deepEqual(stable(await example.id(bobId, '')), stable(decodeJwt(body.id_token)));
      assert.equal(access.organization, undefined);
      assert.ok(!(access.scope as string).split(' ').includes('tenancy'));
      assert.ok(!(access.scope as string).split(' ').includes('offline_access'));
    });

    test('without openid: the access token as issued; the ID token and UserInfo answer as with openid', async () => {
      const real = await codeFlow('core_data');
      const access = await example.access(ts.user.id, 'core_data');
      assert.deepEqual(stable(access), stable(real.access));
      assert.equal(access.email, undefined, 'openid implies profile and email; without it, no claim of theirs');
      assert.deepEqual(stable(await example.id(ts.user.id, 'core_data')), stable(await example.id(ts.user.id, 'openid core_data')));
      assert.deepEqual(await example.userinfo(ts.user.id, 'core_data'), await example.userinfo(ts.user.id, 'openid core_data'));
    });

    test('a user of several organizations: the first by name, as a user choosing it gets', async () => {
      const real = await codeFlow('openid', { username: 'carol', organization: 'aardvark' });
      const access = await example.access(carolId, 'openid');
      assert.deepEqual(access.organization, ['aardvark']);
      assert.deepEqual(stable(access), stable(real.access));
      assert.deepEqual(await example.userinfo(carolId, 'openid'), real.userinfo);
    });

    test('the protocol mappers that apply: built-in claims of the released scopes, the optional scope\'s only when asked, the client\'s last', async () => {
      const asked = await ev.mappers({ scope: 'openid tenancy' });
      const tenancy = asked.filter((m) => m.containerName === 'tenancy');
      assert.deepEqual(tenancy, [{ mapperId: scopeMapperId, mapperName: 'tenant', containerId: 'tenancy', containerName: 'tenancy', containerType: 'client-scope', protocolMapper: 'oidc-usermodel-attribute-mapper' }]);
      assert.deepEqual(asked.at(-1), { mapperId: clientMapperId, mapperName: 'plan', containerId: 'web-app', containerName: '', containerType: 'client', protocolMapper: 'oidc-hardcoded-claim-mapper' });
      // openid implies the default profile and email: their claims are listed as Keycloak's mappers of those scopes.
      const email = asked.filter((m) => m.containerName === 'email').map((m) => m.mapperName);
      assert.deepEqual(email, ['email', 'email verified']);
      assert.ok(asked.some((m) => m.containerName === 'profile' && m.mapperName === 'username'));
      const plain = await ev.mappers({ scope: 'openid' });
      assert.equal(plain.filter((m) => m.containerName === 'tenancy').length, 0);
      assert.equal(plain.filter((m) => m.containerType === 'client').length, 1);
      // Without openid, profile and email are released only when asked for.
      const bare = await ev.mappers({ scope: 'core_data' });
      assert.deepEqual(bare.map((m) => m.mapperName), ['plan']);
    });

    test('scope mappings: every role of the realm or of a client is granted (full scope), none is not', async () => {
      const realmRoles = (await ts.kc.roles.find({ realm })).map((r) => r.name).sort();
      const granted = await ts.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'granted', scope: 'openid' });
      assert.deepEqual(granted.map((r) => r.name).sort(), realmRoles);
      assert.ok(realmRoles.includes('viewer'));
      assert.deepEqual(await ts.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'not-granted', scope: 'openid' }), []);
      const clientRoles = await ts.kc.clients.evaluatePermission({ realm, id: 'native-app', roleContainer: 'web-app', type: 'granted', scope: '' });
      assert.deepEqual(clientRoles.map((r) => [r.name, r.clientRole, r.containerId]), [['editor', true, 'web-app']]);
      assert.deepEqual(await ts.kc.clients.evaluatePermission({ realm, id: 'native-app', roleContainer: 'web-app', type: 'not-granted', scope: '' }), []);
      const missing = await errorOf(ts.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: 'nosuch', type: 'granted', scope: '' }));
      assert.equal(missing.status, 404);
      assert.equal(missing.body.errorMessage, 'Role Container not found');
    });

    test('scope mappings of a client without full scope: only the roles in its scope, for the scopes asked for; the example token is the real one', async () => {
      const kc = ts.kc;
      await kc.roles.create({ realm, name: 'reporter' });
      const reporter = (await kc.roles.findOneByName({ realm, name: 'reporter' }))!;
      await kc.users.addRealmRoleMappings({ realm, id: ts.user.id, roles: [{ id: reporter.id!, name: 'reporter' }] });
      // reporter is in the scope of the optional scope tenancy only; editor is web-app's own role.
      await ts.store.roleScopes.add(realm, { kind: 'scope', id: 'tenancy' }, [reporter.id!]);
      await updateClient(ts.store, { realmId: realm, clientId: 'web-app', fullScopeAllowed: false });
      try {
        const realmRoles = (await kc.roles.find({ realm })).map((r) => r.name).sort();
        const evaluate = async (type: 'granted' | 'not-granted', roleContainer: string, scope: string): Promise<string[]> =>
          (await kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer, type, scope })).map((r) => r.name!).sort();
        assert.deepEqual(await evaluate('granted', realm, 'openid'), []);
        assert.deepEqual(await evaluate('not-granted', realm, 'openid'), realmRoles);
        assert.deepEqual(await evaluate('granted', realm, 'openid tenancy'), ['reporter']);
        assert.deepEqual(await evaluate('not-granted', realm, 'openid tenancy'), realmRoles.filter((r) => r !== 'reporter'));
        assert.deepEqual(await evaluate('granted', 'web-app', 'openid'), ['editor']);
        assert.deepEqual(await evaluate('not-granted', 'web-app', 'openid'), []);
        const real = await codeFlow('openid tenancy');
        const access = await example.access(ts.user.id, 'openid tenancy');
        assert.deepEqual(stable(access), stable(real.access));
        assert.deepEqual(access.realm_access, { roles: ['reporter'] });
        assert.deepEqual(access.resource_access, { 'web-app': { roles: ['editor'] } });
        assert.equal((await example.access(ts.user.id, 'openid')).realm_access, undefined);
        // A composite in the scope brings what it contains (and says it is composite).
        await kc.roles.create({ realm, name: 'reporter-base' });
        const base = (await kc.roles.findOneByName({ realm, name: 'reporter-base' }))!;
        await kc.roles.createComposite({ roleId: reporter.id!, realm }, [{ id: base.id!, name: 'reporter-base' }]);
        const granted = await kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'granted', scope: 'openid tenancy' });
        assert.deepEqual(granted.map((r) => [r.name, r.composite]).sort(), [['reporter', true], ['reporter-base', false]]);
        assert.deepEqual((await example.access(ts.user.id, 'openid tenancy')).realm_access, { roles: ['reporter', 'reporter-base'] });
      } finally {
        await updateClient(ts.store, { realmId: realm, clientId: 'web-app', fullScopeAllowed: true });
        await kc.roles.delByName({ realm, name: 'reporter' });
        await kc.roles.delByName({ realm, name: 'reporter-base' }).catch(() => undefined);
      }
    });

    test('nothing is stored: no chain, token, session, code, consent, key or event', async () => {
      const counts = async (): Promise<Record<string, number>> => {
        const out: Record<string, number> = {};
        for (const t of WRITTEN) out[t] = (await ts.store.db.kysely.selectFrom(t).selectAll().execute()).length;
        return out;
      };
      const beforeCounts = await counts();
      for (const scope of ['openid tenancy offline_access', 'core_data', undefined]) {
        await example.access(ts.user.id, scope);
        await example.id(ts.user.id, scope);
        await example.userinfo(ts.user.id, scope);
        await ev.mappers(scope !== undefined ? { scope } : {});
      }
      await ts.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'granted', scope: '' });
      assert.deepEqual(await counts(), beforeCounts);
      assert.ok(beforeCounts.refresh_chains! > 0 && beforeCounts.events! > 0, 'the counts are of tables in use');
    });

    test('refusals: view-clients reads mappers and roles, an example needs view-users too; missing and unknown user or client', async () => {
      const viewer = await serviceAccountAdmin(ts, realm, 'evaluator', ['view-clients']);
      assert.ok((await ev.mappers({ scope: 'openid' }, viewer.kc)).length > 0);
      assert.ok((await viewer.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'granted', scope: '' })).length > 0);
      const noUser = await errorOf(ev.access({ userId: ts.user.id, scope: 'openid' }, viewer.kc));
      assert.deepEqual([noUser.status, noUser.body.errorMessage], [403, 'You have no access to this user']);
      assert.equal(await statusOf(ev.id({ userId: ts.user.id }, viewer.kc)), 403);
      assert.equal(await statusOf(ev.userinfo({ userId: ts.user.id }, viewer.kc)), 403);
      // Keycloak's order: a missing userId is told before the right to read users.
      const none = await errorOf(ev.access({ scope: 'openid' }, viewer.kc));
      assert.deepEqual([none.status, none.body.errorMessage], [404, 'No userId provided']);
      await viewer.grant('view-users');
      assert.equal((await ev.access({ userId: ts.user.id, scope: 'openid' }, viewer.kc)).sub, ts.user.id);
      const unknown = await errorOf(ev.id({ userId: 'no-such-user' }, viewer.kc));
      assert.deepEqual([unknown.status, unknown.body.errorMessage], [404, 'No user found']);
      // A user of another realm is no user of this one.
      const masterAdmin = (await ts.kc.users.find({ realm: 'master', username: 'admin', exact: true }))[0]!;
      assert.equal(await statusOf(ev.userinfo({ userId: masterAdmin.id! })), 404);
      const client = await errorOf(ev.access({ id: 'no-such-client', userId: ts.user.id }));
      assert.deepEqual([client.status, client.body.errorMessage], [404, 'Could not find client']);
      assert.equal(await statusOf(ev.mappers({ id: 'no-such-client' })), 404);
      // query-clients is not enough for any of them.
      const querier = await serviceAccountAdmin(ts, realm, 'querier', ['query-clients', 'view-users']);
      assert.equal(await statusOf(ev.mappers({}, querier.kc)), 403);
      assert.equal(await statusOf(querier.kc.clients.evaluatePermission({ realm, id: 'web-app', roleContainer: realm, type: 'granted', scope: '' })), 403);
      assert.equal(await statusOf(ev.access({ userId: ts.user.id }, querier.kc)), 403);
      // An administrator of another realm may not see this one.
      await ts.kc.realms.create({ realm: 'other', enabled: true });
      const outsider = await serviceAccountAdmin(ts, 'other', 'outsider', ['view-clients', 'view-users']);
      assert.equal(await statusOf(ev.access({ userId: ts.user.id }, outsider.kc)), 403);
    });
  });
}
