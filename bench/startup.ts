/**
 * Start-up benchmark: how long `realmgate start` takes to be ready, and how much memory it holds idle.
 *
 *   npm run bench:startup [-- --runs 7 --workers 1,default --idle 2000]
 *
 * For each workers setting (`1`, or `default`: no --workers, one process per CPU core) and each database
 * state (`fresh`: a new SQLite file; `existing`: a file an earlier start already migrated and filled), it
 * starts `node bin/realmgate.js start --workers N --port P --host 127.0.0.1` `runs` times, polls
 * GET /health/ready every 2 ms, and records the time from spawn to the first 200; then, after `idle` ms
 * without requests, VmRSS of every process (/proc/<pid>/status: the primary and, with a cluster, each
 * worker), with its PSS and private memory (/proc/<pid>/smaps_rollup: RSS counts in full the pages of the
 * node binary and libraries that every Node.js process shares, about 37 MB; PSS divides each shared page
 * among the processes mapping it, so the PSS of a cluster's processes add up to what they take). It prints the medians (and min/max) per setting, and the median CPU time (user + system) of the
 * processes' main threads until ready, which a busy machine disturbs less than the wall time.
 *
 * Options (or the environment): --runs (BENCH_STARTUP_RUNS, default 7), --workers (BENCH_STARTUP_WORKERS,
 * comma-separated, default `1,default`), --idle (BENCH_STARTUP_IDLE_MS, default 2000), --db
 * (BENCH_STARTUP_DB, `fresh,existing` by default), --entry (BENCH_STARTUP_ENTRY, default bin/realmgate.js:
 * another build, e.g. an unminified bundle; several, comma-separated, are started in turn, run after run,
 * so that a comparison shares the machine's ups and downs), --node-arg (BENCH_STARTUP_NODE_ARGS, space-separated: e.g.
 * `--node-arg="--cpu-prof --cpu-prof-dir=/tmp/prof"`). The database has a realm master with its bootstrap admin (as an
 * operator's first start makes it), so a start checks one realm's keys. Run `npm run build` first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string' },
    workers: { type: 'string' },
    idle: { type: 'string' },
    db: { type: 'string' },
    entry: { type: 'string' },
    'node-arg': { type: 'string' },
  },
});
const runs = Number(args.runs ?? process.env.BENCH_STARTUP_RUNS ?? 7);
const idleMs = Number(args.idle ?? process.env.BENCH_STARTUP_IDLE_MS ?? 2000);
const workerSettings = (args.workers ?? process.env.BENCH_STARTUP_WORKERS ?? '1,default').split(',').map((s) => s.trim());
const dbStates = (args.db ?? process.env.BENCH_STARTUP_DB ?? 'fresh,existing').split(',').map((s) => s.trim()) as ('fresh' | 'existing')[];
const entries = (args.entry ?? process.env.BENCH_STARTUP_ENTRY ?? 'bin/realmgate.js').split(',').map((e) => path.resolve(ROOT, e.trim()));
const nodeArgs = (args['node-arg'] ?? process.env.BENCH_STARTUP_NODE_ARGS ?? '').split(' ').filter((s) => s !== '');
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');
if (!fs.existsSync(path.join(ROOT, 'dist/realmgate.mjs'))) throw new Error('dist/realmgate.mjs is missing: run npm run build first');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** PSS and private (clean + dirty) memory of a process in MB, from smaps_rollup; NaN when it is gone. */
function smapsMb(pid: number): { pss: number; priv: number } {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { pss: kb('Pss') / 1024, priv: (kb('Private_Clean') + kb('Private_Dirty')) / 1024 };
  } catch {
    return { pss: NaN, priv: NaN };
  }
}

/** VmRSS of a process in MB, or undefined when it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/**
 * User + system CPU time of a process's main thread (the JavaScript thread) in ms, clock-tick resolution;
 * 0 when it is gone. Helper threads (GC, the libuv pool hashing a password or making a key) are not in it.
 */
