import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `realmgate role ...`: the realm and client roles the admin API manages (test/admin/roles.test.ts), from
// the command line, on the installed command.
for (const dialect of dialects()) {
  describe(`realmgate role (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-roles-');
    const { ok, fails } = cliRunner(() => database.url);

    test('create, list, grant, users, rename, revoke, delete; realm and client roles', () => {
      ok(['realm', 'create', 'shop']);
      ok(['user', 'create', 'shop', 'bob', '--password-stdin'], 'bob password 123\n');
      ok(['client', 'create', 'shop', 'orders', '--redirect-uri', 'https://orders.example.com/cb']);
      assert.equal(ok(['role', 'create', 'shop', 'clerk', '--description', 'Takes orders']), 'created role clerk in realm shop\n');
      ok(['role', 'create', 'shop', 'refund', '--client', 'orders']);
      assert.equal(ok(['role', 'list', 'shop']), 'clerk\tTakes orders\n');
      assert.equal(ok(['role', 'list', 'shop', '--client', 'orders']), 'refund\t\n');
      assert.equal(ok(['role', 'grant', 'shop', 'bob', 'clerk']), 'granted clerk to bob in realm shop\n');
      ok(['role', 'grant', 'shop', 'bob', 'refund', '--client', 'orders']);
      assert.equal(ok(['role', 'users', 'shop', 'clerk']), 'bob\n');
      ok(['role', 'update', 'shop', 'clerk', '--name', 'sales-clerk', '--description', '']);
      assert.equal(ok(['role', 'list', 'shop']), 'sales-clerk\t\n');
      assert.equal(ok(['role', 'users', 'shop', 'sales-clerk']), 'bob\n');
      assert.equal(ok(['role', 'revoke', 'shop', 'bob', 'sales-clerk']), 'revoked sales-clerk from bob in realm shop\n');
      assert.equal(ok(['role', 'users', 'shop', 'sales-clerk']), '');
      ok(['role', 'delete', 'shop', 'refund', '--client', 'orders']);
      assert.equal(ok(['role', 'list', 'shop', '--client', 'orders']), '');
    });

    test('refusals: a role that exists, the admin roles, a name that cannot be one, an unknown user, role or client', () => {
      fails(['role', 'create', 'shop', 'sales-clerk'], /Role with name sales-clerk already exists/);
      fails(['role', 'delete', 'shop', 'manage-users', '--client', 'realm-management'], /manage-users is one of Realmgate's admin roles: it cannot be deleted/);
      fails(['role', 'create', 'shop', 'boss', '--client', 'realm-management'], /the roles of realm-management are Realmgate's admin roles/);
      fails(['role', 'create', 'shop', 'a/b'], /the role name must not contain '\/'/);
      fails(['role', 'create', 'shop', 'bell\x07'], /the role name must not contain control characters/);
      fails(['role', 'grant', 'shop', 'nobody', 'sales-clerk'], /nobody/);
      fails(['role', 'grant', 'shop', 'bob', 'no-such-role'], /role no-such-role does not exist in realm shop/);
      fails(['role', 'list', 'shop', '--client', 'nope'], /client nope does not exist in realm shop/);
    });
  });
}
