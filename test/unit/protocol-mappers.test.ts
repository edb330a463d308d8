import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMapper, converterOf, parseClaimPath } from '../../src/oauth/protocol-mappers.js';
import { applyMappers, once, withAudiences, withoutIntrospectionHidden, type MapperGroup } from '../../src/oauth/mapper-claims.js';
import type { ProtocolMapper } from '../../src/storage/types.js';
import type { UserRoles } from '../../src/storage/repos/roles.js';

const subject = (attributes: Record<string, string[]> = {}) => ({
  userId: 'u-1', username: 'erin', email: 'erin@example.com', firstName: 'Erin', lastName: null, emailVerified: true, enabled: true, attributes,
});
const noGroups = async () => [];
const noRoles = async (): Promise<UserRoles | undefined> => undefined;

test("claim.name: dots nest, a backslash escapes the next character (Keycloak's splitClaimPath)", () => {
  assert.deepEqual(parseClaimPath('tenant'), ['tenant']);
  assert.deepEqual(parseClaimPath('org.tenant.id'), ['org', 'tenant', 'id']);
  assert.deepEqual(parseClaimPath('a\\.b.c'), ['a.b', 'c']);
  assert.deepEqual(parseClaimPath('a\\\\.b'), ['a\\', 'b']);
  assert.deepEqual(parseClaimPath('https://example\\.com/claims/tenant'), ['https://example.com/claims/tenant']);
  for (const bad of ['', '.a', 'a.', 'a..b', '__proto__', 'a.__proto__']) assert.equal(parseClaimPath(bad), undefined, bad);
});

test('jsonType.label converters: a value that does not convert is undefined', () => {
  const int = converterOf('int')!;
  assert.equal(int('42'), 42);
  assert.equal(int('-2147483648'), -(2 ** 31));
  assert.equal(int('2147483648'), undefined);
  assert.equal(int('4.2'), undefined);
  const long = converterOf('long')!;
  assert.equal(long('9007199254740991'), Number.MAX_SAFE_INTEGER);
  assert.equal(long('9007199254740993'), undefined);
  assert.equal(converterOf('boolean')!('True'), true);
  assert.equal(converterOf('boolean')!('yes'), false);
  assert.deepEqual(converterOf('JSON')!('{"a":[1]}'), { a: [1] });
  assert.equal(converterOf('JSON')!('{'), undefined);
  assert.equal(converterOf(undefined)!('x'), 'x');
  assert.equal(converterOf('float'), undefined);
  assert.equal(converterOf('constructor'), undefined);
});

test('mappers write nested claims without replacing a value that is not an object, and never a reserved claim', async () => {
  const mapper = (claim: string, value: string): ProtocolMapper => ({
    id: claim, realmId: 'r', ownerType: 'client', owner: 'c', name: claim, type: 'oidc-hardcoded-claim-mapper', createdAt: 0,
    config: { 'claim.name': claim, 'claim.value': value, 'access.token.claim': 'true' },
  });
  const compiled = [mapper('org.a', '1'), mapper('org.b', '2'), mapper('flat', 'x'), mapper('flat.deeper', 'y')].map((m) => compileMapper(m)!);
  const claims: Record<string, unknown> = {};
  await applyMappers(claims, compiled, 'access', { subject: subject(), groupLines: noGroups, roles: noRoles });
  assert.deepEqual(claims, { org: { a: '1', b: '2' }, flat: 'x' });
  // Stored before the rule (or by hand): a reserved claim compiles to nothing.
  assert.equal(compileMapper(mapper('sub', 'admin')), undefined);
  assert.equal(compileMapper({ ...mapper('x', 'y'), type: 'oidc-script-based-protocol-mapper' }), undefined);
  assert.deepEqual(withAudiences('account', ['account', 'api']), ['account', 'api']);
  assert.equal(withAudiences('account', []), 'account');
});