function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** Direct children of a process (the cluster's workers). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      for (const c of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

function env(dir: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `sqlite:${path.join(dir, 'realmgate.db')}`,
    LOG_LEVEL: 'warn',
    REALMGATE_BOOTSTRAP_ADMIN_USERNAME: 'admin',
    REALMGATE_BOOTSTRAP_ADMIN_PASSWORD: 'startup bench password',
  };
  // No management port (unless the caller's environment names one): the plain `start`.
  for (const k of ['REALMGATE_KEY_SECRET', 'REALMGATE_KEY_FILE', 'AUTH_URL', 'APP_URL', 'PORT', 'HOST']) delete e[k];
  return e;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

interface Run {
  readyMs: number;
  /** CPU time the main threads of all processes had used when the server was ready: less sensitive than wall time to a loaded machine. */
  cpuMs: number;
  /** VmRSS of the primary (or the single process), then of each worker. */
  rss: number[];
  /** PSS and private memory, in the same order. */
  pss: number[];
  priv: number[];
}

async function startOnce(entry: string, dir: string, workers: string, measureRss: boolean): Promise<Run> {
  const port = await freePort();
  const cli = ['start', '--port', String(port), '--host', HOST, ...(workers === 'default' ? [] : ['--workers', workers])];
  let stderr = '';
  const t0 = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, entry, ...cli], { cwd: dir, env: env(dir), stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    let readyMs: number | undefined;
    while (readyMs === undefined) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${stderr}`);
      if (performance.now() - t0 > 30_000) throw new Error(`not ready after 30 s: ${stderr}`);
      try {
        const r = await fetch(`http://${HOST}:${port}/health/ready`);
        await r.arrayBuffer();
        if (r.status === 200) readyMs = performance.now() - t0;
      } catch {
        await sleep(2);
      }
    }
    const cpu = [child.pid!, ...childrenOf(child.pid!)].reduce((sum, pid) => sum + cpuMs(pid), 0);
    const rss: number[] = [];
    const pss: number[] = [];
    const priv: number[] = [];
    if (measureRss) {
      const expected = workers === 'default' ? os.availableParallelism() : Number(workers);
      // Every worker listening (each answers a request) before the idle time starts.
      const until = performance.now() + 30_000;
      while (expected > 1 && childrenOf(child.pid!).length < expected && performance.now() < until) await sleep(10);
      await sleep(idleMs);
      const pids = [child.pid!, ...(expected > 1 ? childrenOf(child.pid!) : [])];
      for (const pid of pids) {
        rss.push(rssMb(pid) ?? NaN);
        const m = smapsMb(pid);
        pss.push(m.pss);
        priv.push(m.priv);
      }
    }
    return { readyMs, cpuMs: cpu, rss, pss, priv };
  } finally {
    await stop(child);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
const f0 = (x: number): string => x.toFixed(0);
const f1 = (x: number): string => x.toFixed(1);

function report(label: string, results: Run[]): void {
  const ready = results.map((r) => r.readyMs);
  const cpu = results.map((r) => r.cpuMs);
  const primary = results.map((r) => r.rss[0]!);
  const workerRss = results.flatMap((r) => r.rss.slice(1));
  const total = results.map((r) => r.rss.reduce((a, b) => a + b, 0));
  let line = `${label.padEnd(entries.length > 1 ? 36 : 20)} ready median ${f0(median(ready))} ms (min ${f0(Math.min(...ready))}, max ${f0(Math.max(...ready))}), main-thread CPU ${f0(median(cpu))} ms  RSS ${workerRss.length ? 'primary' : 'process'} median ${f1(median(primary))} MB`;
  if (workerRss.length) line += `, per worker median ${f1(median(workerRss))} MB (${workerRss.length / results.length} workers), all processes ${f1(median(total))} MB`;
  const pssTotal = results.map((r) => r.pss.reduce((a, b) => a + b, 0));
  const privTotal = results.map((r) => r.priv.reduce((a, b) => a + b, 0));
  line += `; PSS ${workerRss.length ? 'all processes ' : ''}median ${f1(median(pssTotal))} MB, private ${f1(median(privTotal))} MB`;
  console.log(line);
}

console.log(`startup bench: ${runs} runs each, idle ${idleMs} ms before reading VmRSS, ${os.availableParallelism()} CPUs, node ${process.version}, entry ${entries.map((e) => path.relative(ROOT, e)).join(', ')}${nodeArgs.length ? ` ${nodeArgs.join(' ')}` : ''}`);
// Node.js reads the whole file at start-up when it is set (about 1 MB more of every process's memory).
if (process.env.NODE_EXTRA_CA_CERTS) console.log(`NODE_EXTRA_CA_CERTS is set (${process.env.NODE_EXTRA_CA_CERTS}): each process loads those certificates, ~1 MB of RSS; unset it (env -u NODE_EXTRA_CA_CERTS) to measure a default deployment`);
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-startup-'));
try {
  // The existing database: made by one start (migrations, key file, realm master, its keys and admin).
  const existing = path.join(base, 'existing');
  fs.mkdirSync(existing);
  await startOnce(entries[0]!, existing, '1', false);
  for (const workers of workerSettings) {
    for (const db of dbStates) {
      const results = new Map<string, Run[]>(entries.map((e) => [e, []]));
      for (let i = 0; i < runs; i++) {
        for (const entry of entries) {
          let dir = existing;
          if (db === 'fresh') {
            dir = path.join(base, `fresh-${workers}-${i}`);
            fs.mkdirSync(dir);
          }
          results.get(entry)!.push(await startOnce(entry, dir, workers, true));
          if (db === 'fresh') fs.rmSync(dir, { recursive: true, force: true });
        }
      }
      for (const [entry, list] of results) report(`${entries.length > 1 ? `${path.basename(entry)} ` : ''}workers=${workers} ${db}`, list);
    }
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
