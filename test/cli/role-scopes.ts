import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

// `client create|update --full-scope`, `client show`, `client scope-mappings` and `scope scope-mappings`
// (Keycloak's fullScopeAllowed and role scope mappings) through the installed command, over the database
// of a running server: the access tokens it issues carry what the commands put in the client's scope.
// One file per database (role-scopes-sqlite.test.ts, role-scopes-postgres.test.ts).
for (const dialect of dialects()) {
  describe(`realmgate client --full-scope and scope mappings (${dialect})`, () => {
    const { ok, run, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** alice's roles in an access token of web-app, from a fresh sign-in (scope openid profile email). */
    async function aliceRoles(): Promise<{ realm: string[] | undefined; own: string[] | undefined; api: string[] | undefined }> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      const claims = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
      const sorted = (v: string[] | undefined): string[] | undefined => (v ? [...v].sort() : v);
      return { realm: sorted(claims.realm_access?.roles), own: claims.resource_access?.[ts.client.id]?.roles, api: claims.resource_access?.api?.roles };
    }

    test('the help texts name the option and the commands', () => {
      assert.match(ok(['client', 'create', '--help']), /--full-scope <on\|off>\s+on \(the default\): its access tokens carry every role of\s+their user; off: only the roles in its scope/);
      assert.match(ok(['client', 'update', '--help']), /--full-scope <on\|off>/);
      const help = ok(['client', '--help']);
      assert.match(help, /^  show <realm> <client-id>/m);
      assert.match(help, /^  scope-mappings /m);
      assert.match(ok(['client', 'scope-mappings', '--help']), /^  add \[options\] <realm> <client-id> <role\.\.\.>/m);
      assert.match(ok(['scope', '--help']), /^  scope-mappings /m);
      assert.match(ok(['scope', 'scope-mappings', 'add', '--help']), /--client <client-id>\s+the roles are this client's \(client roles\);/);
    });

    test('--full-scope off limits the tokens to the roles in scope; scope-mappings add and remove change it', async () => {
      ok(['role', 'create', REALM, 'staff']);
      ok(['role', 'create', REALM, 'secret']);
      ok(['role', 'create', REALM, 'reports', '--client', ts.client.id]);
      ok(['client', 'create', REALM, 'api', '--public', '--redirect-uri', 'https://api.example/cb']);
      ok(['role', 'create', REALM, 'call', '--client', 'api']);
      ok(['role', 'grant', REALM, 'alice', 'staff', 'secret']);
      ok(['role', 'grant', REALM, 'alice', 'reports', '--client', ts.client.id]);
      ok(['role', 'grant', REALM, 'alice', 'call', '--client', 'api']);
      assert.deepEqual(await aliceRoles(), { realm: ['secret', 'staff'], own: ['reports'], api: ['call'] });

      assert.match(ok(['client', 'show', REALM, ts.client.id]), /^full scope:\s+on \(tokens carry every role of their user\)\n[^]*^roles in scope:\s+\n$/m);
      assert.match(ok(['client', 'update', REALM, ts.client.id, '--full-scope', 'off']), /^full scope:\s+off \(tokens carry only the roles in its scope\)$/m);
      // Its own client roles only.
      assert.deepEqual(await aliceRoles(), { realm: undefined, own: ['reports'], api: undefined });

      assert.equal(ok(['client', 'scope-mappings', 'add', REALM, ts.client.id, 'staff']), `added staff (realm roles) to the scope of client ${ts.client.id} in realm ${REALM}\n`);
      assert.equal(ok(['client', 'scope-mappings', 'add', REALM, ts.client.id, 'call', '--client', 'api']), `added call (roles of client api) to the scope of client ${ts.client.id} in realm ${REALM}\n`);
      assert.deepEqual(await aliceRoles(), { realm: ['staff'], own: ['reports'], api: ['call'] });
      // A role mapped to the scope of a client scope the token has (profile, a default scope of web-app).
      assert.equal(ok(['scope', 'scope-mappings', 'add', REALM, 'profile', 'secret']), `added secret (realm roles) to the scope of client scope profile in realm ${REALM}\n`);
      assert.deepEqual(await aliceRoles(), { realm: ['secret', 'staff'], own: ['reports'], api: ['call'] });
      assert.equal(ok(['scope', 'scope-mappings', 'list', REALM, 'profile']), 'secret\t\n');

      // Realm roles first, then client roles by client: name, tab, client.
      assert.equal(ok(['client', 'scope-mappings', 'list', REALM, ts.client.id]), 'staff\t\ncall\tapi\n');
      assert.match(ok(['client', 'show', REALM, ts.client.id]), /^roles in scope:\s+staff api\/call\n$/m);
      assert.equal(ok(['client', 'scope-mappings', 'remove', REALM, ts.client.id, 'staff']), `removed staff (realm roles) from the scope of client ${ts.client.id} in realm ${REALM}\n`);
      ok(['scope', 'scope-mappings', 'remove', REALM, 'profile', 'secret']);
      assert.deepEqual(await aliceRoles(), { realm: undefined, own: ['reports'], api: ['call'] });

      // Full scope again: every role, the mappings kept (and said to count only without full scope).
      ok(['client', 'update', REALM, ts.client.id, '--full-scope', 'on']);
      assert.deepEqual(await aliceRoles(), { realm: ['secret', 'staff'], own: ['reports'], api: ['call'] });
      const r = run(['client', 'scope-mappings', 'list', REALM, ts.client.id]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, 'call\tapi\n');
      assert.match(r.stderr, /client web-app has full scope: its tokens carry every role of their user; these mappings count once it is off/);

      // Each change is an admin event, as Keycloak's REALM_SCOPE_MAPPING and CLIENT_SCOPE_MAPPING.
      const events = ok(['admin-events', REALM]);
      assert.match(events, /\tCREATE\tREALM_SCOPE_MAPPING\tclients\/web-app\/scope-mappings\/realm\t/);
      assert.match(events, /\tCREATE\tCLIENT_SCOPE_MAPPING\tclients\/web-app\/scope-mappings\/clients\/api\t/);
      assert.match(events, /\tDELETE\tREALM_SCOPE_MAPPING\tclient-scopes\/profile\/scope-mappings\/realm\t/);
    });

    test('client create --full-scope off says what its tokens carry', () => {
      const out = ok(['client', 'create', REALM, 'narrow', '--public', '--redirect-uri', 'https://narrow.example/cb', '--full-scope', 'off']);
      assert.match(out, /^full scope off: its tokens carry only its own client roles until roles are put in its scope \(client scope-mappings add\)$/m);
      assert.match(ok(['client', 'show', REALM, 'narrow']), /^full scope:\s+off/m);
    });

    test('refusals: one line, a non-zero exit, nothing changed', () => {
      fails(['client', 'update', REALM, ts.client.id, '--full-scope', 'maybe'], /--full-scope takes on or off/);
      fails(['client', 'scope-mappings', 'add', REALM, ts.client.id, 'nope'], /role nope does not exist in realm test/);
      fails(['client', 'scope-mappings', 'add', REALM, ts.client.id, 'staff', 'nope'], /role nope does not exist in realm test/);
      fails(['client', 'scope-mappings', 'add', REALM, ts.client.id, 'call', '--client', 'ghost'], /client ghost does not exist in realm test/);
      fails(['client', 'scope-mappings', 'add', REALM, 'ghost', 'staff'], /client ghost does not exist in realm test/);
      fails(['client', 'scope-mappings', 'list', 'nowhere', ts.client.id], /realm nowhere does not exist/);
      fails(['scope', 'scope-mappings', 'add', REALM, 'no-such-scope', 'staff'], /client scope no-such-scope does not exist in realm test/);
      fails(['client', 'show', REALM, 'ghost'], /client ghost does not exist in realm test/);
      fails(['client', 'scope-mappings', 'add', REALM, ts.client.id], /missing required argument 'role'/);
      // staff was not added with the unknown role beside it.
      assert.equal(ok(['client', 'scope-mappings', 'list', REALM, ts.client.id]), 'call\tapi\n');
    });
  });
}
