import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { inject, runAuthorization, tokenRequest, type CookieJar } from '../helpers/flow.js';
import { createClient, updateRealm } from '../../src/admin/operations.js';
import { createUser } from '../../src/admin/operations/users.js';
import { changeRoleMappings, createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { addMember, createOrganization, updateOrganization } from '../../src/admin/operations/organizations.js';
import { createGroup, joinGroup } from '../../src/admin/operations/groups.js';
import { createIdentityProvider } from '../../src/admin/operations/identity-providers.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { removeOtp } from '../../src/admin/operations/otp.js';
import { nowSeconds } from '../../src/clock.js';
import { toSessionRepresentation } from '../../src/admin/keycloak/representations/session.js';

/**
 * Keycloak's account REST API beyond the profile (src/http/account/rest.ts), over the real port with the
 * user's own access token, as Keycloak's account console or a custom account page calls it: sessions,
 * credentials, applications and consents, linked accounts, groups, languages.
 */
for (const dialect of dialects()) {
  describe(`account REST API: sessions, credentials, applications, links, groups (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
    });
    after(() => ts.close());

    /** A new sign-in (its own browser) and its tokens. */
    async function signIn(scope?: string): Promise<{ access: string; refresh: string; sid: string }> {
      const r = await runAuthorization(ts, scope ? { query: { scope } } : {});
      const body = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json();
      const claims = JSON.parse(Buffer.from(String(body.access_token).split('.')[1]!, 'base64url').toString()) as { sid: string };
      return { access: body.access_token, refresh: body.refresh_token, sid: claims.sid };
    }
    const url = (p: string): string => `${ts.baseUrl}${realmPath(`/account${p}`)}`;
    const call = (token: string | undefined, method: string, p: string, body?: unknown): Promise<Response> =>
      fetch(url(p), {
        method,
        headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const json = async <T>(token: string, p: string): Promise<T> => {
      const r = await call(token, 'GET', p);
      assert.equal(r.status, 200, `${p}: ${await r.clone().text()}`);
      assert.equal(r.headers.get('cache-control'), 'no-store');
      return (await r.json()) as T;
    };
    const refreshes = async (refresh: string): Promise<number> =>
      (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode;

    interface SessionRep {
      id: string;
      started: number;
      lastAccess: number;
      expires: number;
      current?: boolean;
      clients: Array<{ clientId: string; clientName?: string }>;
    }

    test("sessions: listed with the current one marked and their applications; another ended by id, then all but this one, then all", async () => {
      // Without offline_access: an offline token outlives its session (Keycloak's rule, and Realmgate's).
      const online = 'openid core_data';
      const a = await signIn(online);
      const b = await signIn(online);
      const c = await signIn(online);
      let sessions = await json<SessionRep[]>(a.access, '/sessions');
      const ids = sessions.map((s) => s.id);
      for (const x of [a, b, c]) assert.ok(ids.includes(x.sid), `${x.sid} listed`);
      const mine = sessions.find((s) => s.id === a.sid)!;
      assert.equal(mine.current, true);
      assert.equal(sessions.filter((s) => s.current).length, 1);
      assert.deepEqual(mine.clients.map((x) => x.clientId), [ts.client.id]);
      const now = nowSeconds(ts.clock);
      assert.ok(mine.started <= now && mine.started > now - 60, 'seconds, not milliseconds');
      assert.ok(mine.expires > now);
      const devices = await json<Array<{ os: string; current?: boolean; sessions: SessionRep[] }>>(a.access, '/sessions/devices');
      assert.equal(devices.length, 1);
      assert.equal(devices[0]!.current, true);
      assert.deepEqual(devices[0]!.sessions.map((s) => s.id).sort(), ids.sort());

      // Another session by id: it ends, its refresh token with it; this one stays.
      assert.equal((await call(a.access, 'DELETE', `/sessions/${b.sid}`)).status, 204);
      assert.equal(await refreshes(b.refresh), 400);
      sessions = await json<SessionRep[]>(a.access, '/sessions');
      assert.ok(!sessions.some((s) => s.id === b.sid));
      // An id that is not the user's session: 204 and nothing ends (no probing for others' ids).
      assert.equal((await call(a.access, 'DELETE', '/sessions/no-such-session')).status, 204);
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: 'bob password 1', email: 'bob@example.com', orgAliases: ['acme'] });
      const bob = await runAuthorization(ts, { username: 'bob', password: 'bob password 1', query: { scope: online } });
      const bobTokens = (await tokenRequest(ts, { grant_type: 'authorization_code', code: bob.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json();
      const bobSid = (JSON.parse(Buffer.from(String(bobTokens.access_token).split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
      assert.equal((await call(a.access, 'DELETE', `/sessions/${bobSid}`)).status, 204);
      assert.equal(await refreshes(bobTokens.refresh_token), 200, "another user's session stays");
      assert.ok(!(await json<SessionRep[]>(a.access, '/sessions')).some((s) => s.id === bobSid), "another user's session is not listed");
      const events = await ts.store.events.list(REALM, { userId: ts.user.id, types: ['LOGOUT'] });
      assert.ok(events.some((e) => e.reason === `session ${b.sid} ended through the account API`));

      // Every other session: c ends, a stays.
      assert.equal((await call(a.access, 'DELETE', '/sessions')).status, 204);
      assert.equal(await refreshes(c.refresh), 400);
      sessions = await json<SessionRep[]>(a.access, '/sessions');
      assert.deepEqual(sessions.map((s) => s.id), [a.sid]);
      // current=true: this one too.
      assert.equal((await call(a.access, 'DELETE', '/sessions?current=true')).status, 204);
      assert.equal(await refreshes(a.refresh), 400);
      const d = await signIn();
      assert.deepEqual((await json<SessionRep[]>(d.access, '/sessions')).map((s) => s.id), [d.sid]);
    });

    test("a session's lastAccess is its latest refresh (the admin API's too, in milliseconds)", async () => {
      const s = await signIn('openid core_data');
      const first = (await json<SessionRep[]>(s.access, '/sessions')).find((x) => x.id === s.sid)!;
      assert.equal(first.lastAccess, first.started);
      ts.clock.advance(120);
      const r = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: s.refresh }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(r.statusCode, 200, r.body);
      const later = (await json<SessionRep[]>(r.json().access_token, '/sessions')).find((x) => x.id === s.sid)!;
      assert.equal(later.lastAccess, nowSeconds(ts.clock));
      assert.equal(later.started, first.started);
      const [admin] = (await ts.store.sessionAdmin.listForUser(REALM, ts.user.id, nowSeconds(ts.clock))).filter((x) => x.id === s.sid);
      assert.equal(toSessionRepresentation(admin!).lastAccess, nowSeconds(ts.clock) * 1000);
    });

    test("devices: each session's address and browser, grouped by system as Keycloak's device activity", async () => {
      const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
      const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1';
      const sign = async (ua: string, ip: string): Promise<{ access: string; sid: string; jar: CookieJar }> => {
        const r = await runAuthorization(ts, { headers: { 'user-agent': ua, 'x-forwarded-for': ip }, query: { scope: 'openid core_data' } });
        const body = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json();
        return { access: body.access_token, sid: (JSON.parse(Buffer.from(String(body.access_token).split('.')[1]!, 'base64url').toString()) as { sid: string }).sid, jar: r.jar };
      };
      // End what the earlier tests left, so that only these sessions are listed.
      const start = await sign(FIREFOX, '203.0.113.7');
      assert.equal((await call(start.access, 'DELETE', '/sessions')).status, 204);
      const phone = await sign(IPHONE, '198.51.100.20');
      const sessions = await json<Array<SessionRep & { ipAddress: string; browser: string }>>(start.access, '/sessions');
      const byId = new Map(sessions.map((x) => [x.id, x]));
      // The test server trusts no proxy: the address is the connection's, never X-Forwarded-For's.
      assert.equal(byId.get(start.sid)!.ipAddress, '127.0.0.1');
      assert.equal(byId.get(start.sid)!.browser, 'Firefox/128.0');
      assert.equal(byId.get(phone.sid)!.browser, 'Safari/17.1.2');
      type Device = { os: string; osVersion: string; device: string; mobile: boolean; current?: boolean; sessions: Array<{ id: string }> };
      const devices = await json<Device[]>(start.access, '/sessions/devices');
      assert.deepEqual(
        devices.map((d) => [d.os, d.osVersion, d.device, d.mobile, d.current ?? false, d.sessions.map((x) => x.id)]).sort(),
        [
          ['Linux', 'Unknown', 'Other', false, true, [start.sid]],
          ['iOS', '17.1.2', 'iPhone', true, false, [phone.sid]],
        ].sort(),
      );
      // A session the password grant started keeps its caller's User-Agent too (kcadm, a script).
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      const direct = (await tokenRequest(ts, { grant_type: 'password', username: ts.user.username, password: ts.user.password, scope: 'openid' }, { authorization: basic(ts.client.id, ts.client.secret), 'user-agent': 'curl/8.5.0' })).json();
      const directSid = (JSON.parse(Buffer.from(String(direct.access_token).split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
      const withDirect = await json<Array<SessionRep & { browser: string }>>(start.access, '/sessions');
      assert.equal(withDirect.find((x) => x.id === directSid)!.browser, 'curl/8.5.0');
      assert.equal((await call(start.access, 'DELETE', `/sessions/${directSid}`)).status, 204);
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: false });
      // The account page (this browser's session) shows them too.
      const page = (await inject(ts.app, start.jar, 'GET', realmPath('/account'))).body;
      assert.match(page, /<strong>This browser<\/strong> <span class="muted">Firefox 128 \(Linux\) · 127\.0\.0\.1 · since/);
      assert.match(page, /Another browser <span class="muted">Safari 17 \(iOS 17\.1\.2\) · 127\.0\.0\.1 · since/);
    });

    test('credentials: by type without secrets; an authenticator renamed; removing one needs a recent sign-in; the password is not removable', async () => {
      // Signed in before the authenticators exist (the flow helper types no codes).
      const t = await signIn();
      const user = (await ts.store.users.get(ts.user.id))!;
      await enrollTestOtp(ts.store, user, 'Phone', nowSeconds(ts.clock));
      await enrollTestOtp(ts.store, user, 'Tablet', nowSeconds(ts.clock));
      type Container = { type: string; category: string; createAction?: string; removeable: boolean; userCredentialMetadatas: Array<{ credential: { id: string; type: string; userLabel?: string; createdDate: number } }> };
      let types = await json<Container[]>(t.access, '/credentials');
      assert.deepEqual(types.map((x) => x.type), ['password', 'otp', 'recovery-authn-codes'].filter((x) => x !== 'recovery-authn-codes' || types.some((y) => y.type === x)));
      const password = types[0]!;
      assert.equal(password.removeable, false);
      assert.equal(password.createAction, 'UPDATE_PASSWORD');
      assert.equal(password.userCredentialMetadatas.length, 1);
      const apps = types[1]!.userCredentialMetadatas.map((m) => m.credential);
      assert.deepEqual(apps.map((c) => c.userLabel).sort(), ['Phone', 'Tablet']);
      const phone = apps.find((c) => c.userLabel === 'Phone')!;
      const tablet = apps.find((c) => c.userLabel === 'Tablet')!;
      assert.ok(phone.createdDate > 1e12, 'milliseconds');
      assert.doesNotMatch(JSON.stringify(types), /secret/i);
      // ?type= and user-credentials=false.
      assert.deepEqual((await json<Container[]>(t.access, '/credentials?type=otp')).map((x) => x.type), ['otp']);
      assert.equal((await json<Container[]>(t.access, '/credentials?user-credentials=false'))[0]!.userCredentialMetadatas, undefined);

      // The label: a JSON string.
      assert.equal((await call(t.access, 'PUT', `/credentials/${phone.id}/label`, 'Work phone')).status, 204);
      types = await json<Container[]>(t.access, '/credentials?type=otp');
      assert.ok(types[0]!.userCredentialMetadatas.some((m) => m.credential.id === phone.id && m.credential.userLabel === 'Work phone'));
      assert.equal((await call(t.access, 'PUT', `/credentials/${phone.id}/label`, { label: 'x' })).status, 400);
      assert.equal((await call(t.access, 'PUT', `/credentials/${phone.id}/label`, 'bad\u0007label')).status, 400);
      const nope = await call(t.access, 'PUT', '/credentials/nope/label', 'x');
      assert.equal(nope.status, 404, await nope.clone().text());
      assert.equal((await call(t.access, 'PUT', `/credentials/${password.userCredentialMetadatas[0]!.credential.id}/label`, 'x')).status, 404);

      // Removing within five minutes of the sign-in: done; the password: never; an unknown id: 404.
      assert.equal((await call(t.access, 'DELETE', `/credentials/${phone.id}`)).status, 204);
      assert.deepEqual((await ts.store.otp.list(ts.user.id)).map((c) => c.id), [tablet.id]);
      assert.equal((await call(t.access, 'DELETE', `/credentials/${password.userCredentialMetadatas[0]!.credential.id}`)).status, 400);
      assert.equal((await call(t.access, 'DELETE', '/credentials/nope')).status, 404);
      // Later: 403, the authenticator stays (a stolen token does not remove a second factor).
      ts.clock.advance(301);
      const late = await call(t.access, 'DELETE', `/credentials/${tablet.id}`);
      assert.equal(late.status, 403, await late.clone().text());
      assert.deepEqual((await ts.store.otp.list(ts.user.id)).map((c) => c.id), [tablet.id]);
      const events = await ts.store.events.list(REALM, { userId: ts.user.id, types: ['REMOVE_TOTP', 'UPDATE_CREDENTIAL'] });
      assert.deepEqual(events.map((e) => e.type).sort(), ['REMOVE_TOTP', 'UPDATE_CREDENTIAL']);
      // The other tests sign in without a code.
      await removeOtp(ts.store, user, tablet.id);
      await ts.store.recoveryCodes.deleteAll(user.id);
    });

    test("applications: the client with its consent and in use; the consent read, then withdrawn: its tokens stop working", async () => {
      const t = await signIn();
      type App = { clientId: string; clientName?: string; inUse: boolean; offlineAccess: boolean; userConsentRequired: boolean; consent?: { grantedScopes: Array<{ name: string; displayText: string }>; createdDate: number } };
      const apps = await json<App[]>(t.access, '/applications');
      const mine = apps.find((a) => a.clientId === ts.client.id)!;
      assert.ok(mine, JSON.stringify(apps));
      assert.equal(mine.inUse, true);
      assert.equal(mine.offlineAccess, true, 'the flow asks for offline_access');
      assert.ok(mine.consent && mine.consent.grantedScopes.length > 0, JSON.stringify(mine));
      assert.ok(mine.consent.createdDate > 1e12);
      assert.ok(!apps.some((a) => a.clientId === 'native-app'), 'a client the user never used is not listed');
      const consent = await json<{ grantedScopes: unknown[] }>(t.access, `/applications/${ts.client.id}/consent`);
      assert.deepEqual(consent.grantedScopes, mine.consent.grantedScopes);
      assert.equal((await call(t.access, 'GET', '/applications/no-such-client/consent')).status, 404);
      assert.equal((await call(t.access, 'GET', '/applications/native-app/consent')).status, 204);

      assert.equal((await call(t.access, 'DELETE', '/applications/no-such-client/consent')).status, 404);
      // Withdrawn: the refresh token is refused, the access token too (it came from the revoked chain), the consent is gone, and the next sign-in asks again.
      assert.equal((await call(t.access, 'DELETE', `/applications/${ts.client.id}/consent`)).status, 204);
      assert.equal(await refreshes(t.refresh), 400);
      assert.equal((await call(t.access, 'GET', '/applications')).status, 401);
      assert.equal((await ts.store.consents.listForUser(REALM, ts.user.id)).filter((c) => c.clientId === ts.client.id).length, 0);
      const events = await ts.store.events.list(REALM, { userId: ts.user.id, types: ['REVOKE'] });
      assert.ok(events.some((e) => e.clientId === ts.client.id && /account API/.test(e.reason ?? '')));
      const again = await runAuthorization(ts);
      assert.ok(again.pages.includes('consent'), again.pages.join(', '));
    });

    test("an application signed out of every session of the user (Keycloak 26's DELETE .../sessions): its tokens end, offline ones too; its consent and the browser sessions stay", async () => {
      const offline = await signIn();
      const online = await signIn('openid core_data');
      assert.equal((await call(online.access, 'DELETE', `/applications/${ts.client.id}/sessions`)).status, 204);
      assert.equal(await refreshes(offline.refresh), 400, 'offline access ends too');
      assert.equal(await refreshes(online.refresh), 400);
      assert.equal((await call(online.access, 'GET', '/sessions')).status, 401, "the caller's own token came from the application");
      assert.ok((await ts.store.consents.listForUser(REALM, ts.user.id)).some((c) => c.clientId === ts.client.id), 'the consent stays');
      const events = await ts.store.events.list(REALM, { userId: ts.user.id, types: ['LOGOUT'] });
      assert.ok(events.some((e) => e.clientId === ts.client.id && /application's sessions ended through the account API/.test(e.reason ?? '')));
      // The next sign-in asks no consent, and the browser sessions were not ended.
      const again = await runAuthorization(ts, { query: { scope: 'openid core_data' } });
      assert.ok(!again.pages.includes('consent'), again.pages.join(', '));
      const fresh = (await tokenRequest(ts, { grant_type: 'authorization_code', code: again.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json().access_token as string;
      const ids = (await json<SessionRep[]>(fresh, '/sessions')).map((x) => x.id);
      assert.ok(ids.includes(online.sid) && ids.includes(offline.sid), 'the browser sessions stay');
      // An unknown client: 204, nothing happens (no probing for client ids).
      assert.equal((await call(fresh, 'DELETE', '/applications/no-such-client/sessions')).status, 204);
    });

    test('linked accounts: the linked and the linkable providers; one unlinked, the last way in kept', async () => {
      for (const alias of ['corp', 'partner']) {
        await createIdentityProvider(ts.store, cliActor(), REALM, { alias, displayName: alias === 'corp' ? 'Corp SSO' : null, config: { authorizationUrl: 'https://idp.example.com/auth', tokenUrl: 'https://idp.example.com/token', clientId: 'rg', clientSecret: 's' } });
      }
      await ts.store.identityProviders.link({ realmId: REALM, identityProvider: 'corp', federatedUserId: 'ext-1', federatedUsername: 'alice.corp', userId: ts.user.id, createdAt: 1 });
      ts.services.cache.clear();
      const t = await signIn();
      type Linked = { connected: boolean; providerAlias: string; displayName: string; linkedUsername?: string; social: boolean };
      const all = await json<Linked[]>(t.access, '/linked-accounts');
      assert.deepEqual(all.map((l) => [l.providerAlias, l.connected, l.displayName, l.linkedUsername ?? null]), [
        ['corp', true, 'Corp SSO', 'alice.corp'],
        ['partner', false, 'partner', null],
      ]);
      assert.deepEqual((await json<Linked[]>(t.access, '/linked-accounts?linked=true')).map((l) => l.providerAlias), ['corp']);
      assert.deepEqual((await json<Linked[]>(t.access, '/linked-accounts?linked=false')).map((l) => l.providerAlias), ['partner']);
      assert.equal((await call(t.access, 'DELETE', '/linked-accounts/corp')).status, 204);
      assert.equal((await ts.store.identityProviders.links(ts.user.id)).length, 0);
      assert.equal((await call(t.access, 'DELETE', '/linked-accounts/corp')).status, 400);
    });

    test('organizations: the ones the user is a member of, disabled ones included, without the others', async () => {
      const other = await createOrganization(ts.store, { realmId: REALM, alias: 'globex', name: 'Globex', domains: [{ name: 'globex.example', verified: false }] });
      const t = await signIn();
      type Org = { id: string; name: string; alias: string; description: string; enabled: boolean; domains: string[] };
      const acme = (await ts.store.organizations.findByAlias(REALM, 'acme'))!;
      assert.deepEqual(await json<Org[]>(t.access, '/organizations'), [{ id: acme.id, name: 'Acme Inc.', alias: 'acme', description: '', enabled: true, domains: [] }]);
      await addMember(ts.store, { realmId: REALM, organization: 'globex', user: ts.user.id }, cliActor());
      await updateOrganization(ts.store, { realmId: REALM, organization: 'globex', enabled: false }, cliActor());
      const both = await json<Org[]>(t.access, '/organizations');
      assert.deepEqual(both.map((o) => [o.alias, o.enabled, o.domains]), [['acme', true, []], ['globex', false, ['globex.example']]]);
      assert.equal(both[1]!.id, other.id);
    });

    test('groups and languages', async () => {
      const parent = await createGroup(ts.store, { realmId: REALM, name: 'staff' }, cliActor());
      const child = await createGroup(ts.store, { realmId: REALM, name: 'engineering', parentId: parent.group.id }, cliActor());
      await joinGroup(ts.store, { realmId: REALM, userId: ts.user.id, groupId: child.group.id }, cliActor());
      const t = await signIn();
      assert.deepEqual(await json(t.access, '/groups'), [{ id: child.group.id, name: 'engineering', path: '/staff/engineering' }]);
      assert.deepEqual(await json(t.access, '/supportedLocales'), []);
      await updateRealm(ts.store, { realmId: REALM, settings: { internationalizationEnabled: true, supportedLocales: ['en', 'de'] } });
      ts.services.cache.clear();
      assert.deepEqual(await json(t.access, '/supportedLocales'), ['en', 'de']);
    });

    test("no token: 401 with the challenge; where the realm has the account client's roles, the user needs one (403)", async () => {
      const none = await call(undefined, 'GET', '/sessions');
      assert.equal(none.status, 401);
      assert.match(String(none.headers.get('www-authenticate')), /^Bearer realm=/);
      const t = await signIn();
      await createClient(ts.store, { realmId: REALM, clientId: 'account', redirectUris: ['https://account.example.com/cb'] });
      for (const name of ['manage-account', 'view-profile', 'view-groups']) await createRole(ts.store, { realmId: REALM, clientId: 'account', name }, cliActor());
      for (const p of ['/sessions', '/credentials', '/linked-accounts', '/groups']) {
        const r = await call(t.access, 'GET', p);
        assert.equal(r.status, 403, p);
        assert.match(((await r.json()) as { errorMessage: string }).errorMessage, /account roles/);
      }
      // view-profile reads, and does not end sessions (manage-account does).
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'account', names: ['view-profile'] }, cliActor());
      assert.equal((await call(t.access, 'GET', '/sessions')).status, 200);
      assert.equal((await call(t.access, 'DELETE', '/sessions')).status, 403);
      assert.equal((await call(t.access, 'GET', '/groups')).status, 403, 'view-groups or manage-account');
      // The languages need no role, as Keycloak's; the organizations view-profile or manage-account.
      assert.equal((await call(t.access, 'GET', '/organizations')).status, 200);
      await changeRoleMappings(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'account', roles: [{ name: 'view-profile' }], remove: true }, cliActor());
      assert.equal((await call(t.access, 'GET', '/organizations')).status, 403);
      assert.equal((await call(t.access, 'GET', '/supportedLocales')).status, 200);
      // An unreadable body: the same error form, not the HTML page.
      const r = await fetch(url('/credentials/x/label'), { method: 'PUT', headers: { authorization: `Bearer ${t.access}`, 'content-type': 'application/json' }, body: '{"' });
      assert.equal(r.status, 400);
      assert.match(String(r.headers.get('content-type')), /^application\/json/);
    });
  });
}
