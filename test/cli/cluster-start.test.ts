import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { BIN } from '../helpers/cli.js';

// `start --workers N` whose workers cannot listen: the primary exits 1 with the error once, and does
// not replace the workers forever (src/cluster.ts).
describe('start: a cluster whose workers cannot listen', () => {
  let dir: string;
  let taken: net.Server;
  let port: number;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-cluster-'));
    taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as net.AddressInfo).port;
  });
  after(() => {
    taken.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `start` and waits for it to exit (killed after 20 s: a primary that never exits fails the test). */
  function start(args: string[]): Promise<{ status: number | null; stderr: string; stdout: string }> {
    const child = spawn(process.execPath, [BIN, 'start', ...args], {
      env: { ...process.env, DATABASE_URL: `sqlite:${path.join(dir, 'r.db')}`, LOG_LEVEL: 'info', REALMGATE_KEY_SECRET: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    return new Promise((resolve) => {
      child.on('exit', (status) => {
        clearTimeout(timer);
        resolve({ status, stderr, stdout });
      });
    });
  }

  for (const [what, args, message] of [
    ['a port already taken', () => ['--port', String(port), '--workers', '2'], /^realmgate: .*EADDRINUSE.*; stopping$/],
    ['an address that is not this host', () => ['--host', '999.1.1.1', '--port', '0', '--workers', '2'], /^realmgate: .*999\.1\.1\.1.*; stopping$/],
  ] as const) {
    test(`${what}: exit status 1, the error once, no replacement worker`, async () => {
      const r = await start(args());
      assert.equal(r.status, 1, r.stderr);
      const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('realmgate: database ') && !l.includes('key-encryption key file'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, message);
      assert.doesNotMatch(r.stderr + r.stdout, /starting another/);
      assert.doesNotMatch(r.stdout, /listening/);
      assert.doesNotMatch(r.stderr, /\n\s+at\s/);
    });
  }

  test('with one process (--workers 1), the same error, exit status 1', async () => {
    const r = await start(['--port', String(port), '--workers', '1']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^realmgate: .*EADDRINUSE/m);
  });
});
