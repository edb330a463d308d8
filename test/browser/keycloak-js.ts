// keycloak-js 26 (from node_modules, unchanged) in Debian's chromium, on a page of ANOTHER origin than
// the server, with default init options apart from url, realm and clientId. The page's script and the
// registration command are the code blocks of docs/guide-single-page-app.md.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { cliRunner } from '../helpers/cli.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { changeRoleMappings, createRole } from '../../src/admin/operations/roles.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { updateUser } from '../../src/admin/operations/users.js';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { CHROMIUM, DESKTOP, LAUNCH_ARGS, SKIP_REASON, checkLayout, heading, signInOnPage } from '../helpers/browser.js';
import { OTP_TOOLS_MISSING, oathtoolCode } from '../helpers/otp.js';
import { startUpstream } from '../helpers/upstream-provider.js';
import { Translator } from '../../src/i18n/translator.js';
import { createIdentityProvider, discoverProvider } from '../../src/admin/operations/identity-providers.js';

const GUIDE = fs.readFileSync('docs/guide-single-page-app.md', 'utf8');
const KEYCLOAK_JS = fs.readFileSync('node_modules/keycloak-js/lib/keycloak.js', 'utf8');

/** The fenced code blocks of the guide with the given language. */
function codeBlocks(lang: string): string[] {
  return [...GUIDE.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** The guide's placeholders, replaced by this test's server, realm and page. */
function localize(text: string, ts: TestServer, appOrigin: string): string {
  return text.replaceAll('https://auth.example.com', ts.baseUrl).replaceAll('https://spa.example.com', appOrigin).replaceAll('myrealm', REALM);
}

/** The application: one page, keycloak-js, and the guide's script, on its own port (another origin). */
async function startApp(script: () => string): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/keycloak.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(KEYCLOAK_JS);
    }
    if (path === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(script());
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      // The import map resolves the bare specifier of the guide's `import Keycloak from 'keycloak-js'`.
      return res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>My SPA</title>
<script type="importmap">{"imports":{"keycloak-js":"/keycloak.js"}}</script>
<script type="module" src="/app.js"></script></head><body><p id="status">Loading</p></body></html>`);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The guide's registration command, run through the real CLI against the test database. */
async function register(ts: TestServer, appOrigin: string): Promise<void> {
  const command = codeBlocks('sh')[0] ?? '';
  assert.ok(command.startsWith('realmgate client create'), 'the guide registers the client first');
  const args = localize(command, ts, appOrigin)
    .trim()
    .replace(/^realmgate /, '')
    .match(/"[^"]*"|\S+/g)!
    .map((a) => a.replace(/^"|"$/g, ''));
  cliRunner(() => ts.db.url).ok(args);
}

let browser: Browser | undefined;
before(async () => {
  // The PostgreSQL half without TEST_DATABASE_URL has no tests: a chromium launched for none was never
  // closed (node:test then runs no `after`), and the file ran into its 120 s limit.
  if (dialects().length === 0) return;
  if (fs.existsSync(CHROMIUM)) browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
});
after(async () => {
  await browser?.close();
});

for (const dialect of dialects()) {
  describe(`keycloak-js from another origin (${dialect})`, { skip: fs.existsSync(CHROMIUM) ? false : SKIP_REASON }, () => {
    let ts: TestServer;
    let app: { origin: string; close(): Promise<void> };
    let context: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];

    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      let origin = '';
      app = await startApp(() => localize(codeBlocks('js')[0]!, ts, origin));
      origin = app.origin;
      assert.notEqual(new URL(app.origin).origin, new URL(ts.baseUrl).origin);
      await register(ts, app.origin);
      context = await browser!.newContext({ viewport: DESKTOP, locale: 'en-US' });
      context.setDefaultTimeout(15_000);
      page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      // Every failed request but the browser's own favicon probe is a defect.
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) pageErrors.push(`${r.status()} ${r.url()}`);
      });
    });
    after(async () => {
      await context?.close();
      await app?.close();
      await ts?.close();
    });

    /** A public client always asks for consent; then the user's organization, when there is a choice to make. */
    async function consentAndOrganization(): Promise<void> {
      await page.getByRole('button', { name: 'Allow' }).click();
      const org = page.getByRole('radio').first();
      if (await org.isVisible().catch(() => false)) {
        await org.check();
        await page.getByRole('button', { name: 'Continue' }).click();
      }
    }

    test('the registered client has the web origin of its redirect URI', async () => {
      const client = await ts.store.clients.get(REALM, 'my-spa');
      assert.ok(client?.public);
      assert.deepEqual(client.webOrigins, ['+']);
      assert.deepEqual(client.redirectUris, [`${app.origin}/`]);
    });

    test('init with login-required: login, consent and organization pages, then back with tokens', async () => {
      await page.goto(`${app.origin}/`);
      await page.waitForURL((u) => u.origin === ts.baseUrl);
      assert.match(await heading(page), /^Sign in/);
      // By email, in other letters (loginWithEmailAllowed, on by default as in Keycloak): the subject is alice's id.
      await signInOnPage(page, 'Alice@Example.com', ts.user.password);
      await consentAndOrganization();
      await page.waitForURL((u) => u.origin === app.origin);
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Signed in'));
      const state = await page.evaluate(() => {
        const kc = (window as unknown as { keycloak: Record<string, unknown> }).keycloak;
        return { authenticated: kc.authenticated, subject: kc.subject, sessionId: kc.sessionId, refreshTyp: (kc.refreshTokenParsed as { typ: string }).typ, hash: location.hash };
      });
      assert.equal(state.authenticated, true);
      assert.equal(state.subject, ts.user.id);
      assert.equal(state.refreshTyp, 'Refresh');
      assert.equal(state.hash, '', 'keycloak-js removed the fragment response');
      const cookies = await context.cookies(`${ts.baseUrl}/auth/realms/${REALM}/`);
      assert.equal(cookies.find((c) => c.name === 'RG_SESSION_STATE')?.value, state.sessionId);
      assert.deepEqual(pageErrors, []);
    });

    test('updateToken refreshes (checking the status iframe first), from the browser, with CORS', async () => {
      const r = await page.evaluate(async () => {
        const kc = (window as unknown as { keycloak: { token: string; refreshToken: string; updateToken(n: number): Promise<boolean> } }).keycloak;
        const before = { token: kc.token, refresh: kc.refreshToken };
        const refreshed = await kc.updateToken(-1);
        return { refreshed, newToken: kc.token !== before.token, newRefresh: kc.refreshToken !== before.refresh };
      });
      assert.deepEqual(r, { refreshed: true, newToken: true, newRefresh: true });
    });

    test('hasRealmRole and hasResourceRole: roles granted since sign-in show after updateToken', async () => {
      const hasRoles = (): Promise<boolean[]> =>
        page.evaluate(() => {
          const kc = (window as unknown as { keycloak: { hasRealmRole(r: string): boolean; hasResourceRole(r: string, c?: string): boolean } }).keycloak;
          return [kc.hasRealmRole('reader'), kc.hasResourceRole('editor', 'my-spa'), kc.hasRealmRole('editor')];
        });
      assert.deepEqual(await hasRoles(), [false, false, false]);
      await createRole(ts.store, { realmId: REALM, clientId: '', name: 'reader' }, cliActor());
      await createRole(ts.store, { realmId: REALM, clientId: 'my-spa', name: 'editor' }, cliActor());
      await changeRoleMappings(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', roles: [{ name: 'reader' }] }, cliActor());
      await changeRoleMappings(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'my-spa', roles: [{ name: 'editor' }] }, cliActor());
      ts.services.cache.clear();
      assert.equal(await page.evaluate(() => (window as unknown as { keycloak: { updateToken(n: number): Promise<boolean> } }).keycloak.updateToken(-1)), true);
      assert.deepEqual(await hasRoles(), [true, true, false]);
    });

    test('loadUserInfo and loadUserProfile', async () => {
      // Attributes are the administrators': the account API shows the user none (Keycloak's ADMIN_VIEW policy).
      await updateUser(ts.store, { realmId: REALM, user: ts.user.id, setAttributes: { tenant: ['acme'] } });
      const r = await page.evaluate(async () => {
        const kc = (window as unknown as { keycloak: { loadUserInfo(): Promise<Record<string, unknown>>; loadUserProfile(): Promise<Record<string, unknown>> } }).keycloak;
        return { info: await kc.loadUserInfo(), profile: await kc.loadUserProfile() };
      });
      assert.equal(r.info.sub, ts.user.id);
      assert.equal(r.profile.id, ts.user.id);
      assert.equal(r.profile.username, ts.user.username);
      assert.equal(r.profile.email, 'alice@example.com');
      assert.deepEqual(r.profile.attributes, {});
    });

    test("application-initiated actions: login({ action: 'CONFIGURE_TOTP' }) sets up an authenticator, UPDATE_PASSWORD and delete_account can be cancelled; onActionUpdate says how", async (t) => {
      if (OTP_TOOLS_MISSING) {
        t.skip(OTP_TOOLS_MISSING);
        return;
      }
      const logged: string[] = [];
      const onConsole = (m: { text(): string }): void => {
        logged.push(m.text());
      };
      page.on('console', onConsole);
      /** Through Realmgate's pages back to the app: a sign-in when the session is too old, then the action, then consent and organization. */
      async function act(action: string, onActionPage: () => Promise<void>): Promise<void> {
        // Not awaited in the page: login() navigates away, ending the page's context.
        await page.evaluate((a) => {
          void (window as unknown as { keycloak: { login(o: object): Promise<void> } }).keycloak.login({ action: a });
        }, action);
        await page.waitForURL((u) => u.origin === ts.baseUrl);
        if (/^Sign in/.test(await heading(page))) {
          await signInOnPage(page, ts.user.username, ts.user.password);
          await page.waitForURL((u) => !u.pathname.endsWith('/login'));
        }
        await onActionPage();
        await consentAndOrganization();
        await page.waitForURL((u) => u.origin === app.origin);
        await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Signed in'));
      }
      try {
        // delete_account (enabled for this): always a new sign-in first (act's), then the confirmation, cancelled.
        await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_account', changes: { enabled: true } });
        ts.services.cache.clear();
        await act('delete_account', async () => {
          await page.getByRole('button', { name: 'Delete my account' }).waitFor();
          assert.match((await page.locator('main').textContent()) ?? '', /asks you to confirm that you want to delete the account/);
          await page.getByRole('button', { name: 'Cancel' }).click();
        });
        assert.ok(logged.includes('delete_account: cancelled'), logged.join(' | '));
        assert.ok(await ts.store.users.get(ts.user.id));
        await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_account', changes: { enabled: false } });
        ts.services.cache.clear();

        await act('CONFIGURE_TOTP', async () => {
          await page.getByRole('button', { name: 'Finish setup' }).waitFor();
          await page.getByText('Cannot scan it? Type the key instead').click();
          const key = ((await page.locator('#otp-key').textContent()) ?? '').replace(/\s/g, '');
          await page.getByLabel('One-time code').fill(oathtoolCode(key, Math.floor(ts.clock.nowMs() / 1000)));
          await page.getByRole('button', { name: 'Finish setup' }).click();
        });
        assert.ok(logged.includes('CONFIGURE_TOTP: success'), logged.join(' | '));
        assert.equal((await ts.store.otp.list(ts.user.id)).length, 1);

        // delete_credential:<id> (the id Keycloak's admin API lists it under): confirmed, the authenticator goes.
        const otpId = (await ts.store.otp.list(ts.user.id))[0]!.id;
        await act(`delete_credential:${otpId}`, async () => {
          await page.getByRole('button', { name: 'Delete' }).waitFor();
          assert.equal(await heading(page), 'Delete Authenticator app');
          await checkLayout(page, 'delete-credential', dialect === 'sqlite');
          await page.getByRole('button', { name: 'Delete', exact: true }).click();
        });
        assert.ok(logged.includes('delete_credential: success'), logged.join(' | '));
        assert.deepEqual(await ts.store.otp.list(ts.user.id), []);

        await act('UPDATE_PASSWORD', async () => {
          await page.getByRole('button', { name: 'Update password' }).waitFor();
          assert.match((await page.locator('main').textContent()) ?? '', /asks you to choose a new password/);
          await page.getByRole('button', { name: 'Cancel' }).click();
        });
        assert.ok(logged.includes('UPDATE_PASSWORD: cancelled'), logged.join(' | '));
        assert.deepEqual(pageErrors, []);
      } finally {
        page.off('console', onConsole);
        // The next tests sign in with the password alone.
        await ts.store.otp.deleteAll(ts.user.id);
      }
    });

    test('the status iframe answers unchanged, changed and error as keycloak-js expects', async () => {
      // A string, not a function: tsx would wrap the helper's name in a function the page does not have.
      const src = `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/login-status-iframe.html`;
      const answers = await page.evaluate(`(async () => {
        const src = ${JSON.stringify(src)};
        const ask = (message) => new Promise((resolve) => {
          const frame = document.createElement('iframe');
          frame.src = src;
          frame.style.display = 'none';
          const onMessage = (e) => {
            if (e.source !== frame.contentWindow) return;
            window.removeEventListener('message', onMessage);
            frame.remove();
            resolve(e.data);
          };
          window.addEventListener('message', onMessage);
          frame.addEventListener('load', () => frame.contentWindow.postMessage(message, new URL(src).origin));
          document.body.appendChild(frame);
        });
        const sid = window.keycloak.sessionId;
        return [await ask('my-spa ' + sid), await ask('my-spa someone-else'), await ask('web-app ' + sid), await ask('no-such-client ' + sid)];
      })()`);
      // web-app exists but does not allow this page's origin.
      assert.deepEqual(answers, ['unchanged', 'changed', 'error', 'error']);
      // The two refusals of /init were this probe's own; nothing else failed.
      const refused = pageErrors.splice(0);
      assert.deepEqual(refused.map((e) => /^403 .*\/init\?client_id=([^&]+)/.exec(e)?.[1]), ['web-app', 'no-such-client']);
    });

    test("the guide's callApi sends a fresh bearer token", async () => {
      const status = await page.evaluate(async (url) => {
        const res = await (window as unknown as { callApi(u: string): Promise<Response> }).callApi(url);
        return res.status;
      }, `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/userinfo`);
      assert.equal(status, 200);
    });

    test("login({ idpHint }) goes straight to that identity provider (node-oidc-provider) and back signed in as its user", async () => {
      const up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/${REALM}/broker/corp/endpoint` });
      try {
        const acme = await ts.store.organizations.findByAlias(REALM, 'acme');
        await createIdentityProvider(ts.store, cliActor(), REALM, {
          alias: 'corp',
          organizationId: acme!.id,
          config: { ...(await discoverProvider(up.issuer)), clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile' },
        });
        up.nextAccount = { sub: 'kcjs-1', email: 'kim@corp.example', preferred_username: 'kim' };
        // prompt=login: the current session does not count; the hint skips the login page.
        await page.evaluate(() => {
          void (window as unknown as { keycloak: { login(o: object): Promise<void> } }).keycloak.login({ idpHint: 'corp', prompt: 'login' });
        });
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        assert.equal(up.requests.length, 1, 'the browser went to the provider, not to the login page');
        await consentAndOrganization();
        await page.waitForURL((u) => u.origin === app.origin);
        await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Signed in'));
        const kim = await ts.store.users.findByUsername(REALM, 'kim');
        const subject = await page.evaluate(() => (window as unknown as { keycloak: { subject: string } }).keycloak.subject);
        assert.equal(subject, kim?.id);
        assert.deepEqual(pageErrors, []);
      } finally {
        await up.close();
      }
    });

    test("login({ locale: 'de' }) (keycloak-js's ui_locales) shows the pages in German, in an English browser", async () => {
      const de = new Translator('de');
      await ts.store.realms.update(REALM, { internationalizationEnabled: true, supportedLocales: ['en', 'de'] });
      ts.services.cache.clear();
      try {
        await page.evaluate(() => {
          void (window as unknown as { keycloak: { login(o: object): Promise<void> } }).keycloak.login({ locale: 'de', prompt: 'login' });
        });
        await page.getByLabel(de.t('usernameOrEmail'), { exact: true }).waitFor();
        assert.equal(new URL(page.url()).origin, ts.baseUrl);
        assert.equal(await page.getAttribute('html', 'lang'), 'de');
        await page.getByLabel(de.t('usernameOrEmail'), { exact: true }).fill('alice');
        await page.getByLabel(de.t('password'), { exact: true }).fill(ts.user.password);
        await page.getByRole('button', { name: de.t('doLogIn') }).click();
        await page.getByRole('button', { name: de.t('doAllow') }).click();
        const org = page.getByRole('radio').first();
        if (await org.isVisible().catch(() => false)) {
          await org.check();
          await page.getByRole('button', { name: de.t('doContinue') }).click();
        }
        await page.waitForURL((u) => u.origin === app.origin);
        await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Signed in'));
        // ui_locales is the client's wish, not the user's choice: the user's own language stays unset.
        assert.equal((await ts.store.users.get(ts.user.id))?.attributes.locale, undefined);
        assert.deepEqual(pageErrors, []);
      } finally {
        await ts.store.realms.update(REALM, { internationalizationEnabled: false, supportedLocales: [] });
        ts.services.cache.clear();
      }
    });

    test('a logout in another tab is noticed by the status iframe: onAuthLogout fires, login-required signs in again', async () => {
      let loggedOut = false;
      await page.exposeFunction('reportLogout', () => {
        loggedOut = true;
      });
      // The guide's handler runs, and the test hears of it even though login-required navigates away next.
      await page.evaluate(() => {
        const w = window as unknown as { keycloak: { onAuthLogout(): void }; reportLogout(): void };
        const guide = w.keycloak.onAuthLogout;
        w.keycloak.onAuthLogout = () => {
          guide();
          w.reportLogout();
        };
      });
      const other = await context.newPage();
      await other.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/logout`);
      await other.getByRole('button', { name: /sign out|log out/i }).click();
      await other.waitForLoadState();
      await other.close();
      // keycloak-js asks the iframe every 5 seconds (its default checkLoginIframeInterval); on "changed"
      // it clears its tokens, calls onAuthLogout and, with login-required, goes to the login page.
      await page.waitForURL((u) => u.origin === ts.baseUrl, { timeout: 30_000 });
      assert.equal(loggedOut, true);
      assert.match(await heading(page), /^Sign in/);
      assert.deepEqual(pageErrors, []);
    });

    test('the form_post page (scripts off) renders the continue button', async () => {
      const noJs = await browser!.newContext({ viewport: DESKTOP, locale: 'en-US', javaScriptEnabled: false });
      try {
        const p = await noJs.newPage();
        const q = new URLSearchParams({ client_id: 'my-spa', redirect_uri: `${app.origin}/`, response_type: 'code', response_mode: 'form_post', scope: 'openid', state: 's', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', prompt: 'none' });
        await p.goto(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth?${q.toString()}`);
        assert.equal(await heading(p), 'Returning to My SPA');
        await checkLayout(p, 'form-post', dialect === 'sqlite');
      } finally {
        await noJs.close();
      }
    });
  });
}
