#!/usr/bin/env node
// Runs the test files named on the command line, in that order, with node's test runner, and prints its
// TAP report (with the summary CI reads) on stdout. Started by scripts/run-tests.mjs.
//
// Why not `node --test a b c`: node 20 sorts the files it is given by name before it starts them (seen
// 2026-11-29: z, a, m ran as a, m, z), so an order chosen to keep the browser files apart was lost and
// three chromiums ran side by side on two cores. run() starts `files` in the order given.
//
// At the end it prints on stderr the tests that failed, each with its file and the first lines of its error
// (a CI log shown only in part, its end, still says what failed), then the files whose tests took longest: what to split or speed up when the
// suite grows (REALMGATE_TEST_SLOWEST=N lists N of them, 0 none; 15 by default).
//
// Usage: node scripts/run-files.mjs <concurrency> <timeout ms> <file>...
import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [concurrency, timeout, ...files] = process.argv.slice(2);
const stream = run({ files, concurrency: Number(concurrency), timeout: Number(timeout) });
// A failing test (a timed-out or crashed file is reported as one) makes the run fail, as `node --test`.
stream.on('test:fail', (event) => {
  if (!event.todo && !event.skip) process.exitCode = 1;
});

// A file's time is the sum of its top-level tests' durations, as measured in its own process (not its
// process's start, a second or less). Not the time between its events here: node 20 reports the files in
// the order they started, so a file's events wait for those of a slower file started before it. A file
// run from the compiled mirror (scripts/run-tests.mjs) is named by its .js path there and, through the
// source map, by its source's path in the checkout: both become the path from their root, without the
// extension.
const roots = [process.cwd()];
try {
  roots.push(dirname(realpathSync(join(process.cwd(), 'package.json'))));
} catch {
  // no package.json here: files are named from the working directory only
}
const key = (file) => {
  const root = roots.find((r) => file.startsWith(`${r}/`));
  return (root ? file.slice(root.length + 1) : file).replace(/\.(js|ts|mjs)$/, '');
};
const took = new Map();
const runStart = Date.now();
for (const name of ['test:pass', 'test:fail']) {
  stream.on(name, (event) => {
    if (event.nesting !== 0 || !event.file) return;
    const k = key(event.file);
    took.set(k, (took.get(k) ?? 0) + (event.details?.duration_ms ?? 0) / 1000);
  });
}
// Every failed test, innermost first as the runner reports them; a suite that failed only because a test
// in it did is left out (its test is listed).
const failed = [];
stream.on('test:fail', (event) => {
  if (event.todo || event.skip) return;
  const error = event.details?.error;
  const cause = error?.cause ?? error;
  if (error?.failureType === 'subtestsFailed') return;
  const text = String(cause?.stack ?? cause?.message ?? cause ?? error ?? 'failed');
  failed.push({ file: event.file ? `${key(event.file)}.ts` : '(no file)', name: event.name, text: text.split('\n').filter((l) => !/\(node:|at node:/.test(l)).slice(0, 12).join('\n      ') });
});
const slowest = Number(process.env.REALMGATE_TEST_SLOWEST ?? 15);
const report = stream.compose(tap);
// After the TAP report's last line (its summary), not in the middle of it.
report.on('end', () => {
  if (failed.length > 0) {
    const lines = failed.map((f) => `  ${f.file}: ${f.name}\n      ${f.text}`);
    process.stderr.write(`\nFailed tests (${failed.length}):\n${lines.join('\n')}\n`);
  }
  if (!(slowest > 0)) return;
  const files = [...took].map(([file, s]) => ({ file, s })).sort((a, b) => b.s - a.s);
  const sum = files.reduce((t, f) => t + f.s, 0);
  const lines = files.slice(0, slowest).map((f) => `${f.s.toFixed(1).padStart(7)} s  ${f.file}.ts`);
  process.stderr.write(
    `\nSlowest test files (of ${files.length}; ${sum.toFixed(0)} s summed over files, ${((Date.now() - runStart) / 1000).toFixed(0)} s of wall time at ${concurrency} at a time):\n${lines.join('\n')}\n`,
  );
});
report.pipe(process.stdout);
