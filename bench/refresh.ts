/**
 * Refresh-grant benchmark: the real server in its own process, over a fresh database, driven over HTTP.
 *
 *   npm run bench [-- --duration 10 --concurrency 32 --warmup 2]
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2), BENCH_CONCURRENCY (default 32),
 * BENCH_DATABASE_URL (a postgres:// URL, TEST_DATABASE_URL when unset: also run against PostgreSQL, in a
 * fresh schema that is dropped afterwards), BENCH_PROFILE=1 (run the server under --cpu-prof and summarize the timed window),
 * BENCH_SQLITE_SYNCHRONOUS (default: the server's default, FULL), BENCH_BUILD=1 (always rebuild dist/),
 * BENCH_SIGNING_ALG (RS256, the default, ES256 or EdDSA: the realm's access token signing algorithm),
 * BENCH_WORKERS (server processes, default 1: `start --workers`; bench:compare takes a list, e.g. 1,2, and measures each).
 *
 * With BENCH_DATABASE_URL the summary puts SQLite and PostgreSQL side by side: refreshes/s, server and
 * PostgreSQL CPU per refresh, and the rows and bytes of the tables a refresh can grow after the
 * sustained load, with their growth per refresh (and PostgreSQL's WAL bytes per refresh).
 *
 * What it does, per database: seeds a realm, organization, user and confidential client with the admin
 * operations; starts `node dist/realmgate.mjs start` as a child (so its CPU time and RSS can be read from /proc);
 * logs in once through the authorization endpoint and the login, consent and organization forms, then
 * gets one code per worker through single sign-on and exchanges each for a refresh token; then each of
 * N workers refreshes its own chain back to back, over one keep-alive connection pool of N connections,
 * for a warm-up and a timed window. Only requests that complete inside the timed window are counted.
 * The load generator runs on the same machine and its CPU time is printed too.
 *
 * The measuring part (startServer, measure, the Browser) knows nothing of Realmgate: a Target says how to
 * start a server and get refresh chains from it. bench/compare.ts runs the same measurement against
 * node-oidc-provider.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Agent, Pool, fetch } from 'undici';
import { openDatabase, migrate } from '../src/storage/database.js';
import { Store } from '../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../src/admin/operations.js';
import { summarizeProfileFile } from './cpuprofile-summary.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const REALM = 'bench';
const ORG = 'acme';
const USERNAME = 'alice';
const PASSWORD = 'bench password 1234';
const CLIENT_ID = 'bench-app';
// Never fetched: the code is read from the Location header.
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
// Without openid: the specification's token response has no id_token (with it, each refresh signs twice).
const SCOPE = process.env.BENCH_SCOPE ?? 'profile email core_data offline_access';
const MAX_PRINTED_FAILURES = 10;

// ---------------------------------------------------------------------------------------------------
// Options

export const BENCH_OPTIONS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  concurrency: { type: 'string' },
} as const;

export interface BenchOptions {
  durationS: number;
  warmupS: number;
  concurrency: number;
}

function numberOption(cli: string | undefined, env: string, def: number, min: number, max: number): number {
  const raw = cli ?? process.env[env];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${env} must be a number from ${min} to ${max}, got ${raw}`);
  return n;
}

/** The load's shape, from the command line (BENCH_OPTIONS) or the environment. */
export function benchOptions(cli: { duration?: string | undefined; warmup?: string | undefined; concurrency?: string | undefined }, defaultConcurrency = 32): BenchOptions {
  return {
    durationS: numberOption(cli.duration, 'BENCH_DURATION', 10, 0.5, 600),
    warmupS: numberOption(cli.warmup, 'BENCH_WARMUP', 2, 0, 120),
    concurrency: Math.floor(numberOption(cli.concurrency, 'BENCH_CONCURRENCY', defaultConcurrency, 1, 1024)),
  };
}

const PROFILE = process.env.BENCH_PROFILE === '1' || process.env.BENCH_PROFILE === 'true';
const SQLITE_SYNC = process.env.BENCH_SQLITE_SYNCHRONOUS;
const SIGNING_ALG = process.env.BENCH_SIGNING_ALG;
/** The label of a Realmgate run on SQLite: the synchronous pragma it runs with. */
export const SQLITE_LABEL = `sqlite(synchronous=${(SQLITE_SYNC ?? 'FULL').toUpperCase()})`;

// ---------------------------------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.now();

const T0 = performance.now();
export function log(line: string): void {
  const lead = line.startsWith('\n') ? '\n' : '';
  const t = `${((performance.now() - T0) / 1000).toFixed(1).padStart(5)}s `;
  const rest = line.slice(lead.length);
  process.stdout.write(lead + (rest.startsWith('[') ? t : '') + rest + '\n');
}

function clockTicks(): number {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
}
const CLK_TCK = clockTicks();

