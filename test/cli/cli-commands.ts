import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';

// The installed command (npm test builds dist/ first, as `npm install` does). Its commands on one realm,
// acme, in order; test/cli/cli.ts has the rest (two files: each stays well inside the runner's per-file limit on a loaded machine).

for (const dialect of dialects()) {
  describe(`realmgate CLI: creating, changing and listing a realm's contents (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-commands-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('realm, org, user and client creation in the documented forms', () => {
      ok(['realm', 'create', 'acme', '--display-name', 'Acme Realm']);
      ok(['org', 'create', 'acme', 'sales', '--name', 'Sales Ltd']);
      ok(['org', 'create', 'acme', 'ops']);
      let r = run(['user', 'create', 'acme', 'alice', '--password', 'alice-password', '--email', 'alice@example.com', '--org', 'sales', '--org', 'ops']);
      assert.equal(r.status, 0, r.stderr);
      r = run(['user', 'create', 'acme', 'bob', '--password-stdin'], 'bob-password\n');
      assert.equal(r.status, 0, r.stderr);
      r = run(['client', 'create', 'acme', 'app', '--redirect-uri', 'https://app.example/cb', '--redirect-uri', 'http://127.0.0.1:8000/cb']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /client secret \(shown only now\): [A-Za-z0-9_-]{43}/);
      r = run(['client', 'create', 'acme', 'app2', '--redirect-uri', 'https://app.example/cb', '--secret', 's3cret-value-for-app2', '--scope', 'openid exports']);
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /s3cret-value/);
      r = run(['client', 'create', 'acme', 'desktop', '--redirect-uri', 'http://localhost/authentication_code', '--public']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(run(['client', 'list', 'acme']).stdout, /desktop\tpublic/);
      assert.match(run(['org', 'list', 'acme']).stdout, /sales\tSales Ltd/);
      assert.match(run(['user', 'list', 'acme']).stdout, /alice\talice@example.com/);
    });

    test('realm revoke-before and keys rotate/list', () => {
      assert.match(run(['realm', 'revoke-before', 'acme']).stdout, /no not-before policy/);
      let r = run(['realm', 'revoke-before', 'acme', '--now']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /not-before-policy \d+/);
      assert.match(run(['realm', 'revoke-before', 'acme']).stdout, /are refused/);
      r = run(['realm', 'revoke-before', 'acme', '--clear']);
      assert.equal(r.status, 0, r.stderr);
      const before = run(['keys', 'list', 'acme']).stdout.trim().split('\n');
      assert.equal(before.length, 1);
      assert.match(before[0]!, /\tRS256\t.*\tactive$/);
      r = run(['keys', 'rotate', 'acme', '--alg', 'ES256']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /new active key \S+ \(ES256\)/);
      const after = run(['keys', 'list', 'acme']).stdout.trim().split('\n');
      assert.equal(after.length, 2);
      assert.match(after.join('\n'), /ES256\t.*\tactive/);
      assert.match(after.join('\n'), /RS256\t.*\tretired, published until/);
      fails(['keys', 'rotate', 'nope'], /realm nope does not exist/);
      fails(['keys', 'rotate', 'acme', '--alg', 'HS256'], /HS256/);
      fails(['realm', 'revoke-before', 'acme', '--at', 'yesterday'], /not a time/);

      // The same for one client (Keycloak's client not-before): shown, set, refused out of range, cleared.
      assert.match(run(['client', 'revoke-before', 'acme', 'app']).stdout, /no not-before policy/);
      r = run(['client', 'revoke-before', 'acme', 'app', '--at', '2026-01-01T00:00:00Z']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /tokens of client app issued before 2026-01-01T00:00:00.000Z are refused \(not-before-policy 1767225600\)/);
      assert.match(run(['client', 'revoke-before', 'acme', 'app']).stdout, /tokens issued before 2026-01-01T00:00:00.000Z \(1767225600\) are refused/);
      fails(['client', 'revoke-before', 'acme', 'app', '--at', '4102444800'], /more than a day ahead/);
      fails(['client', 'revoke-before', 'acme', 'app', '--now', '--clear'], /only one of --now, --at and --clear/);
      fails(['client', 'revoke-before', 'acme', 'nope'], /client nope does not exist/);
      assert.match(run(['client', 'revoke-before', 'acme', 'app']).stdout, /1767225600/, 'a refused change stores nothing');
      r = run(['client', 'revoke-before', 'acme', 'app', '--clear']);
      assert.match(r.stdout, /not-before policy of client app cleared/);
      assert.match(run(['client', 'revoke-before', 'acme', 'app']).stdout, /no not-before policy/);
    });

    test('events lists the audit log, filtered by user, client, type, address and time', async () => {
      const r = run(['events', 'acme', '--user', 'alice', '--since', '2020-01-01T00:00:00Z']);
      assert.equal(r.status, 0, r.stderr);
      fails(['events', 'nope'], /realm nope does not exist/);
      fails(['events', 'acme', '--since', 'soon'], /not a time/);
      fails(['events', 'acme', '--until', 'later'], /not a time/);
      fails(['events', 'acme', '--type', 'LOGIN_EROR'], /unknown event type LOGIN_EROR: one of LOGIN, LOGIN_ERROR/);
      // Known rows, one second apart from 2024-05-01T00:00:00Z.
      const t0 = Date.UTC(2024, 4, 1) / 1000;
      const rows = [
        ['LOGIN', '192.0.2.1'], ['LOGIN_ERROR', '192.0.2.1'], ['LOGIN_ERROR', '192.0.2.2'], ['TOKEN_REUSE', '192.0.2.2'], ['REFRESH_TOKEN_ERROR', '192.0.2.1'],
      ].map(([type, ip], k) => ({ id: `cli-ev-${k}`, realm_id: 'acme', time: t0 + k, type: type!, outcome: type === 'LOGIN' ? 'success' : 'failure', client_id: 'app', user_id: null, username: 'alice', ip: ip!, reason: null }));
      const db = await openDatabase(database.url);
      try {
        await db.kysely.insertInto('events').values(rows).execute();
      } finally {
        await db.close();
      }
      const listed = (...args: string[]): string[] =>
        ok(['events', 'acme', '--json', ...args]).trim().split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { id: string }).id);
      assert.deepEqual(listed('--type', 'LOGIN_ERROR'), ['cli-ev-2', 'cli-ev-1']);
      assert.deepEqual(listed('--type', 'LOGIN_ERROR', '--type', 'TOKEN_REUSE'), ['cli-ev-3', 'cli-ev-2', 'cli-ev-1']);
      assert.deepEqual(listed('--ip', '192.0.2.2'), ['cli-ev-3', 'cli-ev-2']);
      assert.deepEqual(listed('--since', String(t0 + 1), '--until', '2024-05-01T00:00:03Z', '--ip', '192.0.2.1'), ['cli-ev-1']);
      assert.deepEqual(listed('--user', 'alice', '--client', 'app', '--type', 'REFRESH_TOKEN_ERROR'), ['cli-ev-4']);
    });

    test('wrong input exits non-zero with a one-line message', () => {
      fails(['realm', 'create', 'acme'], /already exists/);
      fails(['realm', 'create', 'bad realm'], /realm name/);
      fails(['org', 'create', 'nope', 'x'], /realm nope does not exist/);
      fails(['org', 'create', 'acme', 'sales'], /already exists/);
      fails(['user', 'create', 'acme', 'carol', '--password', 'carol-password', '--org', 'nope'], /organization nope does not exist/);
      fails(['user', 'create', 'acme', 'alice', '--password', 'alice-password'], /already exists/);
      fails(['user', 'create', 'acme', 'dave'], /password is required/);
      fails(['user', 'create', 'acme', 'erin', '--password', 'short'], /at least 8/);
      fails(['client', 'create', 'nope', 'x', '--redirect-uri', 'https://x.example/cb'], /realm nope does not exist/);
      fails(['client', 'create', 'acme', 'app', '--redirect-uri', 'https://x.example/cb'], /already exists/);
      fails(['client', 'create', 'acme', 'rel', '--redirect-uri', '/callback'], /not an absolute URI/);
      fails(['client', 'create', 'acme', 'plain', '--redirect-uri', 'http://app.example/cb'], /http: for a non-loopback host/);
      fails(['client', 'create', 'acme', 'frag', '--redirect-uri', 'https://app.example/cb#x'], /fragment/);
      fails(['client', 'create', 'acme', 'none'], /at least one --redirect-uri/);
      fails(['client', 'create', 'acme', 'sc', '--redirect-uri', 'https://x.example/cb', '--scope', 'admin'], /scope admin is not defined/);
      fails(['realm', 'update', 'acme', '--code-lifetime', '60'], /30 to 50/);
      fails(['realm', 'update', 'acme', '--refresh-grace-seconds', '301'], /0 \(off\) to 300/);
      fails(['realm', 'update', 'acme', '--stored-events', 'LOGIN'], /not an optional event type/);
      fails(['--database-url', 'mysql://x', 'realm', 'list'], /unsupported database URL/);
      fails(['client', 'create', 'acme', 'weak', '--redirect-uri', 'https://x.example/cb', '--secret', 'abc'], /at least 16 characters/);
      fails(['start', '--port', '99999'], /port must be from 0 to 65535/);
    });
  });
}
