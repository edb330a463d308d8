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
// A server starts with a small young generation. V8 doubles its semi-spaces (up to 8 MB each) whenever
// enough objects survive a scavenge, and a start (compiling, building the routes, migrating) makes it
// grow to 2 x 4 MB; with nothing allocated once ready it stays that size until V8's memory reducer
// shrinks it, about 10 s later. Holding the growth factor at 1 until the server listens keeps it at the
// initial 2 x 1 MB (about 5 MB less RSS after start-up); from then on the default factor (2) applies
// again, so under load the young generation grows as it always did. A flag set here is part of the
// flag hash V8 checks a code cache against, which is why it is set before the bundle is compiled and
// given back only after the cache is written (at once by the other commands). Not when the operator
// sizes the young generation (a semi-space flag in NODE_OPTIONS or on the command line).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const BUNDLE_SHA256 = '__BUNDLE_SHA256__';
const bundle = fileURLToPath(new URL('./realmgate.cjs', import.meta.url));
const cacheFile = `${bundle}.cache`;
const key = Buffer.from(`realmgate code cache ${BUNDLE_SHA256} ${process.version} ${process.arch}\n`);

/** The bundle as a script, with the cache when there is one for it; nothing read is kept but the script. */
function compile() {
  const source = fs.readFileSync(bundle, 'utf8');
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

const nodeOptions = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const holdYoungGeneration = !/semi[-_]space/.test(nodeOptions);
const setGrowthFactor = (factor) => holdYoungGeneration && v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
// Every command compiles with the same flags, so that the other commands use the cache a server wrote.
setGrowthFactor(1);
const { script, cached } = compile();
if (process.argv[2] !== 'start') setGrowthFactor(2);
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
    setGrowthFactor(2);
  });
});
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
