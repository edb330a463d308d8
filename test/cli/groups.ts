import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

// `realmgate group ...`: Keycloak's groups from the command line, on the installed command (npm test
// builds dist/ first), groups named by path. A member holds the roles of its groups and of the groups
// above them: the last tests check that in access tokens issued by a server over the same database.
// One file per database and part (groups-sqlite.test.ts, groups-refusals-sqlite.test.ts,
// groups-tokens-sqlite.test.ts and their PostgreSQL twins): together, at some 60 s on a quiet machine,
// they came near the 120 s a test file may take, and went past it on a loaded one; one file per database
// went past it too under heavy load (2026-11-29, load average 13 on two cores), and so did commands and
// refusals together (2026-12-01: 115 s with the load average near 7, each command a process of its own).
export function groupSuites(dialect: 'sqlite' | 'postgres', part: 'commands' | 'refusals' | 'tokens'): void {
  /** Realm shop with users bob and carol, client orders with its role deploy, and the realm role engineer. */
  const shop = (ok: (args: string[], input?: string) => string): void => {
    ok(['realm', 'create', 'shop']);
    ok(['user', 'create', 'shop', 'bob', '--password-stdin'], 'bob password 123\n');
    ok(['user', 'create', 'shop', 'carol', '--password-stdin'], 'carol password 123\n');
    ok(['client', 'create', 'shop', 'orders', '--redirect-uri', 'https://orders.example.com/cb']);
    ok(['role', 'create', 'shop', 'engineer']);
    ok(['role', 'create', 'shop', 'deploy', '--client', 'orders']);
  };

  if (part === 'commands') describe(`realmgate group (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-groups-');
    const { ok, fails } = cliRunner(() => database.url);

    test('create, list, update, move, members, join, leave, grant, revoke, delete', () => {
      shop(ok);

      assert.equal(ok(['group', 'create', 'shop', '/eng', '--description', 'Engineering']), 'created group /eng in realm shop\n');
      assert.equal(ok(['group', 'create', 'shop', '/eng/backend']), 'created group /eng/backend in realm shop\n');
      // The leading '/' may be left out.
      assert.equal(ok(['group', 'create', 'shop', 'eng/frontend']), 'created group /eng/frontend in realm shop\n');
      ok(['group', 'create', 'shop', '/sales']);
      // The same name under another parent is another group.
      ok(['group', 'create', 'shop', '/sales/backend']);
      assert.equal(ok(['group', 'list', 'shop']), '/eng\t0\n/eng/backend\t0\n/eng/frontend\t0\n/sales\t0\n/sales/backend\t0\n');

      assert.equal(ok(['group', 'join', 'shop', 'bob', '/eng/backend']), 'bob joined /eng/backend in realm shop\n');
      ok(['group', 'join', 'shop', 'carol', '/eng/backend']);
      ok(['group', 'join', 'shop', 'BOB', '/sales']);
      assert.equal(ok(['group', 'members', 'shop', '/eng/backend']), 'bob\ncarol\n');
      assert.equal(ok(['group', 'members', 'shop', '/eng']), '', 'members of a subgroup are not members of its parent');
      assert.equal(ok(['user', 'groups', 'shop', 'bob']), '/eng/backend\n/sales\n');
      assert.equal(ok(['group', 'list', 'shop']), '/eng\t0\n/eng/backend\t2\n/eng/frontend\t0\n/sales\t1\n/sales/backend\t0\n');

      assert.equal(ok(['group', 'grant', 'shop', '/eng', 'engineer']), 'granted engineer to group /eng in realm shop\n');
      assert.equal(ok(['group', 'grant', 'shop', '/eng/backend', 'deploy', '--client', 'orders']), 'granted deploy to group /eng/backend in client orders of realm shop\n');
      assert.equal(ok(['group', 'roles', 'shop', '/eng/backend']), 'deploy\torders\tmapped\nengineer\t\tinherited\n');
      assert.equal(ok(['group', 'roles', 'shop', '/eng']), 'engineer\t\tmapped\n');

      // Renamed: its subgroups' paths follow.
      assert.equal(ok(['group', 'update', 'shop', '/eng', '--name', 'engineering', '--description', '']), 'updated group /engineering in realm shop\n');
      assert.equal(ok(['user', 'groups', 'shop', 'bob']), '/engineering/backend\n/sales\n');
      // Moved to the top, then under /sales/backend: it takes its members and subgroups along.
      assert.equal(ok(['group', 'move', 'shop', '/engineering/backend', '/']), 'moved group to /backend in realm shop\n');
      assert.equal(ok(['group', 'roles', 'shop', '/backend']), 'deploy\torders\tmapped\n');
      assert.equal(ok(['group', 'move', 'shop', '/engineering', '/sales/backend']), 'moved group to /sales/backend/engineering in realm shop\n');
      assert.equal(ok(['group', 'list', 'shop']), '/backend\t2\n/sales\t1\n/sales/backend\t0\n/sales/backend/engineering\t0\n/sales/backend/engineering/frontend\t0\n');

      assert.equal(ok(['group', 'revoke', 'shop', '/backend', 'deploy', '--client', 'orders']), 'revoked deploy from group /backend in client orders of realm shop\n');
      assert.equal(ok(['group', 'roles', 'shop', '/backend']), '');
      assert.equal(ok(['group', 'leave', 'shop', 'carol', '/backend']), 'carol left /backend in realm shop\n');
      assert.equal(ok(['group', 'members', 'shop', '/backend']), 'bob\n');

      // Deleted with its subgroups; the members stay users.
      assert.equal(ok(['group', 'delete', 'shop', '/sales']), 'deleted group /sales and its subgroups in realm shop\n');
      assert.equal(ok(['group', 'list', 'shop']), '/backend\t1\n');
      assert.equal(ok(['user', 'groups', 'shop', 'bob']), '/backend\n');
      assert.match(ok(['user', 'list', 'shop']), /^bob\t/m);

      // A default group: every user created from then on joins it.
      assert.equal(ok(['group', 'default', 'shop', '/backend']), '/backend is a default group of realm shop: every user created from now on joins it\n');
      assert.equal(ok(['group', 'default', 'shop']), '/backend\n');
      ok(['user', 'create', 'shop', 'dana', '--password-stdin'], 'dana password 123\n');
      assert.equal(ok(['user', 'groups', 'shop', 'dana']), '/backend\n');
      assert.equal(ok(['group', 'default', 'shop', '/backend', '--remove']), '/backend is no longer a default group of realm shop\n');
      assert.equal(ok(['group', 'default', 'shop']), '');
      ok(['user', 'create', 'shop', 'erik', '--password-stdin'], 'erik password 123\n');
      assert.equal(ok(['user', 'groups', 'shop', 'erik']), '');
      // Created straight into a group; an unknown path creates nobody.
      ok(['user', 'create', 'shop', 'fay', '--group', '/backend', '--password-stdin'], 'fay password 123\n');
      assert.equal(ok(['user', 'groups', 'shop', 'fay']), '/backend\n');
      fails(['user', 'create', 'shop', 'gus', '--group', '/nowhere', '--password', 'gus password 123'], /Group path does not exist: \/nowhere/);
      assert.doesNotMatch(ok(['user', 'list', 'shop']), /^gus\t/m);
      for (const name of ['dana', 'erik', 'fay']) ok(['user', 'delete', 'shop', name]);

      // Each change is an admin event made via the CLI.
      const events = ok(['admin-events', 'shop', '--limit', '100']);
      for (const type of ['GROUP', 'GROUP_MEMBERSHIP', 'REALM_ROLE_MAPPING', 'CLIENT_ROLE_MAPPING']) assert.match(events, new RegExp(`\\t${type}\\t`), type);
    });

  });

  // The refusals in a file of their own (groups-refusals-*.test.ts): with the commands above, one file came
  // near the 120 s a test file may take on a loaded machine (each command is a process of its own).
  if (part === 'refusals') describe(`realmgate group: refusals (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-group-refusals-');
    const { run, ok, fails } = cliRunner(() => database.url);

    /** What the refusals must leave as it was: the tree, members, roles, a user's groups. */
    function snapshot(): string {
      return [
        ok(['group', 'list', 'shop']),
        ok(['group', 'members', 'shop', '/eng/backend']),
        ok(['group', 'roles', 'shop', '/eng/backend']),
        ok(['user', 'groups', 'shop', 'bob']),
      ].join('--\n');
    }

    test('refusals exit 1 with one line, and change nothing', () => {
      // /eng with /eng/backend (bob a member), engineer mapped to /eng, and /ops.
      shop(ok);
      ok(['group', 'create', 'shop', '/eng']);
      ok(['group', 'create', 'shop', '/eng/backend']);
      ok(['group', 'create', 'shop', '/ops']);
      ok(['group', 'join', 'shop', 'bob', '/eng/backend']);
      ok(['group', 'grant', 'shop', '/eng', 'engineer']);
      const before = snapshot();

      fails(['group', 'create', 'shop', '/eng'], /Top level group named 'eng' already exists/, { status: 1 });
      fails(['group', 'create', 'shop', '/eng/backend'], /Sibling group named 'backend' already exists/, { status: 1 });
      fails(['group', 'create', 'shop', '/nope/child'], /Group path does not exist: \/nope/, { status: 1 });
      fails(['group', 'create', 'shop', '/'], /a group path names the group last/, { status: 1 });
      fails(['group', 'create', 'shop', '/eng/'], /a group path names the group last/, { status: 1 });
      fails(['group', 'create', 'shop', '/bell\x07'], /the group name must not contain control characters/, { status: 1 });
      fails(['group', 'create', 'shop', '/ padded'], /must not begin or end with spaces/, { status: 1 });
      fails(['group', 'create', 'shop', `/${'x'.repeat(256)}`], /group name/, { status: 1 });
      fails(['group', 'create', 'nope', '/x'], /realm nope does not exist/, { status: 1 });
      fails(['group', 'update', 'shop', '/ops', '--name', 'eng'], /Top level group named 'eng' already exists/, { status: 1 });
      fails(['group', 'update', 'shop', '/ops', '--name', 'a/b'], /must not contain '\/'/, { status: 1 });
      fails(['group', 'update', 'shop', '/ops'], /nothing to change/, { status: 1 });
      fails(['group', 'update', 'shop', '/missing', '--name', 'x'], /Group path does not exist: \/missing/, { status: 1 });
      fails(['group', 'move', 'shop', '/eng', '/eng/backend'], /cannot be moved under itself or one of its own subgroups/, { status: 1 });
      fails(['group', 'move', 'shop', '/eng', '/eng'], /cannot be moved under itself/, { status: 1 });
      fails(['group', 'move', 'shop', '/eng/backend', '/missing'], /Group path does not exist: \/missing/, { status: 1 });
      fails(['group', 'delete', 'shop', '/eng/missing'], /Group path does not exist: \/eng\/missing/, { status: 1 });
      fails(['group', 'members', 'shop', '/missing'], /Group path does not exist/, { status: 1 });
      fails(['group', 'join', 'shop', 'nobody', '/eng'], /user nobody does not exist in realm shop/, { status: 1 });
      fails(['group', 'join', 'shop', 'bob', '/missing'], /Group path does not exist/, { status: 1 });
      fails(['group', 'leave', 'shop', 'bob', '/eng'], /user bob is not a member of that group/, { status: 1 });
      fails(['group', 'grant', 'shop', '/eng', 'no-such-role'], /role no-such-role does not exist in realm shop/, { status: 1 });
      fails(['group', 'grant', 'shop', '/eng', 'deploy'], /role deploy does not exist in realm shop/, { status: 1 });
      fails(['group', 'grant', 'shop', '/eng', 'deploy', '--client', 'nope'], /client nope does not exist in realm shop/, { status: 1 });
      // One role unknown among several: none is mapped.
      fails(['group', 'grant', 'shop', '/ops', 'engineer', 'no-such-role'], /role no-such-role does not exist/, { status: 1 });
      fails(['user', 'groups', 'shop', 'nobody'], /user nobody does not exist in realm shop/, { status: 1 });
      // A path typed with control characters is quoted escaped, on one line.
      const r = run(['group', 'delete', 'shop', '/eng/\x1b[31mred\nline']);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /Group path does not exist: \/eng\/\\x1b\[31mred\\nline\n/);
      assert.doesNotMatch(r.stderr, /\x1b/);

      assert.equal(snapshot(), before);
      assert.equal(ok(['group', 'roles', 'shop', '/ops']), '');
    });

    test('names are printed with control characters escaped; --help names every command', () => {
      // Bidi overrides are no control characters for the name rules, yet must not reorder a terminal's line.
      ok(['group', 'create', 'shop', '/eng/\u202eevil']);
      assert.match(ok(['group', 'list', 'shop']), /^\/eng\/\\u\{202e\}evil\t0$/m);
      ok(['group', 'delete', 'shop', '/eng/\u202eevil']);
      const help = ok(['group', '--help']);
      for (const c of ['create', 'update', 'move', 'delete', 'list', 'members', 'roles', 'join', 'leave', 'grant', 'revoke']) assert.match(help, new RegExp(`^  ${c} `, 'm'), c);
      assert.match(ok(['user', '--help']), /^  groups <realm> <user>/m);
      assert.match(ok(['--help']), /^  group /m);
    });
  });

  if (part === 'tokens') describe(`realmgate group: roles through groups reach access tokens (${dialect})`, () => {
    const { ok } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** alice's access token from a fresh sign-in, then each refresh of it: what her roles are now. */
    let refreshToken = '';
    async function aliceRoles(): Promise<{ realm: string[] | undefined; client: string[] | undefined }> {
      let res;
      if (refreshToken === '') {
        const r = await runAuthorization(ts);
        res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      } else {
        res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(ts.client.id, ts.client.secret) });
      }
      assert.equal(res.statusCode, 200, res.body);
      refreshToken = res.json().refresh_token;
      const claims = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
      return { realm: claims.realm_access?.roles, client: claims.resource_access?.[ts.client.id]?.roles };
    }

    test("a role mapped to a parent group is in the token of a member of its subgroup; leaving, unmapping or moving takes it away", async () => {
      assert.deepEqual(await aliceRoles(), { realm: undefined, client: undefined });
      ok(['role', 'create', REALM, 'staff']);
      ok(['role', 'create', REALM, 'reports', '--client', ts.client.id]);
      ok(['group', 'create', REALM, '/company']);
      ok(['group', 'create', REALM, '/company/finance']);
      ok(['group', 'create', REALM, '/company/finance/audit']);
      ok(['group', 'create', REALM, '/elsewhere']);
      ok(['group', 'grant', REALM, '/company', 'staff']);
      ok(['group', 'grant', REALM, '/company/finance', 'reports', '--client', ts.client.id]);
      ok(['group', 'join', REALM, 'alice', '/company/finance/audit']);
      assert.deepEqual(await aliceRoles(), { realm: ['staff'], client: ['reports'] });

      // Moved out from under /company: the grandparent's realm role goes, the parent's client role stays.
      ok(['group', 'move', REALM, '/company/finance', '/elsewhere']);
      assert.deepEqual(await aliceRoles(), { realm: undefined, client: ['reports'] });
      ok(['group', 'move', REALM, '/elsewhere/finance', '/company']);
      assert.deepEqual(await aliceRoles(), { realm: ['staff'], client: ['reports'] });

      // Unmapped from the group: gone from her next token.
      ok(['group', 'revoke', REALM, '/company/finance', 'reports', '--client', ts.client.id]);
      assert.deepEqual(await aliceRoles(), { realm: ['staff'], client: undefined });
      // Left: nothing through groups any more.
      ok(['group', 'leave', REALM, 'alice', '/company/finance/audit']);
      assert.deepEqual(await aliceRoles(), { realm: undefined, client: undefined });
      // Joined again, then the parent deleted with its subgroups: gone again.
      ok(['group', 'join', REALM, 'alice', '/company/finance/audit']);
      assert.deepEqual((await aliceRoles()).realm, ['staff']);
      ok(['group', 'delete', REALM, '/company']);
      assert.deepEqual(await aliceRoles(), { realm: undefined, client: undefined });
      assert.equal(ok(['user', 'groups', REALM, 'alice']), '');
    });
  });
}
