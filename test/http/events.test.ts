import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { OPTIONAL_EVENT_TYPES } from '../../src/events/stored-types.js';

for (const dialect of dialects()) {
  describe(`audit events (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('logins, consents, codes, refreshes, reuse, revocation and failures are recorded', async () => {
      // Successful refreshes are stored only when the realm asks for them (test/http/stored-events.test.ts).
      await ts.store.realms.update(REALM, { storedEventTypes: ['REFRESH_TOKEN', 'CODE_ISSUED', 'CODE_TO_TOKEN'] });
      const auth = basic(ts.client.id, ts.client.secret);
      // A failed login first.
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?client_id=${ts.client.id}&redirect_uri=${encodeURIComponent(ts.client.redirectUri)}&response_type=code&scope=openid`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'alice', password: 'wrong password' });

      const r = await runAuthorization(ts);
      const t = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json();
      const t2 = (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth })).json();
      await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth });
      await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(ts.client.id, 'bad') });
      await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/revoke'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        payload: `token=${t2.refresh_token}`,
      });

      const events = (await ts.store.events.list(REALM, { limit: 100 })).reverse();
      const types = events.map((e) => `${e.type}:${e.outcome}`);
      for (const expected of [
        'LOGIN_ERROR:failure',
        'LOGIN:success',
        'CONSENT:success',
        'CODE_ISSUED:success',
        'CODE_TO_TOKEN:success',
        'REFRESH_TOKEN:success',
        'TOKEN_REUSE:failure',
        'CLIENT_AUTH_ERROR:failure',
        'REVOKE:success',
      ]) {
        assert.ok(types.includes(expected), `${expected} missing from ${types.join(', ')}`);
      }
      const failedLogin = events.find((e) => e.type === 'LOGIN_ERROR')!;
      assert.equal(failedLogin.username, 'alice');
      assert.equal(failedLogin.ip, '127.0.0.1');
      // The code exchange names the user by name too (its row is read with the user's).
      assert.equal(events.find((e) => e.type === 'CODE_TO_TOKEN')!.username, ts.user.username);
      const refresh = events.find((e) => e.type === 'REFRESH_TOKEN')!;
      assert.equal(refresh.userId, ts.user.id);
      assert.equal(refresh.clientId, ts.client.id);
      // Filters: by user (id or attempted username), by client, by time.
      const mine = await ts.store.events.list(REALM, { userId: ts.user.id, username: 'alice' });
      assert.ok(mine.some((e) => e.type === 'LOGIN_ERROR') && mine.some((e) => e.type === 'REFRESH_TOKEN'));
      assert.equal((await ts.store.events.list(REALM, { clientId: 'nobody' })).length, 0);
      assert.equal((await ts.store.events.list(REALM, { since: Math.floor(ts.clock.nowMs() / 1000) + 10 })).length, 0);
      // No secret ends up in the log.
      const all = JSON.stringify(events);
      for (const secret of [ts.client.secret, t.refresh_token, t.access_token, ts.user.password, r.code!]) assert.ok(!all.includes(secret));
    });
  });
}

