/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof`): where the sampled thread's time went, by package
 * (self time), by function (self time) and by Realmgate function (inclusive time).
 *
 *   node --import tsx bench/cpuprofile-summary.ts FILE.cpuprofile [--from US --to US] [--requests N]
 *
 * --from/--to restrict the summary to samples whose timestamp (µs on the profile's clock, which on Linux
 * is CLOCK_MONOTONIC, the clock of process.hrtime) falls in that window; --requests turns times into
 * microseconds per request. The profile samples only the main JavaScript thread: work Node hands to its
 * thread pool (WebCrypto signing, argon2) or V8's helper threads (GC marking, compilation) is not in it.
 * Samples are wall-clock: time the thread spent blocked in a system call (an fsync) shows up too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SummaryOptions {
  /** Window start and end, µs on the profile's clock. */
  from?: number;
  to?: number;
  /** Requests completed in the window, to print µs per request. */
  requests?: number;
  /** How many rows of each table. */
  top?: number;
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** The package (or Node area) a frame belongs to. */
export function categoryOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  // better-sqlite3's statement calls are native: their time lands on the calling frame, Kysely's driver.
  if (functionName === 'executeQuery' && url.endsWith('/sqlite-driver.js')) return 'better-sqlite3 (native, via kysely executeQuery)';
  if (SPECIAL.has(functionName) && !url) return functionName;
  if (!url) return `(native) ${functionName || '(anonymous)'}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${m?.[1] ?? url}`;
  }
  const d = url.indexOf('/dist/');
  if (d >= 0) return `realmgate ${url.slice(d + '/dist/'.length).replace(/\.js$/, '')}`;
  return path.basename(url);
}

/** A coarse area for the breakdown table. */
export function bucketOf(category: string): string {
  if (category.startsWith('better-sqlite3')) return 'SQLite statements (better-sqlite3 native; under FULL includes fsync waits)';
  if (category === 'pg' || category.startsWith('pg-') || category === 'postgres-array' || category === 'pgpass') return 'PostgreSQL client (pg, pg-protocol)';
  if (category === 'kysely') return 'Kysely query building and compilation';
  if (category === 'jose') return 'jose (JWT encoding, JS side of signing)';
  if (category === 'node:crypto' || category === '(native) randomFillSync') return 'node:crypto on the main thread (hashes, random, WebCrypto job dispatch)';
  if (category === '(garbage collector)') return 'garbage collection (main thread part)';
  if (category.startsWith('realmgate ')) return 'Realmgate code (self)';
  if (
    /^(fastify|@fastify\/|find-my-way|avvio|fast-json-stringify|fast-querystring|fast-decode-uri-component|secure-json-parse|light-my-request|abstract-logging|pino|process-warning|toad-cache|rfdc|fast-uri|json-schema-ref-resolver|cookie)/.test(category) ||
    /^node:(_http|http|net|stream|streams|stream_base_commons|events|timers|buffer|url|querystring|dns|async_hooks|process|util|encoding|fixed_queue|validators)/.test(category) ||
    category === '(native) runMicrotasks'
  ) {
    return 'HTTP: fastify, node http/net/streams, event loop, microtasks';
  }
  if (category === '(program)') return '(program): V8/native outside JS';
  if (/^node:(modules|bootstrap|deps|fs|path|per_context|main)/.test(category) || category === 'commander' || category === 'semver') return 'module loading, fs (start-up)';
  return 'other';
}

function frameLabel(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  let where = frame.url;
  const nm = where.lastIndexOf('/node_modules/');
  if (nm >= 0) where = where.slice(nm + '/node_modules/'.length);
  const d = where.indexOf('/dist/');
  if (d >= 0) where = where.slice(d + 1);
  where = where.replace(/^file:\/\//, '');
  return `${name}  ${where}:${frame.lineNumber + 1}`;
}

export interface Summary {
  text: string;
  /** Total sampled time in the window (µs), busy (not idle) time, and self time by category. */
  totalUs: number;
  busyUs: number;
  byCategory: Map<string, number>;
}

export function summarizeProfile(profile: CpuProfile, opts: SummaryOptions = {}): Summary {
  const top = opts.top ?? 25;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfByNode = new Map<number, number>();
  let t = profile.startTime;
  const ts: number[] = new Array<number>(profile.samples.length);
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    ts[i] = t;
  }
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const at = ts[i]!;
    if (opts.from !== undefined && at < opts.from) continue;
    if (opts.to !== undefined && at > opts.to) continue;
    // A sample stands for the time until the next one (as DevTools counts it).
    const next = i + 1 < ts.length ? ts[i + 1]! : profile.endTime;
    const dur = Math.max(0, next - at);
    const id = profile.samples[i]!;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + dur);
    totalUs += dur;
  }

  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfByNode) {
    const node = byId.get(id)!;
    // A native function (no script) counts for the package that called it: structuredClone under jose
    // is jose's, writev under net is HTTP's.
    let owner = id;
    while (!byId.get(owner)!.callFrame.url && !SPECIAL.has(byId.get(owner)!.callFrame.functionName) && parent.has(owner)) owner = parent.get(owner)!;
    const ownerFrame = byId.get(owner)!.callFrame;
    const cat = ownerFrame.url || SPECIAL.has(ownerFrame.functionName) ? categoryOf(ownerFrame) : categoryOf(node.callFrame);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + us);
    if (cat !== '(idle)') busyUs += us;
    const label = frameLabel(node.callFrame);
    byFunction.set(label, (byFunction.get(label) ?? 0) + us);
    // Inclusive time of Realmgate's own functions: each counted once per stack, however deep.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!f.url.includes('/dist/') || f.url.includes('/node_modules/')) continue;
      const l = frameLabel(f);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }

  const perReq = (us: number): string => (opts.requests ? `${(us / opts.requests).toFixed(1).padStart(7)} µs/req` : '');
  const pct = (us: number): string => `${((100 * us) / Math.max(1, busyUs)).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>, n: number, skipIdle = true): string[] =>
    [...m]
      .filter(([k]) => !(skipIdle && k === '(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms ${perReq(us)}  ${k}`);

  const lines: string[] = [];
  const idle = byCategory.get('(idle)') ?? 0;
  lines.push(
    `main thread, sampled ${(totalUs / 1e6).toFixed(2)} s: busy ${(busyUs / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms` +
      (opts.requests ? `, ${opts.requests} requests: ${(busyUs / opts.requests).toFixed(1)} µs busy per request` : ''),
  );
  const byBucket = new Map<string, number>();
  for (const [cat, us] of byCategory) if (cat !== '(idle)') byBucket.set(bucketOf(cat), (byBucket.get(bucketOf(cat)) ?? 0) + us);
  lines.push('', 'breakdown (self time, % of busy time):', ...rows(byBucket, top));
  lines.push('', 'self time by package / area:', ...rows(byCategory, top));
  lines.push('', 'self time by function:', ...rows(byFunction, top));
  lines.push('', 'inclusive time of Realmgate functions:', ...rows(inclusive, top));
  return { text: lines.join('\n'), totalUs, busyUs, byCategory };
}

export function summarizeProfileFile(file: string, opts: SummaryOptions = {}): Summary {
  return summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, opts);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { from: { type: 'string' }, to: { type: 'string' }, requests: { type: 'string' }, top: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write('usage: cpuprofile-summary FILE.cpuprofile [--from US --to US] [--requests N] [--top N]\n');
    process.exit(2);
  }
  const num = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));
  const s = summarizeProfileFile(file, { from: num(values.from), to: num(values.to), requests: num(values.requests), top: num(values.top) });
  process.stdout.write(s.text + '\n');
}
