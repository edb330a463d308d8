import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM, PASSWORD } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { verifyPassword } from '../../src/crypto/passwords.js';
import { nowSeconds } from '../../src/clock.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const OIDC = '/protocol/openid-connect';
const NEW_PASSWORD = 'my very own password';
/** The browser session cookie (the test server's AUTH_URL is plain http: no __Host- prefix). */
const hasSession = (jar: CookieJar): boolean => jar.cookies.has('RG_SESSION') || jar.cookies.has('RG_SESSION_STATE');

// Keycloak's temporary passwords (the UPDATE_PASSWORD required action) through
// @keycloak/keycloak-admin-client 26, unchanged, against a real server; then what the user meets: the
// password grant refuses them, the login pages ask for a new password before any session or code.
for (const dialect of dialects()) {
  describe(`temporary passwords (${dialect})`, () => {
    let ts: AdminTestServer;
    let auth: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      auth = basic(ts.client.id, ts.client.secret);
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
    });
    after(() => ts.close());

    const passwordGrant = (username: string, password: string) => tokenRequest(ts, { grant_type: 'password', client_id: ts.publicClient.id, username, password, scope: 'openid' });
    const actionsOf = async (id: string): Promise<string[] | undefined> => (await ts.kc.users.findOne({ realm: REALM, id }))?.requiredActions;

    async function createTemporary(username: string): Promise<string> {
      const { id } = await ts.kc.users.create({ realm: REALM, username, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: true }] });
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId: id });
      return id;
    }

    /** Starts a sign-in and types the password: returns the page shown next and the browser's cookies. */
    async function signIn(username: string, password: string): Promise<{ jar: CookieJar; res: Awaited<ReturnType<typeof inject>> }> {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts)}`);
      const form = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username, password });
      return { jar, res };
    }

    test('create with a temporary credential: requiredActions UPDATE_PASSWORD; the password grant says "Account is not fully set up"', async () => {
      const id = await createTemporary('tara');
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      const res = await passwordGrant('tara', PASSWORD);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { error: 'invalid_grant', error_description: 'Account is not fully set up' });
      // A wrong password is still just a wrong password (no hint that the account is pending).
      assert.equal((await passwordGrant('tara', 'not the password')).json().error_description, 'Invalid user credentials');
      // Searches carry the list too.
      const found = await ts.kc.users.find({ realm: REALM, username: 'tara', exact: true });
      assert.deepEqual(found[0]?.requiredActions, ['UPDATE_PASSWORD']);
    });

    test('reset-password: temporary true sets UPDATE_PASSWORD, false or absent clears it (as Keycloak)', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'ulla', enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
      assert.deepEqual(await actionsOf(id), []);
      assert.equal((await passwordGrant('ulla', PASSWORD)).statusCode, 200);
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'a temporary one', temporary: true } });
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      assert.equal((await passwordGrant('ulla', 'a temporary one')).json().error_description, 'Account is not fully set up');
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'a permanent one', temporary: false } });
      assert.deepEqual(await actionsOf(id), []);
      assert.equal((await passwordGrant('ulla', 'a permanent one')).statusCode, 200);
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'a temporary one', temporary: true } });
      // Keycloak's reset-password without "temporary" clears UPDATE_PASSWORD too.
      const raw = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/users/${id}/reset-password`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'password', value: 'another permanent one' }),
      });
      assert.equal(raw.status, 204);
      assert.deepEqual(await actionsOf(id), []);
      const events = await ts.store.adminEvents.list(REALM);
      assert.ok(events.some((e) => e.resourcePath === `users/${id}/reset-password` && e.operation === 'ACTION'));
    });

    test('requiredActions on create and update: UPDATE_PASSWORD kept, [] clears, any other action is a 400 naming it', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'vera', enabled: true, requiredActions: ['UPDATE_PASSWORD'], credentials: [{ type: 'password', value: PASSWORD }] });
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      // An update without requiredActions leaves them; a temporary credential adds UPDATE_PASSWORD.
      await ts.kc.users.update({ realm: REALM, id }, { firstName: 'Vera' });
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: [] });
      assert.deepEqual(await actionsOf(id), []);
      assert.equal((await passwordGrant('vera', PASSWORD)).statusCode, 200);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['UPDATE_PASSWORD'] });
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: [], credentials: [{ type: 'password', value: 'vera temporary 2', temporary: true }] });
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD'], 'a temporary credential in an update adds UPDATE_PASSWORD');

      for (const action of ['CONFIGURE_RECOVERY_AUTHN_CODES', 'update_user_locale']) {
        const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/users/${id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ requiredActions: ['UPDATE_PASSWORD', action] }),
        });
        assert.equal(res.status, 400, action);
        const body = (await res.json()) as { error: string; errorMessage: string };
        assert.equal(body.error, 'invalid_request');
        assert.ok(body.errorMessage.includes(action), body.errorMessage);
        assert.equal(await statusOf(ts.kc.users.create({ realm: REALM, username: `w-${action.toLowerCase()}`, requiredActions: [action] })), 400);
        assert.equal((await ts.kc.users.find({ realm: REALM, username: `w-${action.toLowerCase()}`, exact: true })).length, 0, 'nothing created');
      }
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD'], 'a refused update changes nothing');
      // Wrong types are 400s too, never 500s.
      for (const body of [{ requiredActions: 'UPDATE_PASSWORD' }, { requiredActions: [1] }, { credentials: [{ type: 'password', value: 'x long enough', temporary: 'yes' }] }]) {
        const res = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/users/${id}`, { method: 'PUT', headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        assert.equal(res.status, 400, JSON.stringify(body));
      }
    });

    test('login page: a temporary password leads to the update page, with no session and no code until a good new password', async () => {
      const id = await createTemporary('wanda');
      const { jar, res } = await signIn('wanda', PASSWORD);
      assert.equal(res.statusCode, 303);
      assert.ok(!hasSession(jar), `no session cookie: ${[...jar.cookies.keys()].join(' ')}`);
      const pageUrl = res.headers.location as string;
      assert.ok(pageUrl.includes('/login-actions/'), pageUrl);
      let page = await inject(ts.app, jar, 'GET', pageUrl);
      assert.equal(pageKind(page.body), 'update-password');
      assert.match(page.body, /wanda/);
      const form = parseForm(page.body);
      assert.ok(form.action.endsWith('/update-password'));
      // The pending request cannot skip the step: consent and organization forms are refused.
      for (const step of ['consent', 'organization']) {
        const skip = await inject(ts.app, jar, 'POST', form.action.replace(/update-password$/, step), { csrf: form.csrf, decision: 'allow', organization: 'acme' });
        assert.equal(skip.statusCode, 403, step);
      }
      // Without the CSRF token: refused.
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: 'wrong', 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD })).statusCode, 403);
      const attempts: Array<[Record<string, string>, RegExp]> = [
        [{ 'password-new': NEW_PASSWORD, 'password-confirm': 'something else' }, /do not match/],
        [{ 'password-new': 'short', 'password-confirm': 'short' }, /at least 8 characters/],
        [{ 'password-new': 'x'.repeat(1025), 'password-confirm': 'x'.repeat(1025) }, /at most 1024 characters/],
        [{ 'password-new': PASSWORD, 'password-confirm': PASSWORD }, /different from your current/],
        [{}, /Enter a new password/],
      ];
      for (const [fields, message] of attempts) {
        page = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields });
        assert.equal(page.statusCode, 400);
        assert.equal(pageKind(page.body), 'update-password');
        assert.match(page.body, message);
        assert.ok(!hasSession(jar), 'still no session');
      }
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);
      assert.equal((await ts.store.sessions.listActive(REALM, id, nowSeconds(ts.clock))).length, 0, 'no session in the database either');

      // A good one: on to consent and organization, then the code.
      page = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD });
      assert.equal(page.statusCode, 303, page.body);
      assert.ok(hasSession(jar), 'a session once the password is updated');
      assert.deepEqual(await actionsOf(id), []);
      const user = await ts.store.users.get(id);
      assert.ok(user!.passwordHash.startsWith('$argon2id$'));
      assert.ok(await verifyPassword(user!.passwordHash, NEW_PASSWORD));
      const events = await ts.store.events.list(REALM, { username: 'wanda' });
      const update = events.find((e) => e.type === 'UPDATE_PASSWORD');
      assert.ok(update, `an UPDATE_PASSWORD event: ${events.map((e) => e.type).join(' ')}`);
      assert.equal(update.clientId, ts.client.id);
      assert.match(update.reason ?? '', /required action/);

      // The flow goes on where it would have gone: consent, organization, the code.
      const after: string[] = [];
      let next = page;
      while (next.statusCode === 303 && (next.headers.location as string).includes('/login-actions/')) {
        const shown = await inject(ts.app, jar, 'GET', next.headers.location as string);
        const kind = pageKind(shown.body);
        after.push(kind);
        const f = parseForm(shown.body);
        next = await inject(ts.app, jar, 'POST', f.action, { csrf: f.csrf, ...(kind === 'consent' ? { decision: 'allow' } : { organization: 'acme' }) });
      }
      assert.deepEqual(after, ['consent', 'organization']);
      const back = new URL(next.headers.location as string);
      assert.equal(`${back.origin}${back.pathname}`, ts.client.redirectUri);
      const code = back.searchParams.get('code');
      assert.ok(code);
      const tokens = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(tokens.statusCode, 200, tokens.body);

      // Signing in again: the new password, no update page; the old password no longer works.
      const flow = await runAuthorization(ts, { username: 'wanda', password: NEW_PASSWORD });
      assert.ok(!flow.pages.includes('update-password'), flow.pages.join(' '));
      assert.ok(flow.code);
      assert.equal((await signIn('wanda', PASSWORD)).res.statusCode, 200, 'the temporary password is refused now');
      assert.equal((await passwordGrant('wanda', NEW_PASSWORD)).statusCode, 200);
    });

    test('the whole flow with the helper: update, consent, code; prompt=none answers interaction_required while pending', async () => {
      await createTemporary('xavi');
      const flow = await runAuthorization(ts, { username: 'xavi', password: PASSWORD, newPassword: NEW_PASSWORD });
      assert.deepEqual(flow.pages, ['login', 'update-password', 'consent', 'organization']);
      assert.ok(flow.code);
      // An administrator asks again while the user has a session: the next request shows the page.
      const id = (await ts.kc.users.find({ realm: REALM, username: 'xavi', exact: true }))[0]!.id!;
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['UPDATE_PASSWORD'] });
      const none = await inject(ts.app, flow.jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts, { prompt: 'none' })}`);
      assert.equal(none.statusCode, 303);
      assert.equal(new URL(none.headers.location as string).searchParams.get('error'), 'interaction_required');
      const again = await runAuthorization(ts, { jar: flow.jar, newPassword: 'yet another password' });
      assert.deepEqual(again.pages, ['update-password']);
      assert.ok(again.code);
    });

    test('device flow: the verification pages ask for the new password too', async () => {
      await createTemporary('yann');
      const start = await ts.app.inject({ method: 'POST', url: realmPath(`${OIDC}/auth/device`), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ client_id: 'native-app', scope: 'openid' }).toString() });
      const { user_code: userCode, device_code: deviceCode } = start.json() as { user_code: string; device_code: string };
      const jar = new CookieJar();
      let page = await inject(ts.app, jar, 'GET', realmPath('/device'));
      let res = await inject(ts.app, jar, 'POST', parseForm(page.body).action, { csrf: parseForm(page.body).csrf, user_code: userCode });
      const seen: string[] = [];
      for (let i = 0; i < 6 && res.statusCode === 303; i++) {
        page = await inject(ts.app, jar, 'GET', res.headers.location as string);
        const kind = pageKind(page.body);
        seen.push(kind);
        const form = parseForm(page.body);
        const fields: Record<string, string> =
          kind === 'login' ? { username: 'yann', password: PASSWORD } : kind === 'update-password' ? { 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD } : kind === 'consent' ? { decision: 'allow' } : { organization: 'acme' };
        if (kind === 'update-password') {
          const poll = await tokenRequest(ts, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: 'native-app' });
          assert.equal(poll.json().error, 'authorization_pending', 'not approved before the new password');
        }
        res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields });
      }
      assert.deepEqual(seen.slice(0, 2), ['login', 'update-password']);
      assert.equal(pageKind(res.body), 'device-done');
    });

    test('the account page: a temporary password leads to the new-password form, then to the account page', async () => {
      const id = await createTemporary('zoe');
      const jar = new CookieJar();
      const form = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const asked = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'zoe', password: PASSWORD });
      assert.equal(asked.statusCode, 200);
      assert.equal(pageKind(asked.body), 'update-password');
      assert.ok(!hasSession(jar), 'no session before the new password');
      const update = parseForm(asked.body);
      const proof = /name="proof" value="([^"]*)"/.exec(asked.body)![1]!;
      assert.equal(update.action, realmPath('/account/update-password'));
      const post = (fields: Record<string, string>, j = jar) => inject(ts.app, j, 'POST', update.action, { csrf: update.csrf, proof, ...fields });

      // The proof is bound to this browser: another one (its own CSRF token) cannot use it.
      const other = new CookieJar();
      const otherForm = parseForm((await inject(ts.app, other, 'GET', realmPath('/account'))).body);
      const stolen = await inject(ts.app, other, 'POST', update.action, { csrf: otherForm.csrf, proof, 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD });
      assert.equal(stolen.statusCode, 403);
      // Forged or altered proofs are refused.
      for (const bad of ['', `${id}.9999999999.x`, proof.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')), `${id}.${proof.split('.')[1]}`]) {
        assert.equal((await inject(ts.app, jar, 'POST', update.action, { csrf: update.csrf, proof: bad, 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD })).statusCode, 403, bad);
      }
      // The password rules, as on the login pages; the same proof stays usable meanwhile.
      const mismatch = await post({ 'password-new': NEW_PASSWORD, 'password-confirm': 'something else entirely' });
      assert.equal(mismatch.statusCode, 400);
      assert.equal(pageKind(mismatch.body), 'update-password');
      assert.equal((await post({ 'password-new': PASSWORD, 'password-confirm': PASSWORD })).statusCode, 400);
      assert.equal((await post({ 'password-new': 'short', 'password-confirm': 'short' })).statusCode, 400);
      assert.deepEqual(await actionsOf(id), ['UPDATE_PASSWORD']);

      const done = await post({ 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, realmPath('/account'));
      assert.ok(hasSession(jar));
      assert.deepEqual(await actionsOf(id), []);
      assert.equal((await inject(ts.app, jar, 'GET', realmPath('/account'))).statusCode, 200);
      // The proof was for the temporary password: once it is changed, the form is spent.
      assert.equal((await post({ 'password-new': 'yet another password', 'password-confirm': 'yet another password' })).statusCode, 403);
      assert.equal((await passwordGrant('zoe', NEW_PASSWORD)).statusCode, 200);
      assert.equal((await passwordGrant('zoe', PASSWORD)).json().error, 'invalid_grant');
    });

    test('the account page: a user whose id holds dots (imported from Keycloak) completes the form too', async () => {
      await ts.kc.realms.partialImport({ realm: REALM, rep: { ifResourceExists: 'SKIP', users: [{ id: 'legacy.user.7', username: 'dotty', enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: true }] }] } });
      assert.deepEqual(await actionsOf('legacy.user.7'), ['UPDATE_PASSWORD']);
      const jar = new CookieJar();
      const form = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const asked = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'dotty', password: PASSWORD });
      const update = parseForm(asked.body);
      const proof = /name="proof" value="([^"]*)"/.exec(asked.body)![1]!;
      const done = await inject(ts.app, jar, 'POST', update.action, { csrf: update.csrf, proof, 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD });
      assert.equal(done.statusCode, 303);
      assert.deepEqual(await actionsOf('legacy.user.7'), []);
    });

    test('the account page: the new-password form expires', async () => {
      await createTemporary('zed');
      const jar = new CookieJar();
      const form = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const asked = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: 'zed', password: PASSWORD });
      const update = parseForm(asked.body);
      const proof = /name="proof" value="([^"]*)"/.exec(asked.body)![1]!;
      ts.clock.advance(601);
      const late = await inject(ts.app, jar, 'POST', update.action, { csrf: update.csrf, proof, 'password-new': NEW_PASSWORD, 'password-confirm': NEW_PASSWORD });
      assert.equal(late.statusCode, 403);
      assert.ok(!hasSession(jar));
    });
  });
}
