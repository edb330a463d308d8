// The example client with limited web server access (examples/desktop-client/client.mjs), run as a real
// child process against a listening server, with the user's part done in a real browser: Debian's
// chromium driven by playwright-core. Never downloads a browser; without /usr/bin/chromium the browser
// tests are skipped. With UPDATE_SCREENSHOTS=1 the code display and device pages are saved to
// docs/screenshots/ at desktop and phone width.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { nowSeconds } from '../../src/clock.js';
import { CHROMIUM, DESKTOP, LAUNCH_ARGS, SCREENSHOT_DIR, SKIP_REASON, UPDATE_SCREENSHOTS, checkLayout, heading } from '../helpers/browser.js';

const CLIENT_SCRIPT = path.resolve('examples/desktop-client/client.mjs');
const CONFIDENTIAL = { id: 'desktop-tool', name: 'Desktop Tool', secret: 'desktop-tool-secret-0123456789' };
const PUBLIC = { id: 'desktop-public', name: 'Desktop Tool Public' };
const SCOPE = 'openid core_data offline_access';
const ACCESS_TOKEN_LIFETIME = 259_200;

/**
 * The server runs on a ManualClock that the tests move; the child process must see the same time, or
 * it could never find its access token expired. This preload shifts the child's Date.now by the
 * offset between the server's clock and the real one (the client and openid-client read time only
 * through Date.now).
 */
const CLOCK_PRELOAD = `data:text/javascript,${encodeURIComponent(
  'const o = Number(process.env.DESKTOP_CLIENT_CLOCK_OFFSET_MS); if (o) { const real = Date.now; Date.now = () => real() + o; }',
)}`;

let browser: Browser | undefined;

/**
 * The file's chromium, launched by the first test that needs one (undefined without chromium). Not in a
 * `before`: the PostgreSQL files without TEST_DATABASE_URL define no test, and a chromium launched for
 * none was never closed (node:test then runs no `after`): they ran into their 120 s limit. Nor can a
 * `before` tell whether tests will come: it runs before the importing file has defined them.
 */
async function launched(): Promise<Browser | undefined> {
  if (!fs.existsSync(CHROMIUM)) return undefined;
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  return browser;
}

after(async () => {
  await browser?.close();
});

// ---------------------------------------------------------------------------------------------
// The child process

