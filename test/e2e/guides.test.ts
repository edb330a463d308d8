// docs/guide-api.md and docs/guide-web-app.md: every code block is either an exact copy of an example
// file run here (or by resource-server.test.ts) against a real server, or a CLI command run here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Server } from 'node:http';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { pageKind, parseForm } from '../helpers/flow.js';
import { createTestDatabase, dialects } from '../helpers/db.js';
import { ManualClock } from '../../src/clock.js';
import { createClient, logoutUser } from '../../src/admin/operations.js';

const GUIDES = ['docs/guide-api.md', 'docs/guide-web-app.md'];
const BIN = path.resolve('bin/realmgate.js');

interface Block {
  lang: string;
  file: string | undefined;
  code: string;
}

function blocks(doc: string): Block[] {
  const out: Block[] = [];
  const re = /^```(\w*)([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(doc); m; m = re.exec(doc)) out.push({ lang: m[1]!, file: /file=(\S+)/.exec(m[2]!)?.[1], code: m[3]! });
  return out;
}

// The files run below and by resource-server.test.ts (api.mjs, server.mjs of protected-api are imported there).
// The Apache configurations are included by mod-auth-openidc.test.ts.
const EXERCISED = new Set(['examples/protected-api/api.mjs', 'examples/protected-api/plain-node.mjs', 'examples/protected-api/plain-jose.mjs', 'examples/web-app/app.mjs', 'examples/apache/auth-openidc.conf', 'examples/apache/auth-openidc-groups.conf', 'examples/apache/auth-openidc-tenant.conf', 'examples/apache/auth-openidc-roles.conf']);
// Entry points that only read the environment and start an exercised module.
const STARTERS = new Set(['examples/protected-api/server.mjs', 'examples/web-app/server.mjs']);

test('every code block of the guides is an example file that is run, or a realmgate command', () => {
  for (const guide of GUIDES) {
    const bs = blocks(fs.readFileSync(guide, 'utf8'));
    assert.ok(bs.length >= 3, `${guide} has code blocks`);
    for (const b of bs) {
      if (b.file) {
        assert.equal(b.code, fs.readFileSync(b.file, 'utf8').replace(/\n*$/, '\n'), `${guide}: the block of ${b.file} is the file itself (node scripts/sync-guide-snippets.mjs)`);
        assert.ok(EXERCISED.has(b.file) || STARTERS.has(b.file), `${b.file} is exercised`);
      } else {
        assert.equal(b.lang, 'sh', `${guide}: a block without a file is a shell command`);
        for (const line of b.code.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) assert.match(line, /^realmgate /, `${guide}: ${line}`);
      }
    }
  }
});

test('the realmgate commands of the guides run (the built CLI, npm run build first)', async () => {
  const tdb = await createTestDatabase('sqlite');
  await tdb.db.close();
  try {
    const run = (args: string[]): string => {
      const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    run(['realm', 'create', 'demo']);
    for (const guide of GUIDES) {
      for (const b of blocks(fs.readFileSync(guide, 'utf8')).filter((x) => !x.file)) {
        for (const line of b.code.split('\n').filter((l) => l.startsWith('realmgate '))) run(shellWords(line.slice('realmgate '.length)));
      }
    }
    assert.match(run(['realm', 'list']), /demo/);
  } finally {
    fs.rmSync(path.dirname(tdb.url.slice('sqlite:'.length)), { recursive: true, force: true });
  }
});

/** Splits a command line with double-quoted words (all the guides use). */
function shellWords(s: string): string[] {
  return [...s.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

async function importExample<T>(file: string): Promise<T> {
  return (await import(pathToFileURL(path.resolve(file)).href)) as T;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Cookies per origin, as a browser keeps them for the app and for the realm. */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  async request(url: string, form?: Record<string, string>): Promise<Response> {
    const u = new URL(url);
    const jar = this.jars.get(u.origin) ?? new Map<string, string>();
    this.jars.set(u.origin, jar);
    const res = await fetch(u, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /** Follows redirects and fills the realm's pages like the user would; returns the last response. */
  async go(ts: TestServer, url: string, form?: Record<string, string>, stopAt?: string): Promise<{ res: Response; url: string; pages: string[] }> {
    const pages: string[] = [];
    let res = await this.request(url, form);
    for (let i = 0; i < 15; i++) {
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get('location')!, url).href;
        // A redirect to a client that is not running: the URL is the result.
        if (stopAt && url.startsWith(stopAt)) return { res, url, pages };
        res = await this.request(url);
        continue;
      }
      if (!url.startsWith(ts.baseUrl) || res.status !== 200 || !(res.headers.get('content-type') ?? '').includes('text/html')) return { res, url, pages };
      const html = await res.text();
      const kind = pageKind(html);
      pages.push(kind);
      const f = parseForm(html);
      const action = new URL(f.action, url).href;
      if (kind === 'login') res = await this.request(action, { csrf: f.csrf, username: ts.user.username, password: ts.user.password });
      else if (kind === 'consent') res = await this.request(action, { csrf: f.csrf, decision: 'allow' });
      else if (kind === 'organization') res = await this.request(action, { csrf: f.csrf, organization: 'acme' });
      else throw new Error(`unexpected page ${kind}: ${html.slice(0, 300)}`);
      url = action;
    }
    throw new Error('too many steps');
  }
}

for (const dialect of dialects()) {
  test(`guide-api: the plain jose verifier and the kit on node:http (${dialect})`, async (t) => {
    const ts = await startTestServer({ dialect, listen: true });
    t.after(() => ts.close());
    await ts.store.realms.update(REALM, { accessTokenAudience: 'protected-api' });
    const issuer = `${ts.baseUrl}/auth/realms/${REALM}`;
    const browser = new Browser();
    // Tokens from the web app of the other guide would do too; here the registered test client.
    const { tokenFor } = await tokensViaFlow(ts, browser);
    const coreOnly = await tokenFor('openid core_data');

    const { createJoseVerifier } = await importExample<{ createJoseVerifier(o: { issuer: string; audience: string }): Promise<(auth: string | undefined, scope?: string) => Promise<{ sub: string }>> }>('examples/protected-api/plain-jose.mjs');
    const verify = await createJoseVerifier({ issuer, audience: 'protected-api' });
    assert.equal((await verify(`Bearer ${coreOnly}`, 'core_data')).sub, ts.user.id);
    await assert.rejects(verify(`Bearer ${coreOnly}`, 'exports'), /scope exports missing/);
    await assert.rejects(verify(undefined), /no bearer token/);
    const otherAudience = await createJoseVerifier({ issuer, audience: 'another-api' });
    await assert.rejects(otherAudience(`Bearer ${coreOnly}`), /aud/);

    const { createPlainServer } = await importExample<{ createPlainServer(o: { issuer: string; audience: string }): Server }>('examples/protected-api/plain-node.mjs');
    const server = createPlainServer({ issuer, audience: 'protected-api' });
    const base = await listen(server);
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const ok = await fetch(base, { headers: { authorization: `Bearer ${coreOnly}` } });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { hello: ts.user.id });
    const noScope = await fetch(base, { headers: { authorization: `Bearer ${await tokenFor('openid')}` } });
    assert.equal(noScope.status, 403);
    assert.match(noScope.headers.get('www-authenticate') ?? '', /error="insufficient_scope".*scope="core_data"/);
    assert.equal((await fetch(base)).status, 401);
  });

  test(`guide-web-app: sign in with PKCE, callback, profile, refresh, sign out (${dialect})`, async (t) => {
    const ts = await startTestServer({ dialect, listen: true });
    t.after(() => ts.close());
    const issuer = `${ts.baseUrl}/auth/realms/${REALM}`;
    const appClock = new ManualClock(Date.now());
    const settings = { issuer, clientId: 'web-portal', clientSecret: 'a secret with + and % and :', baseUrl: '', clock: appClock };
    const { createWebApp } = await importExample<{ createWebApp(s: typeof settings): Server }>('examples/web-app/app.mjs');
    const server = createWebApp(settings);
    settings.baseUrl = await listen(server);
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    await createClient(ts.store, {
      realmId: REALM,
      clientId: 'web-portal',
      secret: settings.clientSecret,
      redirectUris: [`${settings.baseUrl}/callback`],
      postLogoutRedirectUris: [`${settings.baseUrl}/`],
      scopes: 'openid profile email core_data',
      backchannelLogout: { url: `${settings.baseUrl}/backchannel-logout` },
    });
    const browser = new Browser();

    const home = async (): Promise<string> => (await browser.request(`${settings.baseUrl}/`)).text();
    assert.match(await home(), /Sign in/);
    const signIn = await browser.go(ts, `${settings.baseUrl}/login`);
    assert.deepEqual(signIn.pages, ['login', 'consent', 'organization']);
    assert.equal(signIn.url, `${settings.baseUrl}/`);
    assert.match(await signIn.res.text(), /Signed in as alice/);

    const profile = async (): Promise<{ userinfo: { sub: string }; refreshes: number }> => {
      const res = await browser.request(`${settings.baseUrl}/profile`);
      assert.equal(res.status, 200);
      return (await res.json()) as { userinfo: { sub: string }; refreshes: number };
    };
    assert.deepEqual(await profile(), { userinfo: (await profile()).userinfo, refreshes: 0 });
    assert.equal((await profile()).userinfo.sub, ts.user.id);

    // Close to the access token's expiry (on the app's clock) the app refreshes, and the rotated refresh
    // token works the next time too.
    const lifetime = (await ts.store.realms.get(REALM))!.accessTokenLifetime;
    appClock.advance(lifetime - 30);
    assert.equal((await profile()).refreshes, 1);
    assert.equal((await profile()).refreshes, 1, 'the refreshed token is fresh');
    appClock.advance(lifetime - 30);
    assert.equal((await profile()).refreshes, 2);

    // Sign out: a POST with the session's CSRF token; a forged one is refused.
    const csrf = /name="csrf" value="([^"]+)"/.exec(await home())![1]!;
    assert.equal((await browser.request(`${settings.baseUrl}/logout`, { csrf: 'forged' })).status, 403);
    const out = await browser.go(ts, `${settings.baseUrl}/logout`, { csrf });
    assert.equal(out.url, `${settings.baseUrl}/`);
    assert.match(await out.res.text(), /Sign in/);
    // The realm's session ended too: signing in again asks for the password.
    const again = await browser.go(ts, `${settings.baseUrl}/login`);
    assert.equal(again.pages[0], 'login');
    assert.match(await home(), /Signed in as alice/);

    // The app's clock back in step with the realm's: a logout token is checked against it (iat, exp).
    appClock.advance(-2 * (lifetime - 30));
    // Back-channel logout: the session ends at the realm (here an administrator's logout), the realm POSTs
    // a logout token to the app, which forgets its session. A token the app cannot verify is refused.
    const forged = await fetch(`${settings.baseUrl}/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'logout_token=e30.e30.' });
    assert.equal(forged.status, 400);
    assert.match(await home(), /Signed in as alice/);
    await logoutUser(ts.store, { realmId: REALM, user: ts.user.id });
    await ts.services.backchannel.settled();
    assert.match(await home(), /Sign in/);
  });
}

/** Access tokens for the test realm's confidential client, through the real authorization flow over HTTP. */
async function tokensViaFlow(ts: TestServer, browser: Browser): Promise<{ tokenFor(scope: string): Promise<string> }> {
  return {
    async tokenFor(scope: string): Promise<string> {
      const q = new URLSearchParams({ client_id: ts.client.id, redirect_uri: 'http://127.0.0.1:9999/cb', response_type: 'code', scope, state: 's' });
      const r = await browser.go(ts, `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth?${q}`, undefined, 'http://127.0.0.1:9999/');
      const code = new URL(r.url).searchParams.get('code');
      assert.ok(code, `a code in ${r.url}`);
      const res = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from(`${ts.client.id}:${encodeURIComponent(ts.client.secret)}`).toString('base64') },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9999/cb' }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { access_token: string }).access_token;
    },
  };
}
