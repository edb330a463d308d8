import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

// `realmgate role composites|add-composite|remove-composite` (Keycloak's composite roles) through the
// installed command (npm test builds dist/ first), over the database of a running server: the access
// tokens it issues carry what the composites contain. One file per database (composite-roles-sqlite.test.ts,
// composite-roles-postgres.test.ts).
for (const dialect of dialects()) {
  describe(`realmgate role composites (${dialect})`, () => {
    const { ok, run, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** alice's realm roles and the api client's roles in an access token of web-app, from a fresh sign-in. */
    async function aliceRoles(): Promise<{ realm: string[]; api: string[] | undefined }> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      const claims = decodeJwt(res.json().access_token as string) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
      return { realm: [...(claims.realm_access?.roles ?? [])].sort(), api: claims.resource_access?.api?.roles.slice().sort() };
    }

    test('add-composite, composites, remove-composite; tokens carry what a composite contains', async () => {
      const realm = REALM;
      ok(['role', 'create', realm, 'team']);
      ok(['role', 'create', realm, 'viewer']);
      ok(['role', 'create', realm, 'basic']);
      ok(['client', 'create', realm, 'api', '--redirect-uri', 'https://api.example.com/cb']);
      ok(['role', 'create', realm, 'read', '--client', 'api']);
      ok(['role', 'create', realm, 'write', '--client', 'api']);

      assert.equal(ok(['role', 'add-composite', realm, 'team', 'viewer', 'api/read']), `team in realm ${realm} contains viewer, api/read\n`);
      ok(['role', 'add-composite', realm, 'viewer', 'basic']);
      assert.equal(ok(['role', 'composites', realm, 'team']), 'viewer\napi/read\n');
      assert.equal(ok(['role', 'composites', realm, 'basic']), '');
      // A client role as the composite (--client), containing a realm role and one of its own client's.
      assert.equal(ok(['role', 'add-composite', realm, 'write', 'basic', 'api/read', '--client', 'api']), `write in client api of realm ${realm} contains basic, api/read\n`);
      assert.equal(ok(['role', 'composites', realm, 'write', '--client', 'api']), 'basic\napi/read\n');

      ok(['role', 'grant', realm, ts.user.username, 'team']);
      const roles = await aliceRoles();
      for (const n of ['basic', 'team', 'viewer']) assert.ok(roles.realm.includes(n), n);
      assert.deepEqual(roles.api, ['read']);

      assert.equal(ok(['role', 'remove-composite', realm, 'team', 'viewer']), `team in realm ${realm} no longer contains viewer\n`);
      assert.equal(ok(['role', 'composites', realm, 'team']), 'api/read\n');
      const after = await aliceRoles();
      assert.ok(!after.realm.includes('basic') && !after.realm.includes('viewer'));
      assert.deepEqual(after.api, ['read']);
    });

    test('clear errors, one line, non-zero exit, nothing changed', () => {
      const realm = REALM;
      const before = ok(['role', 'composites', realm, 'team']);
      fails(['role', 'add-composite', realm, 'team', 'no-such-role'], /role no-such-role does not exist in realm/);
      fails(['role', 'add-composite', realm, 'team', 'basic', 'no-such-client/x'], /client no-such-client does not exist/);
      fails(['role', 'add-composite', realm, 'team', 'api/no-such'], /role no-such does not exist in client api/);
      fails(['role', 'add-composite', realm, 'no-such-role', 'basic'], /role no-such-role does not exist/);
      fails(['role', 'add-composite', realm, 'team', 'team'], /cannot contain itself/);
      fails(['role', 'add-composite', 'no-such-realm', 'team', 'basic'], /no-such-realm/);
      fails(['role', 'composites', realm, 'team', '--client', 'no-such-client'], /client no-such-client does not exist/);
      assert.equal(ok(['role', 'composites', realm, 'team']), before);
      // A missing argument is commander's error.
      assert.notEqual(run(['role', 'add-composite', realm, 'team']).status, 0);
    });

    test('realm update --default-role: every new user gets the role (and what it contains); realm show names it', async () => {
      const realm = REALM;
      assert.match(ok(['realm', 'show', realm]), /^default role: +none \(new users get no role\)$/m);
      ok(['role', 'create', realm, 'default-roles-test']);
      ok(['role', 'create', realm, 'member']);
      ok(['role', 'add-composite', realm, 'default-roles-test', 'member']);
      ok(['realm', 'update', realm, '--default-role', 'default-roles-test']);
      assert.match(ok(['realm', 'show', realm]), /^default role: +default-roles-test$/m);
      ok(['user', 'create', realm, 'dora', '--password', 'dora password 42', '--org', 'acme']);
      const dora = (await ts.store.users.findByUsername(realm, 'dora'))!;
      assert.deepEqual((await ts.store.roles.effectiveRoles(dora.id)).map((r) => r.name).sort(), ['default-roles-test', 'member']);
      // alice was there before: she keeps her roles, without the default role.
      assert.ok(!(await aliceRoles()).realm.includes('default-roles-test'));
      fails(['realm', 'update', realm, '--default-role', 'no-such-role'], /Could not find the realm role no-such-role/);
      assert.match(ok(['realm', 'show', realm]), /^default role: +default-roles-test$/m);
    });

    test('--help names the commands and how contained client roles are written', () => {
      const help = ok(['role', '--help']);
      for (const c of ['composites', 'add-composite', 'remove-composite']) assert.match(help, new RegExp(`\\b${c}\\b`));
      assert.match(ok(['role', 'add-composite', '--help']), /<client-id>\/<name>/);
    });
  });
}
