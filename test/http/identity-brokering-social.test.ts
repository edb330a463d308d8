import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { FetchCookieJar } from '../helpers/fetch-browser.js';
import { completeAtProvider, pressProviderButton, type ProfileFields } from '../helpers/broker-flow.js';
import { startUpstream, type Upstream, type UpstreamAccount } from '../helpers/upstream-provider.js';
import { startBitbucketStandIn, startFacebookStandIn, startMicrosoftStandIn, type SocialStandIn, type StandInUser } from '../helpers/social-stand-ins.js';
import { updateRealm } from '../../src/admin/operations.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { providerSecret } from '../../src/admin/operations/identity-providers.js';

const SOCIAL = [
  { id: 'bitbucket', name: 'Bitbucket' },
  { id: 'facebook', name: 'Facebook' },
  { id: 'github', name: 'GitHub' },
  { id: 'gitlab', name: 'GitLab' },
  { id: 'google', name: 'Google' },
  { id: 'linkedin-openid-connect', name: 'LinkedIn' },
  { id: 'microsoft', name: 'Microsoft' },
];

// Keycloak's GitLab, Microsoft and Facebook identity providers (providerId gitlab, microsoft, facebook),
// created through keycloak-admin-client with a client id and secret only: their endpoints and scopes, a
// button named by the type, the browser sent to the provider (not followed: none is reachable from here).
// The sign-ins run against stand-ins: node-oidc-provider in GitLab's place (an OpenID Connect provider),
// and test/helpers/social-stand-ins.ts for Microsoft's identity platform with Graph and for Facebook's
// Graph API (OAuth 2.0 providers whose account is their user API's), named by the providers' baseUrl and
// apiUrl. A Keycloak realm with these providers imports them with their users' links.
for (const dialect of dialects()) {
  describe(`identity brokering: Keycloak's GitLab, Microsoft and Facebook providers (${dialect})`, () => {
    let ts: AdminTestServer;
    let gitlab: Upstream;
    let linkedin: Upstream;
    let ms: SocialStandIn;
    let fb: SocialStandIn;
    let bb: SocialStandIn;
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/test/broker/${alias}/endpoint`;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
      gitlab = await startUpstream({ redirectUri: callback('gitlab-local'), pkceRequired: false, extraScopes: ['read_user'], openidClaims: ['preferred_username', 'email', 'email_verified', 'given_name', 'family_name'] });
      linkedin = await startUpstream({ redirectUri: callback('linkedin-local'), pkceRequired: false });
      ms = await startMicrosoftStandIn({ redirectUri: callback('entra') });
      fb = await startFacebookStandIn({ redirectUri: callback('fb') });
      bb = await startBitbucketStandIn({ redirectUri: callback('bb') });
      await ts.kc.identityProviders.create({ realm: 'test', alias: 'bb', providerId: 'bitbucket', enabled: true, config: { baseUrl: bb.baseUrl, apiUrl: bb.apiUrl, clientId: bb.clientId, clientSecret: bb.clientSecret } });
      await ts.kc.identityProviders.create({
        realm: 'test',
        alias: 'entra',
        providerId: 'microsoft',
        enabled: true,
        trustEmail: true,
        config: { baseUrl: ms.baseUrl, apiUrl: ms.apiUrl, tenantId: 'contoso.example', clientId: ms.clientId, clientSecret: ms.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256' },
      });
      await ts.kc.identityProviders.create({
        realm: 'test',
        alias: 'fb',
        providerId: 'facebook',
        enabled: true,
        trustEmail: true,
        config: { apiUrl: fb.apiUrl, fetchedFields: 'locale', clientId: fb.clientId, clientSecret: fb.clientSecret },
      });
    });
    after(async () => {
      await gitlab.close();
      await linkedin.close();
      await ms.close();
      await fb.close();
      await bb.close();
      await ts.close();
    });

    /** A sign-in through `alias`'s button, `at` answering as `user` (undefined: the user cancels there). */
    /** `review`: what to type on the review page, when the account lacks an email or a name. */
    async function signIn(alias: string, name: string, answer: () => void, review?: Partial<ProfileFields>): Promise<{ claims?: Record<string, unknown>; page?: string; reviewed?: ProfileFields }> {
      const jar = new FetchCookieJar();
      const { location, buttons } = await pressProviderButton(ts, alias, jar);
      assert.deepEqual(buttons.find(([a]) => a === alias), [alias, name], `no display name: the button says ${name}`);
      answer();
      return completeAtProvider(ts, jar, location, review);
    }
    const viaMicrosoft = (user: StandInUser | undefined, review?: Partial<ProfileFields>) => signIn('entra', 'Microsoft', () => (ms.nextUser = user), review);
    const viaFacebook = (user: StandInUser | undefined, review?: Partial<ProfileFields>) => signIn('fb', 'Facebook', () => (fb.nextUser = user), review);
    /** The reasons of the failed sign-ins, oldest first (the store lists events newest first). */
    const failures = async (): Promise<string[]> => (await ts.store.events.list('test', { types: ['IDENTITY_PROVIDER_LOGIN_ERROR'] })).map((e) => e.reason ?? '').reverse();

    test('created with a client id and secret only: each type its endpoints and scope, its name on the button, its authorization request', async () => {
      const made = [
        { alias: 'gitlab', providerId: 'gitlab', auth: 'https://gitlab.com/oauth/authorize', token: 'https://gitlab.com/oauth/token', userInfo: 'https://gitlab.com/oauth/userinfo', scope: 'openid read_user', name: 'GitLab' },
        { alias: 'microsoft', providerId: 'microsoft', auth: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize', token: 'https://login.microsoftonline.com/common/oauth2/v2.0/token', userInfo: 'https://graph.microsoft.com/v1.0/me/', scope: 'User.read', name: 'Microsoft' },
        { alias: 'facebook', providerId: 'facebook', auth: 'https://graph.facebook.com/oauth/authorize', token: 'https://graph.facebook.com/oauth/access_token', userInfo: 'https://graph.facebook.com/me?fields=id%2Cname%2Cemail%2Cfirst_name%2Clast_name', scope: 'email', name: 'Facebook' },
        { alias: 'bitbucket', providerId: 'bitbucket', auth: 'https://bitbucket.org/site/oauth2/authorize', token: 'https://bitbucket.org/site/oauth2/access_token', userInfo: 'https://api.bitbucket.org/2.0/user', scope: 'account email', name: 'Bitbucket' },
        { alias: 'linkedin', providerId: 'linkedin-openid-connect', auth: 'https://www.linkedin.com/oauth/v2/authorization', token: 'https://www.linkedin.com/oauth/v2/accessToken', userInfo: 'https://api.linkedin.com/v2/userinfo', scope: 'openid profile email', name: 'LinkedIn' },
      ];
      for (const m of made) {
        await ts.kc.identityProviders.create({ realm: 'test', alias: m.alias, providerId: m.providerId, enabled: true, config: { clientId: `${m.alias}-client`, clientSecret: `${m.alias}-secret` } });
        const rep = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: m.alias }))!;
        assert.deepEqual([rep.providerId, rep.config!.authorizationUrl, rep.config!.tokenUrl, rep.config!.userInfoUrl, rep.config!.defaultScope], [m.providerId, m.auth, m.token, m.userInfo, m.scope]);
        assert.equal(await providerSecret(ts.store, (await ts.store.identityProviders.get('test', m.alias))!), `${m.alias}-secret`);
        assert.deepEqual(await ts.kc.identityProviders.findFactory({ realm: 'test', providerId: m.providerId }), { id: m.providerId, name: m.name });
        const { location, buttons } = await pressProviderButton(ts, m.alias, new FetchCookieJar());
        assert.deepEqual(buttons.find(([a]) => a === m.alias), [m.alias, m.name]);
        assert.equal(`${location.origin}${location.pathname}`, m.auth);
        assert.equal(location.searchParams.get('client_id'), `${m.alias}-client`);
        assert.equal(location.searchParams.get('redirect_uri'), callback(m.alias));
        assert.equal(location.searchParams.get('scope'), m.scope, m.providerId === 'gitlab' ? 'openid and read_user, as Keycloak asks GitLab' : 'no openid: no OpenID Connect there');
        // A nonce only where it comes back: GitLab's ID tokens; not LinkedIn's (Keycloak's disableNonce), nor the OAuth 2.0 providers.
        assert.equal(location.searchParams.has('nonce'), m.providerId === 'gitlab', m.providerId);
      }
      const li = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'linkedin' }))!;
      assert.deepEqual([li.config!.issuer, li.config!.jwksUrl, li.config!.validateSignature, li.config!.disableNonce], ['https://www.linkedin.com/oauth', 'https://www.linkedin.com/oauth/openid/jwks', 'true', 'true']);
      const gl = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'gitlab' }))!;
      assert.deepEqual([gl.config!.issuer, gl.config!.jwksUrl, gl.config!.validateSignature], ['https://gitlab.com', 'https://gitlab.com/oauth/discovery/keys', 'true']);
      assert.deepEqual((await ts.kc.serverInfo.find()).socialProviders, SOCIAL);
      // A tenant changes Microsoft's endpoints; one that is not a tenant, or fields Graph would not take, are refused.
      await ts.kc.identityProviders.update({ realm: 'test', alias: 'microsoft' }, { ...gl, alias: 'microsoft', providerId: 'microsoft', config: { clientId: 'microsoft-client', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47' } });
      assert.equal((await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'microsoft' }))!.config!.tokenUrl, 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token');
      const status = (p: Promise<unknown>): Promise<number | undefined> => p.then(() => 0, (err: { response?: { status: number } }) => err.response?.status);
      assert.equal(await status(ts.kc.identityProviders.create({ realm: 'test', alias: 'bad-tenant', providerId: 'microsoft', config: { clientId: 'x', clientSecret: 'y', tenantId: 'evil.example/../x' } })), 400);
      assert.equal(await status(ts.kc.identityProviders.create({ realm: 'test', alias: 'bad-fields', providerId: 'facebook', config: { clientId: 'x', clientSecret: 'y', fetchedFields: 'locale&access_token=x' } })), 400);
      assert.equal(await ts.store.identityProviders.get('test', 'bad-tenant'), undefined);
      // GitLab's scope of openid alone becomes Keycloak's openid read_user.
      await ts.kc.identityProviders.create({ realm: 'test', alias: 'gitlab-openid', providerId: 'gitlab', config: { clientId: 'x', clientSecret: 'y', defaultScope: 'openid' } });
      assert.equal((await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'gitlab-openid' }))!.config!.defaultScope, 'openid read_user');
      for (const alias of ['gitlab', 'microsoft', 'facebook', 'bitbucket', 'linkedin', 'gitlab-openid']) await ts.kc.identityProviders.del({ realm: 'test', alias });
    });

    test('GitLab: its ID token checked, the account from its UserInfo; the username its preferred_username', async () => {
      await ts.kc.identityProviders.create({
        realm: 'test',
        alias: 'gitlab-local',
        providerId: 'gitlab',
        enabled: true,
        // GitLab.com's endpoints replaced by the stand-in's (a self-managed GitLab's, as it were); the type's scope stays.
        config: { issuer: gitlab.issuer, authorizationUrl: `${gitlab.issuer}/auth`, tokenUrl: `${gitlab.issuer}/token`, jwksUrl: `${gitlab.issuer}/jwks`, userInfoUrl: `${gitlab.issuer}/me`, clientId: gitlab.clientId, clientSecret: gitlab.clientSecret },
      });
      const account: UpstreamAccount = { sub: '4242', preferred_username: 'tanuki', email: 'tanuki@gitlab.example', email_verified: true, given_name: 'Tanu', family_name: 'Ki' };
      const r = await signIn('gitlab-local', 'GitLab', () => (gitlab.nextAccount = account));
      assert.ok(r.claims, r.page?.slice(0, 300));
      assert.equal(gitlab.requests.at(-1)!.get('scope'), 'openid read_user');
      const user = (await ts.store.users.findByUsername('test', 'tanuki'))!;
      assert.equal(r.claims.sub, user.id);
      assert.deepEqual([user.email, user.firstName, user.lastName], ['tanuki@gitlab.example', 'Tanu', 'Ki']);
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId]), [['gitlab-local', '4242']]);
    });

    test("LinkedIn: no nonce sent, and its ID token (which has none) taken, its signature and audience checked; with disableNonce false the nonce is sent and must come back", async () => {
      const config = { issuer: linkedin.issuer, authorizationUrl: `${linkedin.issuer}/auth`, tokenUrl: `${linkedin.issuer}/token`, jwksUrl: `${linkedin.issuer}/jwks`, userInfoUrl: `${linkedin.issuer}/me`, clientId: linkedin.clientId, clientSecret: linkedin.clientSecret };
      await ts.kc.identityProviders.create({ realm: 'test', alias: 'linkedin-local', providerId: 'linkedin-openid-connect', enabled: true, config });
      const r = await signIn('linkedin-local', 'LinkedIn', () => (linkedin.nextAccount = { sub: 'li-7', preferred_username: 'lin', email: 'lin@li.example', email_verified: true, given_name: 'Lin', family_name: undefined }), { lastName: 'Kedin' });
      assert.ok(r.claims, r.page?.slice(0, 300));
      assert.deepEqual(r.reviewed, { email: 'lin@li.example', firstName: 'Lin', lastName: '' });
      assert.equal(linkedin.requests.at(-1)!.has('nonce'), false);
      assert.equal(linkedin.requests.at(-1)!.get('scope'), 'openid profile email');
      const user = (await ts.store.users.findByUsername('test', 'lin'))!;
      assert.equal(r.claims.sub, user.id);
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId]), [['linkedin-local', 'li-7']]);
      // The same provider with disableNonce "false": the nonce is sent, and an ID token must carry it.
      const rep = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'linkedin-local' }))!;
      await ts.kc.identityProviders.update({ realm: 'test', alias: 'linkedin-local' }, { ...rep, config: { ...rep.config, disableNonce: 'false' } });
      const withNonce = await signIn('linkedin-local', 'LinkedIn', () => (linkedin.nextAccount = { sub: 'li-8', preferred_username: 'lin2', email: 'lin2@li.example' }));
      assert.ok(withNonce.claims, withNonce.page?.slice(0, 300));
      assert.ok(linkedin.requests.at(-1)!.get('nonce'));
      await ts.kc.identityProviders.del({ realm: 'test', alias: 'linkedin-local' });
    });

    test("Microsoft: Graph's account; its id the link, mail the username and email (never verified, trustEmail or not), the names; the tenant in the endpoints", async () => {
      const adele: StandInUser = { id: '87d349ed-44d7-43e1-9a83-5f2406dee5bd', displayName: 'Adele Vance', givenName: 'Adele', surname: 'Vance', mail: 'AdeleV@contoso.example', userPrincipalName: 'AdeleV@contoso.example' };
      const first = await viaMicrosoft(adele);
      assert.ok(first.claims, first.page?.slice(0, 300));
      const user = (await ts.store.users.findByUsername('test', 'adelev@contoso.example'))!;
      assert.equal(first.claims.sub, user.id);
      assert.deepEqual([user.email, user.emailVerified, user.firstName, user.lastName], ['AdeleV@contoso.example', false, 'Adele', 'Vance']);
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId]), [['entra', adele.id]]);
      // The tenant is in the path of both endpoints; the token request carries the secret and the PKCE verifier.
      assert.equal(ms.authorizations.at(-1)!.path, '/contoso.example/oauth2/v2.0/authorize');
      assert.equal(ms.authorizations.at(-1)!.query.get('scope'), 'User.read');
      const sent = ms.tokenRequests.at(-1)!;
      assert.equal(sent.path, '/contoso.example/oauth2/v2.0/token');
      assert.ok(sent.form.get('code_verifier'));
      assert.equal(ms.apiRequests.at(-1)!.path, '/graph/v1.0/me/');
      // Renamed and another address later: the id finds the same user.
      const again = await viaMicrosoft({ ...adele, mail: 'adele.vance@contoso.example' });
      assert.equal(again.claims?.sub, user.id);
      // No mail: the userPrincipalName when it is an address; else the id is the username.
      // (Without a surname, or without anything but the id, the review page asks for the rest.)
      const ben = await viaMicrosoft({ id: 'b1', givenName: 'Ben', surname: null, mail: null, userPrincipalName: 'ben@fabrikam.example' }, { lastName: 'Smith' });
      assert.deepEqual(ben.reviewed, { email: 'ben@fabrikam.example', firstName: 'Ben', lastName: '' });
      assert.equal((await ts.store.users.findByUsername('test', 'ben@fabrikam.example'))?.email, 'ben@fabrikam.example');
      const c2r = await viaMicrosoft({ id: 'c2', mail: null, userPrincipalName: 'c2_live.com#EXT#@contoso.onmicrosoft.com' }, { email: 'c2@example.com', firstName: 'Cee', lastName: 'Two' });
      assert.deepEqual(c2r.reviewed, { email: '', firstName: '', lastName: '' });
      const c2 = (await ts.store.users.findByUsername('test', 'c2'))!;
      assert.deepEqual([c2.email, c2.emailVerified], ['c2@example.com', false]);
    });

    test("Microsoft's and Facebook's refusals end on an error page with the reason in the event and no user: a code refused, an API that refuses the token, a cancel", async () => {
      const before = (await failures()).length;
      const saved = ms.clientSecret;
      ms.clientSecret = 'rotated';
      try {
        const r = await viaMicrosoft({ id: 'refused-1', mail: 'refused@contoso.example' });
        assert.match(r.page ?? '', /The sign-in with the identity provider did not complete/);
      } finally {
        ms.clientSecret = saved;
      }
      assert.equal(await ts.store.users.findByUsername('test', 'refused@contoso.example'), undefined);
      ms.refuseApi = true;
      fb.refuseApi = true;
      try {
        for (const r of [await viaMicrosoft({ id: 'refused-2', mail: 'revoked@contoso.example' }), await viaFacebook({ id: '10158000000000009', email: 'revoked@fb.example' })]) {
          assert.match(r.page ?? '', /The sign-in with the identity provider did not complete/);
        }
      } finally {
        ms.refuseApi = false;
        fb.refuseApi = false;
      }
      for (const name of ['revoked@contoso.example', 'revoked@fb.example']) assert.equal(await ts.store.users.findByUsername('test', name), undefined);
      const cancelled = await viaFacebook(undefined);
      assert.equal(cancelled.claims, undefined);
      const reasons = (await failures()).slice(before);
      assert.ok(reasons.some((r) => /identity provider entra: Microsoft Graph answered 401/.test(r)), JSON.stringify(reasons));
      assert.ok(reasons.some((r) => /identity provider fb: the Graph API answered 400/.test(r)), JSON.stringify(reasons));
      assert.ok(reasons.some((r) => /token endpoint answered 401 invalid_client/.test(r)), JSON.stringify(reasons));
      assert.ok(reasons.some((r) => /identity provider fb: the provider answered access_denied/.test(r)), JSON.stringify(reasons));
    });

    test("Facebook: the Graph API's /me with the fields asked for; its id the link, the email the username (verified under trustEmail), first and last names", async () => {
      const mark: StandInUser = { id: '10158000000000001', name: 'Mark Example', first_name: 'Mark', last_name: 'Example', email: 'mark@fb.example', locale: 'en_US', birthday: '01/01/1990' };
      const r = await viaFacebook(mark);
      assert.ok(r.claims, r.page?.slice(0, 300));
      const user = (await ts.store.users.findByUsername('test', 'mark@fb.example'))!;
      assert.equal(r.claims.sub, user.id);
      assert.deepEqual([user.email, user.emailVerified, user.firstName, user.lastName], ['mark@fb.example', true, 'Mark', 'Example']);
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId]), [['fb', mark.id]]);
      // Keycloak's fields plus fetchedFields: birthday was not asked for.
      const asked = fb.apiRequests.at(-1)!;
      assert.equal(asked.path, '/me');
      assert.equal(asked.query.get('fields'), 'id,name,email,first_name,last_name,locale');
      assert.equal(fb.authorizations.at(-1)!.query.get('scope'), 'email');
      // No email (a phone-only account): the id is the username.
      const pat = await viaFacebook({ id: '10158000000000002', first_name: 'Pat' }, { email: 'pat@example.com', lastName: 'Phone' });
      assert.deepEqual(pat.reviewed, { email: '', firstName: 'Pat', lastName: '' });
      const patUser = (await ts.store.users.findByUsername('test', '10158000000000002'))!;
      assert.deepEqual([patUser.firstName, patUser.lastName, patUser.email, patUser.emailVerified], ['Pat', 'Phone', 'pat@example.com', false]);
    });

    test("Bitbucket: the API's user (type user); its account_id the link, its nickname the username, display_name split, the primary confirmed email", async () => {
      const r = await signIn('bb', 'Bitbucket', () => {
        bb.nextUser = {
          id: 'unused',
          account_id: '557058:c0b0f6a4-0000-4000-8000-00000000b1b1',
          uuid: '{d301aafa-d676-4ee0-88be-962be7417567}',
          nickname: 'Bucky',
          display_name: 'Bucky Barnes Jr',
          emails: [
            { type: 'email', email: 'old@bb.example', is_primary: false, is_confirmed: true },
            { type: 'email', email: 'bucky@bb.example', is_primary: true, is_confirmed: true },
          ],
        };
      });
      assert.ok(r.claims, r.page?.slice(0, 300));
      const user = (await ts.store.users.findByUsername('test', 'bucky'))!;
      assert.equal(r.claims.sub, user.id);
      assert.deepEqual([user.email, user.firstName, user.lastName], ['bucky@bb.example', 'Bucky', 'Barnes Jr']);
      assert.deepEqual((await ts.store.identityProviders.links(user.id)).map((l) => [l.identityProvider, l.federatedUserId]), [['bb', '557058:c0b0f6a4-0000-4000-8000-00000000b1b1']]);
      assert.deepEqual(bb.apiRequests.slice(-2).map((a) => a.path), ['/api/2.0/user', '/api/2.0/user/emails']);
      assert.equal(bb.authorizations.at(-1)!.query.get('scope'), 'account email');
      // An unconfirmed primary address is not taken.
      await signIn('bb', 'Bitbucket', () => (bb.nextUser = { id: 'unused', account_id: '557058:2', nickname: 'unconfirmed', emails: [{ type: 'email', email: 'maybe@bb.example', is_primary: true, is_confirmed: false }] }));
      assert.equal((await ts.store.users.findByUsername('test', 'unconfirmed'))?.email ?? null, null);
      // Not a user (a team's token): refused.
      const before = (await failures()).length;
      const team = await signIn('bb', 'Bitbucket', () => (bb.nextUser = { id: 'unused', account_id: '557058:3', nickname: 'a-team', type: 'team' }));
      assert.match(team.page ?? '', /The sign-in with the identity provider did not complete/);
      assert.ok((await failures()).slice(before).some((x) => /the Bitbucket API answered no user/.test(x)));
    });

    test("a Keycloak realm with GitLab, Microsoft and Facebook providers imports them, with their users' links", async () => {
      const {
        realms: [report],
      } = await importKeycloakRealms(
        ts.store,
        [
          {
            realm: 'moved-social',
            enabled: true,
            identityProviders: [
              { alias: 'gitlab', providerId: 'gitlab', enabled: true, config: { clientId: 'gl', clientSecret: 'gl-secret', syncMode: 'LEGACY' } },
              { alias: 'microsoft', providerId: 'microsoft', enabled: true, config: { clientId: 'ms', clientSecret: 'ms-secret', tenantId: 'contoso.example' } },
              { alias: 'facebook', providerId: 'facebook', enabled: true, config: { clientId: 'fb', clientSecret: 'fb-secret', fetchedFields: 'locale' } },
            ],
            users: [
              {
                id: '5ca1ab1e-0000-4000-8000-000000000001',
                username: 'sam',
                enabled: true,
                federatedIdentities: [
                  { identityProvider: 'gitlab', userId: '4242', userName: 'sam' },
                  { identityProvider: 'microsoft', userId: '87d349ed-44d7-43e1-9a83-5f2406dee5bd', userName: 'sam@contoso.example' },
                  { identityProvider: 'facebook', userId: '10158000000000003', userName: 'sam@fb.example' },
                ],
              },
            ],
          },
        ],
        { ifExists: 'fail' },
        { ...cliActor(), via: 'import' },
      );
      assert.equal(report!.status, 'imported', report!.reason);
      for (const alias of ['gitlab', 'microsoft', 'facebook']) assert.equal(report!.lines.find((l) => l.element === `identity provider ${alias}`)?.outcome, 'imported', JSON.stringify(report!.lines));
      const ms2 = (await ts.store.identityProviders.get('moved-social', 'microsoft'))!;
      assert.equal(ms2.config.authorizationUrl, 'https://login.microsoftonline.com/contoso.example/oauth2/v2.0/authorize');
      assert.equal(await providerSecret(ts.store, ms2), 'ms-secret');
      assert.equal((await ts.store.identityProviders.get('moved-social', 'facebook'))!.config.userInfoUrl, 'https://graph.facebook.com/me?fields=id%2Cname%2Cemail%2Cfirst_name%2Clast_name%2Clocale');
      assert.equal((await ts.store.identityProviders.get('moved-social', 'gitlab'))!.config.tokenUrl, 'https://gitlab.com/oauth/token');
      const links = (await ts.store.identityProviders.links('5ca1ab1e-0000-4000-8000-000000000001')).map((l) => [l.identityProvider, l.federatedUserId]).sort();
      assert.deepEqual(links, [['facebook', '10158000000000003'], ['gitlab', '4242'], ['microsoft', '87d349ed-44d7-43e1-9a83-5f2406dee5bd']]);
    });
  });
}