/** utime + stime of a process or thread, in ms. */
function cpuMsOf(statPath: string): number {
  const stat = fs.readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from "state" (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

function processCpuMs(pid: number): number {
  return cpuMsOf(`/proc/${pid}/stat`);
}

/** The process and its descendants (`start --workers N`: the primary and its workers). */
function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      parents.set(Number(p), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** CPU ms of the process and its descendants. */
function treeCpuMs(pids: number[]): number {
  let total = 0;
  for (const p of pids) {
    try {
      total += processCpuMs(p);
    } catch {
      // A worker that ended.
    }
  }
  return total;
}

interface ThreadTimes {
  /** CPU time, ms (schedstat's nanoseconds where the kernel has them, else utime + stime). */
  cpu: number;
  /** Time runnable but waiting for a core, ms (NaN without schedstat). */
  wait: number;
}

/** Per-thread CPU and run-queue wait, keyed by thread id. */
function threadTimes(pid: number, out = new Map<number, ThreadTimes>()): Map<number, ThreadTimes> {
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const dir = `/proc/${pid}/task/${tid}`;
    try {
      let t: ThreadTimes;
      try {
        const [run, wait] = fs.readFileSync(`${dir}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
        t = { cpu: run! / 1e6, wait: wait! / 1e6 };
      } catch {
        t = { cpu: cpuMsOf(`${dir}/stat`), wait: NaN };
      }
      out.set(Number(tid), t);
    } catch {
      // The thread ended between readdir and read.
    }
  }
  return out;
}

/** Every thread of the processes, and which process each belongs to. */
function threadsOf(pids: number[]): { threads: Map<number, ThreadTimes>; threadOwner: Map<number, number> } {
  const threads = new Map<number, ThreadTimes>();
  const threadOwner = new Map<number, number>();
  for (const p of pids) {
    const before = new Set(threads.keys());
    try {
      threadTimes(p, threads);
    } catch {
      continue;
    }
    for (const t of threads.keys()) if (!before.has(t)) threadOwner.set(t, p);
  }
  return { threads, threadOwner };
}

/** The largest VmRSS (and its VmHWM) among the processes. */
function largestMemory(pids: number[]): { rss: number; hwm: number } {
  let best = { rss: 0, hwm: 0 };
  for (const p of pids) {
    try {
      const m = memoryMb(p);
      if (m.rss > best.rss) best = m;
    } catch {
      // Ended meanwhile.
    }
  }
  return best;
}

/** CPU ms of every local process named postgres (server and backends), or undefined when there is none. */
function localPostgresCpuMs(): number | undefined {
  let total: number | undefined;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      total = (total ?? 0) + processCpuMs(Number(pid));
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** VmRSS and VmHWM in MB. */
function memoryMb(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function basic(id: string, secret: string): string {
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  return 'Basic ' + Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64');
}

export function fmt(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return 'n/a';
  return n >= 100 ? n.toFixed(0) : n.toFixed(digits);
}

// ---------------------------------------------------------------------------------------------------
// Build

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export function ensureBuilt(): void {
  const cli = path.join(ROOT, 'dist', 'realmgate.mjs');
  const stale = !fs.existsSync(cli) || fs.statSync(cli).mtimeMs < newestMtime(path.join(ROOT, 'src'));
  if (!stale && process.env.BENCH_BUILD !== '1') return;
  log('building dist/ (npm run build) ...');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

// ---------------------------------------------------------------------------------------------------
// Seeding

async function seed(databaseUrl: string, signingAlg: string | undefined): Promise<string> {
  const db = await openDatabase(databaseUrl, { synchronous: 'FULL' });
  try {
    await migrate(db);
    const store = new Store(db);
    await createRealm(store, { id: REALM, displayName: 'Bench Realm', ...(signingAlg ? { settings: { signingAlg } } : {}) });
    await createOrganization(store, { realmId: REALM, alias: ORG, name: 'Acme Inc.' });
    await createUser(store, { realmId: REALM, username: USERNAME, password: PASSWORD, email: 'alice@example.com', orgAliases: [ORG] });
    // A generated secret: the fast path of client authentication (one SHA-256).
    const { secret } = await createClient(store, { realmId: REALM, clientId: CLIENT_ID, redirectUris: [REDIRECT_URI], name: 'Bench App' });
    if (!secret) throw new Error('no client secret');
    return secret;
  } finally {
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// The server process

export interface Server {
  child: ChildProcess;
  pid: number;
  base: string;
  readyMs: number;
  /** process.hrtime when the readiness path first answered 200. */
  readyHr: bigint;
  output: string[];
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
}

/** How to start a server: a Node script, its arguments given the port, and the path that tells it is ready. */
export interface ServerSpec {
  script: string;
  args: (port: number) => string[];
  /** The child's environment; NODE_OPTIONS is always removed. */
  env: NodeJS.ProcessEnv;
  /** Polled until it answers 200; the time from spawn to then is the ready time. */
  readyPath: string;
  /** Run under --cpu-prof, writing the profile here. */
  profileDir?: string | undefined;
}

const children = new Set<ChildProcess>();
/** Removed at exit, also when interrupted. */
const tempDirs = new Set<string>();

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

function realmgateServer(databaseUrl: string, profileDir: string | undefined, workers: number): ServerSpec {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', HOST };
  delete env.PORT;
  delete env.AUTH_URL;
  delete env.APP_URL;
  if (SQLITE_SYNC) env.REALMGATE_SQLITE_SYNCHRONOUS = SQLITE_SYNC;
  else delete env.REALMGATE_SQLITE_SYNCHRONOUS;
  return {
    script: path.join(ROOT, 'dist', 'realmgate.mjs'),
    // One process by default; BENCH_WORKERS=N runs the cluster (CPU is then read from every process).
    args: (port) => ['start', '--port', String(port), '--host', HOST, '--workers', String(workers)],
    env,
    readyPath: '/health/ready',
    profileDir,
  };
}

/** Spawns the server on a free port of 127.0.0.1 and waits until it is ready. */
export async function startServer(spec: ServerSpec): Promise<Server> {
  const port = await freePort();
  const env = { ...spec.env };
  delete env.NODE_OPTIONS;
  const nodeArgs = spec.profileDir ? ['--cpu-prof', '--cpu-prof-dir', spec.profileDir] : [];
  const started = now();
  const child = spawn(process.execPath, [...nodeArgs, spec.script, ...spec.args(port)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output: string[] = [];
  const keep = (prefix: string) => (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line) output.push(prefix + line);
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout!.on('data', keep(''));
  child.stderr!.on('data', (chunk: Buffer) => {
    keep('stderr: ')(chunk);
    process.stderr.write(`[server] ${chunk.toString('utf8')}`);
  });
  let exitedFlag = false;
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      exitedFlag = true;
      children.delete(child);
      resolve(signal ?? String(code));
    }),
  );
  if (child.pid === undefined) throw new Error('could not start the server');
  const base = `http://${HOST}:${port}`;

  // Time from spawn until the readiness path answers 200, polled every 5 ms on fresh connections.
  const deadline = started + 60_000;
  const probe = new Agent({ pipelining: 0 });
  try {
    for (;;) {
      if (exitedFlag) throw new Error(`the server exited during start-up:\n${output.join('\n')}`);
      if (now() > deadline) throw new Error(`the server was not ready within 60 s:\n${output.join('\n')}`);
      try {
        const res = await fetch(`${base}${spec.readyPath}`, { dispatcher: probe });
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // Not listening yet.
      }
      await sleep(5);
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    await probe.close();
  }
  return { child, pid: child.pid, base, readyMs: now() - started, readyHr: process.hrtime.bigint(), output, exited };
}

async function stopServer(s: Server): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([s.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 15_000)))]);
  clearTimeout(timer);
  if (!done) {
    log(`server ${s.pid} did not stop within 15 s: killing it`);
    s.child.kill('SIGKILL');
    await s.exited;
  }
}

// ---------------------------------------------------------------------------------------------------
// The browser side of the authorization code flow, over real HTTP

class CookieJar {
  private readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  update(setCookies: string[]): void {
    for (const sc of setCookies) {
      const [pair = '', ...attrs] = sc.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k = '', v = ''] = a.trim().split('=');
        if (k.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k.toLowerCase() === 'expires') return Date.parse(v) < Date.now();
        return false;
      });
      if (value === '' || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

export function unescapeHtml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

interface BrowserResponse {
  status: number;
  location: string | null;
  body: string;
}

export class Browser {
  readonly jar = new CookieJar();
  constructor(
    readonly base: string,
    private readonly agent: Agent,
  ) {}

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<BrowserResponse> {
    const headers: Record<string, string> = {};
    const cookie = this.jar.header();
    if (cookie) headers.cookie = cookie;
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(url, this.base), {
      method,
      redirect: 'manual',
      headers,
      dispatcher: this.agent,
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    this.jar.update(res.headers.getSetCookie());
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  }
}

/** Runs one authorization request at Realmgate to its end; returns the code the client receives. */
async function realmgateAuthorize(browser: Browser, codeChallenge: string): Promise<{ code: string; pages: string[] }> {
  const q = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: SCOPE,
    state: crypto.randomBytes(8).toString('hex'),
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
  });
  const pages: string[] = [];
  let res = await browser.request('GET', `/auth/realms/${REALM}/protocol/openid-connect/auth?${q}`);
  for (let step = 0; step < 10; step++) {
    if (res.status !== 303 || !res.location) throw new Error(`authorization: expected a 303, got ${res.status}: ${res.body.slice(0, 300)}`);
    const loc = new URL(res.location, browser.base);
    if (loc.origin !== browser.base || !loc.pathname.startsWith(`/auth/realms/${REALM}/login-actions/`)) {
      const code = loc.searchParams.get('code');
      if (!loc.href.startsWith(REDIRECT_URI) || !code) throw new Error(`authorization ended without a code: ${loc.href}`);
      return { code, pages };
    }
    const page = await browser.request('GET', loc.href);
    if (page.status !== 200) throw new Error(`interaction page: ${page.status}: ${page.body.slice(0, 300)}`);
    const action = /<form method="post" action="([^"]*)"/.exec(page.body)?.[1];
    const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)?.[1];
    if (!action || !csrf) throw new Error(`no form on the interaction page: ${page.body.slice(0, 300)}`);
    const form = { csrf: unescapeHtml(csrf) };
    if (page.body.includes('name="password"')) {
      pages.push('login');
      res = await browser.request('POST', unescapeHtml(action), { ...form, username: USERNAME, password: PASSWORD });
      if (res.status === 200) throw new Error('login failed');
    } else if (page.body.includes('name="decision"')) {
      pages.push('consent');
      res = await browser.request('POST', unescapeHtml(action), { ...form, decision: 'allow' });
    } else if (page.body.includes('name="organization"')) {
      pages.push('organization');
      res = await browser.request('POST', unescapeHtml(action), { ...form, organization: ORG });
    } else {
      throw new Error(`unexpected interaction page: ${page.body.slice(0, 300)}`);
    }
  }
  throw new Error('authorization: too many steps');
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

// ---------------------------------------------------------------------------------------------------
// The token endpoint

interface TokenResult {
  status: number;
  body: string;
  refreshToken: string | undefined;
}

/** One POST to a token endpoint over the pool; the refresh token of a 200 answer is picked out. */
async function tokenRequest(pool: Pool, tokenPath: string, authorization: string, form: string): Promise<TokenResult> {
  const res = await pool.request({
    method: 'POST',
    path: tokenPath,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body: form,
  });
  const body = await res.body.text();
  let refreshToken: string | undefined;
  if (res.statusCode === 200) {
    try {
      const rt = (JSON.parse(body) as { refresh_token?: unknown }).refresh_token;
      if (typeof rt === 'string') refreshToken = rt;
    } catch {
      // Counted as a failure below.
    }
  }
  return { status: res.statusCode, body, refreshToken };
}

/** Exchanges an authorization code (sent with its PKCE verifier); returns the body and the refresh token. */
export async function exchangeCode(
  pool: Pool,
  tokenPath: string,
  authorization: string,
  grant: { code: string; redirectUri: string; verifier: string },
): Promise<{ refreshToken: string; body: string }> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, redirect_uri: grant.redirectUri, code_verifier: grant.verifier }).toString();
  const r = await tokenRequest(pool, tokenPath, authorization, form);
  if (r.status !== 200 || !r.refreshToken) throw new Error(`code exchange: ${r.status}: ${r.body.slice(0, 300)}`);
  return { refreshToken: r.refreshToken, body: r.body };
}

