// Identity providers in the admin console over real HTTP (inject) on both databases: the realm's
// providers listed with their redirect URI, one added from its issuer (OpenID Connect Discovery against
// node-oidc-provider) or from its endpoints, edited, disabled, deleted (its alias typed again); a user's
// linked accounts listed and unlinked; CSRF, role refusals, escaping, admin events, the secret never shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, consoleEvents, csrfOf, setup, signIn } from '../helpers/console.js';
import { startUpstream } from '../helpers/upstream-provider.js';
import { providerSecret } from '../../src/admin/operations/identity-providers.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: identity providers added (discovered or typed), edited, disabled and deleted; a user's linked accounts unlinked`, async () => {
    const ts = await setup(dialect);
    const up = await startUpstream({ redirectUri: `${ts.config.authUrl}/auth/realms/${REALM}/broker/corp/endpoint` });
    try {
      const jar = await signIn(ts, ADMIN);
      const listUrl = `${CONSOLE}/realms/${REALM}/identity-providers`;
      const corpUrl = `${listUrl}/corp`;
      let page = (await inject(ts.app, jar, 'GET', listUrl)).body;
      assert.match(page, /<h1>Identity providers<\/h1>/);
      assert.match(page, /No identity providers yet\./);
      assert.deepEqual([...page.matchAll(/<a href="([^"]+)" aria-current="page">/g)].map((m) => m[1]), [listUrl], 'the navigation marks the section');
      const csrf = await csrfOf(ts, jar, listUrl);
      const add = { alias: 'corp', displayName: '<script>alert(1)</script>', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret, scope: 'openid email profile', pkce: 'on' };

      // Without the page's CSRF token: refused, nothing stored.
      for (const forged of [{}, { csrf: 'forged' }] as Array<Record<string, string>>) {
        const res = await inject(ts.app, jar, 'POST', listUrl, { ...add, ...forged });
        assert.equal(res.statusCode, 403);
      }
      assert.deepEqual(await ts.store.identityProviders.list(REALM), []);

      // Refusals are said above the form, which keeps what was typed (never the secret).
      for (const [form, reason] of [
        [{ ...add, clientSecret: '' }, /Give the client secret the provider issued to Realmgate\./],
        [{ ...add, alias: 'bad alias' }, /alias must be 1 to 255 letters/],
        [{ ...add, issuer: '' }, /Give the provider&#39;s issuer \(its endpoints are then discovered\), or its authorization and token URLs\./],
        [{ ...add, issuer: 'http://idp.example.com' }, /config\.issuer must be an https URL/],
        [{ ...add, clientAuthMethod: 'private_key_jwt' }, /is not supported/],
      ] as const) {
        const res = await inject(ts.app, jar, 'POST', listUrl, { csrf, ...form });
        assert.equal(res.statusCode, 400, res.body.slice(0, 300));
        assert.match(res.body, /class="error" role="alert">/);
        assert.match(res.body, reason);
        assert.match(res.body, /id="clientId" name="clientId" autocomplete="off" required value="realmgate-broker"/);
        assert.ok(!res.body.includes(up.clientSecret), 'the secret is not written back');
      }
      assert.deepEqual(await ts.store.identityProviders.list(REALM), []);

      // From the issuer: the endpoints are discovered; the display name is escaped everywhere.
      let res = await inject(ts.app, jar, 'POST', listUrl, { csrf, ...add });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      assert.equal(res.headers.location, `${corpUrl}?done=idp-created`);
      const stored = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.equal(stored.config.authorizationUrl, `${up.issuer}/auth`);
      assert.equal(stored.config.jwksUrl, `${up.issuer}/jwks`);
      assert.deepEqual([stored.config.validateSignature, stored.config.pkceEnabled, stored.config.pkceMethod], ['true', 'true', 'S256']);
      assert.equal(await providerSecret(ts.store, stored), up.clientSecret);
      const redirectUri = `${ts.config.authUrl}/auth/realms/${REALM}/broker/corp/endpoint`;
      page = (await inject(ts.app, jar, 'GET', `${corpUrl}?done=idp-created`)).body;
      assert.match(page, /The identity provider was added\. Register its redirect URI at the provider\./);
      assert.ok(page.includes(`<dt>Redirect URI</dt><dd><code>${redirectUri}</code></dd>`));
      assert.ok(page.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !page.includes('<script>alert'), 'the display name is escaped');
      assert.ok(!page.includes(up.clientSecret), 'the secret is never shown');
      assert.match(page, /<dt>Client secret<\/dt><dd>set \(never shown\)<\/dd>/);
      page = (await inject(ts.app, jar, 'GET', listUrl)).body;
      assert.ok(page.includes(`<td data-label="Alias"><a href="${corpUrl}">corp</a></td><td data-label="Display name">&lt;script&gt;alert(1)&lt;/script&gt;</td><td data-label="State">enabled</td><td data-label="Redirect URI"><code>${redirectUri}</code></td>`), page);
      assert.ok(!page.includes('<script>alert'));

      // The same alias again: refused.
      res = await inject(ts.app, jar, 'POST', listUrl, { csrf, ...add });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /identity provider corp already exists in realm test/);

      // From its endpoints, without discovery and without keys: no signature check, PKCE off, of an organization.
      const acme = (await ts.store.organizations.findByAlias(REALM, 'acme'))!;
      res = await inject(ts.app, jar, 'POST', listUrl, {
        csrf, alias: 'typed', issuer: 'https://login.example.com', authorizationUrl: 'https://login.example.com/authorize', tokenUrl: 'https://login.example.com/token',
        clientId: 'rg', clientSecret: 'typed secret', clientAuthMethod: 'client_secret_basic', scope: 'openid', organization: acme.id, linkOnly: 'on',
      });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const typed = (await ts.store.identityProviders.get(REALM, 'typed'))!;
      assert.deepEqual([typed.config.validateSignature, typed.config.pkceEnabled, typed.config.clientAuthMethod, typed.organizationId, typed.linkOnly], ['false', 'false', 'client_secret_basic', acme.id, true]);
      page = (await inject(ts.app, jar, 'GET', `${listUrl}/typed`)).body;
      assert.match(page, /<dt>Organization<\/dt><dd>acme<\/dd>/);
      assert.match(page, /<option value="client_secret_basic" selected>/);

      // Edited: what the form holds is saved; the secret is kept when left empty, replaced when given.
      const csrfCorp = await csrfOf(ts, jar, corpUrl);
      const edit = { csrf: csrfCorp, displayName: 'Corp SSO', issuer: up.issuer, authorizationUrl: `${up.issuer}/auth`, tokenUrl: `${up.issuer}/token`, userInfoUrl: `${up.issuer}/me`, jwksUrl: `${up.issuer}/jwks`, clientId: up.clientId, clientSecret: '', scope: 'openid email', pkce: 'on', hideOnLogin: 'on' };
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/update`, edit);
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      assert.equal(res.headers.location, `${corpUrl}?done=idp-saved`);
      let corp = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.deepEqual([corp.displayName, corp.hideOnLogin, corp.trustEmail, corp.config.defaultScope], ['Corp SSO', true, false, 'openid email']);
      assert.equal(await providerSecret(ts.store, corp), up.clientSecret);
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/update`, { ...edit, tokenUrl: 'ftp://x.example/t' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /config\.tokenUrl must be an https URL/);
      assert.ok(res.body.includes('value="ftp://x.example/t"'), 'the form keeps what was typed');
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/update`, { ...edit, clientSecret: 'rotated secret' });
      corp = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.equal(await providerSecret(ts.store, corp), 'rotated secret');
      assert.match((await inject(ts.app, jar, 'GET', listUrl)).body, /<td data-label="State">enabled, hidden on the login page<\/td>/);

      // Disabled and enabled.
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/disable`, { csrf: csrfCorp });
      assert.equal(res.headers.location, `${corpUrl}?done=idp-disabled`);
      assert.equal((await ts.store.identityProviders.get(REALM, 'corp'))!.enabled, false);
      assert.match((await inject(ts.app, jar, 'GET', corpUrl)).body, /<button type="submit">Enable provider<\/button>/);
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/enable`, { csrf: csrfCorp });
      assert.equal((await ts.store.identityProviders.get(REALM, 'corp'))!.enabled, true);

      // A user's linked accounts: listed (escaped), unlinked one at a time, only the user's own.
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      await ts.store.identityProviders.link({ realmId: REALM, identityProvider: 'corp', federatedUserId: 'ext-1', federatedUsername: 'alice<b>corp</b>', userId: alice.id, createdAt: 1_700_000_000 });
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${alice.id}`;
      page = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(page, /<h2>Linked accounts<\/h2>/);
      assert.ok(page.includes(`<a href="${corpUrl}">corp</a><span class="muted">alice&lt;b&gt;corp&lt;/b&gt; · id ext-1 · linked 2023-11-14 22:13:20 UTC</span>`), page);
      const userCsrf = /name="csrf" value="([^"]*)"/.exec(page)![1]!;
      res = await inject(ts.app, jar, 'POST', `${userUrl}/federated-identity/remove`, { provider: 'corp' });
      assert.equal(res.statusCode, 403);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/federated-identity/remove`, { csrf: userCsrf, provider: 'typed' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /That linked account does not exist \(any more\) for this user\./);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/federated-identity/remove`, { csrf: userCsrf, provider: 'corp' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=link-removed`);
      assert.deepEqual(await ts.store.identityProviders.links(alice.id), []);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=link-removed`)).body, /The linked account was removed[\s\S]*No linked accounts at identity providers\./);

      // Deleted once its alias is typed again; its links go with it.
      await ts.store.identityProviders.link({ realmId: REALM, identityProvider: 'corp', federatedUserId: 'ext-1', federatedUsername: null, userId: alice.id, createdAt: 1 });
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/delete`, { csrf: csrfCorp, confirm: 'Corp' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Type the alias to confirm that the provider is to be deleted\./);
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/delete`, { csrf: 'forged', confirm: 'corp' });
      assert.equal(res.statusCode, 403);
      assert.ok(await ts.store.identityProviders.get(REALM, 'corp'));
      res = await inject(ts.app, jar, 'POST', `${corpUrl}/delete`, { csrf: csrfCorp, confirm: 'corp' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${listUrl}?done=idp-deleted`);
      assert.equal(await ts.store.identityProviders.get(REALM, 'corp'), undefined);
      assert.deepEqual(await ts.store.identityProviders.links(alice.id), []);
      assert.equal((await inject(ts.app, jar, 'GET', corpUrl)).statusCode, 404);

      const events = await consoleEvents(ts);
      for (const e of [
        'CREATE IDENTITY_PROVIDER identity-provider/instances/corp',
        'CREATE IDENTITY_PROVIDER identity-provider/instances/typed',
        'UPDATE IDENTITY_PROVIDER identity-provider/instances/corp',
        `DELETE USER users/${alice.id}/federated-identity/corp`,
        'DELETE IDENTITY_PROVIDER identity-provider/instances/corp',
      ]) {
        assert.ok(events.includes(e), `${e} in ${events.join('\n')}`);
      }
      const log = JSON.stringify(await ts.store.adminEvents.list(REALM, {}));
      for (const secret of [up.clientSecret, 'typed secret', 'rotated secret']) assert.ok(!log.includes(secret), 'no secret in the admin events');

      // The realm's first sign-in review (Keycloak's Review Profile mode): a select on the list page.
      const reviewUrl = `${listUrl}/review-profile`;
      page = (await inject(ts.app, jar, 'GET', listUrl)).body;
      assert.match(page, /<h2>First sign-in review<\/h2>/);
      assert.match(page, /<option value="missing" selected>When something is missing \(default\)<\/option>/);
      assert.equal((await inject(ts.app, jar, 'POST', reviewUrl, { reviewProfile: 'on' })).statusCode, 403, 'no CSRF token');
      res = await inject(ts.app, jar, 'POST', reviewUrl, { csrf, reviewProfile: 'sometimes' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /must be one of missing, on, off/);
      res = await inject(ts.app, jar, 'POST', reviewUrl, { csrf, reviewProfile: 'on' });
      assert.equal(res.headers.location, `${listUrl}?done=review-saved`, `${res.statusCode} ${res.body.slice(0, 600)}`);
      assert.equal((await ts.store.realms.get(REALM))!.brokerReviewProfile, 'on');
      page = (await inject(ts.app, jar, 'GET', `${listUrl}?done=review-saved`)).body;
      assert.match(page, /The first sign-in review setting was saved\./);
      assert.match(page, /<option value="on" selected>Always/);

      // An admin without the identity-provider roles: the pages are refused, and so are their forms.
      const viewer = await signIn(ts, VIEWER);
      const masterList = `${CONSOLE}/realms/master/identity-providers`;
      assert.equal((await inject(ts.app, viewer, 'GET', masterList)).statusCode, 403);
      const viewerCsrf = await csrfOf(ts, viewer, `${CONSOLE}/realms/master/users`);
      assert.equal((await inject(ts.app, viewer, 'POST', masterList, { csrf: viewerCsrf, ...add })).statusCode, 403);
      assert.deepEqual(await ts.store.identityProviders.list('master'), []);
      assert.equal((await inject(ts.app, viewer, 'GET', listUrl)).statusCode, 403);
      assert.equal((await inject(ts.app, viewer, 'POST', reviewUrl, { csrf: viewerCsrf, reviewProfile: 'off' })).statusCode, 403);
      assert.equal((await ts.store.realms.get(REALM))!.brokerReviewProfile, 'on');
    } finally {
      await up.close();
      await ts.close();
    }
  });
}

