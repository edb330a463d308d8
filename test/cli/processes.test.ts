import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dialects, unusedDatabase } from '../helpers/db.js';
import { startTestServer, basic } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { freePort } from '../helpers/built.js';

// Issue 11 item 4: many processes. These run the built command (npm run build first).
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');

interface Proc {
  child: ChildProcess;
  output(): string;
  waitFor(re: RegExp): Promise<RegExpExecArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function startProcess(args: string[], env: Record<string, string>, opts: { detached?: boolean } = {}): Proc {
  // detached: the server leads a process group of its own, as in a terminal session.
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, detached: opts.detached ?? false });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    async waitFor(re) {
      // Not a timing threshold: a generous bound on a line the process prints, reported with its output.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never printed ${re}:\n${out}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

for (const dialect of dialects()) {
  describe(`many processes (${dialect})`, () => {
    test('four processes started at once on a fresh database all come up, migrated once', async () => {
      const db = unusedDatabase(dialect);
      const procs = Array.from({ length: 4 }, () => startProcess(['--workers', '1'], { DATABASE_URL: db.url }));
      try {
        const urls = await Promise.all(procs.map(async (p) => (await p.waitFor(/listening on (http:\/\/\S+)/))[1]!));
        for (const url of urls) {
          const res = await fetch(`${url}/health/ready`);
          assert.equal(res.status, 200, await res.text());
        }
        for (const p of procs) assert.doesNotMatch(p.output(), /migration .* failed|Error/);
        for (const p of procs) assert.equal(await p.stop(), 0);
      } finally {
        await Promise.all(procs.map((p) => p.stop('SIGKILL')));
        await db.drop();
      }
    });

    test('--workers 2: refresh chains rotate through both workers on one database; the management port sums their metrics and adds the primary\'s', async () => {
      // Tokens minted in this process, over the same database the cluster then serves.
      const ts = await startTestServer({ dialect });
      const auth = basic(ts.client.id, ts.client.secret);
      const chains: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await runAuthorization(ts);
        chains.push((await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json().refresh_token);
      }
      const metricsPort = await freePort();
      const proc = startProcess(['--workers', '2'], { DATABASE_URL: ts.db.url, AUTH_URL: ts.config.authUrl, REALMGATE_METRICS_PORT: String(metricsPort) });
      try {
        const url = (await proc.waitFor(/listening on (http:\/\/\S+)/))[1]!;
        const refresh = async (rt: string): Promise<Response> =>
          fetch(`${url}/auth/realms/test/protocol/openid-connect/token`, {
            method: 'POST',
            headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt }),
          });
        for (let round = 0; round < 10; round++) {
          const answers = await Promise.all(chains.map(refresh));
          for (let i = 0; i < chains.length; i++) {
            const body = (await answers[i]!.json()) as { refresh_token?: string };
            assert.equal(answers[i]!.status, 200, JSON.stringify(body));
            chains[i] = body.refresh_token!;
          }
        }
        // 60 refreshes, answered by two processes: the aggregated counter has all of them.
        const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        assert.match(metrics, /^realmgate_grants_total\{grant_type="refresh_token",outcome="success"\} 60$/m);
        const workersRss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(metrics)?.[1]);
        const primaryRss = Number(/^realmgate_primary_process_resident_memory_bytes (\d+)$/m.exec(metrics)?.[1]);
        assert.ok(primaryRss > 10e6 && workersRss > 2 * 10e6, `primary ${primaryRss}, workers ${workersRss}`);
        assert.match(metrics, /^realmgate_primary_nodejs_eventloop_lag_seconds /m);
        // Each metric family once: the primary's own do not collide with the workers'.
        const families = [...metrics.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
        assert.equal(new Set(families).size, families.length);
        assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/health/ready`)).status, 200);
        assert.equal(await proc.stop(), 0, proc.output());
      } finally {
        await proc.stop('SIGKILL');
        await ts.close();
      }
    });
  });
}

describe('graceful shutdown', () => {
  // SIGHUP as well: a closed terminal sends it, and Node's default for it ended the process at once.
  for (const signal of ['SIGTERM', 'SIGHUP'] as const)
  test(`a request in flight at ${signal} gets its response; new connections are refused`, async () => {
    const db = unusedDatabase('sqlite');
    const proc = startProcess(['--workers', '1'], { DATABASE_URL: db.url });
    try {
      const url = new URL((await proc.waitFor(/listening on (http:\/\/\S+)/))[1]!);
      const port = Number(url.port);
      // A token request whose body is only half sent: in flight when the signal arrives.
      const body = 'grant_type=refresh_token&refresh_token=abcdef';
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      let response = '';
      socket.on('data', (d) => (response += d.toString()));
      const closed = new Promise((r) => socket.once('close', r));
      socket.write(
        `POST /auth/realms/none/protocol/openid-connect/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 10)}`,
      );
      // "100 Continue" says the server has parsed the request's headers: it is in flight, waiting for its body.
      for (let i = 0; !response.includes('100 Continue'); i++) {
        if (i > 2400) throw new Error(`no 100 Continue: ${response}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      proc.child.kill(signal);
      await proc.waitFor(/shutting down/);
      // The listener is closed: no new connection is accepted.
      await assert.rejects(fetch(`${url.origin}/health/live`));
      socket.write(body.slice(10));
      await closed;
      assert.match(response, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 404 /, response);
      assert.match(response, /realm not found|invalid_request/);
      assert.equal(await proc.stop(), 0);
    } finally {
      await proc.stop('SIGKILL');
      await db.drop();
    }
  });

  test('a hang-up (SIGHUP to the whole process group, as a closed terminal sends it) stops a cluster cleanly', async () => {
    const db = unusedDatabase('sqlite');
    const proc = startProcess(['--workers', '2'], { DATABASE_URL: db.url, LOG_LEVEL: 'info' }, { detached: true });
    try {
      const url = new URL((await proc.waitFor(/listening on (http:\/\/\S+)/))[1]!);
      // Both workers up (a worker still starting has nothing in flight, and no handler yet).
      await proc.waitFor(/"msg":"worker listening"[^]*"msg":"worker listening"/);
      assert.equal((await fetch(`${url.origin}/health/ready`)).status, 200);
      // The primary and both workers get the signal at once; each drains, none is replaced.
      process.kill(-proc.child.pid!, 'SIGHUP');
      assert.equal(await proc.stop(), 0, proc.output());
      assert.equal(proc.output().match(/worker \d+ shutting down/g)?.length, 2, proc.output());
      assert.doesNotMatch(proc.output(), /starting another/);
    } finally {
      await proc.stop('SIGKILL');
      await db.drop();
    }
  });
});