/** What a token response holds: the access token's size, JOSE header and claim names; an ID token or not. */
function describeTokens(body: string): string {
  const json = JSON.parse(body) as { access_token?: string; id_token?: string };
  const token = json.access_token ?? '';
  const [h = '', p = ''] = token.split('.');
  const decode = (s: string): unknown => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  let what: string;
  try {
    what = `JWT ${JSON.stringify(decode(h))} with ${Object.keys(decode(p) as object).join(' ')}`;
  } catch {
    what = 'opaque';
  }
  return `(${Object.keys(json).join(' ')}): access token of ${token.length} B, ${what}; ${json.id_token ? 'an' : 'no'} id_token`;
}

// ---------------------------------------------------------------------------------------------------
// What is measured: a server and how to get refresh chains from it

export interface Target {
  label: string;
  /** The server's start: a fresh process on a free port (under --cpu-prof when profileDir is given). */
  start(profileDir: string | undefined): Promise<Server>;
  tokenPath: string;
  /** The client's Authorization header. */
  authorization: string;
  /** One authorization through the browser (its session, once logged in, is reused), its code exchanged. */
  newChain(browser: Browser, pool: Pool): Promise<{ refreshToken: string; pages: string[]; body: string }>;
  /** Also sample the CPU time of the local PostgreSQL processes. */
  postgres?: boolean;
  /** Table sizes (and PostgreSQL's WAL position), read on a connection of its own before and after the load. */
  dbStats?(): Promise<DbStats>;
}

