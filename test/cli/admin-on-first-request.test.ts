import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { builtCopy, freePort } from '../helpers/built.js';

// The admin API and console (everything under /auth/admin) are an app built by the first request under
// /auth/admin (src/http/plugins/on-first-request.ts). This starts the built server (a copy of dist/, npm
// run build first, inside the repository so that node_modules is found) and uses them for the first time.
const HOST = '127.0.0.1';

describe('the admin API and console of the built server, on their first use', () => {
  let copy: ReturnType<typeof builtCopy>;
  let child: ChildProcess;
  let base: string;
  let metricsUrl: string;
  let out = '';
  before(async () => {
    copy = builtCopy('admin-first-request');
    const [port, metricsPort] = [await freePort(HOST), await freePort(HOST)];
    base = `http://${HOST}:${port}`;
    metricsUrl = `http://${HOST}:${metricsPort}/metrics`;
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${path.join(copy.data, 'r.db')}`,
      LOG_LEVEL: 'warn',
      AUTH_URL: base,
      REALMGATE_METRICS_PORT: String(metricsPort),
      REALMGATE_BOOTSTRAP_ADMIN_USERNAME: 'admin',
      REALMGATE_BOOTSTRAP_ADMIN_PASSWORD: 'first request password',
    };
    child = spawn(process.execPath, [path.join(copy.dir, 'realmgate.mjs'), 'start', '--workers', '1', '--port', String(port), '--host', HOST], { env });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // Not a timing threshold: a generous bound, reported with the output.
    const deadline = Date.now() + 60_000;
    while (!/listening on/.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never listened:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    copy.remove();
  });

  test('the first requests, several at once, are all answered; the API takes a JSON body; metrics count each request once, by its own route', async () => {
    // Several first requests while the app is being built: each waits for the same build.
    const unauthenticated = await Promise.all([1, 2, 3].map(() => fetch(`${base}/auth/admin/realms`)));
    for (const r of unauthenticated) {
      assert.equal(r.status, 401, out);
      assert.ok(r.headers.get('x-request-id'));
    }

    const token = await fetch(`${base}/auth/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: 'first request password' }),
    });
    assert.equal(token.status, 200, await token.clone().text());
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${accessToken}` };

    const created = await fetch(`${base}/auth/admin/realms`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ realm: 'first-request', enabled: true }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const realms = (await (await fetch(`${base}/auth/admin/realms`, { headers: auth })).json()) as Array<{ realm: string }>;
    assert.deepEqual(realms.map((r) => r.realm).sort(), ['first-request', 'master']);

    const openapi = await fetch(`${base}/auth/admin/openapi.json`);
    assert.equal(openapi.status, 200);
    assert.ok(Object.keys(((await openapi.json()) as { paths: object }).paths).length > 10);

    // The console's entry redirects to its sign-in; an unknown path under the API asks for credentials
    // (as it did when these routes were part of the main app); next to it, the main app's 404.
    assert.equal((await fetch(`${base}/auth/admin/console/`, { redirect: 'manual' })).status, 303);
    assert.equal((await fetch(`${base}/auth/admin`, { redirect: 'manual' })).status, 303);
    assert.equal((await fetch(`${base}/auth/admin/no-such-thing`)).status, 401);
    assert.equal((await fetch(`${base}/auth/adminx`)).status, 404);

    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /realmgate_http_request_duration_seconds_count\{[^}]*route="\/auth\/admin\/realms"[^}]*method="GET"[^}]*status="401"[^}]*\} 3\b/);
    assert.doesNotMatch(metrics, /route="\/auth\/admin\/\*"/);
    // The console's own route /auth/admin, once: not again for the hand-over.
    assert.match(metrics, /realmgate_http_request_duration_seconds_count\{route="\/auth\/admin",method="GET",status="303"\} 1\n/);
  });

  test('at SIGTERM, an admin request in flight gets its answer, and its connection is closed after it', async () => {
    const url = new URL(base);
    // A JSON body only half sent: in flight when the signal arrives.
    const body = JSON.stringify({ realm: 'in-flight', enabled: true });
    const socket = net.connect(Number(url.port), HOST);
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(
      `POST /auth/admin/realms HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 5)}`,
    );
    // "100 Continue" says the server has parsed the request's headers: it is in flight, waiting for its body.
    for (let i = 0; !response.includes('100 Continue'); i++) {
      if (i > 2400) throw new Error(`no 100 Continue: ${response}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    for (let i = 0; !/shutting down/.test(out); i++) {
      if (i > 2400) throw new Error(`did not shut down: ${out}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    socket.write(body.slice(5));
    await closed;
    // No bearer token: the admin API's 401, from the admin app, which closes the connection as the main app does.
    assert.match(response, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /, response);
    assert.match(response, /\r\nconnection: close\r\n/i, response);
    assert.equal(await exited, 0, out);
  });
});
