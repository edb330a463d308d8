import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { realmPath, REALM, PASSWORD } from '../helpers/server.js';
import { CookieJar, authorizeQuery, driveFlow, inject, pageKind, parseForm, tokenRequest } from '../helpers/flow.js';
import { updateRealm } from '../../src/admin/operations/realms.js';
import { startAdminServer, errorOf, serviceAccountAdmin, statusOf, ADMIN_PASSWORD, ADMIN_USERNAME, type AdminTestServer } from './helpers.js';

const OIDC = '/protocol/openid-connect';
type Res = Awaited<ReturnType<typeof inject>>;
/** The browser session cookie (the test server's AUTH_URL is plain http: no __Host- prefix). */
const hasSession = (jar: CookieJar): boolean => jar.cookies.has('RG_SESSION');

// Keycloak's UPDATE_PROFILE and TERMS_AND_CONDITIONS required actions, and the realm's required-action
// settings through @keycloak/keycloak-admin-client 26, unchanged, against a real server; the login pages
// driven as a browser would.
for (const dialect of dialects()) {
  describe(`required actions UPDATE_PROFILE, TERMS_AND_CONDITIONS and their settings (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
    });
    after(() => ts.close());

    const setRealm = async (settings: Parameters<typeof updateRealm>[1]['settings']): Promise<void> => {
      await updateRealm(ts.store, { realmId: REALM, settings });
      ts.services.cache.clear();
    };
    const setAction = async (alias: string, rep: Record<string, unknown>): Promise<void> => {
      const current = await ts.kc.authenticationManagement.getRequiredActionForAlias({ realm: REALM, alias });
      await ts.kc.authenticationManagement.updateRequiredAction({ realm: REALM, alias }, { ...current, ...rep });
    };
    // Its type takes no realm (the client's realmName); the call takes one as every other does.
    const listActions = () => (ts.kc.authenticationManagement.getRequiredActions as unknown as (p: { realm: string }) => Promise<Array<Record<string, unknown>>>)({ realm: REALM });
    const userOf = async (id: string) => (await ts.kc.users.findOne({ realm: REALM, id }))!;

    async function newUser(username: string, o: { requiredActions?: string[]; email?: string; firstName?: string; lastName?: string; emailVerified?: boolean } = {}): Promise<string> {
      const { id } = await ts.kc.users.create({ realm: REALM, username, enabled: true, email: o.email ?? `${username}@example.com`, firstName: o.firstName ?? 'First', lastName: o.lastName ?? 'Last', emailVerified: o.emailVerified ?? true, requiredActions: o.requiredActions ?? [], credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId: id });
      return id;
    }

    const drive = (jar: CookieJar, res: Res): Promise<Res> => driveFlow(ts.app, jar, res);
    const auth = (jar: CookieJar, extra: Record<string, string> = {}) => inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts, extra)}`);
    /** Starts a sign-in and types the password: the page shown next. */
    async function signIn(username: string, jar = new CookieJar(), extra: Record<string, string> = {}): Promise<{ jar: CookieJar; res: Res }> {
      const login = parseForm((await drive(jar, await auth(jar, extra))).body);
      return { jar, res: await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD })) };
    }
    const post = async (jar: CookieJar, page: Res, fields: Record<string, string>): Promise<Res> => {
      const form = parseForm(page.body);
      return inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields });
    };
    const clientRedirect = (res: Res): URL => {
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      return new URL(res.headers.location as string);
    };
    const passwordGrant = (username: string) => tokenRequest(ts, { grant_type: 'password', client_id: ts.publicClient.id, username, password: PASSWORD, scope: 'openid' });

    test('the settings through keycloak-admin-client: Realmgate\'s actions with the defaults, by priority; a change is kept; bad input is a 400, an unknown alias a 404', async () => {
      const list = await listActions();
      assert.deepEqual(
        list.map((a) => [a.alias, a.enabled, a.defaultAction, a.priority]),
        [['UPDATE_PASSWORD', true, false, 10], ['CONFIGURE_TOTP', true, false, 20], ['webauthn-register', true, false, 30], ['webauthn-register-passwordless', true, false, 40], ['TERMS_AND_CONDITIONS', true, false, 50], ['UPDATE_PROFILE', true, false, 60], ['VERIFY_EMAIL', true, false, 70], ['delete_account', false, false, 80], ['idp_link', true, false, 90], ['delete_credential', true, false, 100]],
      );
      assert.equal(list[4]!.name, 'Terms and Conditions');
      await setAction('TERMS_AND_CONDITIONS', { priority: 5, config: { terms_text: 'Rule one: <b>be kind</b>.\n\nRule two.' } });
      const terms = await ts.kc.authenticationManagement.getRequiredActionForAlias({ realm: REALM, alias: 'TERMS_AND_CONDITIONS' });
      assert.equal(terms.priority, 5);
      assert.deepEqual(terms.config, { terms_text: 'Rule one: <b>be kind</b>.\n\nRule two.' });
      assert.equal((await listActions())[0]!.alias, 'TERMS_AND_CONDITIONS');
      for (const [rep, words] of [
        [{ priority: 'high' }, /priority must be an integer/],
        [{ enabled: 'yes' }, /enabled must be true or false/],
        [{ config: { force_reauthentication: 'true' } }, /config "force_reauthentication" not supported: UPDATE_PROFILE takes max_auth_age/],
        [{ config: { max_auth_age: '-1' } }, /max_auth_age must be a whole number of seconds from 0 to 2147483647/],
        [{ enabled: false, defaultAction: true }, /cannot be a default action/],
      ] as const) {
        const e = await errorOf(ts.kc.authenticationManagement.updateRequiredAction({ realm: REALM, alias: 'UPDATE_PROFILE' }, rep as never));
        assert.equal(e.status, 400);
        assert.match(String(e.body.errorMessage), words);
      }
      // keycloak-admin-client answers a 404 of this call with null (catchNotFound).
      assert.equal(await ts.kc.authenticationManagement.getRequiredActionForAlias({ realm: REALM, alias: 'CONFIGURE_RECOVERY_AUTHN_CODES' }), null);
      assert.equal((await errorOf(ts.kc.authenticationManagement.updateRequiredAction({ realm: REALM, alias: 'CONFIGURE_RECOVERY_AUTHN_CODES' }, { enabled: true }))).status, 404);
      // Recorded as an admin change.
      const admin = await ts.kc.realms.findAdminEvents({ realm: REALM, resourceTypes: 'REQUIRED_ACTION' });
      assert.ok(admin.some((e: { resourcePath?: string }) => e.resourcePath === 'authentication/required-actions/TERMS_AND_CONDITIONS'));
    });

    test("max_auth_age through keycloak-admin-client's required-action config calls: described, set, read, refused when bad, removed; kc_action asks for a sign-in past it, 0 always", async () => {
      const kc = ts.kc.authenticationManagement;
      // The description: max_auth_age for every action (Keycloak 25+), terms_text besides for the terms.
      const described = await kc.getRequiredActionConfigDescription({ realm: REALM, alias: 'UPDATE_PASSWORD' });
      assert.deepEqual(described.properties?.map((p) => [p.name, p.type, p.defaultValue]), [['max_auth_age', 'String', '300']]);
      assert.deepEqual((await kc.getRequiredActionConfigDescription({ realm: REALM, alias: 'TERMS_AND_CONDITIONS' })).properties?.map((p) => p.name), ['max_auth_age', 'terms_text']);
      const unknown = await errorOf(kc.getRequiredActionConfigDescription({ realm: REALM, alias: 'delete_account' }, { catchNotFound: false }));
      assert.deepEqual([unknown.status, unknown.body.errorMessage], [404, 'Could not find configurable RequiredAction provider']);

      assert.deepEqual(await kc.getRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' }), { alias: 'UPDATE_PASSWORD', config: {} });
      await kc.updateRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' }, { config: { max_auth_age: '0' } });
      assert.deepEqual((await kc.getRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' })).config, { max_auth_age: '0' });
      assert.deepEqual((await kc.getRequiredActionForAlias({ realm: REALM, alias: 'UPDATE_PASSWORD' })).config, { max_auth_age: '0' });
      for (const [alias, config, words] of [
        ['UPDATE_PASSWORD', { max_auth_age: '-1' }, /max_auth_age must be a whole number of seconds from 0 to 2147483647/],
        ['UPDATE_PASSWORD', { max_auth_age: 'ten' }, /max_auth_age must be a whole number/],
        ['UPDATE_PASSWORD', { max_auth_age: '2147483648' }, /max_auth_age must be a whole number/],
        ['UPDATE_PASSWORD', { terms_text: 'x' }, /config "terms_text" not supported: UPDATE_PASSWORD takes max_auth_age$/],
        ['delete_account', { max_auth_age: '60' }, /^RequiredAction is not configurable$/],
      ] as const) {
        const e = await errorOf(kc.updateRequiredActionConfig({ realm: REALM, alias }, { config }));
        assert.equal(e.status, 400, alias);
        assert.match(String(e.body.errorMessage), words);
      }
      assert.deepEqual((await kc.getRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' })).config, { max_auth_age: '0' }, 'a refused change leaves the config');

      // 0: a user signed in this very second signs in again before changing the password.
      await newUser('maxage');
      const { jar } = await signIn('maxage');
      const always = await drive(jar, await auth(jar, { kc_action: 'UPDATE_PASSWORD' }));
      assert.equal(pageKind(always.body), 'login');
      // An hour: ten minutes after signing in (past Keycloak's default five), straight to the action.
      await kc.updateRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' }, { config: { max_auth_age: '3600' } });
      ts.clock.advance(600);
      await ts.kc.auth({ username: ADMIN_USERNAME, password: ADMIN_PASSWORD, grantType: 'password', clientId: 'admin-cli' });
      assert.equal(pageKind((await drive(jar, await auth(jar, { kc_action: 'UPDATE_PASSWORD' }))).body), 'update-password');
      // The config removed: Keycloak's default (300 s) again, and the ten-minute-old sign-in is too old.
      await kc.removeRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' });
      assert.deepEqual(await kc.getRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' }), { alias: 'UPDATE_PASSWORD', config: {} });
      assert.equal(pageKind((await drive(jar, await auth(jar, { kc_action: 'UPDATE_PASSWORD' }))).body), 'login');
      // Keycloak's maxAuthAge password policy comes before UPDATE_PASSWORD's own max_auth_age (and only for it).
      await kc.updateRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' }, { config: { max_auth_age: '0' } });
      await ts.kc.realms.update({ realm: REALM }, { passwordPolicy: 'maxAuthAge(3600)' });
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))?.passwordPolicy, 'maxAuthAge(3600)');
      assert.equal(pageKind((await drive(jar, await auth(jar, { kc_action: 'UPDATE_PASSWORD' }))).body), 'update-password');
      assert.equal(pageKind((await drive(jar, await auth(jar, { kc_action: 'UPDATE_PROFILE' }))).body), 'login');
      await ts.kc.realms.update({ realm: REALM }, { passwordPolicy: '' });
      await kc.removeRequiredActionConfig({ realm: REALM, alias: 'UPDATE_PASSWORD' });

      const admin = await ts.kc.realms.findAdminEvents({ realm: REALM, resourceTypes: 'REQUIRED_ACTION_CONFIG' });
      assert.deepEqual(
        admin.filter((e: { resourcePath?: string }) => e.resourcePath === 'authentication/required-actions/UPDATE_PASSWORD/config').map((e: { operationType?: string }) => e.operationType),
        ['DELETE', 'UPDATE', 'DELETE', 'UPDATE', 'UPDATE'],
      );
    });

    test('raise-priority and lower-priority (keycloak-admin-client): the action trades places with its neighbour; the first raised or the last lowered stays; the order asked follows', async () => {
      const order = async () => (await listActions()).map((a) => a.alias);
      const before = await order();
      const kc = ts.kc.authenticationManagement;
      // VERIFY_EMAIL (last) up one: before UPDATE_PROFILE, their priorities traded.
      const [second, last] = [(await listActions()).at(-2)!, (await listActions()).at(-1)!];
      await kc.raiseRequiredActionPriority({ realm: REALM, alias: String(last.alias) } as never);
      const raised = await listActions();
      assert.deepEqual(raised.map((a) => a.alias), [...before.slice(0, -2), last.alias, second.alias]);
      assert.deepEqual([raised.at(-2)!.priority, raised.at(-1)!.priority], [second.priority, last.priority]);
      // And back down.
      await kc.lowerRequiredActionPriority({ realm: REALM, alias: String(last.alias) } as never);
      assert.deepEqual(await order(), before);
      // The first raised, the last lowered: nothing changes (204, as Keycloak).
      await kc.raiseRequiredActionPriority({ realm: REALM, alias: before[0]! } as never);
      await kc.lowerRequiredActionPriority({ realm: REALM, alias: before.at(-1)! } as never);
      assert.deepEqual(await order(), before);
      // Two of the same priority: moving one past the other really moves it.
      await setAction('UPDATE_PASSWORD', { priority: 15 });
      await setAction('CONFIGURE_TOTP', { priority: 15 });
      const tied = await order();
      const [a, b] = [tied.indexOf('UPDATE_PASSWORD'), tied.indexOf('CONFIGURE_TOTP')];
      assert.equal(b, a + 1);
      await kc.raiseRequiredActionPriority({ realm: REALM, alias: 'CONFIGURE_TOTP' } as never);
      const moved = await order();
      assert.equal(moved.indexOf('CONFIGURE_TOTP') + 1, moved.indexOf('UPDATE_PASSWORD'));
      assert.equal((await errorOf(kc.raiseRequiredActionPriority({ realm: REALM, alias: 'CONFIGURE_RECOVERY_AUTHN_CODES' } as never))).status, 404);
      const admin = await ts.kc.realms.findAdminEvents({ realm: REALM, resourceTypes: 'REQUIRED_ACTION' });
      assert.ok(admin.some((e: { resourcePath?: string }) => e.resourcePath === 'authentication/required-actions/CONFIGURE_TOTP/raise-priority'));
      // Back to Realmgate's defaults for the tests after this one.
      await setAction('UPDATE_PASSWORD', { priority: 10 });
      await setAction('CONFIGURE_TOTP', { priority: 20 });
    });

    test('UPDATE_PROFILE after the password: prefilled (escaped), errors in Keycloak\'s words, a duplicate email refused, then saved: the action ends, a changed email is no longer verified', async () => {
      const id = await newUser('upa', { requiredActions: ['UPDATE_PROFILE'], firstName: '<script>alert(1)</script>', lastName: 'Doe' });
      assert.deepEqual((await userOf(id)).requiredActions, ['UPDATE_PROFILE']);
      // The password grant refuses a user with a pending action, as Keycloak.
      assert.equal((await passwordGrant('upa')).json().error_description, 'Account is not fully set up');
      const { jar, res } = await signIn('upa');
      assert.equal(pageKind(res.body), 'update-profile', res.body.slice(0, 400));
      assert.ok(!res.body.includes('<script>alert(1)'), 'the name is escaped');
      assert.match(res.body, /value="&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
      assert.match(res.body, /value="upa@example.com"/);
      assert.ok(!hasSession(jar), 'no session before the action is done');
      // CSRF: a form without the token is refused, and nothing changes.
      const forged = await inject(ts.app, jar, 'POST', parseForm(res.body).action, { csrf: 'forged', email: 'x@example.com', firstName: 'X', lastName: 'Y' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await userOf(id)).email, 'upa@example.com');
      for (const [fields, words] of [
        [{ email: 'upa@example.com', firstName: '', lastName: 'Doe' }, /Please specify first name\./],
        [{ email: 'not-an-address', firstName: 'Ann', lastName: 'Doe' }, /Invalid email address\./],
        [{ email: 'ALICE@example.com', firstName: 'Ann', lastName: 'Doe' }, /Email already exists\./],
        [{ email: 'upa@example.com', firstName: 'Ann', lastName: 'x'.repeat(256) }, /Invalid last name\./],
      ] as const) {
        const refused = await post(jar, res, fields);
        assert.equal(refused.statusCode, 400, refused.body.slice(0, 300));
        assert.match(refused.body, words);
        assert.equal(pageKind(refused.body), 'update-profile');
      }
      // The typed values come back escaped.
      const typed = await post(jar, res, { email: 'upa@example.com', firstName: '"><img src=x>', lastName: '' });
      assert.ok(!typed.body.includes('"><img'));
      assert.deepEqual((await userOf(id)).requiredActions, ['UPDATE_PROFILE']);
      const done = await drive(jar, await post(jar, res, { email: 'Ann.New@example.com', firstName: 'Ann', lastName: 'Doe' }));
      assert.ok(clientRedirect(done).searchParams.get('code'));
      assert.ok(hasSession(jar));
      const after = await userOf(id);
      assert.deepEqual([after.email, after.firstName, after.lastName, after.emailVerified, after.requiredActions], ['ann.new@example.com', 'Ann', 'Doe', false, []]);
      const events = await ts.store.events.list(REALM, { types: ['UPDATE_PROFILE', 'UPDATE_EMAIL', 'UPDATE_PROFILE_ERROR'], order: 'asc' });
      assert.deepEqual(events.filter((e) => e.userId === id).map((e) => e.type), ['UPDATE_PROFILE_ERROR', 'UPDATE_PROFILE_ERROR', 'UPDATE_PROFILE_ERROR', 'UPDATE_PROFILE_ERROR', 'UPDATE_PROFILE_ERROR', 'UPDATE_EMAIL', 'UPDATE_PROFILE']);
    });

    test("UPDATE_PROFILE under the realm's verifyEmail: the new email is verified next (VERIFY_EMAIL); the same email stays verified", async () => {
      await setRealm({ verifyEmail: true });
      try {
        const same = await newUser('ups', { requiredActions: ['UPDATE_PROFILE'] });
        const s = await signIn('ups');
        const kept = await drive(s.jar, await post(s.jar, s.res, { email: 'ups@example.com', firstName: 'Same', lastName: 'Mail' }));
        assert.ok(clientRedirect(kept).searchParams.get('code'));
        assert.deepEqual([(await userOf(same)).emailVerified, (await userOf(same)).requiredActions], [true, []]);

        const changed = await newUser('upc', { requiredActions: ['UPDATE_PROFILE'] });
        const c = await signIn('upc');
        const next = await drive(c.jar, await post(c.jar, c.res, { email: 'upc.other@example.com', firstName: 'New', lastName: 'Mail' }));
        // The verify-email page (503 here: the test realm has no SMTP server to mail the link with).
        assert.equal(next.statusCode, 503, next.body.slice(0, 300));
        assert.match(next.body, /<h1>Verify your email/);
        assert.ok(!hasSession(c.jar));
        assert.deepEqual([(await userOf(changed)).emailVerified, (await userOf(changed)).requiredActions], [false, ['VERIFY_EMAIL']]);
      } finally {
        await setRealm({ verifyEmail: false });
      }
    });

    test('kc_action=UPDATE_PROFILE (keycloak-js login({ action })): cancelled, then done; the code says how it ended', async () => {
      const id = await newUser('aia');
      const { jar, res } = await signIn('aia');
      assert.ok(clientRedirect(res).searchParams.get('code'));
      const page = await drive(jar, await auth(jar, { kc_action: 'UPDATE_PROFILE' }));
      assert.equal(pageKind(page.body), 'update-profile');
      assert.match(page.body, />Cancel</);
      const cancelled = clientRedirect(await drive(jar, await post(jar, page, { cancel: '1' })));
      assert.equal(cancelled.searchParams.get('kc_action_status'), 'cancelled');
      assert.equal(cancelled.searchParams.get('kc_action'), 'UPDATE_PROFILE');
      assert.ok(cancelled.searchParams.get('code'));
      const again = await drive(jar, await auth(jar, { kc_action: 'UPDATE_PROFILE' }));
      const done = clientRedirect(await drive(jar, await post(jar, again, { email: 'aia@example.com', firstName: 'Ada', lastName: 'Lovelace' })));
      assert.equal(done.searchParams.get('kc_action_status'), 'success');
      assert.equal((await userOf(id)).firstName, 'Ada');
    });

    test('TERMS_AND_CONDITIONS: the realm\'s text escaped; Accept records terms_and_conditions (seconds) and signs in; Decline gives the client access_denied, no code and no session', async () => {
      const id = await newUser('terry', { requiredActions: ['TERMS_AND_CONDITIONS'] });
      const { jar, res } = await signIn('terry');
      assert.equal(pageKind(res.body), 'terms', res.body.slice(0, 300));
      assert.match(res.body, /<p>Rule one: &lt;b&gt;be kind&lt;\/b&gt;\.<\/p><p>Rule two\.<\/p>/);
      const forged = await inject(ts.app, jar, 'POST', parseForm(res.body).action, { csrf: 'forged', accept: '1' });
      assert.equal(forged.statusCode, 403);
      const declined = clientRedirect(await post(jar, res, { cancel: '1' }));
      assert.equal(declined.searchParams.get('error'), 'access_denied');
      assert.equal(declined.searchParams.get('code'), null);
      assert.equal(declined.searchParams.get('state'), 'xyz');
      assert.ok(!hasSession(jar));
      assert.deepEqual((await userOf(id)).requiredActions, ['TERMS_AND_CONDITIONS']);
      assert.equal((await userOf(id)).attributes?.terms_and_conditions, undefined);

      const before = Math.floor(ts.clock.nowMs() / 1000);
      const second = await signIn('terry');
      const accepted = clientRedirect(await drive(second.jar, await post(second.jar, second.res, { accept: '1' })));
      assert.ok(accepted.searchParams.get('code'));
      assert.ok(hasSession(second.jar));
      const u = await userOf(id);
      assert.deepEqual(u.requiredActions, []);
      assert.deepEqual(u.attributes?.terms_and_conditions, [String(before)]);
    });

    test('registration of required action providers: none unregistered, registering or unregistering one refused in words, nothing changes', async () => {
      const am = ts.kc.authenticationManagement;
      const before = await listActions();
      assert.deepEqual(await am.getUnregisteredRequiredActions({ realm: REALM } as never), []);
      const dup = await errorOf(am.registerRequiredAction({ realm: REALM, providerId: 'UPDATE_PASSWORD', name: 'Update Password' }));
      assert.deepEqual([dup.status, dup.body.errorMessage], [409, 'Required action UPDATE_PASSWORD is already registered']);
      const other = await errorOf(am.registerRequiredAction({ realm: REALM, providerId: 'CONFIGURE_RECOVERY_AUTHN_CODES', name: 'Recovery Authentication Codes' }));
      assert.equal(other.status, 400);
      assert.match(String(other.body.errorMessage), /^No provider found for providerId: Realmgate's required actions are built in/);
      const del = await errorOf(am.deleteRequiredAction({ realm: REALM, alias: 'VERIFY_EMAIL' }));
      assert.equal(del.status, 400);
      assert.match(String(del.body.errorMessage), /VERIFY_EMAIL is built in and cannot be unregistered: disable it instead/);
      assert.equal((await errorOf(am.deleteRequiredAction({ realm: REALM, alias: 'CONFIGURE_RECOVERY_AUTHN_CODES' }))).status, 404);
      assert.deepEqual(await listActions(), before, 'nothing changed');
      const reader = await serviceAccountAdmin(ts, REALM, 'ra-reader', ['view-realm']);
      assert.deepEqual(await reader.kc.authenticationManagement.getUnregisteredRequiredActions({ realm: REALM } as never), []);
      assert.equal(await statusOf(reader.kc.authenticationManagement.deleteRequiredAction({ realm: REALM, alias: 'VERIFY_EMAIL' })), 403);
      assert.equal(await statusOf(reader.kc.authenticationManagement.registerRequiredAction({ realm: REALM, providerId: 'UPDATE_PASSWORD', name: 'x' })), 403);
    });

    test('defaultAction: a user made through the admin API and one who registers get it; a disabled action is kept on the user but not asked, nor taken as kc_action', async () => {
      await setAction('UPDATE_PROFILE', { defaultAction: true });
      await setAction('TERMS_AND_CONDITIONS', { defaultAction: true });
      try {
        const id = await newUser('fresh');
        assert.deepEqual((await userOf(id)).requiredActions, ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE']);
        // Registration: the second door.
        await setRealm({ registrationAllowed: true });
        const jar = new CookieJar();
        const start = await auth(jar);
        const reg = await inject(ts.app, jar, 'GET', `${start.headers.location as string}/registration`);
        const regDone = await post(jar, reg, { username: 'newbie', email: 'newbie@example.com', firstName: 'New', lastName: 'Bie', 'password-new': 'newbie password 1', 'password-confirm': 'newbie password 1' });
        assert.equal(regDone.statusCode, 303, regDone.body.slice(0, 300));
        const registered = (await ts.kc.users.find({ realm: REALM, username: 'newbie', exact: true }))[0]!;
        assert.deepEqual(registered.requiredActions, ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE']);
      } finally {
        await setAction('UPDATE_PROFILE', { defaultAction: false });
        await setAction('TERMS_AND_CONDITIONS', { defaultAction: false });
        await setRealm({ registrationAllowed: false });
      }
      // Disabled: not asked at sign-in nor by the password grant; kept on the user; refused as kc_action.
      const id = await newUser('dis', { requiredActions: ['TERMS_AND_CONDITIONS'] });
      await setAction('TERMS_AND_CONDITIONS', { enabled: false });
      await setAction('UPDATE_PROFILE', { enabled: false });
      try {
        const { jar, res } = await signIn('dis');
        assert.ok(clientRedirect(res).searchParams.get('code'));
        assert.equal((await passwordGrant('dis')).statusCode, 200);
        assert.deepEqual((await userOf(id)).requiredActions, ['TERMS_AND_CONDITIONS']);
        const refused = clientRedirect(await auth(jar, { kc_action: 'UPDATE_PROFILE' }));
        assert.equal(refused.searchParams.get('error'), 'invalid_request');
        assert.match(refused.searchParams.get('error_description') ?? '', /UPDATE_PROFILE is disabled/);
      } finally {
        await setAction('TERMS_AND_CONDITIONS', { enabled: true });
        await setAction('UPDATE_PROFILE', { enabled: true });
      }
    });
  });
}