export interface DbStats {
  tables: Record<string, { rows: number; bytes: number }>;
  /** PostgreSQL: pg_current_wal_lsn() as a byte count. */
  walLsn?: number;
}

/** The tables a refresh can grow. */
const GROWING_TABLES = ['refresh_chains', 'refresh_tokens', 'events', 'authorization_codes'];

/** Rows and bytes (table plus its indexes) of the tables a refresh can grow. */
export async function readDbStats(databaseUrl: string): Promise<DbStats> {
  const tables: DbStats['tables'] = {};
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: BetterSqlite3 } = await import('better-sqlite3');
    const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      // dbstat: pages per b-tree; an index's b-tree counts towards its table (as pg_total_relation_size).
      const pages = db.prepare(`SELECT coalesce(m.tbl_name, d.name) AS t, sum(d.pgsize) AS bytes FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY t`).all() as Array<{ t: string; bytes: number }>;
      for (const t of GROWING_TABLES) {
        const rows = (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
        tables[t] = { rows, bytes: pages.find((p) => p.t === t)?.bytes ?? 0 };
      }
    } finally {
      db.close();
    }
    return { tables };
  }
  const u = new URL(databaseUrl);
  const schema = u.searchParams.get('schema') ?? 'public';
  u.searchParams.delete('schema');
  const c = new pg.Client({ connectionString: u.href });
  await c.connect();
  try {
    for (const t of GROWING_TABLES) {
      const r = await c.query<{ rows: string; bytes: string }>(`SELECT (SELECT count(*) FROM ${schema}.${t}) AS rows, pg_total_relation_size('${schema}.${t}') AS bytes`);
      tables[t] = { rows: Number(r.rows[0]!.rows), bytes: Number(r.rows[0]!.bytes) };
    }
    const w = await c.query<{ b: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS b`);
    return { tables, walLsn: Number(w.rows[0]!.b) };
  } finally {
    await c.end();
  }
}

/** Seeds the database and describes Realmgate on it. */
/** BENCH_WORKERS: the server processes (`start --workers`); a list (e.g. 1,2) where a script measures several. */
export function benchWorkers(): number[] {
  const list = (process.env.BENCH_WORKERS ?? '1').split(',').map((w) => Number(w.trim()));
  if (list.some((w) => !Number.isInteger(w) || w < 1 || w > 64)) throw new Error(`BENCH_WORKERS: worker counts from 1 to 64, got ${process.env.BENCH_WORKERS}`);
  return list;
}

export async function realmgateTarget(label: string, databaseUrl: string, opts: { signingAlg?: string | undefined; workers?: number } = {}): Promise<Target> {
  const signingAlg = opts.signingAlg ?? SIGNING_ALG;
  log(`\n[${label}] seeding ${databaseUrl.replace(/\/\/[^@/]*@/, '//***@')}${signingAlg ? `, realm signing with ${signingAlg}` : ''}`);
  const secret = await seed(databaseUrl, signingAlg);
  const tokenPath = `/auth/realms/${REALM}/protocol/openid-connect/token`;
  const authorization = basic(CLIENT_ID, secret);
  return {
    label,
    start: (profileDir) => startServer(realmgateServer(databaseUrl, profileDir, opts.workers ?? benchWorkers()[0]!)),
    tokenPath,
    authorization,
    async newChain(browser, pool) {
      const { verifier, challenge } = pkce();
      const { code, pages } = await realmgateAuthorize(browser, challenge);
      return { ...(await exchangeCode(pool, tokenPath, authorization, { code, redirectUri: REDIRECT_URI, verifier })), pages };
    },
    postgres: !databaseUrl.startsWith('sqlite:'),
    dbStats: () => readDbStats(databaseUrl),
  };
}

// ---------------------------------------------------------------------------------------------------
// One measurement against one server

export interface Result {
  label: string;
  concurrency: number;
  durationS: number;
  ok: number;
  failed: number;
  windowS: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  cpuMsPerReq: number;
  mainCpuMsPerReq: number;
  /** CPU and run-queue wait per request, by thread group (main, V8 platform, libuv pool). */
  threads: Array<{ name: string; cpuMsPerReq: number; waitMsPerReq: number }>;
  clientCpuMsPerReq: number;
  /** CPU of the local PostgreSQL processes per request (PostgreSQL runs only). */
  dbCpuMsPerReq: number | undefined;
  rssIdle: number;
  rssLoaded: number;
  hwm: number;
  readyMs: number;
  setupMs: number;
  /** Refreshes of the whole load (warm-up and timed window), for the per-refresh growth below. */
  loadRefreshes: number;
  dbBefore?: DbStats | undefined;
  dbAfter?: DbStats | undefined;
}

/**
 * Starts the target's server, gets one refresh chain per worker, runs the load (warm-up, then the timed
 * window), prints what it measured and stops the server.
 */
export async function measure(target: Target, opts: BenchOptions): Promise<Result> {
  const { label, tokenPath, authorization } = target;
  const { concurrency, warmupS, durationS } = opts;
  const profileDir = PROFILE ? tempDir('realmgate-bench-prof-') : undefined;
  const server = await target.start(profileDir);
  const { pid, base } = server;
  let pool: Pool | undefined;
  const agent = new Agent({ connections: 2 });
  try {
    // With `start --workers N` the primary forks its workers: each is measured, and RSS is the largest
    // process's (the figure the memory goal is about).
    let tree = processTree(pid);
    const idle = largestMemory(tree);
    log(`[${label}] server pid ${pid} ready in ${server.readyMs.toFixed(0)} ms (spawn to first 200); rss idle ${idle.rss.toFixed(1)} MB`);

    // N refresh chains: one login, then single sign-on for each further code.
    pool = new Pool(base, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
    const browser = new Browser(base, agent);
    const setupStart = now();
    const chains: string[] = [];
    {
      const first = await target.newChain(browser, pool);
      chains.push(first.refreshToken);
      log(`[${label}] first authorization went through: ${first.pages.join(', ')}; the code exchange answered ${describeTokens(first.body)}`);
    }
    while (chains.length < concurrency) chains.push((await target.newChain(browser, pool)).refreshToken);
    const setupMs = now() - setupStart;
    log(`[${label}] ${concurrency} refresh chains (1 login + ${concurrency} code exchanges) in ${setupMs.toFixed(0)} ms`);
    const dbBefore = await target.dbStats?.();

    // The load: warm-up, then the timed window. Samples of /proc are taken by timers.
    const t0 = now();
    const measureStartPlanned = t0 + warmupS * 1000;
    const stopAt = measureStartPlanned + durationS * 1000;
    let window: { start: number; end: number } | undefined;
    let before: { pgCpu: number | undefined; cpu: number; threads: Map<number, ThreadTimes>; threadOwner: Map<number, number>; client: NodeJS.CpuUsage; at: number; hr: bigint } | undefined;
    let after: typeof before;
    const sample = (): NonNullable<typeof before> => ({
      pgCpu: target.postgres ? localPostgresCpuMs() : undefined,
      cpu: treeCpuMs((tree = processTree(pid))),
      ...threadsOf(tree),
      client: process.cpuUsage(),
      at: now(),
      hr: process.hrtime.bigint(),
    });
    const startTimer = setTimeout(() => {
      before = sample();
    }, measureStartPlanned - now());
    const endTimer = setTimeout(() => {
      after = sample();
    }, stopAt - now());

    const ends: number[] = [];
    const lats: number[] = [];
    const failures: Array<{ at: number; status: number; body: string }> = [];
    const onFailure = (status: number, body: string): void => {
      failures.push({ at: now(), status, body });
      if (failures.length <= MAX_PRINTED_FAILURES) log(`[${label}] FAILURE ${status === -1 ? 'network error' : `HTTP ${status}`}: ${body.slice(0, 400)}`);
    };

    const worker = async (first: string): Promise<void> => {
      let rt: string | undefined = first;
      while (now() < stopAt) {
        if (rt === undefined) {
          // After a failure the chain may be gone: start another one (single sign-on, no login).
          try {
            rt = (await target.newChain(browser, pool!)).refreshToken;
          } catch (err) {
            onFailure(-1, `new chain: ${String(err)}`);
            return;
          }
          continue;
        }
        const start = now();
        let r: TokenResult;
        try {
          r = await tokenRequest(pool!, tokenPath, authorization, `grant_type=refresh_token&refresh_token=${encodeURIComponent(rt)}`);
        } catch (err) {
          r = { status: -1, body: String(err), refreshToken: undefined };
        }
        const end = now();
        if (r.status === 200 && r.refreshToken) {
          ends.push(end);
          lats.push(end - start);
          rt = r.refreshToken;
        } else {
          onFailure(r.status, r.status === 200 ? `200 without a refresh_token: ${r.body}` : r.body);
          rt = undefined;
          if (failures.length > 1000) return;
        }
      }
    };
    await Promise.all(chains.map((c) => worker(c)));
    const dbAfter = await target.dbStats?.();
    clearTimeout(startTimer);
    clearTimeout(endTimer);
    if (!before || !after) throw new Error('the timed window was not sampled');
    window = { start: before.at, end: after.at };

    const loaded = largestMemory(tree);
    const inWindow: number[] = [];
    for (let i = 0; i < ends.length; i++) if (ends[i]! >= window.start && ends[i]! <= window.end) inWindow.push(lats[i]!);
    const sorted = Float64Array.from(inWindow).sort();
    const ok = sorted.length;
    const windowS = (window.end - window.start) / 1000;
    const cpu = after.cpu - before.cpu;
    // Node names none of its threads, so they are told apart by creation order (thread ids ascend):
    // the main thread, then V8's platform threads (4 workers for GC and compilation, a delayed-task
    // scheduler, the signal/inspector thread), then, created on first use, libuv's thread pool (which
    // runs WebCrypto signing, argon2 and fs work). Under --cpu-prof the profiler's thread counts as pool.
    const tidsOf = new Map(tree.map((p) => [p, [...after!.threads.keys()].filter((t) => (after!.threadOwner.get(t) ?? pid) === p).sort((a, b) => a - b)]));
    const groups = new Map<string, ThreadTimes>();
    for (const [tid, a] of after.threads) {
      const b = before.threads.get(tid) ?? { cpu: 0, wait: 0 };
      const owner = after.threadOwner.get(tid) ?? pid;
      const rank = tidsOf.get(owner)?.indexOf(tid) ?? 0;
      const name = tid === owner ? 'main' : rank <= 6 ? 'V8 platform' : 'libuv pool';
      const g = groups.get(name) ?? { cpu: 0, wait: 0 };
      groups.set(name, { cpu: g.cpu + a.cpu - b.cpu, wait: g.wait + a.wait - b.wait });
    }
    const clientCpu = (after.client.user - before.client.user + after.client.system - before.client.system) / 1000;

    const dbCpu = before.pgCpu !== undefined && after.pgCpu !== undefined ? after.pgCpu - before.pgCpu : undefined;
    if (failures.length > MAX_PRINTED_FAILURES) log(`[${label}] ... ${failures.length - MAX_PRINTED_FAILURES} more failures not printed`);
    if (failures.length > 0) {
      const byStatus = new Map<number, number>();
      for (const f of failures) byStatus.set(f.status, (byStatus.get(f.status) ?? 0) + 1);
      log(`[${label}] failures by status: ${[...byStatus].map(([s, n]) => `${s === -1 ? 'error' : s}: ${n}`).join(', ')}`);
    }

    const result: Result = {
      label,
      concurrency,
      durationS,
      ok,
      failed: failures.length,
      windowS,
      rps: ok / windowS,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1]! : NaN,
      cpuMsPerReq: cpu / ok,
      mainCpuMsPerReq: (groups.get('main')?.cpu ?? NaN) / ok,
      threads: [...groups].map(([name, t]) => ({ name, cpuMsPerReq: t.cpu / ok, waitMsPerReq: t.wait / ok })),
      clientCpuMsPerReq: clientCpu / ok,
      dbCpuMsPerReq: dbCpu === undefined ? undefined : dbCpu / ok,
      rssIdle: idle.rss,
      rssLoaded: loaded.rss,
      hwm: loaded.hwm,
      readyMs: server.readyMs,
      setupMs,
      loadRefreshes: ends.length,
      dbBefore,
      dbAfter,
    };
    log(
      `[${label}] timed window ${windowS.toFixed(2)} s: ${ok} refreshes ok, ${failures.length} failed (whole run); ` +
        `${fmt(result.rps)} req/s; latency p50 ${fmt(result.p50, 2)} / p90 ${fmt(result.p90, 2)} / p99 ${fmt(result.p99, 2)} / max ${fmt(result.max, 2)} ms`,
    );
    log(
      `[${label}] server CPU ${cpu.toFixed(0)} ms = ${(result.cpuMsPerReq * 1000).toFixed(0)} µs/req ` +
        `(${((100 * cpu) / (windowS * 1000)).toFixed(0)}% of one core); by thread, CPU + waiting for a core: ` +
        result.threads.map((t) => `${t.name} ${(t.cpuMsPerReq * 1000).toFixed(0)} + ${(t.waitMsPerReq * 1000).toFixed(0)} µs/req`).join(', '),
    );
    log(
      `[${label}] load generator CPU ${(result.clientCpuMsPerReq * 1000).toFixed(0)} µs/req (${((100 * clientCpu) / (windowS * 1000)).toFixed(0)}% of one core); ` +
        (result.dbCpuMsPerReq !== undefined ? `local postgres processes CPU ${(result.dbCpuMsPerReq * 1000).toFixed(0)} µs/req; ` : '') +
        `server rss idle ${idle.rss.toFixed(1)} MB, after load ${loaded.rss.toFixed(1)} MB, peak ${loaded.hwm.toFixed(1)} MB`,
    );

    if (dbBefore && dbAfter) log(`[${label}] ${describeGrowth(result)}`);

    await pool.close();
    pool = undefined;
    await agent.close();
    const exitAt = process.hrtime.bigint();
    await stopServer(server);
    if (profileDir) {
      const file = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) {
        log(`[${label}] no .cpuprofile was written (did the server exit cleanly?)`);
      } else {
        const kept = path.join(os.tmpdir(), `realmgate-bench-${label.replace(/[^A-Za-z0-9]+/g, '-').replace(/-$/, '')}-${Date.now()}.cpuprofile`);
        fs.copyFileSync(path.join(profileDir, file), kept);
        // The profile's clock is CLOCK_MONOTONIC in µs, the clock of process.hrtime: same in both processes.
        const from = Number(before.hr / 1000n);
        const to = Number(after.hr / 1000n);
        const s = summarizeProfileFile(kept, { from, to, requests: ok });
        log(`\n[${label}] CPU profile of the server's main thread in the timed window (${kept}; stopped ${Number((process.hrtime.bigint() - exitAt) / 1_000_000n)} ms after load):`);
        log(s.text);
        const boot = summarizeProfileFile(kept, { to: Number(server.readyHr / 1000n), top: 12 });
        log(`\n[${label}] CPU profile of the server's start-up, until /health/ready answered (main thread):`);
        log(boot.text.split('\nself time by function:')[0]!);
      }
    }
    return result;
  } finally {
    await pool?.close().catch(() => undefined);
    await agent.close().catch(() => undefined);
    await stopServer(server);
    if (profileDir) removeTempDir(profileDir);
  }
}

