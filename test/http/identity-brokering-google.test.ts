import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { FetchCookieJar, browse } from '../helpers/fetch-browser.js';
import { completeAtProvider, pressProviderButton } from '../helpers/broker-flow.js';
import { startUpstream, type Upstream, type UpstreamAccount } from '../helpers/upstream-provider.js';
import { updateRealm } from '../../src/admin/operations.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { providerSecret } from '../../src/admin/operations/identity-providers.js';

const GOOGLE_AUTH = 'https://accounts.google.com/o/oauth2/v2/auth';

// Keycloak's Google identity provider (providerId google): created through keycloak-admin-client with
// only a client id and secret, it has Google's endpoints, the login page's button says "Google", and the
// browser is sent to Google with the hosted domain as hd (not followed: Google is not reachable from
// here). The sign-in itself runs against node-oidc-provider standing in Google's place (the provider's
// endpoints set to it), its ID tokens carrying hd as Google's do: only accounts of the hosted domains
// get in. A Keycloak realm with a Google provider imports it.
for (const dialect of dialects()) {
  describe(`identity brokering: Keycloak's Google provider (${dialect})`, () => {
    let ts: AdminTestServer;
    let up: Upstream;
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/test/broker/${alias}/endpoint`;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: callback('google-local'), claimsInIdToken: true, extraClaims: ['hd'], pkceRequired: false });
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    /** Presses the provider's button on a new browser's login page; the provider's authorization request (not followed). */
    const pressButton = async (alias: string, jar = new FetchCookieJar()): Promise<{ jar: FetchCookieJar; location: URL; buttons: Array<[string, string]> }> => ({
      jar,
      ...(await pressProviderButton(ts, alias, jar)),
    });

    /** A sign-in through the stand-in provider as `account`: the code at the client, or the error page's text. */
    async function signIn(alias: string, account: UpstreamAccount, jar = new FetchCookieJar()): Promise<{ claims?: Record<string, unknown>; page?: string }> {
      const { location, buttons } = await pressButton(alias, jar);
      assert.deepEqual(buttons.find(([a]) => a === alias), [alias, 'Google'], 'no display name: the button says Google');
      up.nextAccount = account;
      return completeAtProvider(ts, jar, location);
    }

    test("created with a client id and secret only: Google's endpoints, a button that says Google, and Google's authorization request with hd", async () => {
      await ts.kc.identityProviders.create({ realm: 'test', alias: 'google', providerId: 'google', enabled: true, config: { clientId: 'rg.apps.googleusercontent.com', clientSecret: 'g-secret', hostedDomain: 'corp.example' } });
      const rep = (await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'google' }))!;
      assert.equal(rep.providerId, 'google');
      assert.equal(rep.config!.authorizationUrl, GOOGLE_AUTH);
      assert.equal(rep.config!.tokenUrl, 'https://oauth2.googleapis.com/token');
      assert.equal(rep.config!.userInfoUrl, 'https://openidconnect.googleapis.com/v1/userinfo');
      assert.equal(rep.config!.jwksUrl, 'https://www.googleapis.com/oauth2/v3/certs');
      assert.equal(rep.config!.issuer, 'https://accounts.google.com');
      assert.equal(rep.config!.validateSignature, 'true');
      assert.equal(rep.config!.clientSecret, '**********');
      assert.equal(await providerSecret(ts.store, (await ts.store.identityProviders.get('test', 'google'))!), 'g-secret');
      // The admin console's list of social providers, and the type itself.
      const info = await ts.kc.serverInfo.find();
      assert.deepEqual(info.socialProviders!.filter((p) => p.id === 'google'), [{ id: 'google', name: 'Google' }]);
      assert.deepEqual(await ts.kc.identityProviders.findFactory({ realm: 'test', providerId: 'google' }), { id: 'google', name: 'Google' });

      const { location, buttons } = await pressButton('google');
      assert.deepEqual(buttons.find(([alias]) => alias === 'google'), ['google', 'Google'], 'no display name: the button says Google');
      assert.equal(`${location.origin}${location.pathname}`, GOOGLE_AUTH);
      const q = location.searchParams;
      assert.equal(q.get('client_id'), 'rg.apps.googleusercontent.com');
      assert.equal(q.get('redirect_uri'), callback('google'));
      assert.equal(q.get('scope'), 'openid profile email');
      assert.equal(q.get('response_type'), 'code');
      assert.equal(q.get('hd'), 'corp.example');
      assert.ok(q.get('state') && q.get('nonce'));
      await ts.kc.identityProviders.del({ realm: 'test', alias: 'google' });
    });

    test('hosted domains: an account whose ID token names one of them signs in; another domain, or none (a personal account), is refused and no user is made', async () => {
      await ts.kc.identityProviders.create({
        realm: 'test',
        alias: 'google-local',
        providerId: 'google',
        enabled: true,
        // Google's endpoints replaced by the stand-in's; the type's checks stay.
        config: { issuer: up.issuer, authorizationUrl: `${up.issuer}/auth`, tokenUrl: `${up.issuer}/token`, jwksUrl: `${up.issuer}/jwks`, userInfoUrl: `${up.issuer}/me`, clientId: up.clientId, clientSecret: up.clientSecret, hostedDomain: 'corp.example, Lab.Example' },
      });
      const annJar = new FetchCookieJar();
      const ok = await signIn('google-local', { sub: 'g-100', email: 'ann@lab.example', email_verified: true, given_name: 'Ann', hd: 'lab.example' }, annJar);
      assert.ok(ok.claims, ok.page?.slice(0, 300));
      const ann = await ts.store.users.findByUsername('test', 'ann@lab.example');
      assert.equal(ok.claims.sub, ann?.id);
      assert.equal(up.requests.at(-1)!.get('hd'), 'corp.example, Lab.Example', 'hd sent as configured');
      // Her account page names the link by the provider's type, as the button does.
      const accountPage = await (await browse(annJar, new URL('/auth/realms/test/account', ts.baseUrl))).text();
      assert.match(accountPage, /<h2>Linked accounts<\/h2>[\s\S]*Google[\s\S]*as ann@lab\.example/);

      const other = await signIn('google-local', { sub: 'g-101', email: 'bob@other.example', hd: 'other.example' });
      assert.equal(other.claims, undefined);
      assert.match(other.page ?? '', /The sign-in with the identity provider did not complete/);
      const personal = await signIn('google-local', { sub: 'g-102', email: 'cy@gmail.example' });
      assert.equal(personal.claims, undefined);
      for (const email of ['bob@other.example', 'cy@gmail.example']) assert.equal(await ts.store.users.findByUsername('test', email), undefined, `no user ${email}`);
      const failures = await ts.store.events.list('test', { types: ['IDENTITY_PROVIDER_LOGIN_ERROR'] });
      assert.ok(failures.some((e) => /hd "other\.example" is not one of the provider's hosted domains/.test(e.reason ?? '')), JSON.stringify(failures.map((e) => e.reason)));
      assert.ok(failures.some((e) => /no hd claim/.test(e.reason ?? '')));

      // "*": any Google account, personal ones too.
      await ts.kc.identityProviders.update({ realm: 'test', alias: 'google-local' }, { ...(await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'google-local' }))!, config: { ...(await ts.kc.identityProviders.findOne({ realm: 'test', alias: 'google-local' }))!.config, hostedDomain: '*' } });
      const anyAccount = await signIn('google-local', { sub: 'g-102', email: 'cy@gmail.example' });
      assert.ok(anyAccount.claims, anyAccount.page?.slice(0, 300));
      await ts.kc.identityProviders.del({ realm: 'test', alias: 'google-local' });
    });

    test('a Keycloak realm with a Google provider imports it: stored with its type and endpoints, the options that change nothing reported', async () => {
      const { realms: [report] } = await importKeycloakRealms(
        ts.store,
        [
          {
            realm: 'moved-google',
            enabled: true,
            identityProviders: [
              {
                alias: 'google',
                providerId: 'google',
                enabled: true,
                trustEmail: true,
                firstBrokerLoginFlowAlias: 'first broker login',
                config: { clientId: 'kc.apps.googleusercontent.com', clientSecret: 'kc-g-secret', hostedDomain: 'moved.example', offlineAccess: 'true', userIp: 'true', syncMode: 'IMPORT', guiOrder: '' },
              },
            ],
          },
        ],
        { ifExists: 'fail' },
        { ...cliActor(), via: 'import' },
      );
      assert.equal(report!.status, 'imported', report!.reason);
      const line = report!.lines.find((l) => l.element === 'identity provider google');
      assert.equal(line?.outcome, 'mapped', JSON.stringify(report!.lines));
      assert.match(line!.reason!, /^google; offlineAccess: Google's refresh token is not asked for.*userIp: the user's address is not sent/);
      const p = (await ts.store.identityProviders.get('moved-google', 'google'))!;
      assert.equal(p.providerId, 'google');
      assert.equal(p.config.authorizationUrl, GOOGLE_AUTH);
      assert.equal(p.config.hostedDomain, 'moved.example');
      assert.equal(p.trustEmail, true);
      assert.equal(await providerSecret(ts.store, p), 'kc-g-secret');
    });
  });
}