for (const dialect of dialects()) {
  test(`[${dialect}] console: Google, GitHub and Microsoft providers added from a client id and secret; their type kept when edited`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const listUrl = `${CONSOLE}/realms/${REALM}/identity-providers`;
      const csrf = await csrfOf(ts, jar, listUrl);
      const page = (await inject(ts.app, jar, 'GET', listUrl)).body;
      assert.match(page, /<select id="providerType" name="providerType"><option value="oidc" selected>OpenID Connect<\/option><option value="google">Google<\/option><option value="github">GitHub<\/option>/);

      // Google: no issuer, no endpoints; the form's OpenID Connect scope left as it was gives Google's.
      let res = await inject(ts.app, jar, 'POST', listUrl, { csrf, alias: 'google', providerType: 'google', clientId: 'g.apps.googleusercontent.com', clientSecret: 'g-secret', hostedDomain: 'corp.example', scope: 'openid email profile', pkce: 'on' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const google = (await ts.store.identityProviders.get(REALM, 'google'))!;
      assert.equal(google.providerId, 'google');
      assert.equal(google.config.authorizationUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
      assert.equal(google.config.hostedDomain, 'corp.example');
      assert.equal(google.config.defaultScope, 'openid profile email');
      assert.equal(await providerSecret(ts.store, google), 'g-secret');

      // GitHub: its endpoints and scope.
      res = await inject(ts.app, jar, 'POST', listUrl, { csrf, alias: 'github', providerType: 'github', clientId: 'Iv1.abc', clientSecret: 'gh-secret', scope: 'openid email profile' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const github = (await ts.store.identityProviders.get(REALM, 'github'))!;
      assert.deepEqual([github.providerId, github.config.tokenUrl, github.config.defaultScope], ['github', 'https://github.com/login/oauth/access_token', 'user:email']);

      // Edited: the page names the type; saving keeps it (and GitHub's endpoints), whatever the form says.
      const githubUrl = `${listUrl}/github`;
      const edit = (await inject(ts.app, jar, 'GET', githubUrl)).body;
      assert.match(edit, /<p>Type: <strong>GitHub<\/strong><\/p>/);
      assert.match(edit, /<dt>Type<\/dt><dd>GitHub<\/dd>/);
      assert.doesNotMatch(edit, /id="providerType"|id="hostedDomain"/);
      const googlePage = (await inject(ts.app, jar, 'GET', `${listUrl}/google`)).body;
      assert.match(googlePage, /<dt>Hosted domains<\/dt><dd>corp\.example<\/dd>/);
      assert.match(googlePage, /id="hostedDomain" name="hostedDomain" autocomplete="off" value="corp\.example"/);
      res = await inject(ts.app, jar, 'POST', `${githubUrl}/update`, { csrf, providerType: 'oidc', displayName: 'GitHub.com', clientId: 'Iv1.def', scope: 'user:email read:org', authorizationUrl: 'https://evil.example/authorize' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const saved = (await ts.store.identityProviders.get(REALM, 'github'))!;
      assert.deepEqual([saved.providerId, saved.displayName, saved.config.clientId, saved.config.defaultScope, saved.config.authorizationUrl], ['github', 'GitHub.com', 'Iv1.def', 'user:email read:org', 'https://github.com/login/oauth/authorize']);
      res = await inject(ts.app, jar, 'POST', `${listUrl}/google/update`, { csrf, clientId: 'g.apps.googleusercontent.com', hostedDomain: '', scope: 'openid profile email', issuer: google.config.issuer!, authorizationUrl: google.config.authorizationUrl!, tokenUrl: google.config.tokenUrl!, userInfoUrl: google.config.userInfoUrl!, jwksUrl: google.config.jwksUrl! });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      assert.equal((await ts.store.identityProviders.get(REALM, 'google'))!.config.hostedDomain, '', 'any Google account now');

      // Microsoft: its tenant from the form's field, the endpoints made from it; its page names the tenant.
      res = await inject(ts.app, jar, 'POST', listUrl, { csrf, alias: 'entra', providerType: 'microsoft', tenantId: 'contoso.example', clientId: 'ms-app', clientSecret: 'ms-secret', scope: 'openid email profile', clientAuthMethod: 'client_secret_post', pkce: 'on' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 400));
      const entra = (await ts.store.identityProviders.get(REALM, 'entra'))!;
      assert.deepEqual([entra.providerId, entra.config.tenantId, entra.config.authorizationUrl, entra.config.defaultScope], ['microsoft', 'contoso.example', 'https://login.microsoftonline.com/contoso.example/oauth2/v2.0/authorize', 'User.read']);
      const entraPage = (await inject(ts.app, jar, 'GET', `${listUrl}/entra`)).body;
      assert.match(entraPage, /<dt>Tenant<\/dt><dd>contoso\.example<\/dd>/);
      assert.match(entraPage, /<dt>ID token signature<\/dt><dd>none \(Microsoft has no ID tokens/);
      assert.match(entraPage, /<label for="tenantId">Tenant \(Microsoft only, optional\)<\/label>/, 'the edit form has the tenant');
      assert.doesNotMatch(entraPage, /<label for="hostedDomain">/, 'and not Google\'s hosted domains');

      // A type that is not one: refused above the form, nothing stored.
      res = await inject(ts.app, jar, 'POST', listUrl, { csrf, alias: 'tw', providerType: 'twitter', clientId: 'x', clientSecret: 'y' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /There is no provider type &quot;twitter&quot;\./);
      assert.equal(await ts.store.identityProviders.get(REALM, 'tw'), undefined);
    } finally {
      await ts.close();
    }
  });
}