// ---------------------------------------------------------------------------------------------------

export function summaryLine(r: Result): string {
  return (
    `refresh ${r.label}: ${fmt(r.rps, 0)} req/s  p50 ${fmt(r.p50)} ms  p90 ${fmt(r.p90)} ms  p99 ${fmt(r.p99)} ms  ` +
    `cpu ${r.cpuMsPerReq.toFixed(2)} ms/req (main ${r.mainCpuMsPerReq.toFixed(2)}${r.dbCpuMsPerReq !== undefined ? `; postgres ${r.dbCpuMsPerReq.toFixed(2)}` : ''})  ` +
    `rss idle ${r.rssIdle.toFixed(0)} MB / loaded ${r.rssLoaded.toFixed(0)} MB  ready ${r.readyMs.toFixed(0)} ms  ` +
    `[c=${r.concurrency}, ${r.durationS} s, ${r.failed} failed]`
  );
}

/** How the tables grew over the load: rows and bytes per refresh, and the size after it. */
export function describeGrowth(r: Result): string {
  const { dbBefore: b, dbAfter: a, loadRefreshes: n } = r;
  if (!a || !b || n === 0) return 'table sizes: n/a';
  const parts = Object.entries(a.tables).map(([t, x]) => {
    const y = b.tables[t] ?? { rows: 0, bytes: 0 };
    return `${t} ${x.rows} rows ${(x.bytes / 1024).toFixed(0)} KiB (${((x.rows - y.rows) / n).toFixed(2)} rows, ${((x.bytes - y.bytes) / n).toFixed(0)} B per refresh)`;
  });
  const wal = a.walLsn !== undefined && b.walLsn !== undefined ? `; WAL ${((a.walLsn - b.walLsn) / n).toFixed(0)} B per refresh` : '';
  return `after ${n} refreshes: ${parts.join(', ')}${wal}`;
}