interface Child {
  proc: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit status. */
  exit: Promise<number | null>;
  /** Waits until stdout matches, failing early when the process exits first. */
  waitForStdout(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

const children = new Set<ChildProcessWithoutNullStreams>();

function runClient(ts: TestServer, args: string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, ['--import', CLOCK_PRELOAD, CLIENT_SCRIPT, ...args], {
    // A clean environment: nothing from the developer's own REALMGATE_* settings or home directory.
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), DESKTOP_CLIENT_CLOCK_OFFSET_MS: String(ts.clock.nowMs() - Date.now()), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.on('close', (code) => {
    children.delete(proc);
    resolve(code);
  }));
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitForStdout(re, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = re.exec(out);
          if (m) {
            cleanup();
            resolve(m);
          }
          return Boolean(m);
        };
        const onExit = (code: number | null): void => {
          if (check()) return;
          cleanup();
          reject(new Error(`the client exited (${code}) before printing ${re}\nstdout: ${out}\nstderr: ${err}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}\nstdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          proc.stdout.off('data', check);
          proc.off('close', onExit);
        };
        if (check()) return;
        proc.stdout.on('data', check);
        proc.on('close', onExit);
      });
    },
  };
}

/** Runs the client to the end with standard input closed. */
async function runToEnd(ts: TestServer, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runClient(ts, args, env);
  child.proc.stdin.end();
  const code = await child.exit;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** Errors are one line on stderr, never a stack trace. */
function assertOneLineError(stderr: string, re: RegExp): void {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, /^client\.mjs: /);
  assert.match(lines[0]!, re);
  assert.doesNotMatch(stderr, /^\s+at /m);
}

function settingsFor(ts: TestServer, tokenFile: string, client: { id: string; secret?: string }): string[] {
  return ['--issuer', `${ts.baseUrl}${realmPath('')}`, '--client-id', client.id, '--token-file', tokenFile, ...(client.secret ? ['--client-secret', client.secret] : [])];
}

interface StoredTokens {
  issuer: string;
  client_id: string;
  client_auth: string;
  access_token: string;
  refresh_token: string;
  expires_at: number;
  scope: string;
}

function readTokenFile(file: string): StoredTokens {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as StoredTokens;
}

function mode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

// ---------------------------------------------------------------------------------------------
// The browser

async function newContext(ts: TestServer, opts: { clipboard?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser!.newContext({ viewport: DESKTOP, locale: 'en-US' });
  if (opts.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ts.baseUrl });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  return context;
}

/** Login, consent, organization: the user's part of every flow here. */
async function signInAllowContinue(ts: TestServer, page: Page): Promise<void> {
  await page.getByLabel('Username').fill(ts.user.username);
  await page.getByLabel('Password').fill(ts.user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The stylesheet applies, nothing scrolls sideways at phone width; screenshots with UPDATE_SCREENSHOTS=1. */

// ---------------------------------------------------------------------------------------------

async function withServer(fn: (ts: TestServer, dir: string) => Promise<void>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const ts = await startTestServer({ dialect, listen: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-desktop-client-'));
  try {
    const redirectUris = [`${ts.baseUrl}/authentication_code`];
    await createClient(ts.store, { realmId: REALM, clientId: CONFIDENTIAL.id, name: CONFIDENTIAL.name, secret: CONFIDENTIAL.secret, redirectUris });
    await createClient(ts.store, { realmId: REALM, clientId: PUBLIC.id, name: PUBLIC.name, public: true, redirectUris });
    await fn(ts, dir);
  } finally {
    for (const proc of children) proc.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    await ts.close();
  }
}

function jwtChecker(ts: TestServer): (token: string) => Promise<JWTPayload> {
  const jwks = createRemoteJWKSet(new URL(`${ts.baseUrl}${realmPath('/protocol/openid-connect/certs')}`));
  return async (token) => {
    // The server's clock is manual: verify exp and iat against it.
    const { payload } = await jwtVerify(token, jwks, { issuer: `${ts.baseUrl}${realmPath('')}`, audience: 'account', currentDate: new Date(ts.clock.nowMs()) });
    assert.equal(payload.sub, ts.user.id);
    assert.deepEqual(payload.organization, ['acme']);
    assert.equal(payload.scope, SCOPE);
    return payload;
  };
}

/**
 * The desktop client's tests on one database, in two parts: `paste` (the pasted code's sign-in and its
 * refreshes) and `device` (the device flow, and the refusals). A file per database and part: together
 * they ran past the runner's 120 s per-file limit on a loaded machine, one file per database too (110 s
 * at a load average of 9, 2026-11-29).
 */
export function desktopClientSuite(dialect: 'sqlite' | 'postgres', part: 'paste' | 'device'): void {

  // Screenshots come from one dialect only: the pages do not depend on the database.
  const shoot = dialect === 'sqlite';

  if (part === 'paste') test(`desktop client: login by pasting the code, token refreshes with rotation, a revoked chain asks for login (${dialect})`, async (t: TestContext) => {
    if (!(await launched())) return t.skip(SKIP_REASON);
    await withServer(async (ts, dir) => {
      const tokenFile = path.join(dir, 'state', 'tokens.json');
      const settings = settingsFor(ts, tokenFile, CONFIDENTIAL);
      const verify = jwtChecker(ts);
      const pageUri = `${ts.baseUrl}/authentication_code`;

      // The client prints the authorization request: PKCE S256, a state, the code display page.
      const login = runClient(ts, ['login', ...settings]);
      const printed = new URL((await login.waitForStdout(/^ {2}(http\S+)$/m))[1]!);
      await login.waitForStdout(/Code: $/);
      assert.equal(printed.origin + printed.pathname, `${ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}`);
      const q = printed.searchParams;
      assert.equal(q.get('client_id'), CONFIDENTIAL.id);
      assert.equal(q.get('redirect_uri'), pageUri);
      assert.equal(q.get('response_type'), 'code');
      assert.equal(q.get('scope'), SCOPE);
      assert.equal(q.get('code_challenge_method'), 'S256');
      assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.ok((q.get('state') ?? '').length >= 32, 'a random state');

      // The user opens it, signs in, allows, continues, and lands on the code display page.
      const context = await newContext(ts, { clipboard: true });
      let code: string;
      try {
        const page = await context.newPage();
        await page.goto(printed.href);
        await signInAllowContinue(ts, page);
        await page.waitForURL((u) => u.href.startsWith(`${pageUri}?`));
        const landed = new URL(page.url());
        assert.equal(landed.searchParams.get('state'), q.get('state'));
        assert.equal(await heading(page), `Copy this code into ${CONFIDENTIAL.name}`);
        const field = page.locator('#code');
        code = await field.inputValue();
        assert.equal(code, landed.searchParams.get('code'));
        assert.equal(await page.getByLabel('Authorization code').getAttribute('readonly'), '');
        assert.match((await page.locator('#countdown').textContent()) ?? '', /expires in \d+ seconds/);
        // On a desktop screen the whole code is visible (the user may check it by eye), and the
        // Copy button lines up with the field.
        const fit = await field.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
        assert.ok(fit.scroll <= fit.client, `the code is cut off: ${fit.scroll}px of text in a ${fit.client}px field`);
        const fieldBox = await field.boundingBox();
        const buttonBox = await page.getByRole('button', { name: 'Copy' }).boundingBox();
        assert.ok(fieldBox && buttonBox && Math.abs(fieldBox.height - buttonBox.height) < 1, `field ${fieldBox?.height}px, button ${buttonBox?.height}px high`);
        await checkLayout(page, 'code-display', shoot);

        // Copy puts the code on the clipboard, and says so.
        await page.getByRole('button', { name: 'Copy' }).click();
        await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
        const clipboard = await page.evaluate(() => navigator.clipboard.readText());
        assert.equal(clipboard, code);
        if (shoot && UPDATE_SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'code-display-copied-desktop.png'), fullPage: true, animations: 'disabled', caret: 'hide' });

        // The user pastes what the clipboard holds into the waiting program.
        login.proc.stdin.write(`${clipboard}\n`);
        assert.equal(await login.exit, 0, `stdout: ${login.stdout()}\nstderr: ${login.stderr()}`);
        assert.equal(login.stderr(), '');
        assert.match(login.stdout(), new RegExp(`Logged in: tokens for ${CONFIDENTIAL.id} are stored in ${tokenFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

        // Used once, the code is shown as such when the page is opened again.
        await page.reload();
        assert.match((await page.getByRole('alert').textContent()) ?? '', /expired or was already used/);
        await checkLayout(page, 'code-used', shoot);
      } finally {
        await context.close();
      }

      // The token file: 0600 in a 0700 directory, nothing left behind, the tokens never printed.
      assert.equal(mode(tokenFile), 0o600);
      assert.equal(mode(path.dirname(tokenFile)), 0o700);
      assert.deepEqual(fs.readdirSync(path.dirname(tokenFile)), ['tokens.json']);
      const first = readTokenFile(tokenFile);
      assert.equal(first.issuer, `${ts.baseUrl}${realmPath('')}`);
      assert.equal(first.client_id, CONFIDENTIAL.id);
      assert.equal(first.client_auth, 'client_secret_basic');
      assert.equal(first.scope, SCOPE);
      assert.ok(!login.stdout().includes(first.access_token) && !login.stdout().includes(first.refresh_token), 'tokens printed by login');
      assert.ok(!login.stdout().includes(code), 'the code is not echoed');
      assert.equal((await verify(first.access_token)).azp, CONFIDENTIAL.id);

      // `token` while the access token is valid: the stored one, no refresh.
      let run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${first.access_token}\n`);
      assert.equal(readTokenFile(tokenFile).refresh_token, first.refresh_token);

      // Past the access token's lifetime: `token` refreshes, prints the new token and stores the rotated refresh token.
      ts.clock.advance(ACCESS_TOKEN_LIFETIME);
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      const refreshedToken = run.stdout.trim();
      assert.notEqual(refreshedToken, first.access_token);
      const second = readTokenFile(tokenFile);
      assert.equal(second.access_token, refreshedToken);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.equal(mode(tokenFile), 0o600);
      assert.deepEqual(fs.readdirSync(path.dirname(tokenFile)), ['tokens.json'], 'no temporary or lock file left');
      const claims = await verify(refreshedToken);
      assert.equal(claims.iat, nowSeconds(ts.clock));
      assert.equal(claims.exp, nowSeconds(ts.clock) + ACCESS_TOKEN_LIFETIME);

      // Right after: the refreshed token again, no second refresh.
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trim(), refreshedToken);
      assert.equal(readTokenFile(tokenFile).refresh_token, second.refresh_token);

      // Several scripts at once after the next expiry: one refreshes, the others wait and reuse its
      // result. Without the lock they would present the same refresh token and the server would
      // revoke the chain as stolen.
      ts.clock.advance(ACCESS_TOKEN_LIFETIME);
      const parallel = await Promise.all(Array.from({ length: 4 }, () => runToEnd(ts, ['token', ...settings])));
      for (const r of parallel) assert.equal(r.code, 0, r.stderr);
      const third = readTokenFile(tokenFile);
      assert.deepEqual(new Set(parallel.map((r) => r.stdout.trim())), new Set([third.access_token]));
      assert.notEqual(third.refresh_token, second.refresh_token);
      assert.deepEqual(fs.readdirSync(path.dirname(tokenFile)), ['tokens.json']);

      // Someone replays the first refresh token: reuse detection revokes the whole chain.
      const replay = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
        method: 'POST',
        headers: { authorization: basic(CONFIDENTIAL.id, CONFIDENTIAL.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).toString(),
      });
      assert.equal(replay.status, 400);
      assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');

      // The access token is still valid: `token` prints it without asking the server.
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trim(), third.access_token);

      // Once it expires, the refresh fails: the stored tokens are deleted and the user is told to log in (exit 2).
      ts.clock.advance(ACCESS_TOKEN_LIFETIME);
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 2, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
      assert.equal(run.stdout, '');
      assertOneLineError(run.stderr, /session has ended.*run "client\.mjs login" again/);
      assert.ok(!fs.existsSync(tokenFile), 'the token file is deleted');
      assert.deepEqual(fs.readdirSync(path.dirname(tokenFile)), []);
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 2);
      assertOneLineError(run.stderr, /not logged in/);
    }, dialect);
  });

  if (part === 'device') test(`desktop client: login --device with a public client, refresh, revocation by the realm's not-before (${dialect})`, async (t: TestContext) => {
    if (!(await launched())) return t.skip(SKIP_REASON);
    await withServer(async (ts, dir) => {
      const tokenFile = path.join(dir, 'tokens.json');
      const settings = settingsFor(ts, tokenFile, PUBLIC);
      const verify = jwtChecker(ts);
      const context = await newContext(ts);
      // The device polls on the real clock; the server rates polls on its manual one. Let the server's
      // clock run (twice as fast as real time, so a poll that is on time is never taken for too early).
      const ticker = setInterval(() => ts.clock.advance(1), 500);
      try {
        const page = await context.newPage();

        // The verification page on its own: enter the code; a wrong one is refused in plain words.
        await page.goto(`${ts.baseUrl}${realmPath('/device')}`);
        assert.equal(await heading(page), 'Enter the code shown on your device');
        await checkLayout(page, 'device-entry', shoot);
        await page.getByLabel('Code').fill('BCDF-GHJK');
        await page.getByRole('button', { name: 'Continue' }).click();
        assert.match((await page.getByRole('alert').textContent()) ?? '', /not valid, or it has expired/);
        await checkLayout(page, 'device-entry-error', shoot);

        const login = runClient(ts, ['login', '--device', ...settings]);
        const verificationUri = (await login.waitForStdout(/open this address on any device:\n\n {2}(\S+)\n/))[1]!;
        const userCode = (await login.waitForStdout(/enter the code: {2}([A-Z]{4}-[A-Z]{4})\n/))[1]!;
        const complete = (await login.waitForStdout(/already holds the code:\n\n {2}(\S+)\n/))[1]!;
        await login.waitForStdout(/Waiting for you to finish/);
        assert.equal(verificationUri, `${ts.baseUrl}${realmPath('/device')}`);
        assert.equal(complete, `${verificationUri}?user_code=${encodeURIComponent(userCode)}`);

        // The user opens the complete address, checks the code, signs in, allows, continues.
        await page.goto(complete);
        assert.equal(await heading(page), 'Confirm the code on your device');
        assert.equal(await page.getByLabel('Code').inputValue(), userCode);
        await checkLayout(page, 'device-confirm', shoot);
        await page.getByRole('button', { name: 'Continue' }).click();
        await signInAllowContinue(ts, page);
        await page.getByRole('heading', { name: 'Your device is connected' }).waitFor();
        assert.match((await page.locator('main').textContent()) ?? '', new RegExp(`${PUBLIC.name} now has the access you allowed`));
        await checkLayout(page, 'device-done', shoot);

        // The device's next poll gets the tokens.
        assert.equal(await login.exit, 0, `stdout: ${login.stdout()}\nstderr: ${login.stderr()}`);
        assert.equal(login.stderr(), '');
        assert.match(login.stdout(), /Logged in: tokens for desktop-public are stored in /);
      } finally {
        clearInterval(ticker);
        await context.close();
      }

      assert.equal(mode(tokenFile), 0o600);
      const first = readTokenFile(tokenFile);
      assert.equal(first.client_id, PUBLIC.id);
      assert.equal(first.client_auth, 'none');
      assert.equal((await verify(first.access_token)).azp, PUBLIC.id);

      // A public client refreshes with its client id alone.
      ts.clock.advance(ACCESS_TOKEN_LIFETIME);
      let run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 0, run.stderr);
      const refreshed = run.stdout.trim();
      assert.notEqual(refreshed, first.access_token);
      assert.equal((await verify(refreshed)).azp, PUBLIC.id);
      assert.notEqual(readTokenFile(tokenFile).refresh_token, first.refresh_token);

      // A public client's tokens need no secret; one given by mistake is refused before any request.
      run = await runToEnd(ts, ['token', ...settings, '--client-secret', 'oops']);
      assert.equal(run.code, 64);
      assertOneLineError(run.stderr, /public client/);

      // The administrator revokes everything issued so far in the realm.
      await ts.store.realms.update(REALM, { notBefore: nowSeconds(ts.clock) + 1 });
      ts.clock.advance(ACCESS_TOKEN_LIFETIME);
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 2, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
      assertOneLineError(run.stderr, /revoked by the realm.*run "client\.mjs login" again/);
      assert.ok(!fs.existsSync(tokenFile));
    }, dialect);
  });

  if (part === 'device') test(`desktop client: a wrong code, a foreign state and wrong credentials fail with one line and store nothing (${dialect})`, async () => {
    await withServer(async (ts, dir) => {
      const tokenFile = path.join(dir, 'tokens.json');
      const settings = settingsFor(ts, tokenFile, CONFIDENTIAL);

      const paste = async (args: string[], line: string): Promise<{ code: number | null; stderr: string }> => {
        const child = runClient(ts, args);
        await child.waitForStdout(/Code: $/);
        child.proc.stdin.write(`${line}\n`);
        return { code: await child.exit, stderr: child.stderr() };
      };
      let r = await paste(['login', ...settings], 'not-a-real-code');
      assert.equal(r.code, 1);
      assertOneLineError(r.stderr, /code was not accepted \(the authorization code is invalid\)/);
      r = await paste(['login', ...settings], `${ts.baseUrl}/authentication_code?code=abc&state=someone-elses`);
      assert.equal(r.code, 1);
      assertOneLineError(r.stderr, /another sign-in/);
      r = await paste(['login', ...settings], `${ts.baseUrl}/authentication_code?error=access_denied&error_description=the+user+denied+access`);
      assert.equal(r.code, 1);
      assertOneLineError(r.stderr, /access_denied \(the user denied access\)/);

      let run = await runToEnd(ts, ['login', ...settings]);
      assert.equal(run.code, 1);
      assertOneLineError(run.stderr, /no code was entered/);

      run = await runToEnd(ts, ['login', '--device', ...settingsFor(ts, tokenFile, { id: CONFIDENTIAL.id, secret: 'wrong' })]);
      assert.equal(run.code, 1);
      assertOneLineError(run.stderr, /invalid_client/);

      run = await runToEnd(ts, ['login', ...settings, '--issuer', `${ts.baseUrl}/auth/realms/nope`]);
      assert.equal(run.code, 1);
      assertOneLineError(run.stderr, /HTTP 404/);

      assert.ok(!fs.existsSync(tokenFile));
      run = await runToEnd(ts, ['token', ...settings]);
      assert.equal(run.code, 2);
      assertOneLineError(run.stderr, /not logged in/);
    }, dialect);
  });
}

/** What does not depend on the database (run once, with SQLite). */
export function desktopClientCommonTests(): void {

  test('desktop client: --help, exit statuses for a wrong command line, http only for loopback issuers', async () => {
    // No server is needed for these; a stand-in for the clock offset.
    const ts = { clock: { nowMs: () => Date.now() } } as unknown as TestServer;
    const help = await runToEnd(ts, ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: client\.mjs/);
    assert.match(help.stdout, /Exit status:/);
    for (const [args, re] of [
      [['--bogus'], /unknown option --bogus/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['token', '--device'], /--device goes with the login command/],
      [['login', '--client-id', 'x'], /the issuer is missing/],
      [['login', '--issuer', 'http://auth.example.com/auth/realms/demo', '--client-id', 'x'], /refusing the http issuer/],
    ] as const) {
      const r = await runToEnd(ts, [...args]);
      assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
      assertOneLineError(r.stderr, re);
    }
    // Nothing listens on this port any more: a network error, in one line.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const r = await runToEnd(ts, ['login', '--issuer', `http://127.0.0.1:${port}/auth/realms/demo`, '--client-id', 'x']);
    assert.equal(r.code, 1);
    assertOneLineError(r.stderr, /cannot reach the server/);
  });
}
