import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMapper, converterOf, parseClaimPath } from '../../src/oauth/protocol-mappers.js';
import { applyMappers, once, withAudiences, type MapperGroup } from '../../src/oauth/mapper-claims.js';
import type { ProtocolMapper } from '../../src/storage/types.js';

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
  await applyMappers(claims, compiled, 'access', { subject: { attributes: {} }, groupLines: async () => [] });
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
  const input = (attributes: Record<string, string[]>) => ({ subject: { attributes }, groupLines: once(async () => (reads++, lines)) });
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
  await applyMappers(alice, compiled, 'access', { subject: { attributes: { tenant: ['acme'] } }, groupLines: async () => [] });
  assert.deepEqual(alice, { ext: { kind: 'app', tenant: 'acme' } });
  const bob: Record<string, unknown> = {};
  await applyMappers(bob, compiled, 'access', { subject: { attributes: {} }, groupLines: async () => [] });
  assert.deepEqual(bob, { ext: { kind: 'app' } }, "alice's tenant must not reach bob's token");
});
