import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, PASSWORD, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { FetchCookieJar, browse, followRedirects } from '../helpers/fetch-browser.js';
import { pageKind, parseForm } from '../helpers/flow.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { createClient, createUser, updateRealm } from '../../src/admin/operations.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { addUpstreamProvider } from '../helpers/broker-flow.js';

// Keycloak 26's client-initiated account linking (kc_action=idp_link:<alias>) against node-oidc-provider
// over real HTTP: the signed-in user confirms, signs in at the provider, and that account is linked to
// them; the client learns kc_action_status. A link-only provider (never on the login page) links too.
for (const dialect of dialects()) {
  describe(`kc_action=idp_link (${dialect})`, () => {
    let ts: TestServer;
    let up: Upstream;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      await updateRealm(ts.store, { realmId: 'test', settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/test/broker/corp/endpoint` });
      await addUpstreamProvider(ts, up, 'corp', { displayName: 'Corp SSO', linkOnly: true });
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    const authorizeUrl = (extra: Record<string, string> = {}): URL =>
      new URL(`/auth/realms/test/protocol/openid-connect/auth?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1', ...extra })}`, ts.baseUrl);
    const follow = (jar: FetchCookieJar, url: URL) => followRedirects(jar, url, (u) => u.host === 'app.example.com');
    /** Posts a page's form and follows where it leads, allowing consent on the way; the client's URL or the page reached. */
    async function post(jar: FetchCookieJar, html: string, fields: Record<string, string>): Promise<{ url: URL; html: string }> {
      const form = parseForm(html);
      const res = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, ...fields });
      if (res.status !== 303) return { url: new URL(form.action, ts.baseUrl), html: await res.text() };
      let at = await follow(jar, new URL(res.headers.get('location')!, ts.baseUrl));
      let page = at.url.host === 'app.example.com' ? '' : await at.res.text();
      if (page && pageKind(page) === 'consent') {
        const c = parseForm(page);
        const allowed = await browse(jar, new URL(c.action, ts.baseUrl), { csrf: c.csrf, decision: 'allow' });
        at = await follow(jar, new URL(allowed.headers.get('location')!, ts.baseUrl));
        page = at.url.host === 'app.example.com' ? '' : await at.res.text();
      }
      return { url: at.url, html: page };
    }
    /** A user signed in at the application in a new browser. */
    async function signedIn(username: string): Promise<FetchCookieJar> {
      await createUser(ts.store, { realmId: 'test', username, password: PASSWORD });
      const jar = new FetchCookieJar();
      const login = await follow(jar, authorizeUrl());
      const back = await post(jar, await login.res.text(), { username, password: PASSWORD });
      assert.ok(back.url.searchParams.get('code'), back.html.slice(0, 300));
      return jar;
    }
    /** kc_action=idp_link:<alias> in that browser: the page shown (the session is recent). */
    async function askLink(jar: FetchCookieJar, alias = 'corp'): Promise<{ url: URL; html: string }> {
      const at = await follow(jar, authorizeUrl({ kc_action: `idp_link:${alias}` }));
      return { url: at.url, html: at.url.host === 'app.example.com' ? '' : await at.res.text() };
    }
    const linksOf = async (username: string) => (await ts.store.identityProviders.links((await ts.store.users.findByUsername('test', username))!.id)).map((l) => [l.identityProvider, l.federatedUserId]);

    test('Continue, then the provider: its account is linked to the signed-in user and the client gets kc_action_status=success', async () => {
      const jar = await signedIn('lena');
      const page = await askLink(jar);
      assert.match(page.html, /<h1>Link your account<\/h1>/);
      assert.match(page.html, /Web App asks you to link your account <strong>lena<\/strong> with your account at <strong>Corp SSO<\/strong>\./);
      up.nextAccount = { sub: 'corp-lena', email: 'lena@corp.example', preferred_username: 'lena.corp' };
      const back = await post(jar, page.html, { continue: '1' });
      assert.equal(back.url.host, 'app.example.com', back.html.slice(0, 400));
      assert.equal(back.url.searchParams.get('kc_action_status'), 'success');
      assert.equal(back.url.searchParams.get('kc_action'), 'idp_link');
      assert.ok(back.url.searchParams.get('code'));
      assert.deepEqual(await linksOf('lena'), [['corp', 'corp-lena']]);
      const events = await ts.store.events.list('test', { types: ['FEDERATED_IDENTITY_LINK'] });
      assert.equal(events[0]?.outcome, 'success');
      assert.equal(events[0]?.username, 'lena');
      // The same account again: linked already, success all the same.
      const again = await post(jar, (await askLink(jar)).html, { continue: '1' });
      assert.equal(again.url.searchParams.get('kc_action_status'), 'success');
      assert.deepEqual(await linksOf('lena'), [['corp', 'corp-lena']]);
    });

    test("another user's account at the provider is refused on a page; Cancel goes back with cancelled; a form without the CSRF token does nothing", async () => {
      const jar = await signedIn('max');
      const page = await askLink(jar);
      const forged = await browse(jar, new URL(parseForm(page.html).action, ts.baseUrl), { csrf: 'forged', continue: '1' });
      assert.equal(forged.status, 403);
      const cancelled = await post(jar, page.html, { cancel: '1' });
      assert.equal(cancelled.url.searchParams.get('kc_action_status'), 'cancelled');
      assert.deepEqual(await linksOf('max'), []);
      // Cancelled at the provider (access_denied): back with cancelled too.
      up.nextAccount = undefined;
      const declined = await post(jar, (await askLink(jar)).html, { continue: '1' });
      assert.equal(declined.url.host, 'app.example.com', declined.html.slice(0, 300));
      assert.equal(declined.url.searchParams.get('kc_action_status'), 'cancelled');
      assert.deepEqual(await linksOf('max'), []);

      up.nextAccount = { sub: 'corp-lena', email: 'lena@corp.example', preferred_username: 'lena.corp' };
      const refused = await post(jar, (await askLink(jar)).html, { continue: '1' });
      assert.notEqual(refused.url.host, 'app.example.com');
      assert.match(refused.html, /This account at Corp SSO is already linked to another user\./);
      assert.deepEqual(await linksOf('max'), []);
      assert.deepEqual(await linksOf('lena'), [['corp', 'corp-lena']]);
      const failures = (await ts.store.events.list('test', { types: ['FEDERATED_IDENTITY_LINK'] })).filter((e) => e.outcome === 'failure');
      assert.match(failures[0]?.reason ?? '', /linked to another user/);
    });

    test('an unknown provider, or a user without the account roles a realm has: the action is ignored, as Keycloak ignores it; a parameter on another action is refused', async () => {
      const jar = await signedIn('nina');
      const ignored = await askLink(jar, 'no-such-provider');
      assert.equal(ignored.url.host, 'app.example.com');
      assert.ok(ignored.url.searchParams.get('code'));
      assert.equal(ignored.url.searchParams.get('kc_action_status'), null);
      const bad = await follow(jar, authorizeUrl({ kc_action: 'UPDATE_PASSWORD:x' }));
      assert.equal(bad.url.searchParams.get('error'), 'invalid_request');
      assert.match(bad.url.searchParams.get('error_description') ?? '', /idp_link:<identity provider alias>/);

      // A realm with Keycloak's account client and its roles (imported with the built-in clients): only a
      // user with manage-account or manage-account-links is asked; for the others the action is ignored.
      await createClient(ts.store, { realmId: 'test', clientId: 'account', redirectUris: ['https://account.example.com/cb'] });
      for (const name of ['manage-account', 'manage-account-links']) await createRole(ts.store, { realmId: 'test', clientId: 'account', name }, cliActor());
      const without = await askLink(jar);
      assert.equal(without.url.host, 'app.example.com');
      assert.equal(without.url.searchParams.get('kc_action_status'), null);
      await grantRolesByName(ts.store, { realmId: 'test', userId: (await ts.store.users.findByUsername('test', 'nina'))!.id, clientId: 'account', names: ['manage-account-links'] }, cliActor());
      assert.match((await askLink(jar)).html, /<h1>Link your account<\/h1>/);
    });
  });
}