test("an attribute the user lacks comes from their groups, up each group's line; aggregate.attrs joins them all", async () => {
  const mapper = (claim: string, extra: Record<string, string> = {}): ProtocolMapper => ({
    id: claim, realmId: 'r', ownerType: 'client', owner: 'c', name: claim, type: 'oidc-usermodel-attribute-mapper', createdAt: 0,
    config: { 'user.attribute': 'site', 'claim.name': claim, 'access.token.claim': 'true', multivalued: 'true', ...extra },
  });
  const lines: MapperGroup[][] = [
    [{ name: 'eu', attributes: { site: ['eu-1'] } }, { name: 'paris', attributes: {} }],
    [{ name: 'us', attributes: { site: ['us-1', 'us-2'] } }],
  ];
  let reads = 0;
  const input = (attributes: Record<string, string[]>) => ({ subject: subject(attributes), groupLines: once(async () => (reads++, lines)), roles: noRoles });
  const run = async (attributes: Record<string, string[]>): Promise<Record<string, unknown>> => {
    const claims: Record<string, unknown> = {};
    await applyMappers(claims, [compileMapper(mapper('first'))!, compileMapper(mapper('all', { 'aggregate.attrs': 'true' }))!], 'access', input(attributes));
    return claims;
  };
  // paris has none: its parent eu's values; the first group with values wins.
  assert.deepEqual(await run({}), { first: ['eu-1'], all: ['eu-1', 'us-1', 'us-2'] });
  assert.deepEqual(await run({ site: ['home', 'us-1'] }), { first: ['home', 'us-1'], all: ['home', 'us-1', 'eu-1', 'us-2'] });
  assert.equal(reads, 2, 'one read of the groups per response');
});

test("a hard-coded JSON object is each token's own: a mapper nesting into it never changes the next user's token", async () => {
  const hardcoded: ProtocolMapper = {
    id: 'h', realmId: 'r', ownerType: 'client', owner: 'c', name: 'ext', type: 'oidc-hardcoded-claim-mapper', createdAt: 0,
    config: { 'claim.name': 'ext', 'claim.value': '{"kind":"app"}', 'jsonType.label': 'JSON', 'access.token.claim': 'true' },
  };
  const tenant: ProtocolMapper = {
    id: 't', realmId: 'r', ownerType: 'client', owner: 'c', name: 'tenant', type: 'oidc-usermodel-attribute-mapper', createdAt: 0,
    config: { 'claim.name': 'ext.tenant', 'user.attribute': 'tenant', 'access.token.claim': 'true' },
  };
  const compiled = [hardcoded, tenant].map((m) => compileMapper(m)!);
  const alice: Record<string, unknown> = {};
  await applyMappers(alice, compiled, 'access', { subject: subject({ tenant: ['acme'] }), groupLines: noGroups, roles: noRoles });
  assert.deepEqual(alice, { ext: { kind: 'app', tenant: 'acme' } });
  const bob: Record<string, unknown> = {};
  await applyMappers(bob, compiled, 'access', { subject: subject(), groupLines: noGroups, roles: noRoles });
  assert.deepEqual(bob, { ext: { kind: 'app' } }, "alice's tenant must not reach bob's token");
});

const typed = (name: string, type: string, config: Record<string, string>): ProtocolMapper => ({
  id: name, realmId: 'r', ownerType: 'client', owner: 'c', name, type, createdAt: 0, config: { 'access.token.claim': 'true', ...config },
});

test("property mappers read the user's own fields (Keycloak's UserModel getters), converted by jsonType.label", async () => {
  const compiled = [
    typed('upn', 'oidc-usermodel-property-mapper', { 'user.attribute': 'username', 'claim.name': 'upn' }),
    typed('uid', 'oidc-usermodel-property-mapper', { 'user.attribute': 'id', 'claim.name': 'ids.user' }),
    typed('verified', 'oidc-usermodel-property-mapper', { 'user.attribute': 'emailVerified', 'claim.name': 'verified', 'jsonType.label': 'boolean' }),
    typed('verified as text', 'oidc-usermodel-property-mapper', { 'user.attribute': 'EmailVerified', 'claim.name': 'verified_text' }),
    // lastName is null: no claim, as Keycloak (a null property gives none).
    typed('surname', 'oidc-usermodel-property-mapper', { 'user.attribute': 'lastName', 'claim.name': 'surname' }),
  ].map((m) => compileMapper(m)!);
  const claims: Record<string, unknown> = {};
  await applyMappers(claims, compiled, 'access', { subject: subject(), groupLines: noGroups, roles: noRoles });
  assert.deepEqual(claims, { upn: 'erin', ids: { user: 'u-1' }, verified: true, verified_text: 'true' });
  // A property the user model does not have, or a claim Realmgate issues itself, compiles to nothing.
  assert.equal(compileMapper(typed('x', 'oidc-usermodel-property-mapper', { 'user.attribute': 'password', 'claim.name': 'x' })), undefined);
  assert.equal(compileMapper(typed('x', 'oidc-usermodel-property-mapper', { 'user.attribute': 'email', 'claim.name': 'email' })), undefined);
});

