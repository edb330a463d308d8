import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { realmPath, REALM } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { verifyPassword } from '../../src/crypto/passwords.js';
import { startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const OIDC = '/protocol/openid-connect';
const POLICY = 'length(12) and digits(1) and upperCase(1) and notUsername(undefined) and passwordHistory(3) and forceExpiredPasswordChange(30)';
const KEPT = 'length(12) and digits(1) and upperCase(1) and notUsername and passwordHistory(3) and forceExpiredPasswordChange(30)';
const HINT = 'At least 12 characters, with at least 1 digit and 1 upper-case letter. Not your username and not one of your last 3 passwords.';

/** The admin API's JSON error of a refused call (keycloak-admin-client's NetworkError keeps it). */
async function errorOf(p: Promise<unknown>): Promise<{ status: number; body: Record<string, string> }> {
  try {
    await p;
  } catch (err) {
    const e = err as { response?: { status: number }; responseData?: Record<string, string> };
    if (e.response) return { status: e.response.status, body: e.responseData ?? {} };
    throw err;
  }
  return { status: 200, body: {} };
}

// Keycloak's password policies through keycloak-admin-client 26, unchanged, against a real server: the
// realm's passwordPolicy (GET/PUT, serverinfo), every door that sets a password refusing what it forbids
// (reset-password and user create in Keycloak's error shape, the update-password and account pages in
// words), passwordHistory and forceExpiredPasswordChange at the next sign-in (the server's manual clock).
for (const dialect of dialects()) {
  describe(`password policy (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
    });
    after(() => ts.close());

    const passwordGrant = (username: string, password: string) => tokenRequest(ts, { grant_type: 'password', client_id: ts.publicClient.id, username, password, scope: 'openid' });

    async function member(id: string): Promise<void> {
      const acme = (await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true }))[0]!;
      await ts.kc.organizations.addMember({ realm: REALM, orgId: acme.id!, userId: id });
    }

    test("realms.update({ passwordPolicy }): kept as Keycloak's syntax, read back by GET; serverinfo lists the policies; an unsupported or bad one is a 400 that changes nothing", async () => {
      await ts.kc.realms.update({ realm: REALM }, { passwordPolicy: POLICY });
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))?.passwordPolicy, KEPT);
      const info = await ts.kc.serverInfo.find();
      const length = info.passwordPolicies?.find((p) => p.id === 'length');
      assert.deepEqual(length, { id: 'length', displayName: 'Minimum Length', configType: 'int', defaultValue: '8', multipleSupported: false });
      assert.deepEqual(info.passwordPolicies?.find((p) => p.id === 'notUsername'), { id: 'notUsername', displayName: 'Not Username', configType: null, defaultValue: null, multipleSupported: false });
      assert.ok(!info.passwordPolicies?.some((p) => p.id === 'hashAlgorithm'));
      for (const [policy, words] of [
        ['length(12) and hashIterations(27500)', /hashIterations: not supported/],
        ['length(12) and passwordBlacklist(words.txt)', /passwordBlacklist: not supported: the list is a file on Keycloak's server/],
        ['length(abc)', /invalid config for length/],
        ['passwordHistory(100)', /from 1 to 24/],
        ['regexPattern(([a-z)', /not a valid regular expression/],
      ] as const) {
        const { status, body } = await errorOf(ts.kc.realms.update({ realm: REALM }, { passwordPolicy: policy }));
        assert.equal(status, 400, policy);
        assert.match(body.errorMessage ?? '', words, JSON.stringify(body));
      }
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))?.passwordPolicy, KEPT, 'a refused policy changes nothing');
      // An update without passwordPolicy leaves it.
      await ts.kc.realms.update({ realm: REALM }, { accessTokenLifespan: 300 });
      assert.equal((await ts.kc.realms.findOne({ realm: REALM }))?.passwordPolicy, KEPT);
    });

    test("reset-password and create with credentials: refused in Keycloak's shape (the first rule's key and text), accepted when the policy is met", async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'paula', enabled: true, credentials: [{ type: 'password', value: 'Paula password 1' }] });
      const short = await errorOf(ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'Short1', temporary: false } }));
      assert.equal(short.status, 400);
      assert.equal(short.body.error, 'invalidPasswordMinLengthMessage');
      assert.equal(short.body.error_description, 'Invalid password: minimum length 12.');
      assert.equal(short.body.errorMessage, 'the password must have at least 12 characters');
      const noDigit = await errorOf(ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'no digits at all here' } }));
      assert.equal(noDigit.body.error, 'invalidPasswordMinDigitsMessage');
      assert.equal(noDigit.body.errorMessage, 'the password must contain at least 1 digit and contain at least 1 upper-case letter');
      assert.ok(await verifyPassword((await ts.store.users.get(id))!.passwordHash, 'Paula password 1'), 'a refused password changes nothing');
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'Paula password 2', temporary: false } });
      assert.equal((await passwordGrant('paula', 'Paula password 2')).statusCode, 200);

      const created = await errorOf(ts.kc.users.create({ realm: REALM, username: 'quentin', enabled: true, credentials: [{ type: 'password', value: 'quentin' }] }));
      assert.equal(created.status, 400);
      assert.equal(created.body.error, 'invalidPasswordMinLengthMessage');
      assert.equal((await ts.kc.users.find({ realm: REALM, username: 'quentin', exact: true })).length, 0, 'nothing created');
      // notUsername: the username itself is refused (long enough, digits and upper case aside).
      await ts.kc.users.create({ realm: REALM, username: 'rolf1234567ab', enabled: true });
      const rolf = (await ts.kc.users.find({ realm: REALM, username: 'rolf1234567ab', exact: true }))[0]!;
      assert.equal((await errorOf(ts.kc.users.resetPassword({ realm: REALM, id: rolf.id!, credential: { type: 'password', value: 'rolf1234567ab' } }))).status, 400, 'no upper case');
      await ts.store.realms.update(REALM, { passwordPolicy: 'notUsername' });
      const same = await errorOf(ts.kc.users.resetPassword({ realm: REALM, id: rolf.id!, credential: { type: 'password', value: 'rolf1234567ab' } }));
      assert.equal(same.body.error, 'invalidPasswordNotUsernameMessage');
      assert.equal(same.body.error_description, 'Invalid password: must not be equal to the username.');
      await ts.kc.realms.update({ realm: REALM }, { passwordPolicy: POLICY });
      // A user created without credentials has no password: no policy refuses it.
      assert.equal(await statusOf(ts.kc.users.create({ realm: REALM, username: 'sven', enabled: true })), 200);
    });

    test('passwordHistory(3): the current password and the 2 before it are refused, an older one is allowed again; at most 2 earlier hashes are kept', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'hilde', enabled: true, credentials: [{ type: 'password', value: 'Hilde password A1' }] });
      const reset = (value: string) => errorOf(ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value, temporary: false } }));
      assert.equal((await reset('Hilde password B2')).status, 200);
      assert.equal((await reset('Hilde password C3')).status, 200);
      for (const reused of ['Hilde password C3', 'Hilde password B2', 'Hilde password A1']) {
        const r = await reset(reused);
        assert.equal(r.status, 400, reused);
        assert.equal(r.body.error, 'invalidPasswordHistoryMessage');
        assert.equal(r.body.error_description, 'Invalid password: must not be equal to any of last 3 passwords.');
      }
      assert.equal((await reset('Hilde password D4')).status, 200);
      assert.equal((await ts.store.users.passwordHistory(id, 100)).length, 2, 'N-1 earlier hashes kept');
      // A1 is now the fourth: allowed again.
      assert.equal((await reset('Hilde password A1')).status, 200);
      assert.equal((await passwordGrant('hilde', 'Hilde password A1')).statusCode, 200);
      // The earlier hashes go with the user.
      await ts.kc.users.del({ realm: REALM, id });
      assert.deepEqual(await ts.store.users.passwordHistory(id, 100), []);
    });

    test('the update-password page says the policy before the user types, and lists what a refused password lacks', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'tom', enabled: true, credentials: [{ type: 'password', value: 'Tom temporary 1', temporary: true }] });
      await member(id);
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts)}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const typed = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'tom', password: 'Tom temporary 1' });
      const page = await inject(ts.app, jar, 'GET', typed.headers.location as string);
      assert.equal(pageKind(page.body), 'update-password');
      assert.ok(page.body.includes(`${HINT} Not your current password.`), page.body);
      assert.match(page.body, /id="password-new"[^>]*minlength="12"/);
      const form = parseForm(page.body);
      for (const [value, words] of [
        ['short', /The password must have at least 12 characters, contain at least 1 digit and contain at least 1 upper-case letter\./],
        ['long enough but no digit', /The password must contain at least 1 digit and contain at least 1 upper-case letter\./],
        ['Tom temporary 1', /different from your current one/],
      ] as const) {
        const r = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': value, 'password-confirm': value });
        assert.equal(r.statusCode, 400, value);
        assert.match(r.body, words);
      }
      const done = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': 'Tom own password 2', 'password-confirm': 'Tom own password 2' });
      assert.equal(done.statusCode, 303, done.body);
      assert.deepEqual((await ts.store.users.get(id))?.requiredActions, []);
    });

    test("the account page's password form: the policy shown, a password it forbids refused with what is missing, history included", async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'ursula', enabled: true, credentials: [{ type: 'password', value: 'Ursula password 1' }] });
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      assert.equal((await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'ursula', password: 'Ursula password 1' })).statusCode, 303);
      const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.equal(pageKind(page.body), 'account');
      assert.ok(page.body.includes(HINT), 'the hint');
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      const post = (value: string) => inject(ts.app, jar, 'POST', realmPath('/account/password'), { csrf, password: 'Ursula password 1', 'password-new': value, 'password-confirm': value });
      const weak = await post('ursula pass');
      assert.equal(weak.statusCode, 400);
      assert.match(weak.body, /The password must have at least 12 characters, contain at least 1 digit and contain at least 1 upper-case letter\./);
      const ok = await post('Ursula password 2');
      assert.equal(ok.statusCode, 200);
      assert.match(ok.body, /Your password is changed/);
      // The one before is among the last 3 now.
      const csrf2 = /name="csrf" value="([^"]*)"/.exec(ok.body)![1]!;
      const again = await inject(ts.app, jar, 'POST', realmPath('/account/password'), { csrf: csrf2, password: 'Ursula password 2', 'password-new': 'Ursula password 1', 'password-confirm': 'Ursula password 1' });
      assert.equal(again.statusCode, 400);
      assert.match(again.body, /The password must not be one of the last 3 passwords\./);
      assert.ok(await verifyPassword((await ts.store.users.get(id))!.passwordHash, 'Ursula password 2'));
    });

    // Last: it moves the server's clock a month ahead.
    test('forceExpiredPasswordChange(30): 30 days after it was set, the next sign-in asks for a new password; the password grant refuses until then', async () => {
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'vince', enabled: true });
      await member(id);
      await ts.kc.users.resetPassword({ realm: REALM, id, credential: { type: 'password', value: 'Vince password 1', temporary: false } });
      ts.clock.advance(29 * 86_400);
      assert.equal((await passwordGrant('vince', 'Vince password 1')).statusCode, 200, 'not expired after 29 days');
      ts.clock.advance(86_400);
      const refused = await passwordGrant('vince', 'Vince password 1');
      assert.equal(refused.statusCode, 400);
      assert.deepEqual(refused.json(), { error: 'invalid_grant', error_description: 'Account is not fully set up' });
      assert.deepEqual((await ts.store.users.get(id))?.requiredActions, ['UPDATE_PASSWORD'], "Keycloak's required action, kept until done");
      // A wrong password says nothing of it.
      assert.equal((await passwordGrant('vince', 'not the password')).json().error_description, 'Invalid user credentials');

      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath(`${OIDC}/auth`)}?${authorizeQuery(ts)}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const typed = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'vince', password: 'Vince password 1' });
      const page = await inject(ts.app, jar, 'GET', typed.headers.location as string);
      assert.equal(pageKind(page.body), 'update-password');
      assert.match(page.body, /The password of <strong>vince<\/strong> has expired/);
      const flow = await runAuthorization(ts, { username: 'vince', password: 'Vince password 1', newPassword: 'Vince password 2' });
      assert.deepEqual(flow.pages.slice(0, 2), ['login', 'update-password']);
      assert.ok(flow.code);
      assert.equal((await passwordGrant('vince', 'Vince password 2')).statusCode, 200, 'a new password: a new 30 days');
      assert.equal((await ts.store.users.get(id))?.passwordChangedAt, Math.floor(ts.clock.nowMs() / 1000));
    });
  });
}
