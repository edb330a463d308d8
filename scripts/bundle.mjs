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