test('role mappers: realm roles and client roles with prefixes, ${client_id} in the claim and the prefix, lists joined', async () => {
  const roles: UserRoles = { realm: ['admin', 'viewer'], clients: { billing: ['payer'], 'api.v2': ['reader', 'writer'] } };
  let reads = 0;
  const input = { subject: subject(), groupLines: noGroups, roles: once(async () => (reads++, roles)) };
  const run = async (mappers: ProtocolMapper[], claims: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    await applyMappers(claims, mappers.map((m) => compileMapper(m)!), 'access', input);
    return claims;
  };
  assert.deepEqual(await run([typed('r', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'roles', multivalued: 'true', 'usermodel.realmRoleMapping.rolePrefix': 'realm:' })]), {
    roles: ['realm:admin', 'realm:viewer'],
  });
  // Not multivalued: the first role only (Keycloak's mapAttributeValue).
  assert.deepEqual(await run([typed('r', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'role' })]), { role: 'admin' });
  // Every client's roles under its own claim; a client id with dots stays one claim; the prefix names the client.
  assert.deepEqual(
    await run([typed('c', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'apps.${client_id}', multivalued: 'true', 'usermodel.clientRoleMapping.rolePrefix': '${client_id}:' })]),
    { apps: { 'api.v2': ['api.v2:reader', 'api.v2:writer'], billing: ['billing:payer'] } },
  );
  // One client's roles; realm and client roles in one claim: the second list joins the first (no duplicates).
  assert.deepEqual(
    await run([
      typed('r', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'roles', multivalued: 'true' }),
      typed('c', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'roles', multivalued: 'true', 'usermodel.clientRoleMapping.clientId': 'billing' }),
      typed('again', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'roles', multivalued: 'true' }),
    ]),
    { roles: ['admin', 'viewer', 'payer'] },
  );
  // MicroProfile JWT's groups: the roles join the group paths Realmgate's groups scope released.
  assert.deepEqual(await run([typed('mp', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'groups', multivalued: 'true' })], { groups: ['/staff'] }), {
    groups: ['/staff', 'admin', 'viewer'],
  });
  // A client whose roles the user lacks gives no claim.
  assert.deepEqual(await run([typed('c', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'x', multivalued: 'true', 'usermodel.clientRoleMapping.clientId': 'other' })]), {});
  assert.equal(reads, 1, 'one read of the roles for every mapper of a response');
  // Other reserved claims stay closed to role mappers, and groups to every other type.
  assert.equal(compileMapper(typed('r', 'oidc-usermodel-realm-role-mapper', { 'claim.name': 'realm_access.roles' })), undefined);
  assert.equal(compileMapper(typed('a', 'oidc-usermodel-attribute-mapper', { 'claim.name': 'groups', 'user.attribute': 'g' })), undefined);
});

test('a client role mapper never writes a reserved claim or __proto__ through a client id; introspection hides its claims', async () => {
  const roles: UserRoles = { realm: [], clients: { sub: ['x'], __proto__: ['y'], app: ['z'] } as Record<string, string[]> };
  Object.defineProperty(roles.clients, '__proto__', { value: ['y'], enumerable: true });
  const claims: Record<string, unknown> = { sub: 'u-1' };
  const m = compileMapper(typed('c', 'oidc-usermodel-client-role-mapper', { 'claim.name': '${client_id}', multivalued: 'true', 'introspection.token.claim': 'false' }))!;
  const n = compileMapper(typed('d', 'oidc-usermodel-client-role-mapper', { 'claim.name': 'by.${client_id}', multivalued: 'true' }))!;
  await applyMappers(claims, [m, n], 'access', { subject: subject(), groupLines: noGroups, roles: async () => roles });
  assert.equal(claims.sub, 'u-1');
  assert.deepEqual(claims.app, ['z']);
  assert.equal(Object.getPrototypeOf(claims), Object.prototype);
  assert.deepEqual(Object.keys(claims.by as object).sort(), ['app', 'sub']);
  assert.equal(Object.getPrototypeOf(claims.by), Object.prototype);
  // The token's resource_access names the clients the user had roles of when it was issued.
  claims.resource_access = { sub: { roles: ['x'] }, app: { roles: ['z'] } };
  const hidden = withoutIntrospectionHidden(claims, [m, n]);
  // The hidden mapper's claim (a client's own claim) is gone, the claims of the other mapper stay.
  assert.equal(hidden.app, undefined);
  assert.equal(hidden.sub, 'u-1', 'sub is not the mapper\'s: it stays');
  assert.deepEqual(hidden.by, claims.by);
});
