import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { createTestDatabase, type TestDatabase } from './db.js';
import { openDatabase } from '../../src/storage/database.js';
import { fileURLToPath } from 'node:url';

/** The installed command (npm test builds dist/ first, as `npm install` does). */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `realmgate` command over the database `databaseUrl()` names (read at each call: test
 * databases are made in `before`). `fails` checks what every failure must look like: a non-zero exit
 * (`status` when given), the message, one line besides the one naming the database, no stack trace.
 */
export function cliRunner(databaseUrl: () => string): {
  run(args: string[], input?: string): CliResult;
  ok(args: string[], input?: string): string;
  fails(args: string[], message: RegExp, opts?: { status?: number }): void;
} {
  const run = (args: string[], input?: string): CliResult => {
    const env = { ...process.env, DATABASE_URL: databaseUrl(), LOG_LEVEL: 'silent' };
    if (process.env.REALMGATE_TEST_CLI !== 'process' && !startSettingsChanged()) return inWorker(args, env, input ?? '');
    const r = spawnSync(process.execPath, [BIN, ...args], { env, input: input ?? '', encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    run,
    ok(args, input) {
      const r = run(args, input);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    },
    fails(args, message, opts = {}) {
      const r = run(args);
      if (opts.status !== undefined) assert.equal(r.status, opts.status, `expected exit ${opts.status}: ${args.join(' ')}`);
      else assert.notEqual(r.status, 0, `expected failure: ${args.join(' ')}`);
      assert.match(r.stderr, message);
      // One line (besides the one naming the database), no stack trace.
      assert.equal(r.stderr.trim().split('\n').filter((l) => !l.startsWith('realmgate: database ')).length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at\s/);
    },
  };
}

/**
 * Settings Node.js reads only as a process starts: a test that sets one for a command (NODE_EXTRA_CA_CERTS
 * for a private CA) gets a process, where the worker thread could not honour it.
 */
const START_SETTINGS = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'] as const;
const startedWith = Object.fromEntries(START_SETTINGS.map((k) => [k, process.env[k]]));
const startSettingsChanged = (): boolean => START_SETTINGS.some((k) => process.env[k] !== startedWith[k]);

let worker: { worker: Worker; port: import('node:worker_threads').MessagePort; done: Int32Array } | undefined;

/**
 * Runs one command in this test file's CLI worker thread (test/helpers/cli-worker.ts says why), waiting
 * for it as spawnSync waits for a process: this thread does nothing meanwhile (a command that needs
 * something this thread serves must run as a process, as spawnSync's would).
 */
function inWorker(args: string[], env: NodeJS.ProcessEnv, input: string): CliResult {
  if (!worker) {
    const here = fileURLToPath(import.meta.url);
    const file = path.join(path.dirname(here), `cli-worker${path.extname(here)}`);
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const w = new Worker(file, { workerData: { port: port2, flag }, transferList: [port2], stdout: false, stderr: false });
    // Not kept alive by its worker: a test file ends when its tests do.
    w.unref();
    port1.unref();
    worker = { worker: w, port: port1, done: new Int32Array(flag) };
  }
  Atomics.store(worker.done, 0, 0);
  worker.port.postMessage({ args, env, input });
  if (Atomics.wait(worker.done, 0, 0, 60_000) === 'timed-out') throw new Error(`realmgate ${args.join(' ')}: no answer within 60 s`);
  const r = receiveMessageOnPort(worker.port)?.message as (CliResult & { left: string[] }) | undefined;
  if (!r) throw new Error(`realmgate ${args.join(' ')}: the worker answered nothing`);
  // What a command leaves open would keep its process from exiting: a bug of the command.
  assert.deepEqual(r.left, [], `realmgate ${args.join(' ')} left these open, so its process would not exit`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A database of `dialect` for the command to open itself (made in `before` and closed there, dropped in
 * `after`), a scratch folder, and REALMGATE_KEY_FILE in it for the commands that make keys. Call it in a
 * describe block, before hooks that use it.
 */
export function cliDatabase(dialect: 'sqlite' | 'postgres', prefix: string): { readonly url: string; readonly dir: string } {
  let tdb: TestDatabase | undefined;
  let dir = '';
  before(async () => {
    tdb = await createTestDatabase(dialect);
    await tdb.db.close();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    process.env.REALMGATE_KEY_FILE = path.join(dir, 'k.key');
  });
  after(async () => {
    if (tdb) {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
    }
    fs.rmSync(dir, { recursive: true, force: true });
    delete process.env.REALMGATE_KEY_FILE;
  });
  return {
    get url() {
      return tdb!.url;
    },
    get dir() {
      return dir;
    },
  };
}
