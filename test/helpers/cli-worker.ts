// The realmgate command, run in a worker thread of a test file (test/helpers/cli.ts), one command after
// another: the same commands (src/cli/run.ts) on the same databases, without a process per command. A
// process per command cost ~0.25 s of a quiet machine's CPU to start Node.js and load the bundle, and
// ~0.4 to 0.8 s on a loaded one: the CLI tests' ~2,000 commands were a third of the whole suite's time
// (2026-12-01: 1,590 of 5,208 s summed over files). What a process adds (its exit status, the EPIPE
// handler, the code cache, settings read at start such as NODE_EXTRA_CA_CERTS) is tested through the
// installed command (test/cli/admin-commands.ts, code-cache, processes, key-sealing and the files that spawn
// it for what they test); REALMGATE_TEST_CLI=process runs every command of cliRunner as a process.
//
// Each command gets the environment, standard input and arguments the process would get; what it writes
// on stdout and stderr is captured; its status is what the process would exit with. A command that leaves
// something open (a database pool, a socket, a timer) would keep its process from exiting: that is
// reported as a failure here too.
import { parentPort, workerData } from 'node:worker_threads';
import { Readable } from 'node:stream';
import type { MessagePort } from 'node:worker_threads';
import type { Command } from 'commander';
import { program } from '../../src/cli/common.js';
import { runCli } from '../../src/cli/run.js';

interface Job {
  args: string[];
  env: Record<string, string>;
  input: string;
}

const { port, flag } = workerData as { port: MessagePort; flag: SharedArrayBuffer };
const done = new Int32Array(flag);

// Commander's refusals and --help end the process; here they throw, and the status is the same.
const exitOverride = (c: Command): void => {
  c.exitOverride();
  c.commands.forEach(exitOverride);
};
exitOverride(program);

let out: string[] = [];
let err: string[] = [];
const capture = (into: () => string[]) =>
  function write(chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean {
    into().push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const callback = typeof encoding === 'function' ? encoding : cb;
    if (typeof callback === 'function') queueMicrotask(() => (callback as () => void)());
    return true;
  };
process.stdout.write = capture(() => out) as typeof process.stdout.write;
process.stderr.write = capture(() => err) as typeof process.stderr.write;

/** What keeps an event loop alive, by kind: a command must leave no more than it found. */
function openResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

async function runJob(job: Job): Promise<{ status: number; stdout: string; stderr: string; left: string[] }> {
  out = [];
  err = [];
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, job.env);
  let stdinRead = false;
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    get: () => {
      if (stdinRead) return Readable.from([]);
      stdinRead = true;
      return Readable.from(job.input === '' ? [] : [Buffer.from(job.input)]);
    },
  });
  process.exitCode = undefined;
  const before = openResources();
  let status: number;
  try {
    status = (await runCli(['node', 'realmgate', ...job.args])) ?? Number(process.exitCode ?? 0);
  } catch (e) {
    // runCli reports every failure itself; anything else is a bug that would end the process.
    err.push(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    status = 1;
  }
  process.exitCode = undefined;
  // What the command closed goes away soon after (a PostgreSQL connection's socket once the server has
  // answered its goodbye); what is still open after a second would have kept the process running.
  let left: string[] = [];
  for (let waited = 0; waited <= 1000; waited += 10) {
    const after = openResources();
    left = [...after].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k, n]) => `${n - (before.get(k) ?? 0)} ${k}`);
    if (left.length === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return { status, stdout: out.join(''), stderr: err.join(''), left };
}

port.on('message', (job: Job) => {
  void runJob(job).then((result) => {
    port.postMessage(result);
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
  });
});
parentPort?.postMessage('ready');
