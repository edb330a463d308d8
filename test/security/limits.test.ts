import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startTestServer, realmPath, type TestServer } from '../helpers/server.js';
import { authorizeQuery } from '../helpers/flow.js';

/** Sends raw bytes and returns the raw response. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(request));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', reject);
    s.setTimeout(10_000, () => s.destroy());
  });
}

describe('request limits answer in the protocol form', () => {
  let ts: TestServer;
  let port: number;
  before(async () => {
    ts = await startTestServer({ dialect: 'sqlite', listen: true });
    port = Number(new URL(ts.baseUrl).port);
  });
  after(() => ts.close());

  const token = realmPath('/protocol/openid-connect/token');

  test('a body over 64 KiB is 413 invalid_request', async () => {
    const res = await fetch(`${ts.baseUrl}${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${'a'.repeat(70_000)}`,
    });
    assert.equal(res.status, 413);
    assert.equal((await res.json()).error, 'invalid_request');
  });

  test('an over-long parameter is invalid_request', async () => {
    const res = await fetch(`${ts.baseUrl}${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=${'a'.repeat(9000)}`,
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, 'invalid_request');
    const auth = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { state: 's'.repeat(9000) })}`, { redirect: 'manual' });
    assert.equal(auth.status, 303);
    assert.equal(new URL(auth.headers.get('location')!).searchParams.get('error'), 'invalid_request');
  });

  test('oversized headers get 431 with an RFC 6749 body', async () => {
    const out = await raw(port, `GET ${token} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    assert.match(out, /^HTTP\/1\.1 431 /);
    assert.match(out, /"error":"invalid_request"/);
    // The answer to HEAD has the same status and headers, and no body (RFC 9110 9.3.2): Node's own client
    // refused the one it had ("Data after Connection: close") and saw no 431 at all.
    const head = await raw(port, `HEAD ${token}?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(head, /^HTTP\/1\.1 431 /);
    assert.ok(head.endsWith('\r\n\r\n'), JSON.stringify(head.slice(-80)));
    const status = await new Promise<number | string>((resolve) => {
      const r = http.request({ host: '127.0.0.1', port, method: 'HEAD', path: `${token}?${'q'.repeat(20_000)}` }, (res) => resolve(res.statusCode ?? 0));
      r.on('error', (e) => resolve(e.message));
      r.end();
    });
    assert.equal(status, 431);
  });

  test('a malformed request line gets 400 with an RFC 6749 body', async () => {
    const out = await raw(port, 'BLAH\r\n\r\n');
    assert.match(out, /^HTTP\/1\.1 400 /);
    assert.match(out, /"error":"invalid_request"/);
  });

  test('CONNECT gets 405 with an RFC 6749 body, not a dropped connection', async () => {
    const out = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.match(out, /^HTTP\/1\.1 405 /);
    assert.match(out, /"error":"invalid_request"/);
  });

  test('a URL that cannot be decoded: an error page for a browser, JSON for anything else', async () => {
    for (const path of [`${realmPath('/account')}/%ED%A0%80`, '/auth/realms/%ZZ/account', `${token}%ZZ`, '/auth/admin/console/realms/x/users/%ED%A0%80']) {
      const page = await fetch(`${ts.baseUrl}${path}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      assert.equal(page.status, 400, path);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await page.text(), /The address of this page is not valid/);
      const api = await fetch(`${ts.baseUrl}${path}`);
      assert.equal(api.status, 400, path);
      assert.equal((await api.json()).error, 'invalid_request');
    }
  });

  test('no page at this address: a 404 page for a browser, JSON for anything else', async () => {
    const page = await fetch(`${ts.baseUrl}${realmPath('/acount')}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /There is no page at this address/);
    const api = await fetch(`${ts.baseUrl}${realmPath('/acount')}`);
    assert.equal(api.status, 404);
    assert.equal((await api.json()).error, 'invalid_request');
  });

  test('the server keeps answering afterwards', async () => {
    const res = await fetch(`${ts.baseUrl}/health/live`);
    assert.equal(res.status, 200);
  });
});
