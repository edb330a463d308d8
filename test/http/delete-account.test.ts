import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, basic, PASSWORD, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, flowSteps, inject, pageKind, parseForm, tokenRequest } from '../helpers/flow.js';
import { createClient, createUser } from '../../src/admin/operations.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { getRequiredAction, updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { sendActionsEmail } from '../../src/admin/operations/action-emails.js';
import { deleteOwnAccount } from '../../src/admin/operations/account-deletion.js';
import { createBrowserSession } from '../../src/oauth/authorize/interaction.js';
import { ValidationError } from '../../src/admin/validation.js';

// Keycloak's delete_account: a user deletes their own account, once the realm lets them (off by
// default), through kc_action=delete_account (after a new sign-in), as a required action an
// administrator set, or from the account page (the password typed again). Over HTTP, on both databases.
for (const dialect of dialects()) {
  describe(`deleting one's own account (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    type Res = Awaited<ReturnType<typeof inject>>;
    const { auth, drive, clientRedirect } = flowSteps(() => ts);
    async function enable(enabled: boolean): Promise<void> {
      await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_account', changes: { enabled } });
      ts.services.cache.clear();
    }
    /** Signs `username` in at an application and exchanges the code: the browser's jar and a refresh token. */
    async function signedIn(username: string): Promise<{ jar: CookieJar; refreshToken: string }> {
      const jar = new CookieJar();
      const login = parseForm((await drive(jar, await auth(jar))).body);
      const back = clientRedirect(await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD })));
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return { jar, refreshToken: (JSON.parse(res.body) as { refresh_token: string }).refresh_token };
    }
    const refreshStatus = async (refreshToken: string): Promise<number> =>
      (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode;
    const deletedPage = (res: Res): void => {
      assert.equal(res.statusCode, 200, res.body.slice(0, 400));
      assert.match(res.body, /<h1>Account deleted<\/h1>/);
      assert.match(res.body, /Your account has been deleted, and you are signed out everywhere\./);
    };
    const events = async (userId: string, type: string) => (await ts.store.events.list(REALM, { userId, limit: 100 })).filter((e) => e.type === type);

    test('off by default, as in Keycloak: kc_action=delete_account is refused, the account page offers nothing, a link cannot be mailed', async () => {
      assert.equal((await getRequiredAction(ts.store, REALM, 'delete_account')).enabled, false);
      const jar = new CookieJar();
      const back = clientRedirect(await auth(jar, { kc_action: 'delete_account' }));
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      assert.match(back.searchParams.get('error_description') ?? '', /kc_action delete_account is disabled in this realm/);

      const { id } = await createUser(ts.store, { realmId: REALM, username: 'gus', password: PASSWORD, orgAliases: ['acme'] });
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const page = await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'gus', password: PASSWORD }));
      assert.equal(pageKind(page.body), 'account');
      assert.doesNotMatch(page.body, /Delete account|\/account\/delete/);
      const tried = await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf: parseForm(page.body).csrf, password: PASSWORD });
      assert.equal(tried.statusCode, 303);
      assert.ok(await ts.store.users.get(id), 'still there');
      // Enabled or not, deleting is never a mailed link (the check comes before any mail is sent).
      await enable(true);
      await assert.rejects(
        sendActionsEmail(ts.services, { realmId: REALM, user: id, actions: ['delete_account'], log: console }),
        (err: unknown) => err instanceof ValidationError && /delete_account cannot be mailed/.test(err.message),
      );
      await enable(false);
    });

    test('kc_action=delete_account: a new sign-in even right after one; Cancel goes back with kc_action_status=cancelled; Delete ends everything', async () => {
      await enable(true);
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'dora', password: PASSWORD, orgAliases: ['acme'] });
      const { jar, refreshToken } = await signedIn('dora');
      ts.clock.advance(5);
      // Keycloak's DeleteAccount has a max auth age of 0: the session is not enough.
      const again = await drive(jar, await auth(jar, { kc_action: 'delete_account' }));
      assert.equal(pageKind(again.body), 'login');
      const relogin = parseForm(again.body);
      const confirm = await drive(jar, await inject(ts.app, jar, 'POST', relogin.action, { csrf: relogin.csrf, username: 'dora', password: PASSWORD }));
      assert.equal(pageKind(confirm.body), 'delete-account');
      assert.match(confirm.body, /asks you to confirm that you want to delete the account <strong>dora<\/strong>/);
      assert.match(confirm.body, /name="cancel"/);
      const form = parseForm(confirm.body);
      // A form without this sign-in's CSRF token does nothing.
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: 'forged', confirm: '1' })).statusCode, 403);
      const cancelled = clientRedirect(await drive(jar, await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, cancel: '1' })));
      assert.equal(cancelled.searchParams.get('kc_action_status'), 'cancelled');
      assert.equal(cancelled.searchParams.get('kc_action'), 'delete_account');
      assert.ok(cancelled.searchParams.get('code'));
      assert.ok(await ts.store.users.get(id), 'a cancel deletes nothing');
      assert.equal(await refreshStatus(refreshToken), 200);

      ts.clock.advance(5);
      const third = await drive(jar, await auth(jar, { kc_action: 'delete_account' }));
      const third2 = await drive(jar, await inject(ts.app, jar, 'POST', parseForm(third.body).action, { csrf: parseForm(third.body).csrf, username: 'dora', password: PASSWORD }));
      assert.equal(pageKind(third2.body), 'delete-account');
      const done = await inject(ts.app, jar, 'POST', parseForm(third2.body).action, { csrf: parseForm(third2.body).csrf, confirm: '1' });
      deletedPage(done);
      assert.equal(await ts.store.users.get(id), undefined);
      assert.ok(!jar.cookies.has('RG_SESSION'), 'the session cookie is cleared');
      // Every application's access ends with the account: its refresh token is refused.
      assert.equal(await refreshStatus(refreshToken), 400);
      const [event] = await events(id, 'DELETE_ACCOUNT');
      assert.equal(event?.outcome, 'success');
      assert.equal(event?.username, 'dora');
      assert.match(event?.reason ?? '', /kc_action/);
      // Nobody signs in as dora any more.
      const login = parseForm((await drive(jar, await auth(jar))).body);
      const refused = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'dora', password: PASSWORD });
      assert.equal(refused.statusCode, 200);
      assert.equal(pageKind(refused.body), 'login');
    });

    test('the required action an administrator set: asked at sign-in with no way around it, only while the realm enables it', async () => {
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'erik', password: PASSWORD, orgAliases: ['acme'], requiredActions: ['delete_account'] });
      // Disabled in the realm: not asked (the user keeps it, as in Keycloak).
      await enable(false);
      await signedIn('erik');
      await enable(true);
      const jar = new CookieJar();
      const login = parseForm((await drive(jar, await auth(jar))).body);
      const page = await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'erik', password: PASSWORD }));
      assert.equal(pageKind(page.body), 'delete-account');
      assert.match(page.body, /You are about to delete the account <strong>erik<\/strong>\. This cannot be undone\./);
      assert.doesNotMatch(page.body, /name="cancel"/);
      // No session before it is done: no way on to the client without the confirmation.
      assert.ok(!jar.cookies.has('RG_SESSION'));
      const form = parseForm(page.body);
      const unconfirmed = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, cancel: '1' });
      assert.equal(pageKind(unconfirmed.body), 'delete-account');
      assert.ok(await ts.store.users.get(id));
      deletedPage(await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, confirm: '1' }));
      assert.equal(await ts.store.users.get(id), undefined);
      assert.match((await events(id, 'DELETE_ACCOUNT'))[0]?.reason ?? '', /required action at sign-in/);
    });

    test("the required action at the account page's own sign-in: the confirmation with a proof of the password; without it, nothing", async () => {
      await enable(true);
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'ivo', password: PASSWORD, requiredActions: ['delete_account'] });
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const page = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'ivo', password: PASSWORD });
      assert.equal(pageKind(page.body), 'delete-account');
      assert.doesNotMatch(page.body, /name="cancel"/);
      assert.ok(!jar.cookies.has('RG_SESSION'), 'no session before it is done');
      const form = parseForm(page.body);
      assert.equal(form.action, realmPath('/account/delete-account'));
      const proof = /name="proof" value="([^"]*)"/.exec(page.body)![1]!;
      // No proof, or a forged one: a "Form expired" page, nothing deleted.
      for (const bad of ['', proof.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))]) {
        assert.equal((await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, proof: bad, confirm: '1' })).statusCode, 403);
      }
      // Without Confirm: the page again.
      assert.equal(pageKind((await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, proof })).body), 'delete-account');
      assert.ok(await ts.store.users.get(id));
      deletedPage(await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, proof, confirm: '1' }));
      assert.equal(await ts.store.users.get(id), undefined);
      assert.match((await events(id, 'DELETE_ACCOUNT'))[0]?.reason ?? '', /account page's sign-in/);
    });

    test('the account page: the password typed again (counted as a sign-in); a wrong one or a forged form deletes nothing', async () => {
      await enable(true);
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'fay', password: PASSWORD, orgAliases: ['acme'] });
      const { refreshToken } = await signedIn('fay');
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const page = await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'fay', password: PASSWORD }));
      assert.equal(pageKind(page.body), 'account');
      assert.match(page.body, /<h2>Delete account<\/h2>/);
      assert.match(page.body, /<form method="post" action="\/auth\/realms\/test\/account\/delete" class="delete-account-form">/);
      const csrf = parseForm(page.body).csrf;
      const wrong = await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf, password: 'not the password' });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /The current password is not right\./);
      assert.equal((await events(id, 'DELETE_ACCOUNT_ERROR')).length, 1);
      const forged = await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf: 'forged', password: PASSWORD });
      assert.equal(forged.statusCode, 303);
      assert.ok(await ts.store.users.get(id));
      assert.equal(await refreshStatus(refreshToken), 200);
      deletedPage(await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf, password: PASSWORD }));
      assert.equal(await ts.store.users.get(id), undefined);
      assert.ok(!jar.cookies.has('RG_SESSION'));
      assert.equal(await refreshStatus(refreshToken), 400);
      assert.match((await events(id, 'DELETE_ACCOUNT'))[0]?.reason ?? '', /account page/);
    });

    test('the account page of a user without a password: a sign-in of the last 5 minutes; a user of an LDAP directory is refused', async () => {
      await enable(true);
      const realm = (await ts.services.cache.realm(REALM))!;
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'hal', password: undefined });
      const jar = new CookieJar();
      const { secret } = await createBrowserSession(ts.services, realm, id);
      jar.cookies.set('RG_SESSION', secret);
      const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.equal(pageKind(page.body), 'account');
      assert.match(page.body, /class="delete-account-form">\n<input type="hidden" name="csrf" value="[^"]+">\n\n<div class="actions">/);
      const csrf = parseForm(page.body).csrf;
      ts.clock.advance(301);
      const stale = await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf });
      assert.equal(stale.statusCode, 400);
      assert.match(stale.body, /sign out and sign in again/);
      assert.doesNotMatch(stale.body, /delete-account-form/);
      assert.ok(await ts.store.users.get(id));
      const fresh = await createBrowserSession(ts.services, realm, id);
      jar.cookies.set('RG_SESSION', fresh.secret);
      deletedPage(await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf }));
      assert.equal(await ts.store.users.get(id), undefined);

      // A directory's user would come back at the next sign-in: refused, recorded, nothing deleted.
      const { id: ldapId } = await createUser(ts.store, { realmId: REALM, username: 'ida', password: PASSWORD });
      const ida = (await ts.store.users.get(ldapId))!;
      assert.equal(await deleteOwnAccount(ts.services, { realm, user: { ...ida, federationLink: 'corp-ldap' }, ip: '127.0.0.1', clientId: 'account', where: 'on the account page' }), 'federated');
      assert.ok(await ts.store.users.get(ldapId));
      assert.match((await events(ldapId, 'DELETE_ACCOUNT_ERROR'))[0]?.reason ?? '', /LDAP directory/);
    });
    test("a realm with Keycloak's account client and its delete-account role (imported with the built-in clients): only its holders may delete", async () => {
      await enable(true);
      await createClient(ts.store, { realmId: REALM, clientId: 'account', redirectUris: ['https://account.example.com/cb'] });
      await createRole(ts.store, { realmId: REALM, clientId: 'account', name: 'delete-account' }, cliActor());
      const { id: without } = await createUser(ts.store, { realmId: REALM, username: 'jon', password: PASSWORD, orgAliases: ['acme'] });
      const { id: holder } = await createUser(ts.store, { realmId: REALM, username: 'kim', password: PASSWORD, orgAliases: ['acme'] });
      await grantRolesByName(ts.store, { realmId: REALM, userId: holder, clientId: 'account', names: ['delete-account'] }, cliActor());

      // Without the role: no section on the account page, and kc_action says so at once (Keycloak's words).
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const page = await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'jon', password: PASSWORD }));
      assert.equal(pageKind(page.body), 'account');
      assert.doesNotMatch(page.body, /<h2>Delete account<\/h2>/);
      assert.equal((await inject(ts.app, jar, 'POST', realmPath('/account/delete'), { csrf: parseForm(page.body).csrf, password: PASSWORD })).statusCode, 303);
      const appJar = new CookieJar();
      const appLogin = parseForm((await drive(appJar, await auth(appJar, { kc_action: 'delete_account' }))).body);
      const refused = await drive(appJar, await inject(ts.app, appJar, 'POST', appLogin.action, { csrf: appLogin.csrf, username: 'jon', password: PASSWORD }));
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /You do not have enough permissions to delete your own account, contact admin\./);
      const confirmed = await inject(ts.app, appJar, 'POST', parseForm(refused.body).action, { csrf: parseForm(refused.body).csrf, confirm: '1' });
      assert.equal(confirmed.statusCode, 403);
      assert.ok(await ts.store.users.get(without), 'still there');
      assert.match((await events(without, 'DELETE_ACCOUNT_ERROR'))[0]?.reason ?? '', /lacks the account client's delete-account role/);

      // With it: as before.
      const { jar: kimJar } = await signedIn('kim');
      const again = await drive(kimJar, await auth(kimJar, { kc_action: 'delete_account' }));
      const confirm = await drive(kimJar, await inject(ts.app, kimJar, 'POST', parseForm(again.body).action, { csrf: parseForm(again.body).csrf, username: 'kim', password: PASSWORD }));
      assert.equal(confirm.statusCode, 200);
      assert.doesNotMatch(confirm.body, /enough permissions/);
      deletedPage(await inject(ts.app, kimJar, 'POST', parseForm(confirm.body).action, { csrf: parseForm(confirm.body).csrf, confirm: '1' }));
      assert.equal(await ts.store.users.get(holder), undefined);
    });
  });
}
