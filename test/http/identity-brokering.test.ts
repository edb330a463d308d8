import { describe, test, before, after } from 'node:test';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, basic, PASSWORD, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { FetchCookieJar, browse, followRedirects } from '../helpers/fetch-browser.js';
import { pageKind, parseForm } from '../helpers/flow.js';
import { addUpstreamProvider } from '../helpers/broker-flow.js';
import { startUpstream, type Upstream, type UpstreamAccount } from '../helpers/upstream-provider.js';
import { createUser, disableUser, updateRealm } from '../../src/admin/operations.js';
import { resetPassword } from '../../src/admin/operations/users.js';
import { createOrganization, updateOrganization } from '../../src/admin/operations/organizations.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { brokeredUser, createIdentityProvider, deleteIdentityProvider, discoverProvider, updateIdentityProvider, type ProviderFields } from '../../src/admin/operations/identity-providers.js';
import { enrollTestOtp, oathtoolCodeWith } from '../helpers/otp.js';
import { OTP_POLICY } from '../../src/admin/operations/otp.js';

// Identity brokering against node-oidc-provider over real HTTP: the login page's button (or kc_idp_hint)
// sends the browser to the provider, which signs the test's account in and sends it back; Realmgate
// exchanges the code (PKCE, client authentication), checks the ID token and finds, makes or links the user.
for (const dialect of dialects()) {
  describe(`identity brokering with node-oidc-provider (${dialect})`, () => {
    let ts: TestServer;
    let up: Upstream;
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/test/broker/${alias}/endpoint`;

    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      // Most realms moved from Keycloak: a user of no organization signs in (a provider's organization is tested below).
      await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: callback('corp') });
      await addProvider('corp', { displayName: 'Corp SSO' });
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    const addProvider = (alias: string, fields: ProviderFields = {}, upstream = up): Promise<void> => addUpstreamProvider(ts, upstream, alias, fields);

    const authorizeUrl = (extra: Record<string, string> = {}): URL =>
      new URL(`/auth/realms/test/protocol/openid-connect/auth?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1', ...extra })}`, ts.baseUrl);

    /** Follows redirects as a browser does (GET), until a page, or a redirect to the client. */
    const follow = (jar: FetchCookieJar, url: URL): Promise<{ url: URL; res: Response }> => followRedirects(jar, url, (u) => u.host === 'app.example.com');

    /** The login page's provider buttons, and the form they are in. */
    function providerButtons(html: string): { action: string; csrf: string; aliases: string[] } {
      const form = /<form method="post" action="([^"]*)" class="providers">[\s\S]*?name="csrf" value="([^"]*)"/.exec(html);
      const aliases = [...html.matchAll(/name="provider" value="([^"]*)"/g)].map((m) => m[1]!);
      return { action: form?.[1]?.replace(/&amp;/g, '&') ?? '', csrf: form?.[2] ?? '', aliases };
    }

    /** Starts a sign-in and presses the provider's button on the login page; returns where the browser lands after the provider. */
    async function viaProvider(jar: FetchCookieJar, alias: string, account: UpstreamAccount | undefined): Promise<{ url: URL; res: Response }> {
      const login = await follow(jar, authorizeUrl());
      const html = await login.res.text();
      assert.equal(pageKind(html), 'login');
      const buttons = providerButtons(html);
      assert.ok(buttons.aliases.includes(alias), `the login page offers ${alias}: ${buttons.aliases.join(', ')}`);
      up.nextAccount = account;
      const started = await browse(jar, new URL(buttons.action, ts.baseUrl), { csrf: buttons.csrf, provider: alias });
      assert.equal(started.status, 303);
      return follow(jar, new URL(started.headers.get('location')!, ts.baseUrl));
    }

    /** Allows consent (and picks an organization when asked) until the code comes back; returns the ID token's claims. */
    async function finish(jar: FetchCookieJar, at: { url: URL; res: Response }): Promise<Record<string, unknown>> {
      let { url, res } = at;
      for (let i = 0; i < 5 && url.host !== 'app.example.com'; i++) {
        const html = await res.text();
        const kind = pageKind(html);
        assert.ok(kind === 'consent' || kind === 'organization', `expected consent or organization at ${url}, got ${kind}: ${html.slice(0, 300)}`);
        const form = parseForm(html);
        // The organization page: acme when offered, else the first one offered.
        const offered = [...html.matchAll(/name="organization" value="([^"]*)"/g)].map((m) => m[1]!);
        const organization = offered.includes('acme') ? 'acme' : offered[0]!;
        const posted = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...(kind === 'consent' ? { decision: 'allow' } : { organization }) });
        ({ url, res } = await follow(jar, new URL(posted.headers.get('location')!, ts.baseUrl)));
      }
      const code = url.searchParams.get('code');
      assert.ok(code, `a code in ${url}`);
      const tokens = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }),
      });
      assert.equal(tokens.status, 200);
      return decodeJwt(((await tokens.json()) as { id_token: string }).id_token);
    }

    /** The whole sign-in through the provider in a new browser; the ID token's claims. */
    async function signIn(alias: string, account: UpstreamAccount, jar = new FetchCookieJar()): Promise<Record<string, unknown>> {
      return finish(jar, await viaProvider(jar, alias, account));
    }

    const events = async (type: string): Promise<number> => (await ts.store.events.list('test', { types: [type] })).length;

    test('a new account at the provider becomes a linked user without a password; the next sign-in finds it', async () => {
      const account = { sub: 'u-100', email: 'bo@corp.example', email_verified: true, preferred_username: 'Bo.Corp', given_name: 'Bo', family_name: 'Corp' };
      const claims = await signIn('corp', account);
      assert.equal(claims.preferred_username, 'bo.corp');
      const user = await ts.store.users.findByUsername('test', 'bo.corp');
      assert.ok(user);
      assert.equal(claims.sub, user.id);
      assert.equal(user.email, 'bo@corp.example');
      assert.equal(user.firstName, 'Bo');
      assert.equal(user.emailVerified, false, 'trustEmail is off');
      assert.ok(user.passwordHash.startsWith('!'), 'no password');
      const links = await ts.store.identityProviders.links(user.id);
      assert.deepEqual(links.map((l) => [l.identityProvider, l.federatedUserId, l.federatedUsername]), [['corp', 'u-100', 'Bo.Corp']]);
      // PKCE S256 and the nonce went to the provider.
      const sent = up.requests.at(-1)!;
      assert.equal(sent.get('code_challenge_method'), 'S256');
      assert.ok(sent.get('nonce'));
      assert.equal(sent.get('scope'), 'openid email profile');
      assert.equal(sent.get('redirect_uri'), callback('corp'));

      // Again, in a new browser: the same user, no second one.
      const again = await signIn('corp', account);
      assert.equal(again.sub, user.id);
      assert.equal((await ts.store.userAdmin.search('test', { email: 'bo@corp.example', exact: true })).length, 1);
    });

    test("an account without names or an email is reviewed first (Keycloak's first broker login Review Profile): checked as UPDATE_PROFILE, a typed email never verified, another user's email goes to linking", async () => {
      const trustedUp = await startUpstream({ redirectUri: callback('trusted') });
      await addProvider('trusted', { displayName: 'Trusted SSO', trustEmail: true }, trustedUp);
      const prev = up;
      up = trustedUp;
      try {
        const review = async (account: UpstreamAccount): Promise<{ jar: FetchCookieJar; html: string }> => {
          const jar = new FetchCookieJar();
          const at = await viaProvider(jar, 'trusted', account);
          const html = await at.res.text();
          assert.equal(pageKind(html), 'review-profile', html.slice(0, 300));
          return { jar, html };
        };
        const submit = async (jar: FetchCookieJar, html: string, fields: Record<string, string>): Promise<Response> => {
          const form = parseForm(html);
          return browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...fields });
        };
        // An email, no names: the page shows the provider's email; empty names are refused in the page's words.
        const first = await review({ sub: 'r-1', email: 'rhea@corp.example', email_verified: true, preferred_username: 'rhea', given_name: undefined, family_name: undefined });
        assert.match(first.html, /<h1>Update account information<\/h1>/);
        assert.match(first.html, /Your <strong>Trusted SSO<\/strong> account does not give everything an account here needs\./);
        assert.match(first.html, /id="email" name="email" value="rhea@corp.example"/);
        assert.equal(await ts.store.users.findByUsername('test', 'rhea'), undefined, 'no user before the review');
        const refused = await submit(first.jar, first.html, { email: 'rhea@corp.example', firstName: '', lastName: 'Corp' });
        assert.equal(refused.status, 400);
        const refusedHtml = await refused.text();
        assert.match(refusedHtml, /Please specify first name\./);
        assert.match(refusedHtml, /id="lastName" name="lastName" value="Corp"/);
        const forged = await browse(first.jar, new URL(parseForm(refusedHtml).action, ts.baseUrl), { csrf: 'forged', email: 'rhea@corp.example', firstName: 'R', lastName: 'C' });
        assert.equal(forged.status, 403);
        const done = await submit(first.jar, refusedHtml, { email: 'rhea@corp.example', firstName: 'Rhea', lastName: 'Corp' });
        assert.equal(done.status, 303);
        const claims = await finish(first.jar, await follow(first.jar, new URL(done.headers.get('location')!, ts.baseUrl)));
        const rhea = (await ts.store.users.findByUsername('test', 'rhea'))!;
        assert.equal(claims.sub, rhea.id);
        assert.deepEqual([rhea.email, rhea.emailVerified, rhea.firstName, rhea.lastName], ['rhea@corp.example', true, 'Rhea', 'Corp'], "the provider's email, unchanged, is trusted");
        // Linked now: the next sign-in asks nothing, though the provider still gives no names.
        assert.equal((await signIn('trusted', { sub: 'r-1', email: 'rhea@corp.example', email_verified: true, preferred_username: 'rhea', given_name: undefined, family_name: undefined })).sub, rhea.id);

        // No email at all: the one typed is never verified, trustEmail or not; an invalid one is refused.
        const second = await review({ sub: 'r-2', preferred_username: 'sol' });
        assert.match(second.html, /id="email" name="email" value=""/);
        const invalid = await submit(second.jar, second.html, { email: 'not an email', firstName: 'Sol', lastName: 'Typed' });
        assert.equal(invalid.status, 400);
        assert.match(await invalid.text(), /Invalid email address\./);
        const typed = await submit(second.jar, second.html, { email: 'Sol@Typed.example', firstName: 'Sol', lastName: 'Typed' });
        await finish(second.jar, await follow(second.jar, new URL(typed.headers.get('location')!, ts.baseUrl)));
        const sol = (await ts.store.users.findByUsername('test', 'sol'))!;
        assert.deepEqual([sol.email, sol.emailVerified], ['sol@typed.example', false]);

        // Another user's email typed: that user's account, linked only after their password.
        await createUser(ts.store, { realmId: 'test', username: 'tara', password: PASSWORD, email: 'tara@example.com' });
        // Cancel: back to the login page, nobody made.
        const dropped = await review({ sub: 'r-4', preferred_username: 'uma' });
        const back = await submit(dropped.jar, dropped.html, { cancel: '1' });
        assert.equal(pageKind(await (await follow(dropped.jar, new URL(back.headers.get('location')!, ts.baseUrl))).res.text()), 'login');
        assert.equal(await ts.store.users.findByUsername('test', 'uma'), undefined);

        const third = await review({ sub: 'r-3', preferred_username: 'tara.corp' });
        const linking = await submit(third.jar, third.html, { email: 'tara@example.com', firstName: 'Tara', lastName: 'Corp' });
        const linkPage = await (await follow(third.jar, new URL(linking.headers.get('location')!, ts.baseUrl))).res.text();
        assert.equal(pageKind(linkPage), 'link-account', linkPage.slice(0, 300));
        assert.equal(await ts.store.users.findByUsername('test', 'tara.corp'), undefined);
        assert.equal((await ts.store.userAdmin.search('test', { email: 'tara@example.com', exact: true })).length, 1);
      } finally {
        up = prev;
        await deleteIdentityProvider(ts.store, cliActor(), 'test', 'trusted');
        await trustedUp.close();
      }
    });

    test('the realm\'s Review Profile mode: off makes the user from an incomplete account as it is; on shows even a complete one, to check', async () => {
      const setMode = async (mode: 'missing' | 'on' | 'off'): Promise<void> => {
        await updateRealm(ts.store, { realmId: 'test', settings: { brokerReviewProfile: mode } });
        ts.services.cache.clear();
      };
      try {
        // off: no names, no email: no page, a user without them (Keycloak makes it too).
        await setMode('off');
        const claims = await signIn('corp', { sub: 'rv-1', preferred_username: 'vera', given_name: undefined, family_name: undefined });
        const vera = (await ts.store.users.findByUsername('test', 'vera'))!;
        assert.equal(claims.sub, vera.id);
        assert.deepEqual([vera.email, vera.firstName, vera.lastName], [null, null, null]);

        // on: a complete account is shown, with the provider's values and the words of a check.
        await setMode('on');
        const jar = new FetchCookieJar();
        const at = await viaProvider(jar, 'corp', { sub: 'rv-2', email: 'wes@corp.example', email_verified: true, preferred_username: 'wes', given_name: 'Wes', family_name: 'Corp' });
        const html = await at.res.text();
        assert.equal(pageKind(html), 'review-profile', html.slice(0, 300));
        assert.match(html, /Check the account information your <strong>Corp SSO<\/strong> account gives before you continue to/);
        assert.match(html, /id="firstName" name="firstName" value="Wes"/);
        assert.equal(await ts.store.users.findByUsername('test', 'wes'), undefined, 'no user before the check');
        const form = parseForm(html);
        const done = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, email: 'wes@corp.example', firstName: 'Wesley', lastName: 'Corp' });
        assert.equal(done.status, 303);
        const wesClaims = await finish(jar, await follow(jar, new URL(done.headers.get('location')!, ts.baseUrl)));
        const wes = (await ts.store.users.findByUsername('test', 'wes'))!;
        assert.equal(wesClaims.sub, wes.id);
        assert.equal(wes.firstName, 'Wesley', 'what the user typed');
        // Linked now: the next sign-in shows nothing, whatever the mode.
        assert.equal((await signIn('corp', { sub: 'rv-2', email: 'wes@corp.example', email_verified: true, preferred_username: 'wes', given_name: 'Wes', family_name: 'Corp' })).sub, wes.id);

        // missing (the default): the complete account passes, as before.
        await setMode('missing');
        await signIn('corp', { sub: 'rv-3', email: 'xia@corp.example', email_verified: true, preferred_username: 'xia', given_name: 'Xia', family_name: 'Corp' });
        assert.ok(await ts.store.users.findByUsername('test', 'xia'));
      } finally {
        await setMode('missing');
      }
    });

    test("a user made at the first sign-in through the provider gets the realm's default required actions (here the terms, asked before the code)", async () => {
      await updateRequiredAction(ts.store, { realmId: 'test', alias: 'TERMS_AND_CONDITIONS', changes: { defaultAction: true } });
      ts.services.cache.clear();
      try {
        const jar = new FetchCookieJar();
        const at = await viaProvider(jar, 'corp', { sub: 'u-160', email: 'dee@corp.example', email_verified: true, preferred_username: 'dee.corp' });
        const html = await at.res.text();
        assert.equal(pageKind(html), 'terms', html.slice(0, 300));
        const user = await ts.store.users.findByUsername('test', 'dee.corp');
        assert.deepEqual(user?.requiredActions, ['TERMS_AND_CONDITIONS']);
        const form = parseForm(html);
        const accepted = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, accept: '1' });
        const claims = await finish(jar, await follow(jar, new URL(accepted.headers.get('location')!, ts.baseUrl)));
        assert.equal(claims.sub, user!.id);
        assert.deepEqual((await ts.store.users.get(user!.id))?.requiredActions, []);
      } finally {
        await updateRequiredAction(ts.store, { realmId: 'test', alias: 'TERMS_AND_CONDITIONS', changes: { defaultAction: false } });
        ts.services.cache.clear();
      }
    });

    test('the provider\'s account with the email of an existing user is linked only after that user\'s password (and code)', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'carla', password: 'carla password 1', email: 'carla@example.com' });
      const key = await enrollTestOtp(ts.store, (await ts.store.users.get(id))!, undefined, Math.floor(ts.clock.nowMs() / 1000));
      const jar = new FetchCookieJar();
      const landed = await viaProvider(jar, 'corp', { sub: 'u-200', email: 'carla@example.com', preferred_username: 'carla.c' });
      const html = await landed.res.text();
      assert.match(html, /Link your Corp SSO account/);
      assert.match(html, /<strong>carla<\/strong>/);
      assert.equal(await ts.store.users.findByUsername('test', 'carla.c'), undefined, 'no second account');
      const form = parseForm(html);
      const wrong = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, password: 'not it' });
      assert.equal(wrong.status, 400);
      assert.match(await wrong.text(), /Invalid/);
      assert.equal((await ts.store.identityProviders.links(id)).length, 0);
      const right = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, password: 'carla password 1' });
      const otp = await follow(jar, new URL(right.headers.get('location')!, ts.baseUrl));
      const otpHtml = await otp.res.text();
      assert.equal(pageKind(otpHtml), 'otp');
      assert.equal((await ts.store.identityProviders.links(id)).length, 0, 'not linked before the code');
      const otpForm = parseForm(otpHtml);
      // The next time step: the one of the set-up is spent.
      ts.clock.advance(OTP_POLICY.period);
      const coded = await browse(jar, new URL(otpForm.action, ts.baseUrl), { csrf: otpForm.csrf, otp: oathtoolCodeWith(key, OTP_POLICY, Math.floor(ts.clock.nowMs() / 1000)) });
      const claims = await finish(jar, await follow(jar, new URL(coded.headers.get('location')!, ts.baseUrl)));
      assert.equal(claims.sub, id);
      assert.deepEqual((await ts.store.identityProviders.links(id)).map((l) => l.federatedUserId), ['u-200']);
      // From now on the provider signs carla in directly.
      const direct = await signIn('corp', { sub: 'u-200', email: 'carla@example.com' });
      assert.equal(direct.sub, id);
    });

    test('the same new account signing in twice at once makes one user, linked once', async () => {
      const p = (await ts.store.identityProviders.get('test', 'corp'))!;
      const account = { id: 'u-150', username: 'twice', email: 'twice@corp.example', firstName: undefined, lastName: undefined };
      const results = await Promise.all([brokeredUser(ts.store, p, account), brokeredUser(ts.store, p, account), brokeredUser(ts.store, p, account)]);
      assert.deepEqual(results.map((r) => r.kind).sort(), ['created', 'linked', 'linked']);
      const ids = new Set(results.map((r) => (r.kind === 'created' || r.kind === 'linked' ? r.user.id : '')));
      assert.equal(ids.size, 1);
      assert.equal((await ts.store.identityProviders.links([...ids][0]!)).length, 1);
    });

    test("a user made at the first sign-in through the provider is mapped to the realm's default role (Keycloak's)", async () => {
      const role = { id: 'b7d0c6d4-1b8e-4c59-9a54-000000000001', realmId: 'test', clientId: '', name: 'default-roles-test', description: null };
      await ts.store.roles.create(role, 0);
      await updateRealm(ts.store, { realmId: 'test', defaultRole: { name: 'default-roles-test' } });
      try {
        const p = (await ts.store.identityProviders.get('test', 'corp'))!;
        const made = await brokeredUser(ts.store, p, { id: 'u-901', username: 'defaulted', email: 'defaulted@corp.example', firstName: undefined, lastName: undefined });
        assert.equal(made.kind, 'created');
        assert.deepEqual((await ts.store.roles.mappedRoles(made.kind === 'created' ? made.user.id : '')).map((r) => r.name), ['default-roles-test']);
      } finally {
        await ts.store.roles.delete(role.id);
      }
    });

    test('the account page lists linked accounts; the only way in of a user without a password cannot be unlinked', async () => {
      const jar = new FetchCookieJar();
      const claims = await signIn('corp', { sub: 'u-170', email: 'lia@corp.example', preferred_username: 'lia' }, jar);
      const account = new URL('/auth/realms/test/account', ts.baseUrl);
      const page = async (): Promise<string> => (await browse(jar, account)).text();
      let html = await page();
      assert.match(html, /<h2>Linked accounts<\/h2>[\s\S]*Corp SSO[\s\S]*as lia/);
      assert.match(html, /Your only way to sign in here/);
      assert.doesNotMatch(html, /linked-accounts\/remove/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(html)![1]!;
      const remove = new URL('/auth/realms/test/account/linked-accounts/remove', ts.baseUrl);
      const refused = await browse(jar, remove, { csrf, provider: 'corp' });
      assert.match(await refused.text(), /only way to sign in: it stays linked/);
      assert.equal((await ts.store.identityProviders.links(String(claims.sub))).length, 1);
      // An administrator sets a password (which signs her out); she signs in through the provider again.
      await resetPassword(ts.store, { realmId: 'test', user: 'lia', password: 'lia password 1' });
      await signIn('corp', { sub: 'u-170', email: 'lia@corp.example', preferred_username: 'lia' }, jar);
      html = await page();
      assert.match(html, /linked-accounts\/remove/);
      // Without the page's CSRF token: nothing happens.
      assert.equal((await browse(jar, remove, { provider: 'corp' })).status, 303);
      assert.equal((await ts.store.identityProviders.links(String(claims.sub))).length, 1);
      const before = await events('REMOVE_FEDERATED_IDENTITY');
      const removed = await browse(jar, remove, { csrf, provider: 'corp' });
      assert.match(await removed.text(), /The account is unlinked/);
      assert.equal((await ts.store.identityProviders.links(String(claims.sub))).length, 0);
      assert.equal(await events('REMOVE_FEDERATED_IDENTITY'), before + 1);
    });

    test('a user who cancels at the provider is back on the login page with a message; nothing is stored', async () => {
      const before = await events('IDENTITY_PROVIDER_LOGIN_ERROR');
      const { res } = await viaProvider(new FetchCookieJar(), 'corp', undefined);
      assert.equal(res.status, 400);
      const html = await res.text();
      assert.equal(pageKind(html), 'login');
      assert.match(html, /was cancelled/);
      assert.equal(await events('IDENTITY_PROVIDER_LOGIN_ERROR'), before + 1);
    });

    test('an answer from the provider is refused with another state, in another browser, or replayed', async () => {
      const jar = new FetchCookieJar();
      const login = await follow(jar, authorizeUrl());
      const buttons = providerButtons(await login.res.text());
      up.nextAccount = { sub: 'u-300', email: 'dan@corp.example' };
      let url = new URL((await browse(jar, new URL(buttons.action, ts.baseUrl), { csrf: buttons.csrf, provider: 'corp' })).headers.get('location')!);
      // Through the provider, up to (not into) the callback.
      while (!url.pathname.endsWith('/broker/corp/endpoint')) url = new URL((await browse(jar, url)).headers.get('location')!, url);
      const state = url.searchParams.get('state')!;
      const forged = new URL(url);
      forged.searchParams.set('state', `${state.split('.')[0]}.${'A'.repeat(43)}`);
      const r1 = await browse(jar, forged);
      assert.equal(r1.status, 400);
      assert.match(await r1.text(), /does not belong to a sign-in started here/);
      const r2 = await browse(new FetchCookieJar(), url);
      assert.equal(r2.status, 400);
      assert.match(await r2.text(), /another browser/);
      const wrongAlias = new URL(url.toString().replace('/broker/corp/', '/broker/other/'));
      assert.equal((await browse(jar, wrongAlias)).status, 400);
      assert.equal(await ts.store.users.findByUsername('test', 'dan@corp.example'), undefined);
      // The real one goes through, once; the same answer again finds the sign-in gone.
      const ok = await browse(jar, url);
      assert.equal(ok.status, 303);
      await finish(jar, await follow(jar, new URL(ok.headers.get('location')!, ts.baseUrl)));
      const replay = await browse(jar, url);
      assert.equal(replay.status, 400);
    });

    test('kc_idp_hint goes straight to the provider; an unknown alias shows the login page', async () => {
      const jar = new FetchCookieJar();
      const hinted = await browse(jar, authorizeUrl({ kc_idp_hint: 'corp' }));
      assert.equal(hinted.status, 303);
      assert.ok(hinted.headers.get('location')!.startsWith(`${up.issuer}/auth?`), hinted.headers.get('location')!);
      const unknown = await follow(jar, authorizeUrl({ kc_idp_hint: 'nope' }));
      assert.equal(pageKind(await unknown.res.text()), 'login');
    });

    test('a disabled, hidden or link-only provider is not offered, and its button does nothing', async () => {
      await addProvider('hidden', { hideOnLogin: true });
      await addProvider('linkonly', { linkOnly: true });
      await addProvider('off', { enabled: false });
      const jar = new FetchCookieJar();
      const login = await follow(jar, authorizeUrl());
      const buttons = providerButtons(await login.res.text());
      assert.deepEqual(buttons.aliases, ['corp']);
      for (const alias of ['linkonly', 'off']) {
        const r = await browse(jar, new URL(buttons.action, ts.baseUrl), { csrf: buttons.csrf, provider: alias });
        assert.equal(r.status, 303);
        assert.match(r.headers.get('location')!, /\/login-actions\/[^/]+$/, `${alias}: back to the sign-in, not to a provider`);
      }
      // Without the CSRF token: refused.
      assert.equal((await browse(jar, new URL(buttons.action, ts.baseUrl), { provider: 'corp' })).status, 403);
    });

    test('a disabled user linked to the account cannot sign in through the provider', async () => {
      const account = { sub: 'u-400', email: 'eve@corp.example', preferred_username: 'eve' };
      await signIn('corp', account);
      await disableUser(ts.store, { realmId: 'test', user: 'eve' });
      const { res } = await viaProvider(new FetchCookieJar(), 'corp', account);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /cannot sign in here/);
    });

    test('an ID token signed by keys that are not the provider\'s is refused (validateSignature)', async () => {
      const other = await startUpstream({ redirectUri: callback('forged') });
      try {
        const endpoints = await discoverProvider(up.issuer);
        // The provider's endpoints, but another provider's keys: its real ID tokens must not verify.
        await createIdentityProvider(ts.store, cliActor(), 'test', { alias: 'forged', config: { ...endpoints, jwksUrl: `${other.issuer}/jwks`, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true' } });
        const { res } = await viaProvider(new FetchCookieJar(), 'forged', { sub: 'u-500' });
        // node-oidc-provider refuses the redirect_uri of an alias it does not know: it never gets this far,
        // or the signature is refused. Either way no user exists.
        assert.notEqual(res.status, 200);
        assert.equal(await ts.store.identityProviders.findLink('test', 'forged', 'u-500'), undefined);
      } finally {
        await other.close();
      }
    });

    test("an email of an organization's domain typed on the login page goes to its provider (Keycloak's redirect when the email domain matches)", async () => {
      const globexUp = await startUpstream({ redirectUri: callback('globex') });
      const org = await createOrganization(ts.store, { realmId: 'test', alias: 'globex', domains: [{ name: 'globex.example', verified: true }, { name: 'sub.globex.example', verified: true }] });
      try {
        await addProvider('globex', { hideOnLogin: true, organizationId: org.id, config: { 'kc.org.domain': 'ANY', 'kc.org.excluded.domains': 'sub.globex.example', 'kc.org.broker.redirect.mode.email-matches': 'true' } }, globexUp);
        const jar = new FetchCookieJar();
        const login = await follow(jar, authorizeUrl());
        const html = await login.res.text();
        // The password is not required by the form; the page says why.
        assert.match(html, /<input type="password" id="password" name="password" autocomplete="current-password" aria-describedby="password-note"/);
        assert.match(html, /Your email is enough/);
        const form = parseForm(html);
        const post = (username: string): Promise<Response> => browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, username, password: '' });
        // Not routed: another domain, an excluded one, a name that is no email.
        for (const username of ['zed@other.example', 'ann@sub.globex.example', 'globex.example']) {
          const r = await post(username);
          assert.equal(r.status, 200, username);
          assert.match(await r.text(), /Invalid username or password/, username);
        }
        globexUp.nextAccount = { sub: 'g-1', email: 'zed@globex.example', preferred_username: 'zed' };
        const routed = await post(' Zed@GLOBEX.example ');
        assert.equal(routed.status, 303);
        const at = new URL(routed.headers.get('location')!);
        assert.equal(at.origin, new URL(globexUp.issuer).origin);
        assert.equal(at.searchParams.get('login_hint'), 'Zed@GLOBEX.example');
        const claims = await finish(jar, await follow(jar, at));
        const zed = await ts.store.users.findByUsername('test', 'zed');
        assert.equal(claims.sub, zed?.id);
        assert.ok(await ts.store.organizationAdmin.isMember(org.id, zed!.id), 'a member of the organization');
        // A disabled organization routes no one.
        await updateOrganization(ts.store, { realmId: 'test', organization: 'globex', enabled: false });
        const jar2 = new FetchCookieJar();
        const form2 = parseForm(await (await follow(jar2, authorizeUrl())).res.text());
        const r = await browse(jar2, new URL(form2.action, ts.baseUrl), { csrf: form2.csrf, username: 'zed@globex.example', password: '' });
        assert.equal(r.status, 200);
      } finally {
        await deleteIdentityProvider(ts.store, cliActor(), 'test', 'globex');
        await globexUp.close();
      }
    });

    test('client_secret_basic and a provider with PKCE off; a code swapped between two sign-ins is refused by the nonce', async () => {
      const basicUp = await startUpstream({ redirectUri: callback('basic'), authMethod: 'client_secret_basic', pkceRequired: false, idTokenAlg: 'ES256' });
      try {
        await addProvider('basic', { config: { clientAuthMethod: 'client_secret_basic', pkceEnabled: 'false' } }, basicUp);
        const prev = up;
        up = basicUp;
        try {
          const claims = await signIn('basic', { sub: 'u-600', preferred_username: 'fay', email: 'fay@corp.example' });
          assert.equal(claims.preferred_username, 'fay');
          assert.equal(basicUp.requests.at(-1)!.get('code_challenge'), null);
          // Two sign-ins in one browser: the provider's answer to the first delivered with the second's state.
          const jar = new FetchCookieJar();
          const reach = async (): Promise<URL> => {
            const login = await follow(jar, authorizeUrl());
            const b = providerButtons(await login.res.text());
            let url = new URL((await browse(jar, new URL(b.action, ts.baseUrl), { csrf: b.csrf, provider: 'basic' })).headers.get('location')!);
            while (!url.pathname.endsWith('/endpoint')) url = new URL((await browse(jar, url)).headers.get('location')!, url);
            return url;
          };
          basicUp.nextAccount = { sub: 'u-601', preferred_username: 'gil' };
          const first = await reach();
          const second = await reach();
          const swapped = new URL(second);
          swapped.searchParams.set('code', first.searchParams.get('code')!);
          const r = await browse(jar, swapped);
          assert.equal(r.status, 400);
          assert.equal(await ts.store.users.findByUsername('test', 'gil'), undefined);
        } finally {
          up = prev;
        }
      } finally {
        await basicUp.close();
      }
    });

    test('a provider of an organization makes its new users members; FORCE sync updates names at each sign-in', async () => {
      const org = await ts.store.organizations.findByAlias('test', 'acme');
      await updateIdentityProvider(ts.store, cliActor(), 'test', 'corp', { organizationId: org!.id, config: { syncMode: 'FORCE' } });
      try {
        const account = { sub: 'u-700', email: 'hal@acme.example', preferred_username: 'hal', given_name: 'Hal' };
        const claims = await signIn('corp', account);
        const user = await ts.store.users.findByUsername('test', 'hal');
        assert.equal(claims.sub, user!.id);
        assert.deepEqual((await ts.store.users.organizations(user!.id)).map((o) => o.alias), ['acme']);
        await signIn('corp', { ...account, given_name: 'Harold' });
        assert.equal((await ts.store.users.get(user!.id))!.firstName, 'Harold');
      } finally {
        await updateIdentityProvider(ts.store, cliActor(), 'test', 'corp', { organizationId: null, config: { syncMode: 'LEGACY' } });
      }
    });
  });
}
