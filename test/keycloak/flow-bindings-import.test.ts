import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };
const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');

// Keycloak's flows do not move (Realmgate's sign-in steps are fixed); a realm or client bound to a flow
// other than the built-in one is said in the import's report, and the admin API reads the fixed flows.
for (const dialect of dialects()) {
  describe(`Keycloak import: flow bindings (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("a realm bound to its own browser flow, and a client with overrides: one line each; the built-in bindings none", async () => {
      const rep = {
        realm: 'bound',
        enabled: true,
        browserFlow: 'browser with passkeys',
        directGrantFlow: 'direct grant',
        registrationFlow: 'registration',
        authenticationFlows: [{ alias: 'browser with passkeys', providerId: 'basic-flow', topLevel: true, builtIn: false, authenticationExecutions: [] }],
        clients: [
          { clientId: 'special', publicClient: true, redirectUris: ['https://rp.example.com/cb'], authenticationFlowBindingOverrides: { browser: '3f0e0000-0000-4000-8000-000000000001' } },
          { clientId: 'plain', publicClient: true, redirectUris: ['https://rp.example.com/cb'], authenticationFlowBindingOverrides: {} },
        ],
      };
      const report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor);
      const lines = report.realms[0]!.lines;
      const lineOf = (element: string) => lines.find((l) => l.element === element);
      assert.equal(lineOf('authentication flows')!.outcome, 'mapped');
      const browser = lineOf('realm setting browserFlow')!;
      assert.equal(browser.outcome, 'mapped');
      assert.match(browser.reason!, /"browser with passkeys" in Keycloak: Realmgate runs its own "browser" steps/);
      assert.equal(lineOf('realm setting directGrantFlow'), undefined, 'the built-in binding says nothing');
      assert.equal(lineOf('realm setting registrationFlow'), undefined);
      const overrides = lineOf('clients authenticationFlowBindingOverrides')!;
      assert.match(overrides.reason!, /^1 client\(s\) bound to flows of their own in Keycloak \(special\)/);
      // The realm's flows read as the fixed ones, whatever the file had.
      assert.deepEqual((await ts.kc.authenticationManagement.getFlows({ realm: 'bound' })).map((f) => f.alias), ['browser', 'direct grant', 'registration', 'reset credentials', 'clients', 'first broker login']);
    });

    test("Keycloak 26.6's own export, with its built-in bindings: no binding line", async () => {
      const file = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as Record<string, unknown> | Array<Record<string, unknown>>;
      const realm: Record<string, unknown> = { ...(Array.isArray(file) ? file[0]! : file), realm: 'kc-bindings' };
      assert.equal(realm.browserFlow, 'browser', 'the fixture binds the built-in browser flow');
      const report = await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor);
      const lines = report.realms[0]!.lines;
      assert.deepEqual(lines.filter((l) => /Flow$|authenticationFlowBindingOverrides/.test(l.element)), []);
      assert.ok(lines.some((l) => l.element === 'authentication flows'));
    });
  });
}
