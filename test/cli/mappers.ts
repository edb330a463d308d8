import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `realmgate client mapper ...` and `realmgate scope mapper ...`: Keycloak's protocol mappers from the
// command line, on the installed command (npm test builds dist/ first).
for (const dialect of dialects()) {
  describe(`realmgate client|scope mapper (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-mappers-');
    const { ok, fails } = cliRunner(() => database.url);

    test('add, list and remove the mappers of a client and of a scope', () => {
      ok(['realm', 'create', 'shop']);
      ok(['client', 'create', 'shop', 'orders', '--redirect-uri', 'https://orders.example.com/cb']);
      assert.match(ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'tenant', '--type', 'attribute', '--attribute', 'tenant', '--claim', 'org.tenant']), /^added mapper tenant \([0-9a-f-]{36}\) to client orders in realm shop\n$/);
      ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'api', '--type', 'audience', '--custom-audience', 'https://api.example.com']);
      ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'seats', '--type', 'hardcoded', '--claim', 'seats', '--value', '25', '--json-type', 'int', '--in', 'access']);
      const list = ok(['client', 'mapper', 'list', 'shop', 'orders']);
      assert.deepEqual(list.trim().split('\n').map((l) => l.split('\t').slice(1, 3).join(' ')), [
        'api oidc-audience-mapper',
        'seats oidc-hardcoded-claim-mapper',
        'tenant oidc-usermodel-attribute-mapper',
      ]);
      const json = JSON.parse(ok(['client', 'mapper', 'list', 'shop', 'orders', '--json'])) as Array<{ name: string; config: Record<string, string> }>;
      assert.deepEqual(json.find((m) => m.name === 'seats')!.config, {
        'claim.name': 'seats',
        'claim.value': '25',
        'jsonType.label': 'int',
        'access.token.claim': 'true',
        'id.token.claim': 'false',
        'userinfo.token.claim': 'false',
        'introspection.token.claim': 'false',
      });
      assert.equal(json.find((m) => m.name === 'api')!.config['access.token.claim'], 'true');
      assert.equal(ok(['client', 'mapper', 'remove', 'shop', 'orders', 'seats']), 'removed mapper seats from client orders in realm shop\n');
      assert.equal(ok(['client', 'mapper', 'list', 'shop', 'orders']).trim().split('\n').length, 2);

      // Role and property mappers: the role options fill Keycloak's config keys.
      ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'roles', '--type', 'realm-roles', '--claim', 'roles', '--multivalued', '--role-prefix', 'realm:']);
      ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'own roles', '--type', 'client-roles', '--claim', 'roles', '--multivalued', '--roles-of', 'orders', '--role-prefix', 'orders:']);
      ok(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'upn', '--type', 'property', '--attribute', 'username', '--claim', 'upn']);
      const roles = JSON.parse(ok(['client', 'mapper', 'list', 'shop', 'orders', '--json'])) as Array<{ name: string; protocolMapper: string; config: Record<string, string> }>;
      assert.deepEqual(
        roles.filter((m) => m.name !== 'api' && m.name !== 'tenant').map((m) => [m.name, m.protocolMapper, m.config['claim.name'], m.config['usermodel.realmRoleMapping.rolePrefix'] ?? m.config['usermodel.clientRoleMapping.rolePrefix'] ?? m.config['user.attribute']]),
        [
          ['own roles', 'oidc-usermodel-client-role-mapper', 'roles', 'orders:'],
          ['roles', 'oidc-usermodel-realm-role-mapper', 'roles', 'realm:'],
          ['upn', 'oidc-usermodel-property-mapper', 'upn', 'username'],
        ],
      );
      assert.equal(roles.find((m) => m.name === 'own roles')!.config['usermodel.clientRoleMapping.clientId'], 'orders');
      for (const name of ['roles', 'own roles', 'upn']) ok(['client', 'mapper', 'remove', 'shop', 'orders', name]);

      ok(['scope', 'mapper', 'add', 'shop', 'profile', '--name', 'groups', '--type', 'groups', '--claim', 'member_of', '--multivalued', '--no-full-path']);
      assert.match(ok(['scope', 'mapper', 'list', 'shop', 'profile']), /\tgroups\toidc-group-membership-mapper\tclaim\.name=member_of multivalued=true full\.path=false /);
      ok(['scope', 'mapper', 'remove', 'shop', 'profile', 'groups']);
      assert.equal(ok(['scope', 'mapper', 'list', 'shop', 'profile']), '');
    });

    test('bad input: one clear line, exit status 1, nothing stored', () => {
      const before = ok(['client', 'mapper', 'list', 'shop', 'orders']);
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 'tenant', '--type', 'attribute', '--attribute', 'x', '--claim', 'x'], /Protocol mapper exists with same name: tenant/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'attribute', '--attribute', 'x', '--claim', 'sub'], /the claim sub is Realmgate's own/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'script'], /protocol mapper type "script" is not supported/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'audience', '--client-audience', 'nobody'], /there is no client "nobody"/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'hardcoded', '--claim', 'x', '--value', 'v', '--in', 'everywhere'], /--in takes access, id, userinfo and introspection/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'hardcoded', '--config', 'novalue'], /--config takes key=value/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'nobody', '--name', 's', '--type', 'hardcoded', '--claim', 'x', '--value', 'v'], /client nobody does not exist in realm shop/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'client-roles', '--claim', 'x', '--roles-of', 'nobody'], /there is no client "nobody"/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'realm-roles', '--claim', 'realm_access.roles'], /the claim realm_access is Realmgate's own.*e\.g\. "roles"/, { status: 1 });
      fails(['client', 'mapper', 'add', 'shop', 'orders', '--name', 's', '--type', 'property', '--attribute', 'tenant', '--claim', 'x'], /"tenant" is not a user property .*needs the attribute mapper/, { status: 1 });
      fails(['client', 'mapper', 'remove', 'shop', 'orders', 'nothing'], /client orders has no mapper "nothing"/, { status: 1 });
      fails(['scope', 'mapper', 'list', 'shop', 'nope'], /client scope nope does not exist in realm shop/, { status: 1 });
      assert.equal(ok(['client', 'mapper', 'list', 'shop', 'orders']), before);
    });
  });
}
