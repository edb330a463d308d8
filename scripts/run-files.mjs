#!/usr/bin/env node
// Runs the test files named on the command line, in that order, with node's test runner, and prints its
// TAP report (with the summary CI reads) on stdout. Started by scripts/run-tests.mjs.
//
// Why not `node --test a b c`: node 20 sorts the files it is given by name before it starts them (seen
// 2026-11-29: z, a, m ran as a, m, z), so an order chosen to keep the browser files apart was lost and
// three chromiums ran side by side on two cores. run() starts `files` in the order given.
//
// Usage: node scripts/run-files.mjs <concurrency> <timeout ms> <file>...
import { run } from 'node:test';
import { tap } from 'node:test/reporters';

const [concurrency, timeout, ...files] = process.argv.slice(2);
const stream = run({ files, concurrency: Number(concurrency), timeout: Number(timeout) });
// A failing test (a timed-out or crashed file is reported as one) makes the run fail, as `node --test`.
stream.on('test:fail', (event) => {
  if (!event.todo && !event.skip) process.exitCode = 1;
});
stream.compose(tap).pipe(process.stdout);
