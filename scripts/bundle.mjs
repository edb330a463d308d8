#!/usr/bin/env node
// Bundles the server and CLI into dist/realmgate.cjs: one minified file starts faster and takes less
// memory than hundreds of modules. Native modules and the PostgreSQL driver stay outside; pg is loaded
// only when DATABASE_URL names PostgreSQL. dist/realmgate.mjs (scripts/bundle-loader.mjs) runs it with a
// V8 code cache, which a CommonJS script can have and an ES module cannot (before Node.js 22).
// REALMGATE_BUNDLE_MINIFY=0 keeps names and lines (for reading CPU profiles: bench/ BENCH_PROFILE=1).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * Node.js modules a dependency requires as it loads but uses only where Realmgate never goes: Fastify's
 * https and http2 (a TLS or HTTP/2 server; Realmgate serves HTTP/1.1 behind its proxy). Loaded at start,
 * they and tls (which both load) took ~2 MB of RSS and ~15 ms of every start; here each is a stand-in
 * that loads the real module at its first use.
 */
const LAZY_BUILTINS = { '/node_modules/fastify/lib/server.js': ['node:https', 'node:http2'] };
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^node:(https|http2)$/ }, (args) => {
      // By the end of the path: esbuild gives the real path of a package, which a symlinked node_modules
      // (pnpm's store, a checkout sharing another's) puts outside the working directory.
      const importer = args.importer.split(path.sep).join('/');
      const lazy = Object.entries(LAZY_BUILTINS).some(([file, names]) => importer.endsWith(file) && names.includes(args.path));
      return lazy ? { path: args.path, namespace: 'lazy-builtin' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      // The bare name: an external built-in, which this plugin does not resolve again.
      contents: `let m; const load = () => (m ??= require(${JSON.stringify(args.path.slice('node:'.length))}));
module.exports = new Proxy({}, { get: (_, k) => load()[k], has: (_, k) => k in load() });`,
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/realmgate.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: process.env.REALMGATE_BUNDLE_MINIFY !== '0',
  sourcemap: true,
  legalComments: 'linked',
  // Fastify's schema compilers (ajv, fast-json-stringify) are loaded at a route's first validation or
  // serialization (src/http/plugins/lazy-schemas.ts), never by an idle server: outside the bundle, their
  // code is not part of the text every process holds. light-my-request is Fastify's inject(), which only
  // the tests call (Fastify requires it at the first inject). ldapts (user federation) is loaded when a
  // realm first signs a user in through LDAP (src/oauth/ldap/directory.ts).
  external: ['better-sqlite3', '@node-rs/argon2', 'pg', 'pg-native', 'nodemailer', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request', 'ldapts'],
  plugins: [lazyBuiltins],
  // The file is the function node:module would wrap a CommonJS module in, for the loader to compile as it
  // is (a wrapper added at run time would make a second copy of the source). The sources are ES modules:
  // strict mode, as they were, and import.meta.url from the bundle's path.
  banner: { js: "(function (exports, require, module, __filename, __dirname) {'use strict';const __rgImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  footer: { js: '})' },
  define: { 'import.meta.url': '__rgImportMetaUrl' },
  // A vm.Script cannot import(): pg and argon2 are require()d (both are CommonJS).
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
});
// V8 keeps a script's source as one string: Latin-1 (a byte a character) unless a single character is
// beyond U+00FF, when the whole 1.7 MB bundle takes two bytes a character (+1.7 MB of RSS for every
// process). esbuild escapes such characters in ordinary strings but not in template literals (the
// pages' HTML): one typographic apostrophe in a page cost 1.6 MB. Refused here, with where it is.
{
  const text = fs.readFileSync('dist/realmgate.cjs', 'utf8');
  const at = text.search(/[^\u0000-\u00ff]/u);
  if (at >= 0) {
    throw new Error(`dist/realmgate.cjs has a character beyond U+00FF (${JSON.stringify(text.slice(Math.max(0, at - 60), at + 20))}): write it as an ASCII character or an HTML entity in the source, or the server's whole code takes twice the memory`);
  }
}
const sha256 = createHash('sha256').update(fs.readFileSync('dist/realmgate.cjs')).digest('hex');
const loader = fs.readFileSync('scripts/bundle-loader.mjs', 'utf8').replace('__BUNDLE_SHA256__', sha256);
fs.writeFileSync('dist/realmgate.mjs', loader, { mode: 0o755 });
// A cache of an earlier build is of no use (the loader would refuse it anyway).
fs.rmSync('dist/realmgate.cjs.cache', { force: true });
// What an earlier version of this script wrote.
for (const f of ['dist/realmgate.mjs.map', 'dist/realmgate.mjs.LEGAL.txt']) fs.rmSync(f, { force: true });

// realmgate/resource-server: the kit APIs import. Only jose stays outside (a dependency of the package);
// nothing of the server, the database or native modules may reach this bundle.
const kit = await build({
  entryPoints: ['src/resource-server/index.ts'],
  outfile: 'dist/resource-server/index.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  external: ['jose'],
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.keys(kit.metafile.inputs);
const stray = inputs.filter((f) => !f.startsWith('src/resource-server/'));
if (stray.length > 0) throw new Error(`the resource-server bundle must not include ${stray.join(', ')}`);
