import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, basic, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, postFormFrom } from '../helpers/flow.js';
import { metrics } from '../../src/metrics.js';
import { nowSeconds } from '../../src/clock.js';

// Issue 11 item 7: brute-force protection that cannot be turned into a lock-out.
for (const dialect of dialects()) {
  describe(`lock-out resistance (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** A browser at a login form; `attempt` posts one try from `ip` with this browser's cookies. */
    async function browser(jar = new CookieJar()) {
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      const attempt = async (username: string, password: string, ip: string) => {
        const res = await postFormFrom(ts, jar, ip, form.action, { csrf: form.csrf, username, password });
        jar.update(res);
        return res;
      };
      return { jar, attempt };
    }

    test('a burst of 60 parallel wrong passwords checks at most the threshold, and the right one inside it is refused', async () => {
      const threshold = 5;
      const { attempt } = await browser();
      const burst = Array.from({ length: 60 }, (_, i) => attempt('alice', `wrong-${i}`, `10.1.0.${i + 1}`));
      // The right password arrives once the burst has used up the threshold, while it is still in flight.
      const subject = 'user:alice';
      for (;;) {
        const s = (await ts.store.loginFailures.get(REALM, [subject])).get(subject);
        if (s && (s.failures >= threshold || s.blockedUntil > nowSeconds(ts.clock))) break;
        await new Promise((r) => setImmediate(r));
      }
      const right = await attempt('alice', ts.user.password, '10.1.1.1');
      const answers = await Promise.all(burst);
      const checked = answers.filter((r) => /Invalid username or password/.test(r.body)).length;
      assert.ok(checked <= threshold, `${checked} passwords were checked`);
      assert.equal(answers.filter((r) => r.statusCode === 429).length, 60 - checked);
      assert.equal(right.statusCode, 429, 'the right password inside a locked burst does not log in');
      const lockouts = (await ts.store.events.list(REALM, { username: 'alice' })).filter((e) => e.type === 'LOCKOUT');
      assert.equal(lockouts.length, 1, 'one lock for the whole burst');
      ts.clock.advance(3600 * 2);
    });

    test('a browser the user signed in with before gets in while an attacker keeps the name locked', async () => {
      const user = await browser();
      assert.equal((await user.attempt('alice', ts.user.password, '10.2.0.1')).statusCode, 303);
      assert.ok(user.jar.cookies.get('RG_DEVICE'), 'a device cookie after a successful sign-in');

      // The attacker, from elsewhere, locks the name.
      const attacker = await browser();
      for (let i = 0; i < 5; i++) await attacker.attempt('alice', `guess-${i}`, '10.2.0.66');
      assert.equal((await attacker.attempt('alice', ts.user.password, '10.2.0.66')).statusCode, 429);
      // Another new browser (no device cookie) is locked out as well...
      const stranger = await browser();
      assert.equal((await stranger.attempt('alice', ts.user.password, '10.2.0.2')).statusCode, 429);
      // ... a forged device cookie is no better ...
      const forger = await browser();
      forger.jar.cookies.set('RG_DEVICE', `${'A'.repeat(22)}.${'B'.repeat(43)}`);
      assert.equal((await forger.attempt('alice', ts.user.password, '10.2.0.3')).statusCode, 429);
      // ... another user's device cookie neither ...
      const stolen = user.jar.cookies.get('RG_DEVICE')!;
      const other = await browser();
      other.jar.cookies.set('RG_DEVICE', stolen);
      for (let i = 0; i < 5; i++) await attacker.attempt('mallory', `guess-${i}`, '10.2.0.67');
      assert.equal((await other.attempt('mallory', 'whatever-password', '10.2.0.4')).statusCode, 429);
      // ... but the user's own browser signs in (signed out since: only its device cookie is left).
      const deviceOnly = (): CookieJar => {
        const jar = new CookieJar();
        jar.cookies.set('RG_DEVICE', stolen);
        return jar;
      };
      const again = await browser(deviceOnly());
      assert.equal((await again.attempt('alice', ts.user.password, '10.2.0.1')).statusCode, 303);
      // Guessing from the trusted browser is limited per device.
      const guesser = await browser(deviceOnly());
      for (let i = 0; i < 5; i++) await guesser.attempt('alice', `oops-${i}`, '10.2.0.1');
      assert.equal((await guesser.attempt('alice', ts.user.password, '10.2.0.1')).statusCode, 429);
      // After the lock's own backoff anyone with the password gets in.
      ts.clock.advance(901);
      assert.equal((await stranger.attempt('alice', ts.user.password, '10.2.0.2')).statusCode, 303);
      ts.clock.advance(3600 * 2);
    });

    test('bad client secrets from many addresses never refuse the right secret from an address that has not failed', async () => {
      const wrong = basic(ts.client.id, 'not-the-secret');
      const right = basic(ts.client.id, ts.client.secret);
      const grant = { grant_type: 'refresh_token', refresh_token: 'no-such-token' };
      const send = (auth: string, ip: string) =>
        ts.app.inject({
          method: 'POST',
          url: realmPath('/protocol/openid-connect/token'),
          remoteAddress: ip,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams(grant).toString(),
        });
      const before = (await metrics.clientAuthFailures.get()).values[0]?.value ?? 0;
      // 200 failures: over the per-client limit (100 a minute), 10 from each of 20 addresses.
      for (let a = 0; a < 20; a++) for (let i = 0; i < 10; i++) assert.equal((await send(wrong, `10.3.0.${a + 1}`)).statusCode, 401);
      // The right secret from a clean address: client authentication passes (the grant itself fails).
      const clean = await send(right, '10.3.1.1');
      assert.equal(clean.statusCode, 400, clean.body);
      assert.equal(clean.json().error, 'invalid_grant');
      // From an address that failed, it is refused for a while, with Retry-After.
      const dirty = await send(right, '10.3.0.1');
      assert.equal(dirty.statusCode, 401);
      assert.ok(Number(dirty.headers['retry-after']) > 0);
      // Every failure is counted; only a sample is stored as audit events.
      const after = (await metrics.clientAuthFailures.get()).values[0]?.value ?? 0;
      assert.ok(after - before >= 200);
      const stored = (await ts.store.events.list(REALM, { clientId: ts.client.id, limit: 1000 })).filter((e) => e.type === 'CLIENT_AUTH_ERROR');
      assert.ok(stored.length <= 10, `${stored.length} rows stored`);
      assert.ok(stored.length >= 1);
      ts.clock.advance(120);
      // The next stored one carries the count of those that were not stored.
      await send(wrong, '10.3.2.1');
      const latest = (await ts.store.events.list(REALM, { clientId: ts.client.id, limit: 1000 })).filter((e) => e.type === 'CLIENT_AUTH_ERROR');
      assert.ok(latest.some((e) => /more failures not stored/.test(e.reason ?? '')));
      ts.clock.advance(120);
    });

    test('a flood of sign-ins with unknown names stores a sample of LOGIN_ERROR rows; a wrong password for a real user is always stored', async () => {
      const rows = async (username: string) => (await ts.store.events.list(REALM, { username, limit: 1000 })).filter((e) => e.type === 'LOGIN_ERROR').length;
      const { attempt } = await browser();
      // 40 unknown names, each from its own address (no address limit in the way): all refused, at most 10 stored.
      for (let i = 0; i < 40; i++) assert.equal((await attempt(`nobody-${i}`, 'guess', `10.7.0.${i + 1}`)).statusCode, 200);
      let unknown = 0;
      for (let i = 0; i < 40; i++) unknown += await rows(`nobody-${i}`);
      assert.ok(unknown >= 1 && unknown <= 10, `${unknown} rows stored for 40 unknown names`);
      // A real user's wrong password, inside the same minute: stored.
      const before = await rows('alice');
      await attempt('alice', 'not her password', '10.7.1.1');
      assert.equal(await rows('alice'), before + 1);
      ts.clock.advance(3600 * 2);
    });

    test('made-up mailed links (action tokens, invitations) are all refused, and only a sample of the refusals is stored', async () => {
      const count = async (type: string) => (await ts.store.events.list(REALM, { limit: 1000 })).filter((e) => e.type === type).length;
      const before = { reset: await count('RESET_PASSWORD_ERROR'), invite: await count('INVITE_ORG_ERROR') };
      for (let i = 0; i < 40; i++) {
        // A token's claims are read before its MAC: one naming a real user is refused as used, one of garbage as invalid.
        const claims = Buffer.from(JSON.stringify({ realm: REALM, user: ts.user.id, exp: 4_000_000_000, actions: ['UPDATE_PASSWORD'], kind: 'reset', nonce: `n${i}` })).toString('base64url');
        const key = i % 2 === 0 ? `rgat1.${claims}.forged${i}` : `garbage-${i}`;
        const link = await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/login-actions/action-token')}?key=${encodeURIComponent(key)}`);
        assert.equal(link.statusCode, 400);
        const invitation = await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/login-actions/org-invitation')}?key=made-up-${i}`);
        assert.equal(invitation.statusCode, 400);
      }
      // At most 10 rows a minute of each type (the rows are written after the pages: let the last land first).
      await new Promise((r) => setTimeout(r, 200));
      for (const [type, n] of [['RESET_PASSWORD_ERROR', before.reset], ['INVITE_ORG_ERROR', before.invite]] as const) {
        const stored = (await count(type)) - n;
        assert.ok(stored >= 1 && stored <= 10, `${stored} ${type} rows stored for 40 refusals`);
      }
      ts.clock.advance(120);
      await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/login-actions/org-invitation')}?key=one-more`);
      // The page does not wait for its audit row: read until it is there (a bounded wait, not a retry).
      const counted = async () => (await ts.store.events.list(REALM, { limit: 1000 })).some((e) => e.type === 'INVITE_ORG_ERROR' && /\(\d+ more not stored\)$/.test(e.reason ?? ''));
      const deadline = Date.now() + 10_000;
      while (!(await counted()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(await counted(), 'the next stored refusal counts the others');
      ts.clock.advance(120);
    });
  });

  describe(`trusted proxies and request ids (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { trustedProxies: ['10.9.0.0/24'] } });
    });
    after(() => ts.close());

    async function failLogin(remoteAddress: string, headers: Record<string, string>): Promise<string | null> {
      // An unknown name's LOGIN_ERROR is sampled (10 a minute): each probe in a minute of its own is stored.
      ts.clock.advance(60);
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      const username = `probe-${Math.random().toString(36).slice(2)}`;
      await ts.app.inject({
        method: 'POST',
        url: form.action,
        remoteAddress,
        headers: { ...headers, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf: form.csrf, username, password: 'wrong-password' }).toString(),
      });
      const [e] = await ts.store.events.list(REALM, { username });
      return e?.ip ?? null;
    }

    test('X-Forwarded-For and Forwarded are believed from a trusted proxy only', async () => {
      assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': '198.51.100.7' }), '198.51.100.7');
      assert.equal(await failLogin('10.9.0.5', { forwarded: 'for="[2001:db8::1]:4711";proto=https' }), '2001:db8::1');
      assert.equal(await failLogin('10.9.0.5', { forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43' }), '192.0.2.60');
      // A client naming itself through a proxy: only the hop the proxy saw counts.
      assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': '1.2.3.4, 198.51.100.8' }), '198.51.100.8');
      // Not a proxy of ours: the header is ignored.
      assert.equal(await failLogin('192.0.2.1', { 'x-forwarded-for': '198.51.100.7' }), '192.0.2.1');
    });

    test('a forwarded value that is not an IP address is not believed: the proxy is the client, as with no header', async () => {
      for (const bad of ['garbage', '<script>', 'x'.repeat(8192), 'unknown', '198.51.100.7 junk', 'fe80::1%eth0', '300.1.2.3', '']) {
        assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': bad }), '10.9.0.5', JSON.stringify(bad.slice(0, 20)));
        // What lies beyond the bad entry is not believed either.
        assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': `198.51.100.7, ${bad}` }), '10.9.0.5');
      }
      // A bad entry farther away than an address the proxy vouches for changes nothing.
      assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': 'garbage, 198.51.100.8' }), '198.51.100.8');
      for (const bad of ['unknown', '_hidden', '"<script>"', `"${'y'.repeat(8192)}"`]) {
        assert.equal(await failLogin('10.9.0.5', { forwarded: `for=${bad};proto=https` }), '10.9.0.5', bad.slice(0, 20));
      }
      // Ports and brackets (RFC 7239 6) are allowed; only the address is kept.
      assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': '198.51.100.9:4711' }), '198.51.100.9');
      assert.equal(await failLogin('10.9.0.5', { 'x-forwarded-for': '[2001:db8::7]:4711' }), '2001:db8::7');
      assert.equal(await failLogin('10.9.0.5', { forwarded: 'for="[2001:db8::8]"' }), '2001:db8::8');
      // The sign-in started through the proxy keeps a valid address too.
      const res = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`, remoteAddress: '10.9.0.5', headers: { 'x-forwarded-for': `<script>${'z'.repeat(8192)}` } });
      assert.ok(res.statusCode === 302 || res.statusCode === 303, `${res.statusCode} ${res.body.slice(0, 200)}`);
      const ips = (await ts.store.db.kysely.selectFrom('interactions').select('ip').execute()).map((r) => r.ip);
      assert.ok(ips.includes('10.9.0.5'));
      assert.ok(ips.every((ip) => ip === null || isIP(ip) !== 0), JSON.stringify(ips.map((ip) => ip?.slice(0, 20))));
    });

    test('logins through the proxy are limited per real client, not per proxy', async () => {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const form = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const post = (xff: string, username: string, password: string) =>
        ts.app.inject({
          method: 'POST',
          url: form.action,
          remoteAddress: '10.9.0.5',
          headers: { 'x-forwarded-for': xff, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username, password }).toString(),
        });
      for (let i = 0; i < 21; i++) await post('198.51.100.66', `user${i}`, 'wrong-password');
      assert.equal((await post('198.51.100.66', 'alice', ts.user.password)).statusCode, 429);
      assert.equal((await post('198.51.100.67', 'alice', ts.user.password)).statusCode, 303, 'another client behind the same proxy is not locked');
    });

    test('X-Request-Id: echoed on every response, taken from a trusted proxy only, sanitized', async () => {
      const url = realmPath('/.well-known/openid-configuration');
      const own = await ts.app.inject({ method: 'GET', url, remoteAddress: '192.0.2.1', headers: { 'x-request-id': 'abc-123' } });
      assert.match(String(own.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const viaProxy = await ts.app.inject({ method: 'GET', url, remoteAddress: '10.9.0.5', headers: { 'x-request-id': 'abc-123' } });
      assert.equal(viaProxy.headers['x-request-id'], 'abc-123');
      const hostile = await ts.app.inject({ method: 'GET', url, remoteAddress: '10.9.0.5', headers: { 'x-request-id': 'a\u00e9b"}{' + 'x'.repeat(100) } });
      assert.match(String(hostile.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const notFound = await ts.app.inject({ method: 'GET', url: '/nowhere', remoteAddress: '192.0.2.1' });
      assert.ok(notFound.headers['x-request-id']);
    });
  });
}