/** The first line of a run: the load's shape and the machine. */
export function describeRun(title: string, opts: BenchOptions): string {
  return (
    `${title}: concurrency ${opts.concurrency}, warm-up ${opts.warmupS} s, timed ${opts.durationS} s; ` +
    `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), CLK_TCK ${CLK_TCK}` +
    (PROFILE ? '; server under --cpu-prof (slower)' : '')
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: BENCH_OPTIONS });
  const opts = benchOptions(values);
  ensureBuilt();
  log(describeRun('Realmgate refresh benchmark', opts));
  const results: Result[] = [];
  const tmp = tempDir('realmgate-bench-');
  try {
    results.push(await measure(await realmgateTarget(SQLITE_LABEL, `sqlite:${path.join(tmp, 'bench.db')}`), opts));
  } finally {
    removeTempDir(tmp);
  }

  // The test suite's PostgreSQL serves too, so that one `npm run bench` prints both databases side by side.
  const pgBase = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (pgBase) {
    const schema = `bench_${crypto.randomBytes(6).toString('hex')}`;
    const u = new URL(pgBase);
    u.searchParams.set('schema', schema);
    const plain = new URL(pgBase);
    plain.searchParams.delete('schema');
    try {
      results.push(await measure(await realmgateTarget('postgres', u.href), opts));
    } finally {
      const c = new pg.Client({ connectionString: plain.href });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    }
  } else {
    log('\n(PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL)=postgres://... to include it)');
  }

  log('\n--- summary ---');
  for (const r of results) log(summaryLine(r));
  log('\n--- side by side ---');
  log(sideBySide(results));
  const [lite, pgr] = results;
  if (lite && pgr) log(`\nPostgreSQL / SQLite refresh throughput in this run: x${(pgr.rps / lite.rps).toFixed(2)} (goal >= 0.7)`);
  if (results.some((r) => r.failed > 0)) process.exitCode = 1;
}

