#!/usr/bin/env node
// Runs every test file under test/ (and *.test.ts next to sources) with node's test runner, compiled into
// a mirror of the checkout (below; REALMGATE_TEST_TSX=1: in place through tsx). Node 20's runner does not
// expand globs itself, so the files are listed here.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { generateKeyPair } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = [...find('test'), ...find('src')].sort();
if (filter.length > 0) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Each directory's files spread evenly over the whole run (test/admin, test/browser, test/cli, ...), not
// one directory after the other: in name order the browser files (each with its chromium), then the CLI's
// (each starting processes) all ran side by side, the machine's load went past 12 on two cores and files
// went past their 120 s (2026-11-29). File i of a directory of n goes at (i + 0.5) / n of the run, so the
// 41 browser files come about one in seven, and the two halves of a split file (x-postgres, x-sqlite) do
// not start together either. Node's own `--test` sorts its files by name, so scripts/run-files.mjs
// starts them, in this order.
files = spread(files);

function spread(list) {
  const byDir = new Map();
  for (const f of list) {
    const dir = f.slice(0, f.lastIndexOf('/'));
    if (!byDir.has(dir)) byDir.set(dir, []);
    byDir.get(dir).push(f);
  }
  const placed = [];
  for (const q of byDir.values()) q.forEach((f, i) => placed.push({ f, at: (i + 0.5) / q.length }));
  return placed.sort((a, b) => a.at - b.at || (a.f < b.f ? -1 : 1)).map((p) => p.f);
}
// Three files at a time on this project's two-core machines: most files wait part of the time (on
// PostgreSQL, a browser, a child process, a timer), and with two at a time a sixth of the CPU sat idle
// (2026-11-28, quiet machine, the whole suite: 849 s at two, 775 s at three, 5% idle). Each file must stay
// well within the 120 s limit at three on a loaded machine: split one that nears half of it.
// REALMGATE_TEST_CONCURRENCY overrides it (1 to run files one at a time).
const concurrency = Number(process.env.REALMGATE_TEST_CONCURRENCY ?? 3);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error('REALMGATE_TEST_CONCURRENCY: a whole number of files at a time, at least 1');
  process.exit(2);
}
const runFiles = resolve('scripts/run-files.mjs');
const runnerArgs = [runFiles, String(concurrency), '120000'];
const env = { ...process.env, NODE_ENV: 'test' };

// The RSA keys of the realms that test files make in their own process come from a pool generated here,
// once per run (test/helpers/rsa-pool.ts says why: some 180 ms of CPU per realm went to searching for
// primes). Generated on libuv's threads while the sources compile; 48 keys, more than most files' realms
// (test/http/admin-console-roles.test.ts makes 36); a file that needs more generates the rest.
const base = mkdtempSync(join(tmpdir(), 'realmgate-tests-'));
const RSA_POOL = 48;
const rsaPool = join(base, 'rsa-keys.json');
const pooled = Promise.all(
  Array.from({ length: RSA_POOL }, () => new Promise((done, fail) => generateKeyPair('rsa', { modulusLength: 2048 }, (err, _pub, key) => (err ? fail(err) : done(key.export({ format: 'jwk' })))))),
).then((keys) => {
  writeFileSync(rsaPool, JSON.stringify(keys), { mode: 0o600 });
  env.REALMGATE_TEST_RSA_KEYS = rsaPool;
});

