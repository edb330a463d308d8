#!/usr/bin/env node
// dist/realmgate.mjs, written by scripts/bundle.mjs from scripts/bundle-loader.mjs: runs the bundled
// server and CLI (dist/realmgate.cjs) with a V8 code cache. Compiling the 1.3 MB bundle, and then each
// function it runs while starting, took about a third of a start; with the cache a start skips both.
// The cache (dist/realmgate.cjs.cache) is written by a server once it is listening, when there was none or
// V8 refused it (another Node.js version or other V8 flags), so it holds every function a start needs. It
// is used only for this very bundle (its SHA-256, recorded at build time) and this Node.js version; a cache
// that cannot be written (a read-only installation) is simply not kept. The bundle's own directory only:
// a code cache is code, never read from a place others may write.
//
// While a server starts, V8 is kept from spending memory that only a loaded server needs; once it listens
// (and its code cache is written) V8's defaults apply again, so that under load nothing changes:
// - The young generation stays at its initial 2 x 1 MB (--semi-space-growth-factor=1, then the default 2).
//   A start (compiling, building the routes, migrating) made it grow to 2 x 4 MB, kept until V8's
//   memory reducer shrinks it some 10 s later: about 5 MB of RSS.
// - No optimizing (TurboFan) or baseline (Sparkplug) compilation: a start has no hot code worth it, and
//   compiling touched some 4 MB more of the node binary's code and of compiler memory.
// - --optimize-for-size: the garbage collections of a start are V8's memory-reducing ones (the young
//   generation shrinks below its initial size, the old one is compacted): about 2 MB.
// A flag an operator sets (in NODE_OPTIONS or on the command line) is left alone. The flags are part of
// the hash V8 checks a code cache against: every command sets them before compiling the bundle (so that
// each uses the cache a server wrote), a server gives them back once the cache is written, any other
// command as soon as the CLI knows which command it runs.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';

const BUNDLE_SHA256 = '__BUNDLE_SHA256__';
const bundle = fileURLToPath(new URL('./realmgate.cjs', import.meta.url));
const cacheFile = `${bundle}.cache`;
const key = Buffer.from(`realmgate code cache ${BUNDLE_SHA256} ${process.version} ${process.arch}\n`);

/**
 * The bundle's text, read 64 KB at a time: glibc serves a buffer of the whole file (1.3 MB) with mmap,
 * and freeing it raises its threshold for mmap to that size, after which the allocations of a start come
 * from the heap, which does not shrink back (about 0.5 MB more RSS once started).
 */
function readSource() {
  const fd = fs.openSync(bundle, 'r');
  try {
    const chunk = Buffer.allocUnsafeSlow(64 * 1024);
    const decoder = new StringDecoder('utf8');
    let source = '';
    for (let n; (n = fs.readSync(fd, chunk, 0, chunk.length, null)) > 0; ) source += decoder.write(chunk.subarray(0, n));
    return source + decoder.end();
  } finally {
    fs.closeSync(fd);
  }
}

/** The bundle as a script, with the cache when there is one for it; nothing read is kept but the script. */
function compile() {
  const source = readSource();
  let cachedData;
  try {
    const file = fs.readFileSync(cacheFile);
    if (file.subarray(0, key.length).equals(key)) cachedData = file.subarray(key.length);
  } catch {
    // no cache yet
  }
  // The file is a function expression (the wrapper of a CommonJS module, see scripts/bundle.mjs).
  const script = new vm.Script(source, { filename: bundle, ...(cachedData ? { cachedData } : {}) });
  return { script, cached: cachedData !== undefined && !script.cachedDataRejected };
}

const operatorFlags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
/** [flag while starting, flag once started, what an operator's own setting of it looks like] */
const START_FLAGS = [
  ['--semi-space-growth-factor=1', '--semi-space-growth-factor=2', /(^|\s)--[\w-]*semi[-_]space/],
  ['--no-turbofan', '--turbofan', /(^|\s)--(no-?)?(turbofan|opt|max[-_]opt|jitless)(?![\w-])/],
  ['--no-sparkplug', '--sparkplug', /(^|\s)--(no-?)?(sparkplug|always[-_]sparkplug|max[-_]opt|jitless)(?![\w-])/],
  ['--optimize-for-size', '--no-optimize-for-size', /(^|\s)--(no-?)?optimize[-_]for[-_]size(?![\w-])/],
].filter(([, , operator]) => !operator.test(operatorFlags));
const startFlags = (starting) => {
  for (const [whileStarting, started] of START_FLAGS) v8.setFlagsFromString(starting ? whileStarting : started);
};
startFlags(true);
const { script, cached } = compile();
// Whether this process is a server is the CLI's to say, once it has parsed the command line (a global
// option such as --database-url may come before `start`): src/cli.ts emits this before running any command.
process.once('realmgate:command', (isServer) => {
  if (!isServer) startFlags(false);
});
// src/server.ts says when it is listening: by then every function of a start has been compiled.
process.once('realmgate:listening', () => {
  setImmediate(() => {
    if (!cached) {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(tmp, Buffer.concat([key, script.createCachedData()]), { mode: 0o644 });
        // Atomic: another process reads the old cache or the new one, never half of one.
        fs.renameSync(tmp, cacheFile);
      } catch {
        fs.rmSync(tmp, { force: true });
      }
    }
    startFlags(false);
  });
});
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