for (const dialect of dialects()) {
  describe(`every event about a known user names them (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    /** Every form of a page (the account page has several): its action and hidden fields. */
    const forms = (html: string): Array<{ action: string; fields: Record<string, string> }> =>
      [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)].map((m) => ({
        action: m[1]!.replace(/&amp;/g, '&'),
        fields: Object.fromEntries([...m[2]!.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((f) => [f[1]!, f[2]!])),
      }));

    test('refreshes (also in the grace window), reuse, revocations, consents, codes, devices and logouts carry the username', async () => {
      // Every optional type stored, and a grace window: each path that writes an event is taken below.
      await ts.store.realms.update(REALM, { storedEventTypes: [...OPTIONAL_EVENT_TYPES], refreshGraceSeconds: 30, refreshGraceMax: 1 });
      const auth = basic(ts.client.id, ts.client.secret);
      const exchange = async (code: string) => {
        const res = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: auth });
        assert.equal(res.statusCode, 200, res.body);
        return res.json() as { access_token: string; refresh_token: string; id_token: string };
      };
      const refresh = (token: string) => tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: token }, { authorization: auth });
      const revoke = async (token: string) => {
        const res = await ts.app.inject({
          method: 'POST',
          url: realmPath('/protocol/openid-connect/revoke'),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
          payload: new URLSearchParams({ token }).toString(),
        });
        assert.equal(res.statusCode, 200, res.body);
      };

      // Login, consent, code, its exchange; a refresh of the current token (PostgreSQL: the one-statement
      // rotation), the same token again inside the grace window, then once more: reuse.
      const r = await runAuthorization(ts);
      const t = await exchange(r.code!);
      assert.equal((await refresh(t.refresh_token)).statusCode, 200);
      assert.equal((await refresh(t.refresh_token)).statusCode, 200);
      assert.equal((await refresh(t.refresh_token)).json().error, 'invalid_grant');
      // The code presented again: reuse of a code.
      assert.equal((await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).statusCode, 400);
      // RFC 7009: an access token, then a refresh token, revoked by the client.
      const t2 = await exchange((await runAuthorization(ts, { jar: r.jar })).code!);
      await revoke(t2.access_token);
      await revoke(t2.refresh_token);
      // The revoked refresh token presented again: refused for a known chain (its user's failure event).
      assert.match((await refresh(t2.refresh_token)).json().error_description, /revoked/);
      // The user revokes the application's access on the account page; then denies consent.
      await exchange((await runAuthorization(ts, { jar: r.jar })).code!);
      const account = await inject(ts.app, r.jar, 'GET', realmPath('/account'));
      const revokeForm = forms(account.body).find((f) => f.action.endsWith('/account/revoke'))!;
      assert.match((await inject(ts.app, r.jar, 'POST', revokeForm.action, revokeForm.fields)).body, /Access revoked/);
      assert.equal((await runAuthorization(ts, { jar: r.jar, consent: 'deny' })).params.get('error'), 'access_denied');
      // The device flow (RFC 8628): approved in this browser, then polled.
      const started = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/auth/device'),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'native-app', scope: 'openid' }).toString(),
      });
      const device = started.json() as { device_code: string; user_code: string };
      let page = await inject(ts.app, r.jar, 'GET', `${realmPath('/device')}?user_code=${encodeURIComponent(device.user_code)}`);
      let form = parseForm(page.body);
      let res = await inject(ts.app, r.jar, 'POST', form.action, { csrf: form.csrf, user_code: device.user_code });
      for (let i = 0; i < 6 && res.statusCode === 303; i++) {
        page = await inject(ts.app, r.jar, 'GET', res.headers.location as string);
        form = parseForm(page.body);
        res = await inject(ts.app, r.jar, 'POST', form.action, { csrf: form.csrf, ...(pageKind(page.body) === 'consent' ? { decision: 'allow' } : { organization: 'acme' }) });
      }
      assert.equal(pageKind(res.body), 'device-done');
      const polled = await tokenRequest(ts, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'native-app' });
      assert.equal(polled.statusCode, 200, polled.body);
      // RP-initiated logout of this browser's session (its id token names it).
      const t3 = await exchange((await runAuthorization(ts, { jar: r.jar })).code!);
      assert.equal((await inject(ts.app, r.jar, 'GET', `${realmPath('/protocol/openid-connect/logout')}?id_token_hint=${t3.id_token}`)).statusCode, 200);

      const events = await ts.store.events.list(REALM, { limit: 1000 });
      const seen = (type: string, reason?: RegExp) => events.some((e) => e.type === type && (reason === undefined || reason.test(e.reason ?? '')));
      for (const [type, reason] of [
        ['LOGIN'], ['CONSENT'], ['CONSENT_DENIED'], ['CODE_ISSUED'], ['CODE_TO_TOKEN'], ['REFRESH_TOKEN', /^$/], ['REFRESH_TOKEN', /grace/],
        ['TOKEN_REUSE', /refresh token reused/], ['TOKEN_REUSE', /authorization code reused/], ['REVOKE', /^access token$/], ['REVOKE', /^refresh token$/],
        ['REVOKE', /account page/], ['DEVICE_APPROVED'], ['DEVICE_TO_TOKEN'], ['LOGOUT'],
      ] as Array<[string, RegExp?]>) {
        assert.ok(seen(type, reason), `no ${type} ${reason ?? ''} event among ${events.map((e) => `${e.type}(${e.reason ?? ''})`).join(', ')}`);
      }
      for (const e of events.filter((e) => e.userId !== null)) assert.equal(e.username, ts.user.username, `${e.type} (${e.reason ?? ''}) names user ${e.userId} without the username`);
      // A refused refresh or code of a known chain or code names its user too (it was anonymous).
      for (const [type, reason] of [
        ['REFRESH_TOKEN_ERROR', /already been used/], ['REFRESH_TOKEN_ERROR', /has been revoked/], ['CODE_TO_TOKEN_ERROR', /already been used/],
      ] as Array<[string, RegExp]>) {
        const e = events.find((x) => x.type === type && reason.test(x.reason ?? ''));
        assert.ok(e, `no ${type} ${reason} event`);
        assert.equal(e.userId, ts.user.id, `${type} ${reason}`);
        assert.equal(e.username, ts.user.username);
      }

      // The admin API's events (Keycloak's representation: the username is a detail).
      const listed = await ts.kc.realms.findEvents({ realm: REALM, max: 1000 });
      // Named as Keycloak names them (its EventType), where Keycloak has the event; either name selects them.
      const revocations = listed.filter((e) => String(e.type) === 'REVOKE_GRANT');
      assert.equal(revocations.length, 3);
      for (const [keycloak, ours] of [['REVOKE_GRANT', 'REVOKE'], ['GRANT_CONSENT', 'CONSENT'], ['OAUTH2_DEVICE_VERIFY_USER_CODE', 'DEVICE_APPROVED'], ['OAUTH2_DEVICE_CODE_TO_TOKEN', 'DEVICE_TO_TOKEN']]) {
        const stored = events.filter((e) => e.type === ours).length;
        assert.ok(stored > 0, ours);
        assert.equal(listed.filter((e) => String(e.type) === keycloak).length, stored, keycloak);
        assert.equal(listed.filter((e) => String(e.type) === ours).length, 0, `${ours} is shown as ${keycloak}`);
        for (const name of [keycloak, ours]) {
          const selected = await ts.kc.realms.findEvents({ realm: REALM, type: [name as never], max: 1000 });
          assert.equal(selected.length, stored, `type=${name}`);
          assert.ok(selected.every((e) => String(e.type) === keycloak));
        }
      }
      assert.ok(listed.some((e) => String(e.type) === 'TOKEN_REUSE'), 'a type Keycloak does not have keeps its name');
      for (const e of listed.filter((e) => e.userId !== undefined)) assert.equal(e.details?.username, ts.user.username, `${e.type} in the admin API`);
    });
  });
}
