import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `user create` name flags and `client update`, through the installed command (contract item 2).
// The installed command (npm test builds dist/ first, as `npm install` does).

for (const dialect of dialects()) {
  describe(`realmgate user and client settings (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-client-update-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('a realm and an organization to work in', () => {
      ok(['realm', 'create', 'acme']);
      ok(['org', 'create', 'acme', 'sales']);
    });

    test('user create takes first name, last name and email verified', async () => {
      ok(['user', 'create', 'acme', 'nina', '--password', 'nina-password', '--email', 'nina@example.com', '--first-name', 'Nina', '--last-name', 'Simone', '--email-verified']);
      fails(['user', 'create', 'acme', 'nemo', '--password', 'nemo-password', '--first-name', ' '], /first name/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const row = await db.kysely.selectFrom('users').select(['first_name', 'last_name', 'email_verified']).where('username', '=', 'nina').executeTakeFirstOrThrow();
        assert.deepEqual({ ...row, email_verified: Number(row.email_verified) }, { first_name: 'Nina', last_name: 'Simone', email_verified: 1 });
      } finally {
        await db.close();
      }
    });

    test('client update changes what it is given and prints the result', () => {
      ok(['client', 'create', 'acme', 'upd', '--redirect-uri', 'https://upd.example/cb', '--auth-method', 'client_secret_post']);
      let r = run(['client', 'update', 'acme', 'upd', '--add-redirect-uri', 'https://upd.example/cb2', '--name', 'Updated App', '--auth-method', 'client_secret_basic,client_secret_post', '--id-token-alg', 'ES256', '--audience', 'https://api.example.com', '--scope', 'openid profile']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /redirect URIs:\s+https:\/\/upd\.example\/cb https:\/\/upd\.example\/cb2\n/);
      assert.match(r.stdout, /name:\s+Updated App\n/);
      assert.match(r.stdout, /auth methods:\s+client_secret_basic client_secret_post\n/);
      assert.match(r.stdout, /ID token alg:\s+ES256\n/);
      assert.match(r.stdout, /audiences:\s+https:\/\/api\.example\.com\n/);
      assert.match(r.stdout, /scopes:\s+openid profile\n/);
      assert.match(r.stdout, /optional scopes:\s+\n/);
      // Optional scopes (granted only when asked for): set, kept by a later --scope, moved by naming them there, removed with ''.
      r = run(['client', 'update', 'acme', 'upd', '--optional-scope', 'email offline_access']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /\nscopes:\s+openid profile\n/);
      assert.match(r.stdout, /optional scopes:\s+email offline_access\n/);
      r = run(['client', 'update', 'acme', 'upd', '--scope', 'openid profile email']);
      assert.match(r.stdout, /\nscopes:\s+openid profile email\n/);
      assert.match(r.stdout, /optional scopes:\s+offline_access\n/);
      r = run(['client', 'update', 'acme', 'upd', '--optional-scope', '']);
      assert.match(r.stdout, /optional scopes:\s+\n/);
      fails(['client', 'update', 'acme', 'upd', '--optional-scope', 'openid'], /openid cannot be an optional scope/);
      fails(['client', 'update', 'acme', 'upd', '--optional-scope', 'nope'], /scope nope is not defined/);
      r = run(['client', 'update', 'acme', 'upd', '--remove-redirect-uri', 'https://upd.example/cb', '--disable', '--name', '']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /client:\s+upd \(confidential, disabled\)\n/);
      assert.match(r.stdout, /redirect URIs:\s+https:\/\/upd\.example\/cb2\n/);
      assert.match(r.stdout, /name:\s+\n/);
      fails(['client', 'update', 'acme', 'upd', '--remove-redirect-uri', 'https://upd.example/cb2'], /at least one redirect URI/);
      fails(['client', 'update', 'acme', 'upd', '--auth-method', 'client_secret_jwt'], /client_secret_basic, client_secret_post or private_key_jwt/);
      fails(['client', 'update', 'acme', 'upd', '--auth-method', 'private_key_jwt,client_secret_basic'], /a method of its own/);
      fails(['client', 'update', 'acme', 'upd', '--id-token-alg', 'HS256'], /RS256, ES256 or EdDSA/);
      fails(['client', 'update', 'acme', 'nope', '--enable'], /client nope does not exist/);
    });
  });
}
