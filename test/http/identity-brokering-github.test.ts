import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { FetchCookieJar } from '../helpers/fetch-browser.js';
import { completeAtProvider, pressProviderButton, type ProfileFields } from '../helpers/broker-flow.js';
import { startGitHubStandIn, type GitHubStandIn, type GitHubUser } from '../helpers/github-stand-in.js';
import { updateRealm } from '../../src/admin/operations.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { providerSecret } from '../../src/admin/operations/identity-providers.js';

// Keycloak's GitHub identity provider (providerId github): an OAuth 2.0 provider without ID tokens, whose
// account is GitHub's user API's. Created through keycloak-admin-client with a client id and secret only,
// it has GitHub's endpoints and the scope user:email, its button says "GitHub", and the browser is sent to
// github.com (not followed: GitHub is not reachable from here). The sign-ins run against a stand-in of
// GitHub Enterprise Server (test/helpers/github-stand-in.ts), named by the provider's baseUrl and apiUrl as
// Keycloak's GitHub provider has them.
for (const dialect of dialects()) {
  describe(`identity brokering: Keycloak's GitHub provider (${dialect})`, () => {
    let ts: AdminTestServer;
    let gh: GitHubStandIn;
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/test/broker/${alias}/endpoint`;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
      gh = await startGitHubStandIn({ redirectUri: callback('ghe') });
      await ts.kc.identityProviders.create({
        realm: 'test',
        alias: 'ghe',
        providerId: 'github',
        enabled: true,
        config: { baseUrl: gh.baseUrl, apiUrl: `${gh.apiUrl}/`, clientId: gh.clientId, clientSecret: gh.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256' },
      });
    });
    after(async () => {
      await gh.close();
      await ts.close();
    });

    /** A sign-in through the stand-in as `user` (undefined: cancelled there): the ID token's claims, or the page shown instead. */
    async function signIn(user: GitHubUser | undefined, jar = new FetchCookieJar(), review?: Partial<ProfileFields>): Promise<{ claims?: Record<string, unknown>; page?: string; reviewed?: ProfileFields }> {
      const { location, buttons } = await pressProviderButton(ts, 'ghe', jar);
      assert.deepEqual(buttons.find(([a]) => a === 'ghe'), ['ghe', 'GitHub'], 'no display name: the button says GitHub');
      gh.nextUser = user;
      return completeAtProvider(ts, jar, location, review);
    }

    const failures = async (): Promise<string[]> => (await ts.store.events.list('test', { types: ['IDENTITY_PROVIDER_LOGIN_ERROR'] })).map((e) => e.reason ?? '').reverse();

    test("created with a client id and secret only: GitHub's endpoints and scope, a button that says GitHub, and GitHub's authorization request", async () => {
      await ts.kc.identityProviders.create({ realm: 'test', alias: 'github', providerId: 'github', enabled: true, config: { clientId: 'Iv1.0123456789abcdef', clientSecret: 'gh-secret' } });
      const rep = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'github' }))!;
      assert.equal(rep.providerId, 'github');
      assert.equal(rep.config!.authorizationUrl, 'https://github.com/login/oauth/authorize');
      assert.equal(rep.config!.tokenUrl, 'https://github.com/login/oauth/access_token');
      assert.equal(rep.config!.userInfoUrl, 'https://api.github.com/user');
      assert.equal(rep.config!.emailUrl, 'https://api.github.com/user/emails');
      assert.equal(rep.config!.defaultScope, 'user:email');
      assert.equal(await providerSecret(ts.store, (await ts.store.identityProviders.get('test', 'github'))!), 'gh-secret');
      assert.deepEqual(await ts.kc.identityProviders.findFactory({ realm: 'test', providerId: 'github' }), { id: 'github', name: 'GitHub' });
      assert.deepEqual((await ts.kc.serverInfo.find()).socialProviders!.filter((p) => p.id === 'github'), [{ id: 'github', name: 'GitHub' }]);

      const { location, buttons } = await pressProviderButton(ts, 'github', new FetchCookieJar());
      assert.deepEqual(buttons.find(([a]) => a === 'github'), ['github', 'GitHub']);
      assert.equal(`${location.origin}${location.pathname}`, 'https://github.com/login/oauth/authorize');
      assert.equal(location.searchParams.get('client_id'), 'Iv1.0123456789abcdef');
      assert.equal(location.searchParams.get('redirect_uri'), callback('github'));
      assert.equal(location.searchParams.get('scope'), 'user:email', 'no openid: GitHub has no OpenID Connect');
      assert.ok(location.searchParams.get('state'));
      // A base URL with a query, or not https, is refused: the endpoints are made from it.
      const refused = await ts.kc.identityProviders.create({ realm: 'test', alias: 'bad', providerId: 'github', config: { clientId: 'x', clientSecret: 'y', baseUrl: 'https://ghe.example/?x=1' } }).then(() => 0, (err: { response?: { status: number } }) => err.response?.status);
      assert.equal(refused, 400);
      await ts.kc.identityProviders.del({ realm: 'test', alias: 'github' });
    });

    test('a new GitHub account becomes a user: its id the link, its login the username, its name split, its private email the verified primary one; the next sign-in finds it', async () => {
      const mona: GitHubUser = {
        id: 583231,
        login: 'Octo-Cat',
        name: 'Mona Lisa Octocat',
        email: null,
        emails: [
          { email: 'old@octo.example', primary: false, verified: true },
          { email: 'mona@octo.example', primary: true, verified: true },
        ],
      };
      const first = await signIn(mona);
      assert.ok(first.claims, first.page?.slice(0, 300));
      const user = await ts.store.users.findByUsername('test', 'octo-cat');
      assert.ok(user);
      assert.equal(first.claims.sub, user.id);
      assert.equal(user.email, 'mona@octo.example');
      assert.equal(user.firstName, 'Mona');
      assert.equal(user.lastName, 'Lisa Octocat');
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId, l.federatedUsername]), [['ghe', '583231', 'Octo-Cat']]);
      // The token request: the client's secret, the PKCE verifier, JSON asked for; the API called with a User-Agent.
      const sent = gh.tokenRequests.at(-1)!;
      assert.equal(sent.form.get('client_id'), gh.clientId);
      assert.ok(sent.form.get('code_verifier'));
      assert.match(sent.accept ?? '', /application\/json/);
      assert.equal(gh.authorizations.at(-1)!.get('code_challenge_method'), 'S256');
      assert.deepEqual(gh.apiRequests.slice(-2).map((r) => [r.path, r.userAgent]), [['/api/v3/user', 'Realmgate'], ['/api/v3/user/emails', 'Realmgate']]);

      // Another login name and email later: the id finds the same user.
      const again = await signIn({ ...mona, login: 'mona-renamed', email: 'public@octo.example' });
      assert.equal(again.claims?.sub, user.id);
      assert.equal(await ts.store.users.findByUsername('test', 'mona-renamed'), undefined);
    });

    test('an unverified primary email is not taken; a public email is (the rest completed on the review page)', async () => {
      // No email taken and no name: the review page asks for them, the provider's email not offered.
      const r = await signIn({ id: 100, login: 'unverified', emails: [{ email: 'maybe@elsewhere.example', primary: true, verified: false }] }, undefined, { email: 'typed@example.com', firstName: 'Una', lastName: 'Verified' });
      assert.ok(r.claims, r.page?.slice(0, 300));
      assert.deepEqual(r.reviewed, { email: '', firstName: '', lastName: '' });
      const una = (await ts.store.users.findByUsername('test', 'unverified'))!;
      assert.deepEqual([una.email, una.emailVerified], ['typed@example.com', false]);
      // One name: split as Keycloak's setName, the last name left to the review page.
      const p = await signIn({ id: 101, login: 'public', name: 'Pat', email: 'pat@octo.example' }, undefined, { lastName: 'Public' });
      assert.deepEqual(p.reviewed, { email: 'pat@octo.example', firstName: 'Pat', lastName: '' });
      const pat = await ts.store.users.findByUsername('test', 'public');
      assert.equal(pat?.email, 'pat@octo.example');
      assert.equal(pat?.firstName, 'Pat');
      assert.equal(pat?.lastName, 'Public');
    });

    test("GitHub's refusals end on an error page with the reason in the event, and no user: a code it does not take (200 with an error), a cancel", async () => {
      const before = (await failures()).length;
      // The provider's client secret changed at GitHub: its token endpoint answers 200 {error}.
      const saved = gh.clientSecret;
      gh.clientSecret = 'rotated';
      try {
        const r = await signIn({ id: 200, login: 'refused-one' });
        assert.match(r.page ?? '', /The sign-in with the identity provider did not complete/);
      } finally {
        gh.clientSecret = saved;
      }
      assert.equal(await ts.store.users.findByUsername('test', 'refused-one'), undefined);
      const reasons = (await failures()).slice(before);
      assert.ok(reasons.some((r) => /token endpoint answered 200 incorrect_client_credentials/.test(r)), JSON.stringify(reasons));

      const cancelled = await signIn(undefined);
      assert.equal(cancelled.claims, undefined);
      assert.ok((await failures()).slice(before).some((r) => /the provider answered access_denied/.test(r)));
    });

    test('a Keycloak realm with a GitHub provider imports it, with its users\' links (GitHub\'s numeric ids)', async () => {
      const {
        realms: [report],
      } = await importKeycloakRealms(
        ts.store,
        [
          {
            realm: 'moved-github',
            enabled: true,
            identityProviders: [{ alias: 'github', providerId: 'github', enabled: true, config: { clientId: 'Iv1.kc', clientSecret: 'kc-gh-secret', syncMode: 'IMPORT', githubJsonFormat: 'true' } }],
            users: [{ id: '0c70c70c-0000-4000-8000-000000000001', username: 'octo', enabled: true, federatedIdentities: [{ identityProvider: 'github', userId: '583231', userName: 'Octo-Cat' }] }],
          },
        ],
        { ifExists: 'fail' },
        { ...cliActor(), via: 'import' },
      );
      assert.equal(report!.status, 'imported', report!.reason);
      assert.equal(report!.lines.find((l) => l.element === 'identity provider github')?.outcome, 'imported', JSON.stringify(report!.lines));
      const p = (await ts.store.identityProviders.get('moved-github', 'github'))!;
      assert.equal(p.providerId, 'github');
      assert.equal(p.config.tokenUrl, 'https://github.com/login/oauth/access_token');
      assert.equal(await providerSecret(ts.store, p), 'kc-gh-secret');
      assert.equal((await ts.store.identityProviders.findLink('moved-github', 'github', '583231'))?.federatedUsername, 'Octo-Cat');
    });
  });
}
