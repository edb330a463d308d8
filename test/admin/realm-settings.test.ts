import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic, realmPath } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

for (const dialect of dialects()) {
  describe(`admin API: client scopes, realm settings, grants (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    test('a custom client scope: its consent text is on the consent page of the next login', async () => {
      const { id } = await ts.kc.clientScopes.create({ realm: 'test', name: 'reports', protocol: 'openid-connect', attributes: { 'consent.screen.text': 'Read your monthly reports' } });
      assert.equal(id, 'reports');
      assert.equal(await statusOf(ts.kc.clientScopes.create({ realm: 'test', name: 'reports' })), 409);
      const found = await ts.kc.clientScopes.findOne({ realm: 'test', id: 'reports' });
      assert.equal(found?.attributes?.['consent.screen.text'], 'Read your monthly reports');
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { defaultClientScopes: ['openid', 'profile', 'reports'] });
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { scope: 'openid reports' })}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const afterLogin = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'alice', password: ts.user.password });
      const consent = await inject(ts.app, jar, 'GET', afterLogin.headers.location as string);
      assert.equal(pageKind(consent.body), 'consent');
      assert.match(consent.body, /Read your monthly reports/);
      // In use: refused; once no client uses it, deleted.
      assert.equal(await statusOf(ts.kc.clientScopes.del({ realm: 'test', id: 'reports' })), 400);
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { defaultClientScopes: ['openid', 'profile', 'email', 'core_data', 'exports', 'offline_access'] });
      await ts.kc.clientScopes.del({ realm: 'test', id: 'reports' });
      assert.equal(await ts.kc.clientScopes.findOne({ realm: 'test', id: 'reports' }), null);
    });

    test('token lifetimes changed through the API apply to the next token', async () => {
      await ts.kc.realms.update({ realm: 'test' }, { accessTokenLifespan: 300 });
      const r = await runAuthorization(ts);
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(t.json().expires_in, 300);
      await ts.kc.realms.update({ realm: 'test' }, { accessTokenLifespan: 259_200 });
    });

    test('a disabled realm answers no login and no discovery; enabled again it does', async () => {
      await ts.kc.realms.update({ realm: 'test' }, { enabled: false });
      const disc = await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') });
      assert.equal(disc.statusCode, 404);
      await assert.rejects(runAuthorization(ts));
      assert.equal((await ts.kc.realms.findOne({ realm: 'test' }))?.enabled, false);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'master' }, { enabled: false })), 400);
      await ts.kc.realms.update({ realm: 'test' }, { enabled: true });
      assert.ok((await runAuthorization(ts)).code);
    });

    test('discovery lists the password and client_credentials grants', async () => {
      const d = (await ts.app.inject({ method: 'GET', url: realmPath('/.well-known/openid-configuration') })).json() as { grant_types_supported: string[] };
      assert.ok(d.grant_types_supported.includes('password'));
      assert.ok(d.grant_types_supported.includes('client_credentials'));
    });

    test('the password grant goes through the login brute-force protection', async () => {
      await ts.kc.realms.update({ realm: 'test' }, { failureFactor: 3, waitIncrementSeconds: 60 });
      await ts.kc.clients.update({ realm: 'test', id: 'native-app' }, { directAccessGrantsEnabled: true });
      const attempt = (password: string): Promise<{ statusCode: number; json(): Record<string, unknown>; headers: Record<string, unknown> }> =>
        tokenRequest(ts, { grant_type: 'password', client_id: 'native-app', username: 'alice', password, scope: 'openid' });
      const good = await attempt(ts.user.password);
      assert.equal(good.statusCode, 200);
      assert.ok(good.json().refresh_token);
      for (let i = 0; i < 3; i++) {
        const bad = await attempt('wrong password');
        assert.equal(bad.json().error, 'invalid_grant');
        // Each failure after the slow-down threshold must wait: move the clock past it.
        ts.clock.advance(10);
      }
      const locked = await attempt(ts.user.password);
      assert.equal(locked.statusCode, 400);
      assert.equal(locked.json().error, 'invalid_grant');
      assert.match(String(locked.json().error_description), /locked/);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      ts.clock.advance(61);
      assert.equal((await attempt(ts.user.password)).statusCode, 200);
    });
  });
}
