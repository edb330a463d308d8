// The admin console over real HTTP (inject) on both databases: sign-in through master's own authorization
// code flow with PKCE, its pages and forms, CSRF and role refusals, and escaping of hostile names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basic, REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { CookieJar, inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, csrfOf, setup, signIn } from '../helpers/console.js';
import { createClient } from '../../src/admin/operations/clients.js';
import { createUser } from '../../src/admin/operations/users.js';
import { userSessions } from '../../src/admin/operations/users.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: sign-in, dashboard, clients and redirect URIs, recorded as admin events`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const dash = await inject(ts.app, jar, 'GET', `${CONSOLE}/`);
      assert.equal(dash.statusCode, 200);
      assert.match(dash.body, /<h1>Dashboard<\/h1>/);
      assert.ok(dash.body.includes(`href="${CONSOLE}/realms/${REALM}"`), 'the dashboard links the realm');
      assert.equal(dash.headers['content-security-policy']?.toString().includes("default-src 'none'"), true);

      const clientsUrl = `${CONSOLE}/realms/${REALM}/clients`;
      const csrf = await csrfOf(ts, jar, clientsUrl);
      const current = [...(await inject(ts.app, jar, 'GET', `${clientsUrl}/web-app`)).body.matchAll(/<a href="([^"]+)" aria-current="page">/g)].map((m) => m[1]);
      assert.deepEqual(current, [clientsUrl], 'the navigation marks the current section');
      let res = await inject(ts.app, jar, 'POST', clientsUrl, { csrf, clientId: 'shop', name: 'Shop', redirectUri: 'https://shop.example.com/cb', type: 'confidential' });
      assert.equal(res.statusCode, 201, res.body.slice(0, 400));
      const secret = /<code class="secret">([^<]+)<\/code>/.exec(res.body)?.[1];
      assert.ok(secret && secret.length >= 32, 'the generated secret is shown once');
      // A client ID already taken is said on the form (it was a 500).
      const again = await inject(ts.app, jar, 'POST', clientsUrl, { csrf, clientId: 'shop', name: 'Other', redirectUri: 'https://other.example.com/cb', type: 'public' });
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /class="error"[^>]*>[^<]*already exists/);

      // A bad redirect URI is refused with the reason, and nothing changes.
      res = await inject(ts.app, jar, 'POST', `${clientsUrl}/shop/redirect-uris`, { csrf, uri: 'not a uri' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"/);
      res = await inject(ts.app, jar, 'POST', `${clientsUrl}/shop/redirect-uris`, { csrf, uri: 'https://shop.example.com/cb2' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${clientsUrl}/shop?done=uri-added`);
      res = await inject(ts.app, jar, 'POST', `${clientsUrl}/shop/redirect-uris/remove`, { csrf, uri: 'https://shop.example.com/cb' });
      assert.equal(res.statusCode, 303);
      const client = await ts.store.clients.get(REALM, 'shop');
      assert.deepEqual(client?.redirectUris, ['https://shop.example.com/cb2']);
      const page = await inject(ts.app, jar, 'GET', `${clientsUrl}/shop?done=uri-removed`);
      assert.match(page.body, /The redirect URI was removed/);

      const events = await ts.store.adminEvents.list(REALM, {});
      const mine = events.filter((e) => e.via === 'console' && e.resourcePath === 'clients/shop');
      assert.deepEqual(mine.map((e) => e.operation).sort(), ['CREATE', 'UPDATE', 'UPDATE']);
      assert.ok(mine.every((e) => e.authUsername === 'admin' && e.authRealmId === 'master'), JSON.stringify(mine));
      const eventsPage = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/events`);
      assert.equal(eventsPage.statusCode, 200);
      assert.match(eventsPage.body, /<code>clients\/shop<\/code>/);
      // The admin's own sign-in is a login event of master.
      assert.match((await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/master/events`)).body, /<td data-label="Type">LOGIN<\/td><td data-label="Outcome">success<\/td><td data-label="User">admin<\/td><td data-label="Client">security-admin-console<\/td>/);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: a client's web origins, disabled and enabled, a new secret, deleted after typing its ID`, async () => {
    // A configuration cache that would hold the client for a minute: each change counts at the next request all the same.
    const ts = await setup(dialect, { cacheTtlMs: 60_000 });
    try {
      const jar = await signIn(ts, ADMIN);
      const clientsUrl = `${CONSOLE}/realms/${REALM}/clients`;
      const csrf = await csrfOf(ts, jar, clientsUrl);
      let res = await inject(ts.app, jar, 'POST', clientsUrl, { csrf, clientId: 'shop', redirectUri: 'https://shop.example.com/cb', type: 'confidential' });
      assert.equal(res.statusCode, 201);
      const firstSecret = /<code class="secret">([^<]+)<\/code>/.exec(res.body)![1]!;
      const shop = `${clientsUrl}/shop`;
      // The token endpoint's answer to this client's credentials: invalid_client (401) or, authenticated, invalid_grant.
      const authenticates = async (secret: string): Promise<boolean> => {
        const r = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'not-a-token' }, { authorization: basic('shop', secret) });
        assert.ok(r.statusCode === 400 || r.statusCode === 401, r.body);
        return r.statusCode === 400;
      };
      assert.equal(await authenticates(firstSecret), true);

      // Web origins: a bad one refused with the reason, one added (normalized), "+" added, one removed.
      res = await inject(ts.app, jar, 'POST', `${shop}/web-origins`, { csrf, origin: 'https://shop.example.com/path' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"/);
      res = await inject(ts.app, jar, 'POST', `${shop}/web-origins`, { csrf, origin: 'https://shop.example.com' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${shop}?done=origin-added`);
      assert.equal((await inject(ts.app, jar, 'POST', `${shop}/web-origins`, { csrf, origin: '+' })).statusCode, 303);
      assert.equal((await inject(ts.app, jar, 'POST', `${shop}/web-origins/remove`, { csrf, origin: 'https://shop.example.com' })).statusCode, 303);
      assert.deepEqual((await ts.store.clients.get(REALM, 'shop'))?.webOrigins, ['+']);
      const page = await inject(ts.app, jar, 'GET', `${shop}?done=origin-removed`);
      assert.match(page.body, /The web origin was removed/);
      assert.match(page.body, /<code>\+<\/code>/);

      // Disabled, the client cannot authenticate; enabled again, it can.
      res = await inject(ts.app, jar, 'POST', `${shop}/disable`, { csrf });
      assert.equal(res.headers.location, `${shop}?done=client-disabled`);
      assert.equal((await ts.store.clients.get(REALM, 'shop'))?.enabled, false);
      assert.equal(await authenticates(firstSecret), false);
      assert.match((await inject(ts.app, jar, 'GET', shop)).body, />Enable client</);
      assert.equal((await inject(ts.app, jar, 'POST', `${shop}/enable`, { csrf })).headers.location, `${shop}?done=client-enabled`);
      assert.equal(await authenticates(firstSecret), true);

      // A new secret: shown once, the old one refused from now on.
      res = await inject(ts.app, jar, 'POST', `${shop}/secret`, { csrf });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['cache-control']), /no-store/);
      const secret = /<code class="secret">([^<]+)<\/code>/.exec(res.body)?.[1];
      assert.ok(secret && secret !== firstSecret && secret.length >= 32);
      assert.equal(await authenticates(firstSecret), false);
      assert.equal(await authenticates(secret), true);
      assert.doesNotMatch((await inject(ts.app, jar, 'GET', shop)).body, /class="secret"/, 'shown only once');
      assert.match((await inject(ts.app, jar, 'GET', shop)).body, /No previous secret is valid/);

      // A new secret that keeps the old one for a day: both authenticate, the page says until when; the
      // button refuses it at once. A duration the form does not offer is refused, the secret unchanged.
      res = await inject(ts.app, jar, 'POST', `${shop}/secret`, { csrf, keepPrevious: 'forever' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /not a duration/);
      assert.equal(await authenticates(secret), true);
      res = await inject(ts.app, jar, 'POST', `${shop}/secret`, { csrf, keepPrevious: '86400' });
      assert.equal(res.statusCode, 200);
      const kept = /<code class="secret">([^<]+)<\/code>/.exec(res.body)?.[1];
      assert.ok(kept && kept !== secret);
      const until = new Date((Math.floor(ts.clock.nowMs() / 1000) + 86_400) * 1000).toISOString().slice(0, 10);
      assert.match(res.body, new RegExp(`the old one is still accepted until ${until} `));
      assert.equal(await authenticates(secret), true);
      assert.equal(await authenticates(kept), true);
      const withPrevious = (await inject(ts.app, jar, 'GET', shop)).body;
      assert.match(withPrevious, new RegExp(`<dt>Previous secret</dt><dd>still accepted until ${until} `));
      res = await inject(ts.app, jar, 'POST', `${shop}/secret/previous/invalidate`, { csrf: 'wrong' });
      assert.equal(res.statusCode, 403, 'CSRF-protected');
      assert.equal(await authenticates(secret), true);
      res = await inject(ts.app, jar, 'POST', `${shop}/secret/previous/invalidate`, { csrf });
      assert.equal(res.headers.location, `${shop}?done=previous-secret-refused`);
      assert.equal(await authenticates(secret), false);
      assert.equal(await authenticates(kept), true);
      assert.match((await inject(ts.app, jar, 'GET', `${shop}?done=previous-secret-refused`)).body, /The previous secret is refused from now on/);

      // Refusing the client's tokens issued until now: its not-before is the next second, shown on the page.
      res = await inject(ts.app, jar, 'POST', `${shop}/not-before`, { csrf });
      assert.equal(res.headers.location, `${shop}?done=client-tokens-refused`);
      const notBefore = Math.floor(ts.clock.nowMs() / 1000) + 1;
      assert.equal((await ts.store.clients.get(REALM, 'shop'))?.notBefore, notBefore);
      const refusedPage = (await inject(ts.app, jar, 'GET', `${shop}?done=client-tokens-refused`)).body;
      assert.match(refusedPage, /Every token issued to this client until now is refused/);
      assert.match(refusedPage, new RegExp(`<dt>Tokens refused</dt><dd>issued before ${new Date(notBefore * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC</dd>`));

      // Deleting needs the client ID typed again; realm-management is never deleted.
      for (const confirm of ['', 'sho', 'SHOP']) {
        res = await inject(ts.app, jar, 'POST', `${shop}/delete`, { csrf, confirm });
        assert.equal(res.statusCode, 400);
        assert.match(res.body, /Type the client ID/);
      }
      assert.ok(await ts.store.clients.get(REALM, 'shop'));
      res = await inject(ts.app, jar, 'POST', `${clientsUrl}/realm-management/delete`, { csrf, confirm: 'realm-management' });
      assert.equal(res.statusCode, 400);
      assert.ok(await ts.store.clients.get(REALM, 'realm-management'));
      res = await inject(ts.app, jar, 'POST', `${shop}/delete`, { csrf, confirm: 'shop' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${clientsUrl}?done=client-deleted`);
      assert.equal(await ts.store.clients.get(REALM, 'shop'), undefined);
      assert.equal(await authenticates(secret), false);
      assert.match((await inject(ts.app, jar, 'GET', `${clientsUrl}?done=client-deleted`)).body, /The client was deleted/);
      assert.equal((await inject(ts.app, jar, 'GET', shop)).statusCode, 404);

      const events = await ts.store.adminEvents.list(REALM, {});
      const mine = events.filter((e) => e.via === 'console' && e.resourcePath.startsWith('clients/shop')).map((e) => `${e.operation} ${e.resourcePath}`);
      assert.deepEqual(mine.sort(), ['ACTION clients/shop/client-secret', 'ACTION clients/shop/client-secret', 'CREATE clients/shop', 'DELETE clients/shop/client-secret/rotated', 'DELETE clients/shop', ...Array(6).fill('UPDATE clients/shop')].sort());

      // Without manage-clients, none of it.
      const viewer = await signIn(ts, VIEWER);
      const vcsrf = /name="csrf" value="([^"]*)"/.exec((await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/master/users`)).body)![1]!;
      for (const action of ['secret', 'secret/previous/invalidate', 'not-before', 'disable', 'delete', 'web-origins']) {
        const r = await inject(ts.app, viewer, 'POST', `${CONSOLE}/realms/master/clients/security-admin-console/${action}`, { csrf: vcsrf, confirm: 'security-admin-console', origin: 'https://x.example' });
        assert.equal(r.statusCode, 403, action);
      }
      assert.equal((await ts.store.clients.get('master', 'security-admin-console'))?.enabled, true);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: users created, password reset, disabled, enabled, unlocked`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const usersUrl = `${CONSOLE}/realms/${REALM}/users`;
      const csrf = await csrfOf(ts, jar, usersUrl);
      let res = await inject(ts.app, jar, 'POST', usersUrl, { csrf, username: 'bob', email: 'bob@example.com', password: 'short' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /at least 8 characters/);
      assert.match(res.body, /value="bob"/, 'the form keeps what was typed');
      res = await inject(ts.app, jar, 'POST', usersUrl, { csrf, username: 'bob', email: 'bob@example.com', password: 'bob password 1' });
      assert.equal(res.statusCode, 303);
      const bob = await ts.store.users.findByUsername(REALM, 'bob');
      assert.ok(bob);
      const userUrl = `${usersUrl}/${bob.id}`;
      assert.equal(res.headers.location, `${userUrl}?done=user-created`);
      // A username already taken is said on the form (it was a 500), and the user stays as it was.
      res = await inject(ts.app, jar, 'POST', usersUrl, { csrf, username: 'bob', email: 'other@example.com', password: 'other password 1' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"[^>]*>[^<]*already exists/);
      assert.equal((await ts.store.users.findByUsername(REALM, 'bob'))?.email, 'bob@example.com');

      res = await inject(ts.app, jar, 'POST', `${userUrl}/disable`, { csrf });
      assert.equal(res.statusCode, 303);
      assert.equal((await ts.store.users.get(bob.id))?.enabled, false);
      const shown = await inject(ts.app, jar, 'GET', `${userUrl}?done=user-disabled`);
      assert.match(shown.body, /Enable user/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/enable`, { csrf });
      assert.equal((await ts.store.users.get(bob.id))?.enabled, true);

      // The Temporary box (checked on the page, as in Keycloak's console) requires a new password at the
      // next sign-in; unchecked (nothing sent), the password is permanent and the requirement ends.
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /name="temporary" value="on" checked/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/password`, { csrf, password: 'temp bob password', temporary: 'on' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.users.get(bob.id))?.requiredActions, ['UPDATE_PASSWORD']);
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /<dt>Password<\/dt><dd>temporary/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/password`, { csrf, password: 'new bob password' });
      assert.equal(res.statusCode, 303);
      const after = await ts.store.users.get(bob.id);
      assert.notEqual(after?.passwordHash, bob.passwordHash);
      assert.deepEqual(after?.requiredActions, []);
      res = await inject(ts.app, jar, 'POST', usersUrl, { csrf, username: 'cleo', password: 'cleo password 1', temporary: 'on' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.users.findByUsername(REALM, 'cleo'))?.requiredActions, ['UPDATE_PASSWORD']);

      // A failed login as the brute-force protection counts it, then the admin clears it.
      await ts.store.loginFailures.reserve(REALM, 'user:bob', Math.floor(Date.now() / 1000), 3600);
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /<dt>Failed logins<\/dt><dd>1/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/unlock`, { csrf });
      assert.equal(res.statusCode, 303);
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /<dt>Failed logins<\/dt><dd>0/);
      const ops = (await ts.store.adminEvents.list(REALM, {})).filter((e) => e.via === 'console').map((e) => `${e.operation} ${e.resourceType}`);
      assert.ok(ops.includes('CREATE USER'));
      assert.ok(ops.includes('DELETE USER_LOGIN_FAILURE'));

      const search = await inject(ts.app, jar, 'GET', `${usersUrl}?search=bo`);
      assert.match(search.body, />bob<\/a>/);
      assert.doesNotMatch(search.body, />alice<\/a>/);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: realm lifetimes, a user's sessions ended`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const realmUrl = `${CONSOLE}/realms/${REALM}`;
      const page = await inject(ts.app, jar, 'GET', realmUrl);
      assert.match(page.body, /id="accessTokenLifetime" name="accessTokenLifetime" required value="\d+"/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      const realm = (await ts.store.realms.get(REALM))!;
      const form = { csrf, accessTokenLifetime: '120', ssoSessionLifetime: String(realm.ssoSessionLifetime), refreshIdleLifetime: String(realm.refreshIdleLifetime), refreshMaxLifetime: String(realm.refreshMaxLifetime), codeLifetime: String(realm.codeLifetime) };
      let res = await inject(ts.app, jar, 'POST', `${realmUrl}/lifetimes`, { ...form, accessTokenLifetime: '2 minutes' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Access token lifetime: enter a whole number of seconds/);
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/lifetimes`, { ...form, accessTokenLifetime: '0' });
      assert.equal(res.statusCode, 400);
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/lifetimes`, form);
      assert.equal(res.statusCode, 303);
      assert.equal((await ts.store.realms.get(REALM))?.accessTokenLifetime, 120);
      // The new lifetime reaches the tokens of the next login.
      const flow = await runAuthorization(ts, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' } });
      const token = await inject(ts.app, new CookieJar(), 'POST', '/auth/realms/test/protocol/openid-connect/token', {
        grant_type: 'authorization_code', code: flow.code!, redirect_uri: ts.client.redirectUri, client_id: ts.client.id, client_secret: ts.client.secret,
      });
      assert.equal(JSON.parse(token.body).expires_in, 120);

      const sessions = await userSessions(ts.store, { realmId: REALM, user: ts.user.id });
      assert.equal(sessions.length, 1);
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`;
      const userPage = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.match(userPage, /End session/);
      // Where it signed in from: the browser (its User-Agent) and the address.
      assert.match(userPage, /<span class="muted">Firefox 128 \(Linux\) · from 127\.0\.0\.1 · Last active/);
      // A session id of someone else (the admin's own, in master) is not ended through alice's page.
      const mine = (await userSessions(ts.store, { realmId: 'master', user: ADMIN.username }))[0]!;
      await inject(ts.app, jar, 'POST', `${userUrl}/sessions/end`, { csrf, session: mine.id });
      assert.equal((await userSessions(ts.store, { realmId: 'master', user: ADMIN.username })).length, 1);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/sessions/end`, { csrf, session: sessions[0]!.id });
      assert.equal(res.statusCode, 303);
      assert.equal((await userSessions(ts.store, { realmId: REALM, user: ts.user.id })).length, 0);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=session-ended`)).body, /No active sessions/);
      const ops = (await ts.store.adminEvents.list(REALM, {})).filter((e) => e.via === 'console').map((e) => `${e.operation} ${e.resourceType}`);
      assert.ok(ops.includes('UPDATE REALM') && ops.includes('DELETE USER_SESSION'), ops.join());
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: organizations created, members added and removed`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const orgsUrl = `${CONSOLE}/realms/${REALM}/organizations`;
      const list = await inject(ts.app, jar, 'GET', orgsUrl);
      assert.equal(list.statusCode, 200);
      assert.match(list.body, />acme<\/a>/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;
      let res = await inject(ts.app, jar, 'POST', orgsUrl, { csrf, alias: 'acme', name: 'Again' });
      assert.equal(res.statusCode, 400, 'a taken alias is said on the page');
      res = await inject(ts.app, jar, 'POST', orgsUrl, { csrf, alias: 'beta', name: 'Beta & <Co>' });
      assert.equal(res.statusCode, 303);
      const orgUrl = (res.headers.location as string).split('?')[0]!;
      const page = await inject(ts.app, jar, 'GET', orgUrl);
      assert.match(page.body, /<h1>Beta &amp; &lt;Co&gt;<\/h1>/);
      assert.match(page.body, /No members yet/);
      res = await inject(ts.app, jar, 'POST', `${orgUrl}/members`, { csrf, user: 'nobody' });
      assert.equal(res.statusCode, 400);
      res = await inject(ts.app, jar, 'POST', `${orgUrl}/members`, { csrf, user: 'alice' });
      assert.equal(res.statusCode, 303);
      res = await inject(ts.app, jar, 'POST', `${orgUrl}/members`, { csrf, user: 'alice' });
      assert.equal(res.statusCode, 400, 'a second add is said on the page');
      const beta = await ts.store.organizations.findByAlias(REALM, 'beta');
      assert.ok((await ts.store.users.organizations(ts.user.id)).some((o) => o.id === beta?.id));
      res = await inject(ts.app, jar, 'POST', `${orgUrl}/members/remove`, { csrf, user: ts.user.id });
      assert.equal(res.statusCode, 303);
      assert.ok(!(await ts.store.users.organizations(ts.user.id)).some((o) => o.id === beta?.id));
      const viewer = await signIn(ts, VIEWER);
      assert.equal((await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/master/organizations`)).statusCode, 403);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: forms without the right CSRF token, and callers without the role, are refused`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const usersUrl = `${CONSOLE}/realms/${REALM}/users`;
      for (const csrf of [undefined, '', 'forged']) {
        const res = await inject(ts.app, jar, 'POST', usersUrl, { ...(csrf !== undefined ? { csrf } : {}), username: 'mallory', password: 'mallory password' });
        assert.equal(res.statusCode, 403);
      }
      // Another browser's valid token does not work with this browser's cookies.
      const other = await signIn(ts, ADMIN);
      const otherCsrf = await csrfOf(ts, other, usersUrl);
      assert.equal((await inject(ts.app, jar, 'POST', usersUrl, { csrf: otherCsrf, username: 'mallory', password: 'mallory password' })).statusCode, 403);
      assert.equal(await ts.store.users.findByUsername(REALM, 'mallory'), undefined);

      // Not signed in: GET goes to the sign-in, POST is refused.
      const anon = new CookieJar();
      assert.equal((await inject(ts.app, anon, 'GET', usersUrl)).statusCode, 303);
      assert.equal((await inject(ts.app, anon, 'POST', usersUrl, { csrf: 'x', username: 'mallory', password: 'mallory password' })).statusCode, 401);

      // The viewer reads master's users but may not create one, nor see clients or another realm.
      const viewer = await signIn(ts, VIEWER);
      const masterUsers = `${CONSOLE}/realms/master/users`;
      const list = await inject(ts.app, viewer, 'GET', masterUsers);
      assert.equal(list.statusCode, 200);
      assert.doesNotMatch(list.body, /Create a user/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;
      const refused = await inject(ts.app, viewer, 'POST', masterUsers, { csrf, username: 'mallory', password: 'mallory password' });
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /manage-users/);
      assert.equal((await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/master/clients`)).statusCode, 403);
      assert.equal((await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/${REALM}/users`)).statusCode, 403);
      assert.equal((await inject(ts.app, viewer, 'GET', `${CONSOLE}/realms/nope/users`)).statusCode, 403);
      const dash = await inject(ts.app, viewer, 'GET', `${CONSOLE}/`);
      assert.doesNotMatch(dash.body, new RegExp(`/realms/${REALM}"`));
      assert.equal(await ts.store.users.findByUsername('master', 'mallory'), undefined);

      // A callback that this browser did not start is refused.
      const stray = await inject(ts.app, new CookieJar(), 'GET', `${CONSOLE}/callback?code=abc&state=def`);
      assert.equal(stray.statusCode, 400);
      const denied = await inject(ts.app, new CookieJar(), 'GET', `${CONSOLE}/callback?error=access_denied&state=def`);
      assert.equal(denied.statusCode, 400);
      assert.match(denied.body, /organization required/);
      // {AUTH_URL}/auth/admin and /auth/admin/ open the console.
      for (const url of ['/auth/admin', '/auth/admin/']) {
        const res = await inject(ts.app, new CookieJar(), 'GET', url);
        assert.equal(res.statusCode, 303);
        assert.equal(res.headers.location, `${CONSOLE}/`);
      }
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console: hostile names are escaped on every page`, async () => {
    const ts = await setup(dialect);
    try {
      const hostile = '<img src=x onerror=alert(1)>"\'';
      await createClient(ts.store, { realmId: REALM, clientId: `<b>x</b>`, name: hostile, redirectUris: ['https://app.example.com/cb?q=%3Cscript%3E&x=1'] });
      await createUser(ts.store, { realmId: REALM, username: 'eve', password: 'eve password 1', firstName: hostile });
      const jar = await signIn(ts, ADMIN);
      const pages = [`${CONSOLE}/realms/${REALM}/clients`, `${CONSOLE}/realms/${REALM}/clients/${encodeURIComponent('<b>x</b>')}`, `${CONSOLE}/realms/${REALM}/events`];
      for (const url of pages) {
        const res = await inject(ts.app, jar, 'GET', url);
        assert.equal(res.statusCode, 200, url);
        assert.doesNotMatch(res.body, /<img src=x|<script>alert|<b>x<\/b>/, url);
      }
      const list = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/clients`);
      assert.ok(list.body.includes('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;'));
      // A refused value comes back in the error message and the form, escaped.
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;
      const res = await inject(ts.app, jar, 'POST', `${CONSOLE}/realms/${REALM}/clients`, { csrf, clientId: 'ok', redirectUri: '<script>alert(2)</script>' });
      assert.equal(res.statusCode, 400);
      assert.doesNotMatch(res.body, /<script>alert\(2\)/);
      const search = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users?search=${encodeURIComponent('"><script>alert(3)</script>')}`);
      assert.doesNotMatch(search.body, /<script>alert\(3\)/);
      assert.equal((await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users?done=${encodeURIComponent('<script>')}`)).body.includes('<script>'), false);
      // `done` names one of the console's own notices; Object's members (constructor, toString, __proto__) are none.
      for (const done of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        const page = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users?done=${done}`);
        assert.equal(page.statusCode, 200, done);
        assert.doesNotMatch(page.body, /class="notice"|native code|\[object Object\]/, done);
      }
      assert.match((await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users?done=user-created`)).body, /class="notice"[^>]*>The user was created\.</);
    } finally {
      await ts.close();
    }
  });
}
