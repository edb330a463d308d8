import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { builtCopy } from '../helpers/built.js';

// dist/realmgate.mjs runs the bundle with a V8 code cache (scripts/bundle-loader.mjs). These run a copy of
// the built dist/ (npm run build first), inside the repository so that node_modules is found.

describe('the code cache of the bundle', () => {
  let dir: string;
  let data: string;
  let cacheFile: string;
  let remove: () => void;
  before(() => {
    ({ dir, data, remove } = builtCopy('code-cache'));
    cacheFile = path.join(dir, 'realmgate.cjs.cache');
  });
  after(() => remove());

  const env = (): NodeJS.ProcessEnv => ({ ...process.env, DATABASE_URL: `sqlite:${path.join(data, 'r.db')}`, LOG_LEVEL: 'warn' });

  /** Starts the copy, waits until it listens and then until its cache is written (or not), stops it. */
  async function startAndStop(): Promise<string> {
    const child = spawn(process.execPath, [path.join(dir, 'realmgate.mjs'), 'start', '--workers', '1', '--port', '0'], { env: env() });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Not a timing threshold: a generous bound, reported with the output.
    const deadline = Date.now() + 60_000;
    while (!/listening on/.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never listened:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // The cache is written just after listening.
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    return out;
  }

  test('a first start writes the cache, a second uses it as it is, a cache of another build is replaced', async () => {
    const sha = /BUNDLE_SHA256 = '([0-9a-f]{64})'/.exec(fs.readFileSync(path.join(dir, 'realmgate.mjs'), 'utf8'))![1]!;
    assert.ok(!fs.existsSync(cacheFile));
    await startAndStop();
    const first = fs.readFileSync(cacheFile);
    const header = `realmgate code cache ${sha} ${process.version} ${process.arch}\n`;
    assert.equal(first.subarray(0, header.length).toString(), header);
    assert.ok(first.length > 100_000, `${first.length} bytes`);

    const mtime = fs.statSync(cacheFile).mtimeMs;
    await startAndStop();
    // Accepted by V8: not written again.
    assert.equal(fs.statSync(cacheFile).mtimeMs, mtime);

    // The cache of another bundle (another hash) is never used: it is replaced.
    fs.writeFileSync(cacheFile, Buffer.concat([Buffer.from(header.replace(sha, '0'.repeat(64))), first.subarray(header.length)]));
    await startAndStop();
    assert.equal(fs.readFileSync(cacheFile).subarray(0, header.length).toString(), header);

    // Garbage after the right header: V8 refuses it, the server starts all the same and replaces it.
    fs.writeFileSync(cacheFile, Buffer.concat([Buffer.from(header), Buffer.alloc(5000, 7)]));
    await startAndStop();
    assert.ok(fs.statSync(cacheFile).size > 100_000);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
  });

  test('CLI commands run through the loader', () => {
    const r = spawnSync(process.execPath, [path.join(dir, 'realmgate.mjs'), 'migrate'], { env: env(), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /database is up to date/);
    const help = spawnSync(process.execPath, [path.join(dir, 'realmgate.mjs'), '--help'], { env: env(), encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /start/);
  });
});
