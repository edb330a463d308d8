import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const realm = 'test';
const OIDC = 'openid-connect';
const flags = { 'access.token.claim': 'true', 'id.token.claim': 'true', 'userinfo.token.claim': 'true', 'introspection.token.claim': 'true' };

/** Keycloak's ProtocolMapperRepresentation, as keycloak-admin-client sends it. */
function mapper(name: string, type: string, config: Record<string, string>): { name: string; protocol: string; protocolMapper: string; config: Record<string, string> } {
  return { name, protocol: OIDC, protocolMapper: type, config };
}
const attribute = (name: string, attr: string, claim: string, extra: Record<string, string> = {}) =>
  mapper(name, 'oidc-usermodel-attribute-mapper', { 'user.attribute': attr, 'claim.name': claim, 'jsonType.label': 'String', ...flags, ...extra });

// Keycloak's protocol mappers (custom claims) through keycloak-admin-client, and their claims in real
// tokens, userinfo and introspection answers obtained over HTTP.
for (const dialect of dialects()) {
  describe(`protocol mappers (${dialect})`, () => {
    let ts: AdminTestServer;
    let secret: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.kc.clientScopes.create({ realm, name: 'tenancy', protocol: OIDC });
      await ts.kc.clients.update({ realm, id: 'web-app' }, { directAccessGrantsEnabled: true, serviceAccountsEnabled: true, defaultClientScopes: ['openid', 'profile', 'email', 'tenancy', 'core_data'] });
      secret = ts.client.secret;
      await ts.store.users.update(ts.user.id, { attributes: { tenant: ['t-42'], level: ['7', 'x', '9'], prefs: ['{"theme":"dark"}'], flag: ['TRUE'] } });
    });
    after(() => ts.close());

    const tokenUrl = (): string => `${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/token`;
    async function post(url: string, form: Record<string, string>, auth = basic('web-app', secret)): Promise<Record<string, unknown>> {
      const res = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
      const json = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 200, JSON.stringify(json));
      return json;
    }
    /** A password grant over HTTP: the access and ID tokens, the userinfo and introspection answers. */
    async function issued(scope = 'openid'): Promise<{ access: Record<string, unknown>; id: Record<string, unknown>; userinfo: Record<string, unknown>; introspection: Record<string, unknown>; refresh: string }> {
      const t = await post(tokenUrl(), { grant_type: 'password', username: 'alice', password: ts.user.password, scope });
      const info = await fetch(`${ts.baseUrl}/auth/realms/${realm}/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${t.access_token as string}` } });
      assert.equal(info.status, 200);
      const introspection = await post(`${tokenUrl()}/introspect`, { token: t.access_token as string });
      return { access: decodeJwt(t.access_token as string), id: decodeJwt(t.id_token as string), userinfo: (await info.json()) as Record<string, unknown>, introspection, refresh: t.refresh_token as string };
    }
    const clear = async (): Promise<void> => {
      for (const m of await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' })) await ts.kc.clients.delProtocolMapper({ realm, id: 'web-app', mapperId: m.id! });
      for (const m of await ts.kc.clientScopes.listProtocolMappers({ realm, id: 'tenancy' })) await ts.kc.clientScopes.delProtocolMapper({ realm, id: 'tenancy', mapperId: m.id! });
    };

    test('keycloak-admin-client adds, lists, finds, updates and deletes the mappers of a client', async () => {
      await clear();
      await ts.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'tenant', 'tenant'));
      const id = (await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' }))[0]!.id!;
      assert.match(id, /^[0-9a-f-]{36}$/);
      const found = await ts.kc.clients.findProtocolMapperById({ realm, id: 'web-app', mapperId: id });
      assert.deepEqual(found, { id, name: 'tenant', protocol: OIDC, protocolMapper: 'oidc-usermodel-attribute-mapper', consentRequired: false, config: attribute('', 'tenant', 'tenant').config });
      assert.equal((await ts.kc.clients.findProtocolMapperByName({ realm, id: 'web-app', name: 'tenant' }))?.id, id);
      assert.equal((await ts.kc.clients.findProtocolMappersByProtocol({ realm, id: 'web-app', protocol: OIDC })).length, 1);
      assert.deepEqual(await ts.kc.clients.findProtocolMappersByProtocol({ realm, id: 'web-app', protocol: 'saml' }), []);
      await ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [
        mapper('plan', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'plan', 'claim.value': 'gold', ...flags }),
        mapper('api', 'oidc-audience-mapper', { 'included.custom.audience': 'https://api.example.com', 'access.token.claim': 'true' }),
      ]);
      assert.deepEqual((await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' })).map((m) => m.name), ['api', 'plan', 'tenant']);
      // The client's representation carries them, as Keycloak's does.
      const rep = await ts.kc.clients.findOne({ realm, id: 'web-app' });
      assert.deepEqual(rep!.protocolMappers!.map((m) => m.name), ['api', 'plan', 'tenant']);
      await ts.kc.clients.updateProtocolMapper({ realm, id: 'web-app', mapperId: id }, { ...found!, config: { ...found!.config, 'claim.name': 'org.tenant' } });
      assert.equal((await ts.kc.clients.findProtocolMapperById({ realm, id: 'web-app', mapperId: id }))!.config!['claim.name'], 'org.tenant');
      await ts.kc.clients.delProtocolMapper({ realm, id: 'web-app', mapperId: id });
      // catchNotFound: a missing mapper reads as null.
      assert.equal(await ts.kc.clients.findProtocolMapperById({ realm, id: 'web-app', mapperId: id }), null);
      assert.equal(await statusOf(ts.kc.clients.delProtocolMapper({ realm, id: 'web-app', mapperId: id })), 404);
      const events = (await ts.kc.realms.findAdminEvents({ realm, resourceTypes: ['PROTOCOL_MAPPER'] } as never)).filter((e) => e.resourcePath?.includes(id));
      assert.deepEqual(events.map((e) => [e.operationType, e.resourceType, e.resourcePath]).sort(), [
        ['CREATE', 'PROTOCOL_MAPPER', `clients/web-app/protocol-mappers/models/${id}`],
        ['DELETE', 'PROTOCOL_MAPPER', `clients/web-app/protocol-mappers/models/${id}`],
        ['UPDATE', 'PROTOCOL_MAPPER', `clients/web-app/protocol-mappers/models/${id}`],
      ], 'each change is an admin event');
    });

    test('the same on a client scope; a new client or scope may come with its mappers', async () => {
      await clear();
      await ts.kc.clientScopes.addProtocolMapper({ id: 'tenancy', realm }, attribute('tenant', 'tenant', 'tenant'));
      const id = (await ts.kc.clientScopes.listProtocolMappers({ realm, id: 'tenancy' }))[0]!.id!;
      assert.equal((await ts.kc.clientScopes.findProtocolMapper({ realm, id: 'tenancy', mapperId: id }))!.name, 'tenant');
      assert.equal((await ts.kc.clientScopes.findProtocolMapperByName({ realm, id: 'tenancy', name: 'tenant' }))!.id, id);
      await ts.kc.clientScopes.addMultipleProtocolMappers({ realm, id: 'tenancy' }, [attribute('level', 'level', 'level', { 'jsonType.label': 'int' })]);
      assert.equal((await ts.kc.clientScopes.findProtocolMappersByProtocol({ realm, id: 'tenancy', protocol: OIDC })).length, 2);
      const scope = await ts.kc.clientScopes.findOne({ realm, id: 'tenancy' });
      assert.deepEqual(scope!.protocolMappers!.map((m) => m.name), ['level', 'tenant']);
      await ts.kc.clientScopes.updateProtocolMapper({ realm, id: 'tenancy', mapperId: id }, { name: 'tenant id', protocolMapper: 'oidc-usermodel-attribute-mapper', config: attribute('', 'tenant', 'tenant_id').config });
      assert.equal((await ts.kc.clientScopes.findProtocolMapper({ realm, id: 'tenancy', mapperId: id }))!.name, 'tenant id');
      await ts.kc.clientScopes.delProtocolMapper({ realm, id: 'tenancy', mapperId: id });
      assert.equal((await ts.kc.clientScopes.listProtocolMappers({ realm, id: 'tenancy' })).length, 1);

      await ts.kc.clients.create({ realm, clientId: 'with-mappers', redirectUris: ['https://w.example.com/cb'], protocolMappers: [attribute('t', 'tenant', 'tenant')] });
      assert.equal((await ts.kc.clients.listProtocolMappers({ realm, id: 'with-mappers' }))[0]!.name, 't');
      await ts.kc.clientScopes.create({ realm, name: 'scoped', protocol: OIDC, protocolMappers: [attribute('t', 'tenant', 'tenant')] });
      assert.equal((await ts.kc.clientScopes.listProtocolMappers({ realm, id: 'scoped' }))[0]!.name, 't');
      // Deleting the owner deletes its mappers: a new owner of the same name starts with none.
      await ts.kc.clients.del({ realm, id: 'with-mappers' });
      await ts.kc.clients.create({ realm, clientId: 'with-mappers', redirectUris: ['https://w.example.com/cb'] });
      assert.deepEqual(await ts.kc.clients.listProtocolMappers({ realm, id: 'with-mappers' }), []);
      await ts.kc.clientScopes.del({ realm, id: 'scoped' });
      await ts.kc.clientScopes.create({ realm, name: 'scoped', protocol: OIDC });
      assert.deepEqual(await ts.kc.clientScopes.listProtocolMappers({ realm, id: 'scoped' }), []);
      assert.equal(await statusOf(ts.kc.clientScopes.listProtocolMappers({ realm, id: 'nope' })), 404);
    });

    test('view-clients reads mappers, manage-clients changes them', async () => {
      await clear();
      const viewer = await serviceAccountAdmin(ts, realm, 'mapper-viewer', ['view-clients']);
      assert.deepEqual(await viewer.kc.clients.listProtocolMappers({ realm, id: 'web-app' }), []);
      assert.deepEqual(await viewer.kc.clientScopes.listProtocolMappers({ realm, id: 'tenancy' }), []);
      assert.equal(await statusOf(viewer.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'tenant', 'tenant'))), 403);
      assert.equal(await statusOf(viewer.kc.clientScopes.addMultipleProtocolMappers({ realm, id: 'tenancy' }, [attribute('tenant', 'tenant', 'tenant')])), 403);
      assert.deepEqual(await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' }), []);
      const manager = await serviceAccountAdmin(ts, realm, 'mapper-manager', ['manage-clients']);
      await manager.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'tenant', 'tenant'));
      assert.equal((await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' })).length, 1);
    });

    test('a duplicate name is 409; reserved claims, unknown types and bad configs are 400, and nothing is stored', async () => {
      await clear();
      await ts.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'tenant', 'tenant'));
      assert.equal(await statusOf(ts.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'other', 'other'))), 409);
      const bad = [
        attribute('sub', 'tenant', 'sub'),
        attribute('nested aud', 'tenant', 'realm_access.roles'),
        attribute('groups', 'tenant', 'groups'),
        attribute('email', 'tenant', 'email'),
        attribute('empty part', 'tenant', 'a..b'),
        attribute('proto', 'tenant', '__proto__.x'),
        attribute('json type', 'tenant', 'x', { 'jsonType.label': 'float' }),
        attribute('flag', 'tenant', 'x', { 'access.token.claim': 'yes' }),
        mapper('no attribute', 'oidc-usermodel-attribute-mapper', { 'claim.name': 'x' }),
        mapper('script', 'oidc-script-based-protocol-mapper', { 'claim.name': 'x' }),
        mapper('realm roles', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'realm_access.roles', multivalued: 'true' }),
        mapper('placeholder', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'roles.${client_id}' }),
        mapper('client roles', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'x', 'usermodel.clientRoleMapping.clientId': 'no-such-client' }),
        mapper('property', 'oidc-usermodel-property-mapper', { 'user.attribute': 'password', 'claim.name': 'x' }),
        mapper('property claim', 'oidc-usermodel-property-mapper', { 'user.attribute': 'username', 'claim.name': 'preferred_username' }),
        mapper('property groups', 'oidc-usermodel-property-mapper', { 'user.attribute': 'username', 'claim.name': 'groups' }),
        mapper('int', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'x', 'claim.value': 'abc', 'jsonType.label': 'int' }),
        mapper('audience', 'oidc-audience-mapper', { 'included.client.audience': 'no-such-client' }),
        mapper('nothing', 'oidc-audience-mapper', {}),
        { ...attribute('saml', 'tenant', 'x'), protocol: 'saml' },
      ];
      for (const m of bad) {
        const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${realm}/clients/web-app/protocol-mappers/models`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ts.kc.accessToken!}`, 'content-type': 'application/json' },
          body: JSON.stringify(m),
        });
        const body = (await res.json()) as { error: string; errorMessage: string };
        assert.equal(res.status, 400, `${m.name}: ${JSON.stringify(body)}`);
        assert.equal(body.error, 'invalid_request');
        assert.ok(body.errorMessage.length > 0 && !body.errorMessage.includes(' at '), body.errorMessage);
      }
      // add-models is all or nothing; a create with a bad mapper creates no client.
      assert.equal(await statusOf(ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [attribute('ok', 'tenant', 'ok'), attribute('iss', 'tenant', 'iss')])), 400);
      assert.equal(await statusOf(ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [attribute('a', 'tenant', 'a'), attribute('a', 'tenant', 'b')])), 409);
      assert.equal(await statusOf(ts.kc.clients.create({ realm, clientId: 'refused', protocolMappers: [attribute('x', 'tenant', 'jti')] })), 400);
      assert.equal(await ts.kc.clients.findOne({ realm, id: 'refused' }), null);
      assert.deepEqual((await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' })).map((m) => m.name), ['tenant']);
      // An update that breaks a rule changes nothing either.
      const [m] = await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' });
      assert.equal(await statusOf(ts.kc.clients.updateProtocolMapper({ realm, id: 'web-app', mapperId: m!.id! }, { ...m!, config: { ...m!.config, 'claim.name': 'azp' } })), 400);
      assert.equal((await ts.kc.clients.findProtocolMapperById({ realm, id: 'web-app', mapperId: m!.id! }))!.config!['claim.name'], 'tenant');
    });

    test('an attribute mapper: nesting, escaped dots, JSON types and multiple values, in every token and answer its flags name', async () => {
      await clear();
      await ts.kc.clientScopes.addMultipleProtocolMappers({ realm, id: 'tenancy' }, [
        attribute('tenant', 'tenant', 'org.tenant'),
        attribute('escaped', 'tenant', 'a\\.b'),
        attribute('levels', 'level', 'levels', { 'jsonType.label': 'int', multivalued: 'true' }),
        attribute('first level', 'level', 'org.level', { 'jsonType.label': 'long' }),
        attribute('prefs', 'prefs', 'prefs', { 'jsonType.label': 'JSON' }),
        attribute('flag', 'flag', 'flag', { 'jsonType.label': 'boolean' }),
        attribute('missing', 'nothing', 'missing'),
        attribute('access only', 'tenant', 'at_only', { 'id.token.claim': 'false', 'userinfo.token.claim': 'false', 'introspection.token.claim': 'false' }),
        attribute('id only', 'tenant', 'id_only', { 'access.token.claim': 'false', 'userinfo.token.claim': 'false' }),
        // Keycloak's defaults: userinfo follows id.token.claim when absent.
        mapper('userinfo default', 'oidc-usermodel-attribute-mapper', { 'user.attribute': 'tenant', 'claim.name': 'ui_default', 'id.token.claim': 'true' }),
      ]);
      const { access, id, userinfo, introspection } = await issued('openid tenancy');
      assert.deepEqual(access.org, { tenant: 't-42', level: 7 });
      assert.equal(access['a.b'], 't-42');
      assert.deepEqual(access.levels, [7, 9], 'a value that is not an int is left out');
      assert.deepEqual(access.prefs, { theme: 'dark' });
      assert.equal(access.flag, true);
      assert.equal(access.missing, undefined);
      assert.equal(access.at_only, 't-42');
      assert.equal(access.id_only, undefined);
      assert.equal(id.id_only, 't-42');
      assert.equal(id.at_only, undefined);
      assert.deepEqual(id.org, { tenant: 't-42', level: 7 });
      assert.equal(userinfo.at_only, undefined);
      assert.equal(userinfo.id_only, undefined);
      assert.equal(userinfo.ui_default, 't-42');
      assert.deepEqual(userinfo.org, { tenant: 't-42', level: 7 });
      assert.deepEqual(introspection.org, { tenant: 't-42', level: 7 });
      assert.equal(introspection.at_only, undefined, 'introspection.token.claim false hides it');
      assert.equal(introspection.active, true);
      // Built-in claims stay as they were.
      assert.equal(access.preferred_username, 'alice');
      assert.equal(access.sub, ts.user.id);
    });

    test('scope mappers apply only when the scope is released; client mappers always; every grant', async () => {
      await clear();
      await ts.kc.clientScopes.addProtocolMapper({ realm, id: 'tenancy' }, attribute('tenant', 'tenant', 'tenant'));
      await ts.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, mapper('plan', 'oidc-hardcoded-claim-mapper', { 'claim.name': 'plan.seats', 'claim.value': '25', 'jsonType.label': 'int', ...flags }));
      const without = await issued('openid');
      assert.equal(without.access.tenant, undefined);
      assert.deepEqual(without.access.plan, { seats: 25 });
      const withScope = await issued('openid tenancy');
      assert.equal(withScope.access.tenant, 't-42');
      // refresh_token keeps them.
      const refreshed = await post(tokenUrl(), { grant_type: 'refresh_token', refresh_token: withScope.refresh });
      assert.equal(decodeJwt(refreshed.access_token as string).tenant, 't-42');
      assert.deepEqual(decodeJwt(refreshed.id_token as string).plan, { seats: 25 });
      // authorization_code.
      const r = await runAuthorization(ts, { query: { scope: 'openid tenancy' } });
      const code = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic('web-app', secret) });
      assert.equal(code.statusCode, 200, code.body);
      assert.equal(decodeJwt(code.json().access_token).tenant, 't-42');
      assert.deepEqual(decodeJwt(code.json().id_token).plan, { seats: 25 });
      // client_credentials: the service account's own attributes (none), the client's hard-coded claim.
      const sa = await post(tokenUrl(), { grant_type: 'client_credentials', scope: 'tenancy' });
      const saClaims = decodeJwt(sa.access_token as string);
      assert.deepEqual(saClaims.plan, { seats: 25 });
      assert.equal(saClaims.tenant, undefined);
    });

    test('audience mappers add to aud, a client of the realm or a custom one; an RFC 8707 resource is not widened', async () => {
      await clear();
      await ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [
        mapper('native', 'oidc-audience-mapper', { 'included.client.audience': 'native-app', 'access.token.claim': 'true', 'id.token.claim': 'true' }),
        mapper('api', 'oidc-audience-mapper', { 'included.custom.audience': 'https://api.example.com', 'access.token.claim': 'true', 'introspection.token.claim': 'true' }),
        mapper('not in tokens', 'oidc-audience-mapper', { 'included.custom.audience': 'https://hidden.example.com', 'access.token.claim': 'false' }),
      ]);
      const { access, id, introspection, refresh } = await issued('openid');
      // One owner's mappers apply in the order of their names (api, native).
      assert.deepEqual(access.aud, ['account', 'https://api.example.com', 'native-app']);
      assert.deepEqual(id.aud, ['web-app', 'native-app']);
      assert.deepEqual(introspection.aud, ['account', 'https://api.example.com', 'native-app']);
      // A token narrowed to a resource (RFC 8707 2.2, on refresh) names that resource only.
      await ts.store.clients.update(realm, 'web-app', { audiences: ['https://orders.example.com'] });
      ts.services.cache.clear();
      const narrowed = await post(tokenUrl(), { grant_type: 'refresh_token', refresh_token: refresh, resource: 'https://orders.example.com' });
      assert.equal(decodeJwt(narrowed.access_token as string).aud, 'https://orders.example.com');
      const plain = await post(tokenUrl(), { grant_type: 'refresh_token', refresh_token: narrowed.refresh_token as string });
      assert.deepEqual(decodeJwt(plain.access_token as string).aud, ['https://orders.example.com', 'https://api.example.com', 'native-app']);
      await ts.store.clients.update(realm, 'web-app', { audiences: [] });
      ts.services.cache.clear();
    });

    test('property and role mappers: upn, roles in a claim of their own (prefixed, joined), client roles per client, MicroProfile groups', async () => {
      await clear();
      await ts.kc.roles.create({ realm, name: 'editor' });
      await ts.kc.users.addRealmRoleMappings({ realm, id: ts.user.id, roles: [{ id: (await ts.kc.roles.findOneByName({ realm, name: 'editor' }))!.id!, name: 'editor' }] });
      await ts.kc.clients.createRole({ id: 'native-app', realm, name: 'reader' });
      const reader = (await ts.kc.clients.findRole({ id: 'native-app', realm, roleName: 'reader' }))!;
      await ts.kc.users.addClientRoleMappings({ realm, id: ts.user.id, clientUniqueId: 'native-app', roles: [{ id: reader.id!, name: 'reader' }] });
      await ts.kc.clientScopes.create({ realm, name: 'microprofile-jwt', protocol: OIDC });
      await ts.kc.clients.update({ realm, id: 'web-app' }, { defaultClientScopes: ['openid', 'profile', 'email', 'tenancy', 'core_data', 'microprofile-jwt'] });
      await ts.kc.clientScopes.addMultipleProtocolMappers({ realm, id: 'microprofile-jwt' }, [
        mapper('upn', 'oidc-usermodel-property-mapper', { 'user.attribute': 'username', 'claim.name': 'upn', 'jsonType.label': 'String', ...flags }),
        mapper('groups', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'groups', 'jsonType.label': 'String', multivalued: 'true', ...flags }),
      ]);
      await ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [
        mapper('realm roles', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'roles', multivalued: 'true', 'usermodel.realmRoleMapping.rolePrefix': 'realm:', ...flags }),
        mapper('native roles', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'roles', multivalued: 'true', 'usermodel.clientRoleMapping.clientId': 'native-app', ...flags }),
        mapper('per client', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'apps.${client_id}', multivalued: 'true', 'access.token.claim': 'true', 'introspection.token.claim': 'false' }),
        mapper('verified', 'oidc-usermodel-property-mapper', { 'user.attribute': 'emailVerified', 'claim.name': 'ext.verified', 'jsonType.label': 'boolean', ...flags }),
      ]);
      const kinds = await ts.kc.clients.listProtocolMappers({ realm, id: 'web-app' });
      assert.deepEqual(kinds.map((m) => m.protocolMapper).sort(), ['oidc-usermodel-client-role-mapper', 'oidc-usermodel-client-role-mapper', 'oidc-usermodel-property-mapper', 'oidc-usermodel-realm-role-mapper']);
      const { access, id, userinfo, introspection, refresh } = await issued('openid microprofile-jwt');
      const realmRoles = (access.realm_access as { roles: string[] }).roles;
      assert.ok(realmRoles.includes('editor'), JSON.stringify(realmRoles));
      // One owner's mappers apply in the order of their names: native-app's roles, then the realm's
      // prefixed, joined into the same list.
      assert.deepEqual(access.roles, ['reader', ...realmRoles.map((r) => `realm:${r}`)]);
      assert.deepEqual(id.roles, access.roles);
      assert.deepEqual(userinfo.roles, access.roles);
      assert.deepEqual((access.apps as Record<string, string[]>)['native-app'], ['reader']);
      assert.equal(id.apps, undefined);
      assert.deepEqual(introspection.apps, {}, 'introspection.token.claim false hides every client claim (the leaves)');
      assert.deepEqual(introspection.roles, access.roles);
      assert.deepEqual(access.ext, { verified: (await ts.store.users.get(ts.user.id))!.emailVerified });
      assert.equal(typeof (access.ext as { verified: unknown }).verified, 'boolean');
      // MicroProfile JWT: upn and the roles as groups, only with the scope.
      assert.equal(access.upn, 'alice');
      assert.deepEqual(access.groups, realmRoles);
      assert.deepEqual(userinfo.groups, realmRoles);
      const plain = await issued('openid');
      assert.equal(plain.access.upn, undefined);
      assert.equal(plain.access.groups, undefined);
      // A role granted later is in the next refresh.
      await ts.kc.roles.create({ realm, name: 'auditor' });
      await ts.kc.users.addRealmRoleMappings({ realm, id: ts.user.id, roles: [{ id: (await ts.kc.roles.findOneByName({ realm, name: 'auditor' }))!.id!, name: 'auditor' }] });
      ts.services.cache.clear();
      const refreshed = decodeJwt((await post(tokenUrl(), { grant_type: 'refresh_token', refresh_token: refresh })).access_token as string);
      assert.ok((refreshed.roles as string[]).includes('realm:auditor'), JSON.stringify(refreshed.roles));
      assert.ok((refreshed.groups as string[]).includes('auditor'));
      await ts.kc.clients.update({ realm, id: 'web-app' }, { defaultClientScopes: ['openid', 'profile', 'email', 'tenancy', 'core_data'] });
      await ts.kc.clientScopes.del({ realm, id: 'microprofile-jwt' });
    });

    test('a group membership mapper: full paths or names; group attributes; the groups read only when a mapper needs them', async () => {
      await clear();
      const parent = await ts.kc.groups.create({ realm, name: 'staff' });
      const child = await ts.kc.groups.createChildGroup({ realm, id: parent.id }, { name: 'ops' });
      await ts.kc.users.addToGroup({ realm, id: ts.user.id, groupId: child.id });
      let reads = 0;
      const lines = ts.store.groups.userGroupLines.bind(ts.store.groups);
      ts.store.groups.userGroupLines = (userId: string) => {
        reads++;
        return lines(userId);
      };
      // No group mapper (and an attribute the user has): the groups are not read.
      await ts.kc.clients.addProtocolMapper({ realm, id: 'web-app' }, attribute('tenant', 'tenant', 'tenant'));
      await issued('openid');
      assert.equal(reads, 0);
      await ts.kc.clients.addMultipleProtocolMappers({ realm, id: 'web-app' }, [
        mapper('paths', 'oidc-group-membership-mapper', { 'claim.name': 'member_of', 'full.path': 'true', multivalued: 'true', ...flags }),
        mapper('names', 'oidc-group-membership-mapper', { 'claim.name': 'teams', 'full.path': 'false', multivalued: 'true', 'access.token.claim': 'true' }),
        // Keycloak: an attribute the user lacks comes from their groups (ops has none: its parent's).
        attribute('site', 'site', 'site'),
      ]);
      await ts.kc.groups.update({ realm, id: parent.id }, { name: 'staff', attributes: { site: ['hq'] } });
      const { access, id, userinfo } = await issued('openid');
      assert.deepEqual(access.member_of, ['/staff/ops']);
      assert.deepEqual(access.teams, ['ops']);
      assert.equal(access.site, 'hq');
      assert.deepEqual(id.member_of, ['/staff/ops']);
      assert.equal(id.teams, undefined);
      assert.deepEqual(userinfo.member_of, ['/staff/ops']);
      // Once for the access and ID tokens, once for userinfo.
      assert.equal(reads, 2);
      ts.store.groups.userGroupLines = lines;
      await ts.kc.users.delFromGroup({ realm, id: ts.user.id, groupId: child.id });
    });
  });
}
