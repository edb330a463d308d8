import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { authorizeQuery } from '../helpers/flow.js';

// Issue 12 item 2: no URL the server emits comes from the request's Host, its absolute-form target or
// X-Forwarded-* headers; they all come from AUTH_URL / APP_URL (or are paths of this server).
const EVIL = 'evil.example';

/** One raw HTTP/1.1 exchange (Connection: close), so Host and the request target are exactly ours. */
function raw(port: number, target: string, headers: Record<string, string>, method = 'GET', body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = [`${method} ${target} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close'];
    if (body) lines.push('Content-Type: application/x-www-form-urlencoded', `Content-Length: ${Buffer.byteLength(body)}`);
    const s = net.connect(port, '127.0.0.1', () => s.write(lines.join('\r\n') + '\r\n\r\n' + body));
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('close', () => resolve(out));
    s.on('error', reject);
    s.setTimeout(10_000, () => s.destroy());
  });
}

for (const dialect of dialects()) {
  describe(`URLs never come from the request (${dialect})`, () => {
    let ts: TestServer;
    let port: number;
    const AUTH_URL = 'https://login.example.com';
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      port = Number(new URL(ts.baseUrl).port);
      // Listening on a loopback port, but configured for its public address.
      Object.assign(ts.config, { authUrl: AUTH_URL, appUrl: AUTH_URL });
    });
    after(() => ts.close());

    const paths = () => [
      realmPath('/device'),
      realmPath('/device?user_code=ABCD-EFGH'),
      realmPath('/account'),
      realmPath('/.well-known/openid-configuration'),
      `/.well-known/oauth-authorization-server/auth/realms/${REALM}`,
      `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`,
      `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { prompt: 'bogus' })}`,
      `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { redirect_uri: 'https://evil.example/cb' })}`,
      realmPath('/protocol/openid-connect/logout'),
      `${realmPath('/protocol/openid-connect/logout')}?client_id=web-app&post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F`,
      '/authentication_code?code=abc',
      '/auth/realms/nope/device',
      '/no/such/page',
    ];

    const forgeries = (p: string): Array<[string, Record<string, string>]> => [
      [p, { Host: EVIL }],
      [`http://${EVIL}${p}`, { Host: EVIL }],
      [`http://${EVIL}${p}`, { Host: `127.0.0.1:${port}` }],
      [`https://${EVIL}:8443${p}`, { Host: `${EVIL}:8443` }],
      [p, { Host: `127.0.0.1:${port}`, 'X-Forwarded-Host': EVIL, 'X-Forwarded-Proto': 'http', Forwarded: `host=${EVIL};proto=http` }],
    ];

    test('pages, redirects, discovery and errors never name the forged host', async () => {
      let checked = 0;
      for (const p of paths()) {
        for (const [target, headers] of forgeries(p)) {
          const res = await raw(port, target, headers);
          assert.match(res, /^HTTP\/1\.1 \d{3} /, `${target}: ${res.slice(0, 100)}`);
          assert.doesNotMatch(res, /^HTTP\/1\.1 5/, `${target}: ${res.slice(0, 300)}`);
          assert.ok(!res.toLowerCase().includes(EVIL) || p.includes(EVIL), `${target} ${JSON.stringify(headers)}:\n${res.slice(0, 1500)}`);
          checked++;
        }
      }
      assert.ok(checked > 50);
    });

    test('absolute URLs are the configured ones: discovery, the device form, redirects', async () => {
      const disco = await raw(port, `http://${EVIL}${realmPath('/.well-known/openid-configuration')}`, { Host: EVIL });
      const json = JSON.parse(disco.slice(disco.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      assert.equal(json.issuer, `${AUTH_URL}/auth/realms/${REALM}`);
      for (const v of Object.values(json)) if (typeof v === 'string' && /^https?:/.test(v)) assert.ok(v.startsWith(AUTH_URL), v);
      const device = await raw(port, `http://${EVIL}${realmPath('/device')}`, { Host: EVIL });
      const action = /<form[^>]*action="([^"]*)"/.exec(device)?.[1];
      assert.ok(action, device.slice(0, 500));
      assert.ok(action.startsWith(`${AUTH_URL}/`) || action.startsWith('/'), action);
      assert.ok(!action.startsWith('//'), action);
      const auth = await raw(port, `http://${EVIL}${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`, { Host: EVIL });
      const location = /\r\nlocation: ([^\r]*)/i.exec(auth)?.[1];
      assert.ok(location, auth.slice(0, 400));
      assert.ok(location.startsWith(`${AUTH_URL}/`) || (location.startsWith('/') && !location.startsWith('//')), location);
    });
  });
}
