import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * keycloak-admin-client's authenticationManagement flows, unchanged: Realmgate's fixed sign-in steps read
 * as Keycloak's built-in flows (getFlows, getFlow, getExecutions, the providers), every change refused.
 */
for (const dialect of dialects()) {
  describe(`admin API: authentication flows (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test("getFlows: Keycloak's built-in top-level flows, each with the steps Realmgate takes; ids stable, and the realm's own", async () => {
      const flows = await ts.kc.authenticationManagement.getFlows({ realm: REALM });
      assert.deepEqual(flows.map((f) => f.alias), ['browser', 'direct grant', 'registration', 'reset credentials', 'clients', 'first broker login']);
      for (const f of flows) assert.deepEqual([f.topLevel, f.builtIn], [true, true], f.alias);
      const byAlias = new Map(flows.map((f) => [f.alias!, f]));
      const steps = (alias: string): Array<string | undefined> => byAlias.get(alias)!.authenticationExecutions!.map((e) => e.authenticator ?? `flow:${e.flowAlias}`);
      assert.deepEqual(steps('browser'), ['auth-cookie', 'identity-provider-redirector', 'flow:forms']);
      assert.deepEqual(steps('clients'), ['client-secret', 'client-jwt']);
      assert.equal(byAlias.get('clients')!.providerId, 'client-flow');
      // Keycloak's default first broker login: Review Profile (mode missing), then creation or linking.
      assert.deepEqual(steps('first broker login'), ['idp-review-profile', 'flow:User creation or linking']);
      assert.deepEqual(steps('direct grant'), ['direct-grant-validate-username', 'direct-grant-validate-password', 'flow:Direct Grant - Conditional OTP']);
      // The registration form is a form flow whose own authenticator is the page.
      assert.deepEqual(byAlias.get('registration')!.authenticationExecutions, [
        { authenticatorFlow: true, autheticatorFlow: true, requirement: 'REQUIRED', priority: 10, flowAlias: 'registration form', userSetupAllowed: false, authenticator: 'registration-page-form' },
      ]);
      assert.deepEqual((await ts.kc.authenticationManagement.getFlows({ realm: REALM })).map((f) => f.id), flows.map((f) => f.id), 'the same ids each time');
      // The realm representation binds each of them, as Keycloak's does (the Terraform provider reads these).
      const realm = (await ts.kc.realms.findOne({ realm: REALM })) as Record<string, unknown>;
      const bindings = ['browserFlow', 'directGrantFlow', 'registrationFlow', 'resetCredentialsFlow', 'clientAuthenticationFlow', 'firstBrokerLoginFlow'].map((k) => realm[k]);
      assert.deepEqual(bindings, ['browser', 'direct grant', 'registration', 'reset credentials', 'clients', 'first broker login']);
      const master = await ts.kc.authenticationManagement.getFlows({ realm: 'master' });
      assert.notEqual(master[0]!.id, flows[0]!.id, "each realm's flows have ids of their own");
    });

    test('getFlow by id, nested flows too; getExecutions: depth first, with levels, indexes and the flows they open', async () => {
      const browser = (await ts.kc.authenticationManagement.getFlows({ realm: REALM })).find((f) => f.alias === 'browser')!;
      assert.deepEqual(await ts.kc.authenticationManagement.getFlow({ realm: REALM, flowId: browser.id! }), browser);
      const executions = await ts.kc.authenticationManagement.getExecutions({ realm: REALM, flow: 'browser' });
      assert.deepEqual(
        executions.map((e) => [e.displayName, e.requirement, e.level, e.index]),
        [
          ['Cookie', 'ALTERNATIVE', 0, 0],
          ['Identity Provider Redirector', 'ALTERNATIVE', 0, 1],
          ['forms', 'ALTERNATIVE', 0, 2],
          ['Username Password Form', 'REQUIRED', 1, 0],
          ['Browser - Conditional 2FA', 'CONDITIONAL', 1, 1],
          ['Condition - user configured', 'REQUIRED', 2, 0],
          ['WebAuthn Authenticator', 'ALTERNATIVE', 2, 1],
          ['OTP Form', 'ALTERNATIVE', 2, 2],
        ],
      );
      assert.ok(executions.every((e) => e.configurable === false && typeof e.id === 'string'));
      const forms = executions.find((e) => e.displayName === 'forms')!;
      assert.equal(forms.authenticationFlow, true);
      const nested = await ts.kc.authenticationManagement.getFlow({ realm: REALM, flowId: forms.flowId! });
      assert.deepEqual([nested.alias, nested.topLevel], ['forms', false]);
      // A nested flow's own executions start at level 0; an alias with spaces is one path segment.
      assert.deepEqual((await ts.kc.authenticationManagement.getExecutions({ realm: REALM, flow: 'forms' })).map((e) => e.level), [0, 0, 1, 1, 1]);
      assert.equal((await ts.kc.authenticationManagement.getExecutions({ realm: REALM, flow: 'direct grant' })).length, 5);
      assert.equal(await statusOf(ts.kc.authenticationManagement.getExecutions({ realm: REALM, flow: 'no such flow' })), 404);
      assert.equal(await statusOf(ts.kc.authenticationManagement.getFlow({ realm: REALM, flowId: 'no-such-id' })), 404);
    });

    test('the clients flow is what client authentication accepts: client-secret and client-jwt, not client-secret-jwt', async () => {
      const providers = await ts.kc.authenticationManagement.getClientAuthenticatorProviders({ realm: REALM } as never);
      assert.deepEqual(providers.map((p) => p.id), ['client-secret', 'client-jwt']);
      for (const id of ['client-secret', 'client-jwt']) {
        await ts.kc.clients.create({ realm: REALM, clientId: `flows-${id}`, clientAuthenticatorType: id, serviceAccountsEnabled: true, standardFlowEnabled: false });
      }
      assert.equal(await statusOf(ts.kc.clients.create({ realm: REALM, clientId: 'flows-secret-jwt', clientAuthenticatorType: 'client-secret-jwt' })), 400);
      const discovery = (await (await fetch(`${ts.baseUrl}/auth/realms/${REALM}/.well-known/openid-configuration`)).json()) as { token_endpoint_auth_methods_supported: string[] };
      assert.deepEqual(discovery.token_endpoint_auth_methods_supported.filter((m) => m !== 'none').sort(), ['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
      assert.deepEqual((await ts.kc.authenticationManagement.getFormProviders({ realm: REALM } as never)).map((p) => p.id), ['registration-page-form']);
      assert.deepEqual((await ts.kc.authenticationManagement.getFormActionProviders({ realm: REALM } as never)).map((p) => p.id), ['registration-user-creation', 'registration-password-action']);
      assert.ok((await ts.kc.authenticationManagement.getAuthenticatorProviders({ realm: REALM } as never)).some((p) => p.id === 'auth-otp-form'));
      const otp = await ts.kc.authenticationManagement.getConfigDescription({ realm: REALM, providerId: 'auth-otp-form' });
      assert.deepEqual([otp.name, otp.properties], ['OTP Form', []]);
      assert.equal(await statusOf(ts.kc.authenticationManagement.getConfigDescription({ realm: REALM, providerId: 'auth-spnego' })), 404);
      assert.equal(await statusOf(ts.kc.authenticationManagement.getConfig({ realm: REALM, id: 'x' })), 404);
    });

    test("the first broker login's Review Profile config: found from its execution, read, and its mode changed (getConfig, updateConfig); nothing else", async () => {
      const am = ts.kc.authenticationManagement;
      const review = (await am.getExecutions({ realm: REALM, flow: 'first broker login' })).find((e) => e.providerId === 'idp-review-profile')!;
      assert.equal(review.configurable, true);
      const id = review.authenticationConfig!;
      assert.ok(id);
      const flow = (await am.getFlows({ realm: REALM })).find((f) => f.alias === 'first broker login')!;
      assert.equal(flow.authenticationExecutions!.find((e) => e.authenticator === 'idp-review-profile')!.authenticatorConfig, 'review profile config');
      const config = await am.getConfig({ realm: REALM, id });
      assert.deepEqual(config, { id, alias: 'review profile config', config: { 'update.profile.on.first.login': 'missing' } });
      const described = await am.getConfigDescription({ realm: REALM, providerId: 'idp-review-profile' });
      assert.deepEqual(described.properties!.map((p) => [p.name, p.defaultValue, p.options]), [['update.profile.on.first.login', 'missing', ['on', 'missing', 'off']]]);

      // keycloak-admin-client's updateConfig takes the realm and the representation in one argument.
      await am.updateConfig({ realm: REALM, ...config, config: { 'update.profile.on.first.login': 'off' } });
      assert.equal((await ts.store.realms.get(REALM))!.brokerReviewProfile, 'off');
      assert.equal((await am.getConfig({ realm: REALM, id })).config!['update.profile.on.first.login'], 'off');
      const ops = (await ts.store.adminEvents.list(REALM, {})).map((e) => `${e.operation} ${e.resourceType}`);
      assert.ok(ops.includes('UPDATE REALM'), ops.join());
      // A mode it does not have, no mode: 400, unchanged; another config id: fixed (400).
      for (const bad of [{ 'update.profile.on.first.login': 'sometimes' }, {}] as Array<Record<string, string>>) {
        const e = await errorOf(am.updateConfig({ realm: REALM, ...config, config: bad }));
        assert.equal(e.status, 400, JSON.stringify(bad));
      }
      assert.equal((await ts.store.realms.get(REALM))!.brokerReviewProfile, 'off');
      assert.equal((await errorOf(am.updateConfig({ realm: REALM, ...config, id: 'other' }))).status, 400);
      // Reading needs view-realm, changing manage-realm.
      const reader = await serviceAccountAdmin(ts, REALM, 'review-reader', ['view-realm']);
      assert.equal((await reader.kc.authenticationManagement.getConfig({ realm: REALM, id })).config!['update.profile.on.first.login'], 'off');
      assert.equal(await statusOf(reader.kc.authenticationManagement.updateConfig({ realm: REALM, ...config, config: { 'update.profile.on.first.login': 'on' } })), 403);
      await am.updateConfig({ realm: REALM, ...config, config: { 'update.profile.on.first.login': 'missing' } });
      assert.equal((await ts.store.realms.get(REALM))!.brokerReviewProfile, 'missing');
    });

    test('every change is refused in words after the manage-realm check, and nothing changes; reading needs view-realm', async () => {
      const before = await ts.kc.authenticationManagement.getFlows({ realm: REALM });
      const browser = before.find((f) => f.alias === 'browser')!;
      const execution = (await ts.kc.authenticationManagement.getExecutions({ realm: REALM, flow: 'browser' }))[0]!;
      const am = ts.kc.authenticationManagement;
      const attempts: Array<[string, () => Promise<unknown>]> = [
        ['createFlow', () => am.createFlow({ realm: REALM, alias: 'mine', providerId: 'basic-flow', topLevel: true, builtIn: false })],
        ['copyFlow', () => am.copyFlow({ realm: REALM, flow: 'browser', newName: 'my browser' })],
        ['updateFlow', () => am.updateFlow({ realm: REALM, flowId: browser.id! }, { ...browser, description: 'changed' })],
        ['deleteFlow', () => am.deleteFlow({ realm: REALM, flowId: browser.id! })],
        ['addExecutionToFlow', () => am.addExecutionToFlow({ realm: REALM, flow: 'browser', provider: 'auth-spnego' })],
        ['addFlowToFlow', () => am.addFlowToFlow({ realm: REALM, flow: 'browser', alias: 'sub', type: 'basic-flow', provider: 'registration-page-form', description: '' })],
        ['updateExecution', () => am.updateExecution({ realm: REALM, flow: 'browser' }, { ...execution, requirement: 'DISABLED' })],
        ['delExecution', () => am.delExecution({ realm: REALM, id: execution.id! })],
        ['raisePriorityExecution', () => am.raisePriorityExecution({ realm: REALM, id: execution.id! })],
        ['createConfig', () => am.createConfig({ realm: REALM, id: execution.id!, alias: 'c', config: {} })],
      ];
      for (const [name, call] of attempts) {
        const e = await errorOf(call());
        assert.equal(e.status, 400, name);
        assert.match(String(e.body.errorMessage), /authentication flows are fixed/, name);
      }
      assert.deepEqual(await ts.kc.authenticationManagement.getFlows({ realm: REALM }), before, 'nothing changed');

      const reader = await serviceAccountAdmin(ts, REALM, 'flows-reader', ['view-realm']);
      assert.equal((await reader.kc.authenticationManagement.getFlows({ realm: REALM })).length, 6);
      assert.equal(await statusOf(reader.kc.authenticationManagement.createFlow({ realm: REALM, alias: 'x', providerId: 'basic-flow' })), 403);
      const users = await serviceAccountAdmin(ts, REALM, 'flows-users', ['manage-users']);
      assert.equal(await statusOf(users.kc.authenticationManagement.getFlows({ realm: REALM })), 403);
      assert.equal(await statusOf(reader.kc.authenticationManagement.getFlows({ realm: 'master' })), 403);
    });
  });
}