// Each test file runs in a process of its own, and loading the sources through tsx cost each of them
// ~1.1 s of CPU more than loading the same modules as JavaScript (2026-11-28: 1.65 s against 0.55 s of
// CPU to import test/admin/helpers.ts; tsx's loader thread reads its cache file by file and every import
// crosses to it), a fifth of the whole suite's CPU. So the sources are compiled once, by esbuild (tsx's
// own compiler, one file at a time: the same output), into a mirror of the checkout in a temporary
// directory, and the files run there with plain node. The mirror holds every other file and directory as a
// symbolic link (node_modules, dist, docs: screenshots and files written through the working directory
// land in the checkout), the .ts sources beside their .js (tests that read a source, children started
// with tsx), and ../shared beside it, so that paths relative to a test file or to the working directory
// mean what they mean in the checkout. REALMGATE_TEST_TSX=1 runs the files in place through tsx instead.
const root = process.cwd();
const mirror = join(base, 'main');
let status = 1;
try {
  if (process.env.REALMGATE_TEST_TSX === '1') {
    await pooled;
    status = spawnSync(process.execPath, ['--import', 'tsx', ...runnerArgs, ...files.map((f) => resolve(f))], { stdio: 'inherit', env }).status ?? 1;
  } else {
    status = await runInMirror();
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
process.exit(status);

async function runInMirror() {
  const { build, stop } = await import('esbuild');
  mkdirSync(mirror);
  try {
    symlinkSync(resolve(root, '../shared'), join(base, 'shared'));
  } catch {
    // no ../shared beside the checkout: the tests that need it say so
  }
  const sources = [];
  const hasTs = (dir) => readdirSync(dir, { withFileTypes: true }).some((e) => (e.isDirectory() ? hasTs(join(dir, e.name)) : e.name.endsWith('.ts')));
  const copyTree = (rel) => {
    mkdirSync(join(mirror, rel), { recursive: true });
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      // A directory without sources is linked whole: what a test writes into it lands in the checkout.
      if (e.isDirectory() && hasTs(join(root, r))) copyTree(r);
      else symlinkSync(join(root, r), join(mirror, r));
      if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) sources.push(join(root, r));
    }
  };
  // Every directory with sources (src, test, scripts, bench) is mirrored; node_modules, dist and the
  // rest are linked.
  const linkedWhole = new Set(['node_modules', 'dist', 'data', '.git']);
  for (const e of readdirSync(root, { withFileTypes: true })) {
    if (e.isDirectory() && !linkedWhole.has(e.name) && hasTs(join(root, e.name))) copyTree(e.name);
    else symlinkSync(join(root, e.name), join(mirror, e.name));
  }
  // Inline source maps without the sources: a failure's stack names the .ts file and line in the checkout.
  const options = { outdir: mirror, outbase: root, format: 'esm', platform: 'node', target: 'node20', sourcemap: 'inline', sourcesContent: false, logLevel: 'warning' };
  await build({ ...options, entryPoints: sources });
  // Then the test files again, bundled, over their compiled selves: the sources and helpers each imports and
  // the ES module packages of bundledPackagesOnly. Loading ~1,000 modules (~400 of ours, kysely's 288, the
  // Keycloak admin client's ~200, jose's 64) cost each test file ~0.7 s of CPU, nearly all of it in
  // Node.js's module loader (resolving, reading, linking), for each of the suite's 336 files; bundled and
  // split, ~0.35 s (2026-11-30, loading test/admin/users-api.test.js: 690 ms of CPU compiled alone, 370 ms).
  // The other packages (CommonJS ones among them) are loaded from node_modules as in the checkout. Every
  // other file stays compiled on its own beside it, for children, workers and paths computed at run time;
  // import.meta keeps naming each source's own compiled file. REALMGATE_TEST_BUNDLE=0 runs the files
  // compiled one by one.
  if (process.env.REALMGATE_TEST_BUNDLE !== '0') {
    // Split: what several test files share is written once, in chunks (test/.chunks), not into each of
    // them: one bundle per file took 40 s and wrote 1.4 GB; split, 1.3 s and 11 MB in 153 chunks.
    const split = { splitting: true, chunkNames: 'test/.chunks/[name]-[hash]' };
    await build({ ...options, ...split, entryPoints: files.map((f) => resolve(root, f)), bundle: true, plugins: [bundledPackagesOnly(), ownImportMeta(root, mirror)] });
  }
  // esbuild's service process would otherwise wait beside the whole run.
  await stop();
  const compiled = files.map((f) => join(mirror, f.replace(/\.ts$/, '.js')));
  await pooled;
  // Not spawnSync: a SIGINT or SIGTERM reaches the runner too, which waits for the files to stop so that
  // the mirror is removed.
  // REALMGATE_TEST_CPU_PROF=<dir>: a V8 CPU profile of the runner and of each file's process (node:test
  // starts them with the runner's flags), to see where the suite's time goes. Its main threads only: the
  // thread pool's work (argon2id, RSA signatures) is not in them.
  const prof = process.env.REALMGATE_TEST_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.REALMGATE_TEST_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...prof, '--enable-source-maps', ...runnerArgs, ...compiled], { stdio: 'inherit', env, cwd: mirror });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  return new Promise((done) => child.on('exit', (code) => done(code ?? 1)));
}

/**
 * An esbuild plugin for bundled test files: `import.meta.url`, `.dirname` and `.filename` in each source
 * become its own compiled file's (under `mirror`), not the bundle's, so that paths computed from them
 * (bin/realmgate.js, fixtures, the package root) stay right in a helper bundled into a test file.
 */
function ownImportMeta(root, mirror) {
  return {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes('/node_modules/') || !args.path.startsWith(`${root}/`)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta')) return { contents: text, loader: 'ts' };
        const own = join(mirror, args.path.slice(root.length + 1)).replace(/\.ts$/, '.js');
        const meta = { url: pathToFileURL(own).href, dirname: dirname(own), filename: own };
        return { contents: text.replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_, k) => JSON.stringify(meta[k])), loader: 'ts' };
      });
    },
  };
}

/**
 * An esbuild plugin: the ES module packages with many files each (kysely, jose, the Keycloak admin client
 * and its Kiota and OpenTelemetry libraries) are bundled into the test files (see runInMirror); every
 * other package, and Node.js's own modules, stay imports, loaded from node_modules at run time.
 */
function bundledPackagesOnly() {
  const bundled = /^(kysely|jose|@keycloak\/keycloak-admin-client|@microsoft\/kiota-[\w-]+|@opentelemetry\/api)(\/|$)/;
  return {
    name: 'bundled-packages-only',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => (bundled.test(args.path) ? undefined : { path: args.path, external: true }));
    },
  };
}
