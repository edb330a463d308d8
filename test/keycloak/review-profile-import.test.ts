import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };

/**
 * Keycloak keeps the first broker login's Review Profile mode in the config of the flow's
 * idp-review-profile execution (update.profile.on.first.login); a DISABLED execution never reviews.
 * The real export of Keycloak 26.6 (../shared/fixtures/keycloak) has the default, missing.
 */
const FIXTURE = new URL('../../../shared/fixtures/keycloak/migration-realm-26.6.0.json', import.meta.url);

type Rep = Record<string, unknown> & { realm: string };

/** A realm of its own with the export's first broker login flow and authenticator configs (ids and all), `change` applied. */
function withReview(rep: Rep, realm: string, change: (execution: Record<string, unknown>, config: Record<string, string>) => void): Rep {
  const whole = JSON.parse(JSON.stringify(rep)) as Rep & { authenticationFlows: Array<{ alias: string; authenticationExecutions: Array<Record<string, unknown>> }>; authenticatorConfig: Array<{ alias: string; config: Record<string, string> }> };
  const copy = { realm, enabled: true, firstBrokerLoginFlow: whole.firstBrokerLoginFlow, authenticationFlows: whole.authenticationFlows, authenticatorConfig: whole.authenticatorConfig };
  const execution = copy.authenticationFlows.find((f) => f.alias === 'first broker login')!.authenticationExecutions.find((e) => e.authenticator === 'idp-review-profile')!;
  const config = copy.authenticatorConfig.find((c) => c.alias === execution.authenticatorConfig)!.config;
  change(execution, config);
  return copy;
}

for (const dialect of dialects()) {
  describe(`Keycloak import: the first broker login's Review Profile mode (${dialect})`, () => {
    let ts: TestServer;
    let exported: Rep;
    before(async () => {
      ts = await startTestServer({ dialect });
      exported = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Rep[]).find((r) => r.realm === 'Migration2')!;
    });
    after(() => ts.close());

    test("Keycloak's export as it is: missing; its config on or off, or the execution disabled: the realm's mode, reported", async () => {
      // The whole export, as Keycloak wrote it.
      const whole = (await importKeycloakRealms(ts.store, [exported], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(whole.status, 'imported', JSON.stringify(whole).slice(0, 300));
      assert.equal((await ts.store.realms.get('Migration2'))!.brokerReviewProfile, 'missing');
      const cases: Array<[string, (e: Record<string, unknown>, c: Record<string, string>) => void, string]> = [
        ['review-default', () => {}, 'missing'],
        ['review-on', (_e, c) => (c['update.profile.on.first.login'] = 'on'), 'on'],
        ['review-off', (_e, c) => (c['update.profile.on.first.login'] = 'off'), 'off'],
        ['review-disabled', (e) => (e.requirement = 'DISABLED'), 'off'],
        ['review-junk', (_e, c) => (c['update.profile.on.first.login'] = 'sometimes'), 'missing'],
      ];
      for (const [realm, change, mode] of cases) {
        const r = (await importKeycloakRealms(ts.store, [withReview(exported, realm, change)], { ifExists: 'fail' }, actor)).realms[0]!;
        assert.equal(r.status, 'imported', `${realm}: ${JSON.stringify(r).slice(0, 300)}`);
        assert.equal((await ts.store.realms.get(realm))!.brokerReviewProfile, mode, realm);
        const line = r.lines.find((l) => l.element === 'first broker login Review Profile');
        if (mode === 'missing') assert.equal(line, undefined, realm);
        else assert.match(line?.reason ?? '', mode === 'on' ? /^on: the user reviews every account/ : /^off: a provider's account makes a user as it is/, realm);
      }
      const junk = (await importKeycloakRealms(ts.store, [withReview(exported, 'review-junk-2', (_e, c) => (c['update.profile.on.first.login'] = 'sometimes'))], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.match(junk.lines.find((l) => l.element === 'review profile config')?.reason ?? '', /"sometimes" is none of missing, on, off/);
    });
  });
}
