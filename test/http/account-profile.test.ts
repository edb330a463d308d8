import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, realmPath, PASSWORD, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, driveFlow, inject, pageKind, parseForm } from '../helpers/flow.js';
import { createUser, updateRealm } from '../../src/admin/operations.js';
import { createBrowserSession } from '../../src/oauth/authorize/interaction.js';

// Keycloak's account console "Personal info" on the account page: the email and names, checked as the
// UPDATE_PROFILE page checks them; a new email needs the current password (or, for a user without one, a
// recent sign-in); a directory's user sees them read-only. Over HTTP, on both databases.
for (const dialect of dialects()) {
  describe(`the account page's personal info (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const ACCOUNT = realmPath('/account');
    /** A user signed in on the account page: the browser's jar and the page's CSRF token. */
    async function signedIn(username: string): Promise<{ jar: CookieJar; csrf: string; id: string }> {
      const { id } = await createUser(ts.store, { realmId: REALM, username, password: PASSWORD, email: `${username}@example.com`, firstName: 'First', lastName: 'Last' });
      await ts.store.users.update(id, { emailVerified: true });
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', ACCOUNT)).body);
      const page = await driveFlow(ts.app, jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD }));
      assert.equal(pageKind(page.body), 'account');
      return { jar, csrf: parseForm(page.body).csrf, id };
    }
    const save = (jar: CookieJar, form: Record<string, string>) => inject(ts.app, jar, 'POST', realmPath('/account/profile'), form);
    const userOf = async (id: string) => (await ts.store.users.get(id))!;

    test('shown prefilled; names saved without a password; a new email only with the current password, then no longer verified', async () => {
      const { jar, csrf, id } = await signedIn('piet');
      const page = await inject(ts.app, jar, 'GET', ACCOUNT);
      assert.match(page.body, /<h2>Personal info<\/h2>/);
      assert.match(page.body, /<input type="text" id="profile-username" name="username" value="piet" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255" readonly>/);
      assert.match(page.body, /id="profile-email" name="email" value="piet@example.com"/);
      assert.match(page.body, /id="profile-firstName" name="firstName" value="First"/);

      const names = await save(jar, { csrf, email: 'piet@example.com', firstName: 'Piet <b>', lastName: 'Mondriaan' });
      assert.equal(names.statusCode, 200);
      assert.match(names.body, /<p class="notice" role="status">Your personal info is saved\.<\/p>/);
      assert.match(names.body, /value="Piet &lt;b&gt;"/, 'escaped');
      assert.deepEqual([(await userOf(id)).firstName, (await userOf(id)).lastName, (await userOf(id)).emailVerified], ['Piet <b>', 'Mondriaan', true]);

      const noPassword = await save(jar, { csrf, email: 'piet.new@example.com', firstName: 'Piet', lastName: 'Mondriaan' });
      assert.equal(noPassword.statusCode, 400);
      assert.match(noPassword.body, /Type your current password to change your email address\./);
      assert.match(noPassword.body, /value="piet.new@example.com"/, 'the typed values come back');
      // From a browser without the device cookie of its earlier sign-in: counted against the name.
      const device = jar.cookies.get('RG_DEVICE');
      assert.ok(device);
      jar.cookies.delete('RG_DEVICE');
      const wrong = await save(jar, { csrf, email: 'piet.new@example.com', firstName: 'Piet', lastName: 'Mondriaan', password: 'not it' });
      jar.cookies.set('RG_DEVICE', device);
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /The current password is not right\./);
      assert.equal((await userOf(id)).email, 'piet@example.com');
      // Counted as a sign-in is: a stolen session cannot guess the password here.
      const counted = (await ts.store.loginFailures.get(REALM, ['user:piet'])).get('user:piet');
      assert.ok(counted && counted.failures >= 1, JSON.stringify(counted));

      const moved = await save(jar, { csrf, email: 'Piet.New@Example.com', firstName: 'Piet', lastName: 'Mondriaan', password: PASSWORD });
      assert.equal(moved.statusCode, 200);
      assert.match(moved.body, /Your personal info is saved\. Your new email address is not verified yet\./);
      const after = await userOf(id);
      assert.deepEqual([after.email, after.emailVerified], ['piet.new@example.com', false]);
      const events = (await ts.store.events.list(REALM, { userId: id, limit: 50 })).map((e) => e.type);
      assert.ok(events.includes('UPDATE_EMAIL') && events.includes('UPDATE_PROFILE') && events.includes('UPDATE_PROFILE_ERROR'), events.join(' '));
    });

    test('refused as the profile page refuses (a taken or invalid email, a missing name), a forged form changes nothing; under verifyEmail the new email is verified next', async () => {
      await createUser(ts.store, { realmId: REALM, username: 'taken', password: PASSWORD, email: 'taken@example.com' });
      const { jar, csrf, id } = await signedIn('rosa');
      for (const [form, words] of [
        [{ email: 'taken@example.com', firstName: 'Rosa', lastName: 'L', password: PASSWORD }, /Email already exists\./],
        [{ email: 'not an address', firstName: 'Rosa', lastName: 'L', password: PASSWORD }, /Invalid email address\./],
        [{ email: 'rosa@example.com', firstName: '', lastName: 'L' }, /Please specify first name\./],
      ] as const) {
        const r = await save(jar, { csrf, ...form });
        assert.equal(r.statusCode, 400, JSON.stringify(form));
        assert.match(r.body, words);
      }
      assert.equal((await save(jar, { csrf: 'forged', email: 'rosa@example.com', firstName: 'X', lastName: 'Y' })).statusCode, 303);
      assert.deepEqual([(await userOf(id)).email, (await userOf(id)).firstName], ['rosa@example.com', 'First']);
      await updateRealm(ts.store, { realmId: REALM, settings: { verifyEmail: true } });
      ts.services.cache.clear();
      try {
        assert.equal((await save(jar, { csrf, email: 'rosa2@example.com', firstName: 'Rosa', lastName: 'L', password: PASSWORD })).statusCode, 200);
        assert.deepEqual((await userOf(id)).requiredActions, ['VERIFY_EMAIL']);
      } finally {
        await updateRealm(ts.store, { realmId: REALM, settings: { verifyEmail: false } });
        ts.services.cache.clear();
      }
    });

    test('a user without a password changes their email within 5 minutes of signing in; a directory user sees the fields read-only', async () => {
      const realm = (await ts.services.cache.realm(REALM))!;
      const { id } = await createUser(ts.store, { realmId: REALM, username: 'nopw', password: undefined, email: 'nopw@example.com' });
      const jar = new CookieJar();
      jar.cookies.set('RG_SESSION', (await createBrowserSession(ts.services, realm, id)).secret);
      const page = await inject(ts.app, jar, 'GET', ACCOUNT);
      assert.doesNotMatch(page.body, /id="profile-password"/);
      const csrf = parseForm(page.body).csrf;
      assert.equal((await save(jar, { csrf, email: 'nopw2@example.com', firstName: 'N', lastName: 'P' })).statusCode, 200);
      ts.clock.advance(301);
      const late = await save(jar, { csrf, email: 'nopw3@example.com', firstName: 'N', lastName: 'P' });
      assert.equal(late.statusCode, 400);
      assert.match(late.body, /To change your email address, sign out and sign in again/);
      assert.equal((await userOf(id)).email, 'nopw2@example.com');
      // Names alone need nothing.
      assert.equal((await save(jar, { csrf, email: 'nopw2@example.com', firstName: 'Nora', lastName: 'P' })).statusCode, 200);

      const { id: dirId } = await createUser(ts.store, { realmId: REALM, username: 'diruser', password: undefined, email: 'dir@example.com' });
      await ts.store.users.update(dirId, { federationLink: 'corp-ldap' });
      const dirJar = new CookieJar();
      dirJar.cookies.set('RG_SESSION', (await createBrowserSession(ts.services, realm, dirId)).secret);
      const dirPage = await inject(ts.app, dirJar, 'GET', ACCOUNT);
      assert.match(dirPage.body, /Your personal info comes from your organization&#39;s directory/);
      assert.match(dirPage.body, /name="email" value="dir@example.com"[^>]* readonly>/);
      assert.doesNotMatch(dirPage.body, /Save<\/button>/);
      const posted = await save(dirJar, { csrf: parseForm(dirPage.body).csrf, email: 'other@example.com', firstName: 'A', lastName: 'B' });
      assert.equal(posted.statusCode, 303);
      assert.equal((await userOf(dirId)).email, 'dir@example.com');
    });

    test("editUsernameAllowed: the username is editable and saved (checked, free, lower case); off, whatever the field says is ignored", async () => {
      const { jar, csrf, id } = await signedIn('renata');
      const form = { csrf, email: 'renata@example.com', firstName: 'First', lastName: 'Last' };
      // Off (the default): read-only, and a username posted anyway changes nothing.
      assert.match((await inject(ts.app, jar, 'GET', ACCOUNT)).body, /id="profile-username" name="username" value="renata"[^>]* readonly>/);
      assert.equal((await save(jar, { ...form, username: 'rena' })).statusCode, 200);
      assert.equal((await userOf(id)).username, 'renata');

      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: true } });
      ts.services.cache.clear();
      assert.match((await inject(ts.app, jar, 'GET', ACCOUNT)).body, /id="profile-username" name="username" value="renata"[^>]* required>/);
      await createUser(ts.store, { realmId: REALM, username: 'occupied', password: undefined });
      let r = await save(jar, { ...form, username: 'Occupied' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /Username already exists\./);
      assert.match(r.body, /value="Occupied"/, 'the typed username comes back');
      r = await save(jar, { ...form, username: 'bad name!' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /class="error"/);
      assert.equal((await userOf(id)).username, 'renata');

      r = await save(jar, { ...form, username: 'Renata.V' });
      assert.equal(r.statusCode, 200);
      assert.match(r.body, /Your personal info is saved\./);
      assert.equal((await userOf(id)).username, 'renata.v');
      const events = await ts.store.events.list(REALM, { userId: id, types: ['UPDATE_PROFILE'] });
      assert.ok(events.some((e) => e.reason === 'username renata -> renata.v'), events.map((e) => e.reason).join('; '));
      // The session goes on; the new name signs in, the old one no longer does.
      assert.equal(pageKind((await inject(ts.app, jar, 'GET', ACCOUNT)).body), 'account');
      const fresh = new CookieJar();
      const login = parseForm((await inject(ts.app, fresh, 'GET', ACCOUNT)).body);
      const old = await inject(ts.app, fresh, 'POST', login.action, { csrf: login.csrf, username: 'renata', password: PASSWORD });
      assert.notEqual(pageKind(old.body), 'account');
      const again = parseForm((await inject(ts.app, fresh, 'GET', ACCOUNT)).body);
      const page = await driveFlow(ts.app, fresh, await inject(ts.app, fresh, 'POST', again.action, { csrf: again.csrf, username: 'renata.v', password: PASSWORD }));
      assert.equal(pageKind(page.body), 'account');

      // The email as username: the field is read-only again.
      await updateRealm(ts.store, { realmId: REALM, settings: { registrationEmailAsUsername: true } });
      ts.services.cache.clear();
      assert.match((await inject(ts.app, jar, 'GET', ACCOUNT)).body, /id="profile-username"[^>]* readonly>/);
      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: false, registrationEmailAsUsername: false } });
      ts.services.cache.clear();
    });
  });
}
