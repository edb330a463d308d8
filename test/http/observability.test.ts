import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import net from 'node:net';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { dialects, createTestDatabase } from '../helpers/db.js';
import { startTestServer, basic, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { registry } from '../../src/metrics.js';
import { buildApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import { Store } from '../../src/storage/store.js';
import { loadConfig } from '../../src/config/config.js';
import { ManualClock } from '../../src/clock.js';
import { startServer } from '../../src/server.js';

/** The value of one sample line of the Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

// Issue 11 item 8: observability.
// One key file for this file's servers: the key-encryption secret, once opened, is the process's, and
// with PostgreSQL the default file is the installation's, shared with every other test process.
const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-key-')), 'realmgate.key');

/** A pino logger whose JSON lines are kept, parsed, in `lines`. */
function capturedLog(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

for (const dialect of dialects()) {
  describe(`metrics, logs and health (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('requests by route pattern and status, grants by outcome, reuse detections and transaction timings are counted', async () => {
      const before = await registry.metrics();
      const auth = basic(ts.client.id, ts.client.secret);
      const r = await runAuthorization(ts);
      const first = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json().refresh_token;
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: first }, { authorization: auth })).statusCode, 200);
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: first }, { authorization: auth })).statusCode, 400);
      const after = await registry.metrics();
      const delta = (name: string, labels: Record<string, string> = {}): number => sample(after, name, labels) - sample(before, name, labels);
      const route = '/auth/realms/:realm/protocol/openid-connect/token';
      assert.equal(delta('realmgate_http_request_duration_seconds_count', { route, method: 'POST', status: '200' }), 2);
      assert.equal(delta('realmgate_http_request_duration_seconds_count', { route, method: 'POST', status: '400' }), 1);
      assert.ok(delta('realmgate_http_request_duration_seconds_bucket', { route, method: 'POST', status: '200', le: '+Inf' }) === 2);
      assert.equal(delta('realmgate_grants_total', { grant_type: 'authorization_code', outcome: 'success' }), 1);
      assert.equal(delta('realmgate_grants_total', { grant_type: 'refresh_token', outcome: 'success' }), 1);
      assert.equal(delta('realmgate_grants_total', { grant_type: 'refresh_token', outcome: 'invalid_grant' }), 1);
      assert.equal(delta('realmgate_reuse_detections_total', { kind: 'refresh_token' }), 1);
      assert.ok(delta('realmgate_db_token_transaction_seconds_count') >= 3);
      if (dialect === 'sqlite') assert.ok(delta('realmgate_sqlite_group_commit_batch_size_count') >= 3);
      else assert.ok(sample(after, 'realmgate_db_pool_connections', { state: 'total' }) >= 1);
      // No URL, token or user data becomes a label: only route patterns.
      assert.doesNotMatch(after, /route="\/auth\/realms\/test/);
    });

    test('every log line of a request carries its id, the one in the X-Request-Id header', async () => {
      const { lines, logger } = capturedLog();
      const app = await buildApp({ services: ts.services, logger });
      try {
        const res = await app.inject({
          method: 'POST',
          url: '/auth/realms/test/protocol/openid-connect/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, 'wrong') },
          payload: 'grant_type=refresh_token&refresh_token=x',
        });
        assert.equal(res.statusCode, 401);
        const id = res.headers['x-request-id'];
        assert.ok(typeof id === 'string' && id.length > 0);
        const mine = lines.filter((l) => l.msg === 'oauth error');
        assert.ok(mine.length >= 1, JSON.stringify(lines));
        for (const l of mine) assert.equal(l.reqId, id);
      } finally {
        await app.close();
      }
    });

    test('a client that goes away while sending its body is not logged as the database being unreachable', async () => {
      const { lines, logger } = capturedLog();
      const app = await buildApp({ services: ts.services, logger });
      try {
        await app.listen({ port: 0, host: '127.0.0.1' });
        const port = (app.server.address() as { port: number }).port;
        const requests = [
          ['/auth/realms/test/protocol/openid-connect/token', 'application/x-www-form-urlencoded', 'grant_type=refresh'],
          ['/auth/admin/realms/test/users', 'application/json', '{"username":'],
        ] as const;
        for (const [url, type, part] of requests) {
          // Content-Length promises more than is sent; the client then closes the connection (Node: 'aborted', ECONNRESET).
          const socket = net.connect(port, '127.0.0.1');
          await new Promise((resolve) => socket.once('connect', resolve));
          socket.write(`POST ${url} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: 100\r\n\r\n${part}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
          socket.destroy();
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.deepEqual(lines.filter((l) => l.level !== undefined && (l.level as number) >= 40), [], 'no warning or error');
        assert.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200);
      } finally {
        await app.close();
      }
    });

    test('/health/ready is 503 while migrations are not applied, 200 once they are', async () => {
      const tdb = await createTestDatabase(dialect);
      try {
        // A database whose schema is one migration behind this build.
        const { MIGRATIONS } = await import('../../src/storage/migrations/index.js');
        const last = Object.keys(MIGRATIONS).at(-1)!;
        await tdb.db.kysely.deleteFrom('kysely_migration' as never).where('name' as never, '=', last as never).execute();
        const services = createServices(loadConfig({}, { port: 0, databaseUrl: tdb.url }), new Store(tdb.db), new ManualClock());
        const app = await buildApp({ services });
        assert.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 503);
        assert.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200);
        await tdb.db.kysely.insertInto('kysely_migration' as never).values({ name: last, timestamp: new Date().toISOString() } as never).execute();
        assert.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200);
        await app.close();
      } finally {
        await tdb.drop();
      }
    });

    test('the management port serves /metrics and the health checks, apart from the public port', async () => {
      const config = loadConfig({}, { port: 0, databaseUrl: ts.db.url, metricsPort: 0, logLevel: 'silent', collectorIntervalS: 0, keyFile });
      const server = await startServer(config);
      try {
        assert.ok(server.managementUrl);
        const metrics = await fetch(`${server.managementUrl}/metrics`);
        assert.equal(metrics.status, 200);
        assert.match(metrics.headers.get('content-type') ?? '', /text\/plain/);
        const text = await metrics.text();
        assert.match(text, /nodejs_eventloop_lag_seconds/);
        assert.match(text, /realmgate_collector_runs_total/);
        assert.equal((await fetch(`${server.managementUrl}/health/ready`)).status, 200);
        assert.equal((await fetch(`${server.managementUrl}/health/live`)).status, 200);
        // Not on the public port.
        assert.equal((await fetch(`${server.url}/metrics`)).status, 404);
      } finally {
        await server.close();
      }
    });
  });
}

