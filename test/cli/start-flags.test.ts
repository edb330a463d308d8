import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { builtCopy } from '../helpers/built.js';

// dist/realmgate.mjs (scripts/bundle-loader.mjs) sets V8 flags while a server starts (the young
// generation held at its initial size, no TurboFan or Sparkplug) and gives V8 its defaults back once
// listening. These run a copy of the built dist/ (npm run build first), inside the repository so that
// node_modules is found, with a preloaded module that reports the young generation's size when the
// server listens and again after allocating what survives scavenges.

const PROBE = `
import v8 from 'node:v8';
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
process.once('realmgate:listening', () => setTimeout(() => {
  const atStart = young();
  const kept = [];
  for (let i = 0; i < 300000; i++) kept.push({ i, s: 'x' + i });
  process.stderr.write('young generation ' + JSON.stringify({ atStart, afterAllocating: young(), kept: kept.length }) + '\\n');
}, 200));
`;

describe('V8 flags while a server starts, and once it listens', () => {
  let dir: string;
  let data: string;
  let remove: () => void;
  before(() => {
    ({ dir, data, remove } = builtCopy('start-flags'));
  });
  after(() => remove());

  /** `cliArgs`: what comes before `start` (a global option). */
  async function sizes(nodeArgs: string[] = [], cliArgs: string[] = []): Promise<{ atStart: number; afterAllocating: number; out: string }> {
    const env = { ...process.env, DATABASE_URL: `sqlite:${path.join(data, 'r.db')}`, LOG_LEVEL: 'warn' };
    const probe = `data:text/javascript,${encodeURIComponent(PROBE)}`;
    const child = spawn(process.execPath, [...nodeArgs, '--import', probe, path.join(dir, 'realmgate.mjs'), ...cliArgs, 'start', '--workers', '1', '--port', '0'], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // 'close': the exit and every byte of its output.
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Not a timing threshold: a generous bound, reported with the output.
    const deadline = Date.now() + 60_000;
    let m: RegExpExecArray | null;
    while (!(m = /young generation (\{.*\})/.exec(out))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no report:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    return { ...(JSON.parse(m[1]!) as { atStart: number; afterAllocating: number }), out };
  }

  const MB = 1024 * 1024;

  test('it stays at its initial size while the server starts, and grows under allocation once it listens', async () => {
    // Twice: the first start writes the code cache, the second uses it (both must hold the young generation).
    for (let i = 0; i < 2; i++) {
      const s = await sizes();
      // V8's initial semi-spaces (1 MB each on 64-bit); without the hold a start grows them to 4 MB each.
      assert.ok(s.atStart <= 2 * MB, `young generation at start ${s.atStart} bytes`);
      assert.ok(s.afterAllocating > s.atStart, `did not grow back: ${JSON.stringify(s)}`);
    }
  });

  test('a global option before `start` (--database-url) does not make it a command that gets the defaults at once', async () => {
    // The loader read `start` from argv[2]: `realmgate --database-url U start` ran as any other command
    // (young generation grown to 2 x 4 MB and TurboFan compiling while starting: 12 MB more idle RSS).
    const s = await sizes([], ['--database-url', `sqlite:${path.join(data, 'other.db')}`]);
    assert.ok(s.atStart <= 2 * MB, `young generation at start ${s.atStart} bytes`);
    assert.ok(s.afterAllocating > s.atStart, `did not grow back: ${JSON.stringify(s)}`);
  });

  test('any other command gets V8 defaults before it runs (the young generation grows under allocation)', async () => {
    // Probed as the command exits: with the start-up hold still on, the young generation would stay at 2 x 1 MB.
    const probe = `data:text/javascript,${encodeURIComponent(`
import v8 from 'node:v8';
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
process.once('exit', () => {
  const kept = [];
  for (let i = 0; i < 300000; i++) kept.push({ i, s: 'x' + i });
  process.stderr.write('young generation ' + young() + ' ' + kept.length + '\\n');
});
`)}`;
    for (const cli of [['migrate'], ['--database-url', `sqlite:${path.join(data, 'r.db')}`, 'realm', 'list']]) {
      const child = spawn(process.execPath, ['--import', probe, path.join(dir, 'realmgate.mjs'), ...cli], {
        env: { ...process.env, DATABASE_URL: `sqlite:${path.join(data, 'r.db')}`, LOG_LEVEL: 'warn' },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, out);
      const m = /young generation (\d+) 300000/.exec(out);
      assert.ok(m, `no report: ${out}`);
      assert.ok(Number(m[1]) > 2 * MB, `${cli.join(' ')}: young generation ${m[1]} bytes after allocating`);
    }
  });

  test('once it listens, hot code is optimized (TurboFan, off while starting, is on again)', async () => {
    // --trace-opt is no setting of the compilers: the loader still turns them off and on again. V8's
    // trace goes through C's buffered stdout, so only what it printed by the exit is known, not when.
    const s = await sizes(['--trace-opt']);
    assert.match(s.out, /completed (compiling|optimizing) .*TURBOFAN/);
  });

  test('a listening server has not loaded Node.js modules of servers it never runs (tls, https, http2)', async () => {
    // scripts/bundle.mjs: Fastify requires them as it loads; they are loaded at their first use instead.
    const probe = `data:text/javascript,${encodeURIComponent(
      "process.once('realmgate:listening', () => setTimeout(() => process.stderr.write('modules ' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13))) + '\\n'), 100));",
    )}`;
    const child = spawn(process.execPath, ['--import', probe, path.join(dir, 'realmgate.mjs'), 'start', '--workers', '1', '--port', '0'], {
      env: { ...process.env, DATABASE_URL: `sqlite:${path.join(data, 'r.db')}`, LOG_LEVEL: 'warn' },
    });
    let out = '';
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 60_000;
    let m: RegExpExecArray | null;
    while (!(m = /modules (\[.*\])/.exec(out))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no report:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    const loaded = JSON.parse(m[1]!) as string[];
    assert.ok(loaded.includes('http') && loaded.includes('net'), 'the report lists what was loaded');
    for (const name of ['tls', '_tls_wrap', 'https', 'http2']) assert.ok(!loaded.includes(name), `${name} was loaded`);
  });

  test('a semi-space size set by the operator is left alone', async () => {
    const s = await sizes(['--min-semi-space-size=4']);
    assert.ok(s.atStart >= 8 * MB, `young generation at start ${s.atStart} bytes`);
  });
});
