import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, PASSWORD, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { FetchCookieJar, browse, followRedirects } from '../helpers/fetch-browser.js';
import { pageKind, parseForm } from '../helpers/flow.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { createClient, createUser } from '../../src/admin/operations.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { addUpstreamProvider } from '../helpers/broker-flow.js';

// Keycloak's account console "Linked accounts" -> "Link account", on the account page, against
// node-oidc-provider over real HTTP: the signed-in user goes to the provider and the account signed in
// there is linked to them. The link is bound to the browser and session that started it: a victim's
// browser made to finish an attacker's link links nothing.
for (const dialect of dialects()) {
  describe(`linking an account from the account page (${dialect})`, () => {
    let ts: TestServer;
    let up: Upstream;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/test/broker/corp/endpoint` });
      await addUpstreamProvider(ts, up, 'corp', { displayName: 'Corp SSO', linkOnly: true });
      await addUpstreamProvider(ts, up, 'off', { displayName: 'Switched off', enabled: false });
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    const ACCOUNT = (): URL => new URL('/auth/realms/test/account', ts.baseUrl);
    /** Posts a page's form and follows where it leads: the page reached. */
    async function submit(jar: FetchCookieJar, html: string, action: string | RegExp, fields: Record<string, string>): Promise<{ url: URL; status: number; html: string }> {
      const form = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)].find((m) => (typeof action === 'string' ? m[1]!.endsWith(action) : action.test(m[0])));
      assert.ok(form, `no form ${action} in ${html.slice(0, 300)}`);
      const csrf = /name="csrf" value="([^"]+)"/.exec(form[2]!)![1]!;
      const res = await browse(jar, new URL(form[1]!.replaceAll('&amp;', '&'), ts.baseUrl), { csrf, ...fields });
      if (res.status !== 303) return { url: new URL(form[1]!, ts.baseUrl), status: res.status, html: await res.text() };
      const at = await followRedirects(jar, new URL(res.headers.get('location')!, ts.baseUrl));
      return { url: at.url, status: at.res.status, html: await at.res.text() };
    }
    /** A user signed in on the account page in a new browser: the browser and the page. */
    async function signedIn(username: string, jar = new FetchCookieJar()): Promise<{ jar: FetchCookieJar; html: string }> {
      if (!(await ts.store.users.findByUsername('test', username))) await createUser(ts.store, { realmId: 'test', username, password: PASSWORD });
      const login = await browse(jar, ACCOUNT());
      const form = parseForm(await login.text());
      const res = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf, username, password: PASSWORD });
      const html = res.status === 303 ? await (await followRedirects(jar, new URL(res.headers.get('location')!, ts.baseUrl))).res.text() : await res.text();
      assert.equal(pageKind(html), 'account', html.slice(0, 300));
      return { jar, html };
    }
    /** Link account for Corp SSO: the page the browser is back on. */
    const link = (jar: FetchCookieJar, html: string) => submit(jar, html, /name="provider" value="corp"[\s\S]*Link account/, { provider: 'corp' });
    const linksOf = async (username: string) => (await ts.store.identityProviders.links((await ts.store.users.findByUsername('test', username))!.id)).map((l) => [l.identityProvider, l.federatedUserId]);

    test('Link account: the provider, then back on the account page with the account linked; an enabled link-only provider is offered, a disabled one is not', async () => {
      const { jar, html } = await signedIn('ulla');
      assert.match(html, /<h2>Linked accounts<\/h2>/);
      assert.match(html, /<strong>Corp SSO<\/strong> <span class="muted">Not linked<\/span>/);
      assert.doesNotMatch(html, /Switched off/);
      up.nextAccount = { sub: 'corp-ulla', email: 'ulla@corp.example', preferred_username: 'ulla.corp' };
      const back = await link(jar, html);
      assert.equal(back.url.pathname, '/auth/realms/test/account', back.html.slice(0, 300));
      assert.equal(back.status, 200);
      assert.match(back.html, /<p class="notice" role="status">Your Corp SSO account is linked: you can sign in with it from now on\.<\/p>/);
      assert.match(back.html, /<strong>Corp SSO<\/strong> <span class="muted">as ulla\.corp, linked /);
      assert.doesNotMatch(back.html, /Not linked/);
      assert.deepEqual(await linksOf('ulla'), [['corp', 'corp-ulla']]);
      // The request the provider received: PKCE and a state naming a link of the account page.
      const sent = up.requests.at(-1)!;
      assert.equal(sent.get('code_challenge_method'), 'S256');
      assert.match(sent.get('state') ?? '', /^account:[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{43}$/);
      const events = await ts.store.events.list('test', { types: ['FEDERATED_IDENTITY_LINK'] });
      assert.equal(events[0]?.outcome, 'success');
      assert.equal(events[0]?.clientId, 'account');
      assert.match(events[0]?.reason ?? '', /from the account page/);
      // The notice is said once.
      assert.doesNotMatch(await (await browse(jar, ACCOUNT())).text(), /is linked: you can sign in/);
      // The provider's answer again (the browser's back button): nothing pending any more.
      const replay = await browse(jar, new URL(`/auth/realms/test/broker/corp/endpoint?${new URLSearchParams({ state: sent.get('state')!, code: 'x' })}`, ts.baseUrl));
      assert.equal(replay.status, 400);
      assert.match(await replay.text(), /Sign-in not recognized/);
    });

    test("cancelled at the provider; an account there already another user's; an unknown provider: said on the account page, nothing linked", async () => {
      const { jar, html } = await signedIn('viktor');
      up.nextAccount = undefined;
      const cancelled = await link(jar, html);
      assert.match(cancelled.html, /Linking your Corp SSO account was cancelled\./);
      up.nextAccount = { sub: 'corp-ulla', email: 'ulla@corp.example' };
      const elsewhere = await link(jar, cancelled.html);
      assert.match(elsewhere.html, /This account at Corp SSO is already linked to another user\./);
      assert.deepEqual(await linksOf('viktor'), []);
      assert.deepEqual(await linksOf('ulla'), [['corp', 'corp-ulla']]);
      const failures = (await ts.store.events.list('test', { types: ['FEDERATED_IDENTITY_LINK'] })).filter((e) => e.outcome === 'failure');
      assert.match(failures[0]?.reason ?? '', /from the account page: the account there is linked to another user/);
      for (const provider of ['off', 'nope']) {
        const refused = await submit(jar, elsewhere.html, '/linked-accounts/link', { provider });
        assert.equal(refused.status, 200);
        assert.match(refused.html, new RegExp(`Your ${provider} account could not be linked\\. Try again\\.`));
      }
      // Without the form's CSRF token: back to the page, nothing started.
      const forged = await browse(jar, new URL('/auth/realms/test/account/linked-accounts/link', ts.baseUrl), { csrf: 'forged', provider: 'corp' });
      assert.equal(forged.status, 303);
      assert.equal(forged.headers.get('location'), '/auth/realms/test/account');
    });

    test("an attacker's link finished in a victim's browser, or after the browser's session changed, links nothing", async () => {
      // The attacker starts a link in their own browser and keeps the provider's address.
      const attacker = await signedIn('mallory');
      const form = /<form method="post" action="([^"]+\/linked-accounts\/link)">[\s\S]*?name="csrf" value="([^"]+)"/.exec(attacker.html)!;
      const started = await browse(attacker.jar, new URL(form[1]!, ts.baseUrl), { csrf: form[2]!, provider: 'corp' });
      assert.equal(started.status, 303);
      const atProvider = new URL(started.headers.get('location')!);
      assert.equal(atProvider.origin, new URL(up.issuer).origin);
      // The victim's browser, signed in, is made to go there; the provider signs in the attacker's account.
      const victim = await signedIn('victoria');
      up.nextAccount = { sub: 'corp-mallory', email: 'mallory@corp.example' };
      const landed = await followRedirects(victim.jar, atProvider);
      assert.equal(landed.res.status, 400);
      assert.match(await landed.res.text(), /Sign-in not recognized/);
      assert.deepEqual(await linksOf('victoria'), []);
      assert.deepEqual(await linksOf('mallory'), []);

      // Started, then the browser signs out and another user signs in in it: the link is not theirs.
      const shared = await signedIn('walter');
      const f = /<form method="post" action="([^"]+\/linked-accounts\/link)">[\s\S]*?name="csrf" value="([^"]+)"/.exec(shared.html)!;
      const going = await browse(shared.jar, new URL(f[1]!, ts.baseUrl), { csrf: f[2]!, provider: 'corp' });
      const provider = new URL(going.headers.get('location')!);
      const mine = /<strong>This browser<\/strong>[\s\S]*?<form method="post" action="([^"]+)">[\s\S]*?name="csrf" value="([^"]+)"[\s\S]*?name="session_id" value="([^"]+)"/.exec(shared.html)!;
      const out = await browse(shared.jar, new URL(mine[1]!, ts.baseUrl), { csrf: mine[2]!, session_id: mine[3]! });
      assert.ok(out.status < 400);
      await signedIn('xenia', shared.jar);
      up.nextAccount = { sub: 'corp-walter', email: 'walter@corp.example' };
      const later = await followRedirects(shared.jar, provider);
      assert.equal(later.res.status, 400);
      assert.deepEqual(await linksOf('walter'), []);
      assert.deepEqual(await linksOf('xenia'), []);
    });

    test("a realm with Keycloak's account client roles: only a user with manage-account or manage-account-links is offered a link", async () => {
      await createClient(ts.store, { realmId: 'test', clientId: 'account', redirectUris: ['https://account.example.com/cb'] });
      for (const name of ['manage-account', 'manage-account-links']) await createRole(ts.store, { realmId: 'test', clientId: 'account', name }, cliActor());
      const { jar, html } = await signedIn('yusuf');
      assert.doesNotMatch(html, /Link account/);
      const direct = await browse(jar, new URL('/auth/realms/test/account/linked-accounts/link', ts.baseUrl), { csrf: parseForm(html).csrf, provider: 'corp' });
      assert.equal(direct.status, 200);
      assert.match(await direct.text(), /Your corp account could not be linked/);
      await grantRolesByName(ts.store, { realmId: 'test', userId: (await ts.store.users.findByUsername('test', 'yusuf'))!.id, clientId: 'account', names: ['manage-account-links'] }, cliActor());
      const page = await (await browse(jar, ACCOUNT())).text();
      up.nextAccount = { sub: 'corp-yusuf' };
      const back = await link(jar, page);
      assert.match(back.html, /Your Corp SSO account is linked/);
      assert.deepEqual(await linksOf('yusuf'), [['corp', 'corp-yusuf']]);
    });
  });
}
