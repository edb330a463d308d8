#!/usr/bin/env node
// Bundles the server and CLI into dist/realmgate.mjs: one minified file starts faster and takes less
// memory than hundreds of modules. Native modules and the PostgreSQL driver stay outside; pg is loaded
// only when DATABASE_URL names PostgreSQL.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/realmgate.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  sourcemap: true,
  legalComments: 'linked',
  external: ['better-sqlite3', '@node-rs/argon2', 'pg', 'pg-native'],
  // Bundled CommonJS dependencies call require(): give the ES module one.
  banner: { js: "import { createRequire as __rgCreateRequire } from 'node:module'; const require = __rgCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
