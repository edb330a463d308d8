// The README's `npm test` without TEST_DATABASE_URL (a new user's machine): the PostgreSQL halves of the
// browser files then define no tests, and must end at once. A chromium launched in a file's `before`
// for no test was never closed (node:test runs no `after` then), and each such file ran into the
// runner's 120 s limit and was cancelled: the suite failed on every machine without PostgreSQL, which
// CI (it sets TEST_DATABASE_URL) never saw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const dir = path.dirname(here);
const ext = path.extname(here);

test('without TEST_DATABASE_URL the browser files of PostgreSQL end at once, with no test and nothing cancelled', () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(`-postgres.test${ext}`) && f !== path.basename(here)).map((f) => path.join(dir, f));
  assert.ok(files.length >= 10, `found ${files.length}`);
  const env = { ...process.env };
  delete env.TEST_DATABASE_URL;
  // Set by the runner in its children (they then report to it): this run is a runner of its own.
  delete env.NODE_TEST_CONTEXT;
  // Reporters given to the outer run through NODE_OPTIONS would be this run's too, and its own --test-reporter added to them.
  delete env.NODE_OPTIONS;
  const started = Date.now();
  const r = spawnSync(process.execPath, [...(ext === '.ts' ? ['--import', 'tsx'] : []), '--test', '--test-concurrency=2', '--test-timeout=60000', '--test-reporter=tap', ...files], { env, encoding: 'utf8', timeout: 90_000 });
  const out = r.stdout ?? '';
  assert.equal(r.status, 0, out.slice(-2000) + (r.stderr ?? ''));
  assert.match(out, /^# cancelled 0$/m);
  assert.match(out, /^# fail 0$/m);
  assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
});
