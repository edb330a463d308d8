import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN } from '../helpers/cli.js';
import { freePort } from '../helpers/built.js';

// The reader of the server's output goes away (a log shipper restarted, `realmgate start | head`, a closed
// terminal): every later write fails with EPIPE. Unhandled, that EPIPE ended the server at its first line
// (`Realmgate listening on ...`), or froze it while exiting (pino retrying its buffered lines for ever).
describe('output whose reader went away', () => {
  for (const workers of ['1', '2']) {
    test(`start --workers ${workers}: keeps serving, and stops on SIGTERM`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-epipe-'));
      const port = await freePort();
      const child = spawn(process.execPath, [BIN, 'start', '--port', String(port), '--host', '127.0.0.1', '--workers', workers], {
        // The bootstrap admin makes realm master, and a warning about it (a line into the closed pipe).
        env: {
          ...process.env,
          DATABASE_URL: `sqlite:${path.join(dir, 'realmgate.db')}`,
          LOG_LEVEL: 'info',
          AUTH_URL: `http://127.0.0.1:${port}`,
          REALMGATE_BOOTSTRAP_ADMIN_USERNAME: 'admin',
          REALMGATE_BOOTSTRAP_ADMIN_PASSWORD: 'closed output password',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Both pipes closed by their reader before the server writes anything.
      child.stdout.destroy();
      child.stderr.destroy();
      let exit: number | string | null | undefined;
      const exited = new Promise<void>((r) =>
        child.once('exit', (code, signal) => {
          exit = signal ?? code;
          r();
        }),
      );
      try {
        let ready = 0;
        for (let tries = 0; ready !== 200; tries++) {
          assert.equal(exit, undefined, `the server exited (${exit})`);
          assert.ok(tries < 1500, 'the server never became ready');
          ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.status, () => 0);
          if (ready !== 200) await new Promise((r) => setTimeout(r, 20));
        }
        for (let i = 0; i < 10; i++) {
          const r = await fetch(`http://127.0.0.1:${port}/auth/realms/master/.well-known/openid-configuration`);
          assert.equal(r.status, 200);
          await r.arrayBuffer();
        }
        // A client that fails to authenticate is logged (warn): more lines into the closed pipe.
        const refused = await fetch(`http://127.0.0.1:${port}/auth/realms/master/protocol/openid-connect/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&client_id=nobody&client_secret=x',
        });
        assert.equal(refused.status, 401);
        assert.equal(exit, undefined, `the server exited (${exit})`);
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
        assert.equal(exit, 0, 'SIGTERM did not end the server by itself');
      } finally {
        if (exit === undefined) child.kill('SIGKILL');
        await exited;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