/** One column per database: throughput, CPU per refresh, latency, and the tables after the sustained load. */
export function sideBySide(results: Result[]): string {
  const rows: Array<[string, ...string[]]> = [
    ['', ...results.map((r) => r.label)],
    ['refreshes/s', ...results.map((r) => fmt(r.rps, 0))],
    ['server CPU ms/refresh', ...results.map((r) => r.cpuMsPerReq.toFixed(3))],
    ['postgres CPU ms/refresh', ...results.map((r) => (r.dbCpuMsPerReq === undefined ? '-' : r.dbCpuMsPerReq.toFixed(3)))],
    ['p50 / p99 ms', ...results.map((r) => `${fmt(r.p50, 2)} / ${fmt(r.p99, 2)}`)],
    ['refreshes in the load', ...results.map((r) => String(r.loadRefreshes))],
  ];
  for (const t of GROWING_TABLES) {
    rows.push([`${t} rows (+ per refresh)`, ...results.map((r) => {
      const a = r.dbAfter?.tables[t];
      const b = r.dbBefore?.tables[t];
      return a && b ? `${a.rows} (+${((a.rows - b.rows) / Math.max(1, r.loadRefreshes)).toFixed(2)})` : '-';
    })]);
    rows.push([`${t} KiB (+ B per refresh)`, ...results.map((r) => {
      const a = r.dbAfter?.tables[t];
      const b = r.dbBefore?.tables[t];
      return a && b ? `${(a.bytes / 1024).toFixed(0)} (+${((a.bytes - b.bytes) / Math.max(1, r.loadRefreshes)).toFixed(0)})` : '-';
    })]);
  }
  rows.push(['WAL B/refresh', ...results.map((r) => (r.dbAfter?.walLsn !== undefined && r.dbBefore?.walLsn !== undefined ? ((r.dbAfter.walLsn - r.dbBefore.walLsn) / Math.max(1, r.loadRefreshes)).toFixed(0) : '-'))]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

function killChildren(): void {
  for (const c of children) c.kill('SIGKILL');
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
}
process.on('exit', killChildren);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killChildren();
    process.exit(130);
  });
}

/** True in the script node was started with, false when imported (by bench/compare.ts). */
export function isMain(meta: ImportMeta): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(meta.url);
}

export function runMain(body: () => Promise<void>): void {
  body().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

if (isMain(import.meta)) runMain(main);
