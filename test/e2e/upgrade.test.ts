import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dialects, unusedDatabase } from '../helpers/db.js';

/**
 * Upgrading a real deployment: a database written by an earlier Realmgate, built from this repository's
 * own history, then served by this build. The earlier release is the one of 2026-11-21 (the seed's flow,
 * limited clients, the security floor and OIDC: six migrations, opaque refresh tokens stored one row per
 * token); every migration since runs on its data. What its users hold must keep working: the access
 * token it signed, its refresh tokens (the current one refreshes, an already-used one is a reuse that
 * revokes its chain and only its chain), its client secret and its users' passwords.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RELEASE = '153e0752b922f7e78eb67c83830c5cab608e1417';
const NEW_BIN = path.join(ROOT, 'bin/realmgate.js');

/** The commit's tree, built with this checkout's node_modules; undefined when the clone lacks it (shallow). */
function buildRelease(dir: string): string | undefined {
  try {
    execFileSync('git', ['cat-file', '-e', `${RELEASE}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const archive = execFileSync('git', ['archive', '--format=tar', RELEASE], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'pipe' });
  execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: dir, stdio: 'pipe' });
  return path.join(dir, 'bin/realmgate.js');
}

interface Server {
  child: ChildProcess;
  base: string;
  output(): string;
  stop(): Promise<number | null>;
}

async function startServer(bin: string, args: string[], databaseUrl: string): Promise<Server> {
  const child = spawn(process.execPath, [bin, 'start', '--port', '0', '--host', '127.0.0.1', ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', PORT: '0' },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Not a timing threshold: a generous bound on a line the server prints, reported with its output.
  const deadline = Date.now() + 60_000;
  let m: RegExpExecArray | null;
  while (!(m = /listening on (http:\/\/\S+)/.exec(out))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    child,
    base: new URL(m[1]!).origin,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A browser's cookies and form posts, enough for the sign-in, consent and organization pages. */
class Browser {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: () => string) {}
  async request(method: string, url: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; location: string | null; body: string }> {
    const h: Record<string, string> = { ...headers };
    if (this.jar.size > 0) h.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) h['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(url, this.base()), { method, redirect: 'manual', headers: h, ...(form ? { body: new URLSearchParams(form).toString() } : {}) });
    for (const c of res.headers.getSetCookie()) {
      const kv = c.split(';')[0]!;
      this.jar.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  }
}

const unescapeHtml = (s: string): string => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

interface Demo {
  password: string;
  secret: string;
  redirectUri: string;
}

/** Signs the demo user in at a fresh browser and returns the code the demo client receives. */
async function authorize(base: string, demo: Demo): Promise<string> {
  const browser = new Browser(() => base);
  const q = new URLSearchParams({ client_id: 'demo-app', redirect_uri: demo.redirectUri, response_type: 'code', scope: 'openid', state: 's' });
  let res = await browser.request('GET', `/auth/realms/demo/protocol/openid-connect/auth?${q}`);
  for (let step = 0; step < 8; step++) {
    assert.ok(res.location, `a redirect was expected: ${res.status} ${res.body.slice(0, 300)}`);
    const loc = new URL(res.location, base);
    if (!loc.pathname.includes('/login-actions/')) {
      assert.ok(loc.href.startsWith(demo.redirectUri), loc.href);
      return loc.searchParams.get('code')!;
    }
    const page = await browser.request('GET', loc.href);
    const action = unescapeHtml(/<form method="post" action="([^"]*)"/.exec(page.body)?.[1] ?? '');
    const csrf = unescapeHtml(/name="csrf" value="([^"]*)"/.exec(page.body)?.[1] ?? '');
    assert.ok(action && csrf, `a form was expected: ${page.status} ${page.body.slice(0, 300)}`);
    if (page.body.includes('name="password"')) res = await browser.request('POST', action, { csrf, username: 'demo', password: demo.password });
    else if (page.body.includes('name="decision"')) res = await browser.request('POST', action, { csrf, decision: 'allow' });
    else if (page.body.includes('name="organization"')) res = await browser.request('POST', action, { csrf, organization: 'acme' });
    else assert.fail(`an unexpected page: ${page.body.slice(0, 300)}`);
  }
  assert.fail('the sign-in did not end');
}

async function token(base: string, demo: Demo, form: Record<string, string>): Promise<{ status: number; json: Record<string, string> }> {
  const res = await fetch(`${base}/auth/realms/demo/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`demo-app:${encodeURIComponent(demo.secret)}`).toString('base64')}` },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, json: (await res.json()) as Record<string, string> };
}

describe('upgrade from an earlier release', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-upgrade-'));
  let oldBin: string | undefined;
  before(() => {
    fs.mkdirSync(path.join(work, 'release'));
    oldBin = buildRelease(path.join(work, 'release'));
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  for (const dialect of dialects()) {
    test(`${dialect}: tokens, secrets and passwords of the 2026-11-21 release keep working`, async (t) => {
      if (oldBin === undefined) return t.skip(`commit ${RELEASE} is not in this clone (a shallow clone?)`);
      const db = unusedDatabase(dialect);
      let server: Server | undefined;
      try {
        // The earlier release creates the demo realm and hands out tokens.
        server = await startServer(oldBin, ['--demo'], db.url);
        const out = server.output();
        const demo: Demo = {
          password: /user:\s+demo \/ (\S+)/.exec(out)![1]!,
          secret: /client:\s+demo-app \/ (\S+)/.exec(out)![1]!,
          redirectUri: /redirect URI:\s+(\S+)/.exec(out)![1]!,
        };
        const first = await token(server.base, demo, { grant_type: 'authorization_code', code: await authorize(server.base, demo), redirect_uri: demo.redirectUri });
        assert.equal(first.status, 200, JSON.stringify(first.json));
        const rotated = await token(server.base, demo, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token! });
        assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
        const other = await token(server.base, demo, { grant_type: 'authorization_code', code: await authorize(server.base, demo), redirect_uri: demo.redirectUri });
        assert.equal(other.status, 200);
        assert.equal(rotated.json.refresh_token!.split('.').length, 1, 'the release handed out opaque refresh tokens');
        assert.equal(await server.stop(), 0);

        // This build migrates the same database and serves it.
        server = await startServer(NEW_BIN, ['--workers', '1'], db.url);
        const base = server.base;
        const userinfo = await fetch(`${base}/auth/realms/demo/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${rotated.json.access_token}` } });
        assert.equal(userinfo.status, 200, 'the access token the release signed is still valid');
        const next = await token(base, demo, { grant_type: 'refresh_token', refresh_token: rotated.json.refresh_token! });
        assert.equal(next.status, 200, JSON.stringify(next.json));
        assert.equal(next.json.refresh_token!.split('.').length, 3, 'its successor is a signed refresh token');
        assert.equal((await token(base, demo, { grant_type: 'refresh_token', refresh_token: next.json.refresh_token! })).status, 200);
        // The token the release already rotated is a reuse: its chain ends, the other chain does not.
        const reuse = await token(base, demo, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token! });
        assert.deepEqual([reuse.status, reuse.json.error], [400, 'invalid_grant']);
        assert.equal((await token(base, demo, { grant_type: 'refresh_token', refresh_token: next.json.refresh_token! })).status, 400);
        const otherNext = await token(base, demo, { grant_type: 'refresh_token', refresh_token: other.json.refresh_token! });
        assert.equal(otherNext.status, 200, JSON.stringify(otherNext.json));
        // The user's password (hashed by the release) signs in; the client's secret authenticates.
        const again = await token(base, demo, { grant_type: 'authorization_code', code: await authorize(base, demo), redirect_uri: demo.redirectUri });
        assert.equal(again.status, 200, JSON.stringify(again.json));
        assert.equal(await server.stop(), 0);
        assert.doesNotMatch(server.output(), /"level":(50|60)/, server.output());
      } finally {
        await server?.stop();
        await db.drop();
      }
    });
  }
});
