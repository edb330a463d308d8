// User federation: sign-in through a real OpenLDAP (test/helpers/ldap.ts) at the login page and the
// password grant, on the database this file's variant names (ldap-sign-in-sqlite / -postgres).
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fc from 'fast-check';
import { startTestServer, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, parseForm, tokenRequest } from '../helpers/flow.js';
import { basic } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, SUFFIX, startLdap, type LdapServer } from '../helpers/ldap.js';
import { freePort } from '../helpers/smtp.js';
import { createUserStorage, updateUserStorage } from '../../src/admin/operations/user-storage.js';
import { completePasswordUpdate, setUserPassword, FEDERATED_PASSWORD_MESSAGE } from '../../src/admin/operations/users.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { updateRealm } from '../../src/admin/operations/realms.js';
import { ldapClientLoaded } from '../../src/oauth/ldap/directory.js';
import { SoftKey, assertWith, pageOptions, registerTestKey } from '../helpers/webauthn.js';

const STAFF = `ou=Staff,${PEOPLE}`;

export function ldapSignInTests(dialect: 'sqlite' | 'postgres'): void {
  describe(`sign-in through LDAP (${dialect})`, { skip: LDAP_MISSING }, () => {
    let ts: TestServer;
    let ldap: LdapServer;
    let silent: net.Server;
    const held = new Set<net.Socket>();
    let providerId: string;
    const auth = (): string => basic(ts.client.id, ts.client.secret);

    before(async () => {
      ldap = await startLdap({
        extraLdif: `dn: ${STAFF}\nobjectClass: organizationalUnit\nou: Staff\n\n`,
        people: [
          { uid: 'lena', password: 'lena-ldap-pw', mail: 'lena@example.org', givenName: 'Lena', sn: 'Ldap' },
          { uid: 'mo', password: 'mo-ldap-pw', mail: 'mo@example.org', givenName: 'Mo', sn: 'Dir' },
          { uid: 'twin', password: 'twin-pw' },
          { uid: 'twin', password: 'twin-pw', under: STAFF },
          { uid: 'pat', password: 'pat-ldap-pw', mail: 'pat@example.org' },
          { uid: 'dee', password: 'dee-ldap-pw', mail: 'dee@example.org' },
        ],
      });
      ts = await startTestServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      // A realm without a provider never loads the LDAP client (an idle server's memory).
      assert.equal((await grant('nobody-here', 'x', '10.10.0.1')).json().error, 'invalid_grant');
      assert.equal(ldapClientLoaded(), false);
      const p = await createUserStorage(ts.store, cliActor(), REALM, {
        name: 'corp-ldap',
        config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [ROOT_PASSWORD], searchScope: ['2'], editMode: ['READ_ONLY'], connectionTimeout: ['1000'], readTimeout: ['1000'] },
      });
      providerId = p.id;
      // A listener that accepts and never answers: a silent directory.
      silent = net.createServer((s) => {
        held.add(s);
        s.on('close', () => held.delete(s));
      });
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    });
    after(async () => {
      await ldap?.stop();
      for (const s of held) s.destroy();
      silent?.close();
      await ts?.close();
    });

    async function loginForm(ip = '127.0.0.1') {
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const page = await inject(ts.app, jar, 'GET', start.headers.location as string);
      const form = parseForm(page.body);
      return (username: string, password: string) =>
        ts.app.inject({
          method: 'POST',
          url: form.action,
          remoteAddress: ip,
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ csrf: form.csrf, username, password }).toString(),
        });
    }
    const grant = (username: string, password: string, ip = '127.0.0.1') =>
      ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        remoteAddress: ip,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth() },
        payload: new URLSearchParams({ grant_type: 'password', username, password, scope: 'openid' }).toString(),
      });

    test('a first sign-in at the login page imports the user, with no password; the flow goes on', async () => {
      const attempt = await loginForm();
      const res = await attempt('lena', 'lena-ldap-pw');
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      const user = await ts.store.users.findByUsername(REALM, 'lena');
      assert.ok(user);
      assert.equal(user.federationLink, providerId);
      assert.equal(user.email, 'lena@example.org');
      assert.equal(user.firstName, 'Lena');
      assert.equal(user.lastName, 'Ldap');
      assert.deepEqual(user.attributes.LDAP_ENTRY_DN, [`uid=lena,${PEOPLE}`]);
      assert.match(user.attributes.LDAP_ID?.[0] ?? '', /^[0-9a-f-]{36}$/);
      assert.ok(user.passwordHash.startsWith('!'), 'the password is never stored');
      assert.ok(!JSON.stringify(await ts.store.users.get(user.id)).includes('lena-ldap-pw'));
    });

    test('the password grant binds again each time: a changed LDAP password takes effect, a deleted entry cannot sign in', async () => {
      assert.equal((await grant('mo', 'mo-ldap-pw')).statusCode, 200);
      await ldap.setPassword('mo', 'mo-new-pw');
      assert.equal((await grant('mo', 'mo-ldap-pw')).json().error, 'invalid_grant');
      assert.equal((await grant('mo', 'mo-new-pw')).statusCode, 200);
      // By email too (loginWithEmailAllowed is on by default).
      assert.equal((await grant('mo@example.org', 'mo-new-pw')).statusCode, 200);
      await ldap.remove(`uid=mo,${PEOPLE}`);
      assert.equal((await grant('mo', 'mo-new-pw')).json().error, 'invalid_grant');
      ts.clock.advance(3600);
    });

    test('a wrong or empty password is refused; an empty one before any bind', async () => {
      assert.equal((await grant('lena', 'nope')).json().error, 'invalid_grant');
      const page = await (await loginForm('10.9.0.1'))('lena', '');
      assert.match(page.body, /Invalid username or password/);
      // The directory itself accepts an empty password as an unauthenticated bind (RFC 4513 5.1.2).
      const { lookupAndBind } = await import('../../src/oauth/ldap/directory.js');
      const { ldapSettings } = await import('../../src/oauth/ldap/federation.js');
      const p = (await ts.store.userStorage.get(REALM, providerId))!;
      const r = await lookupAndBind(ldapSettings(p), ROOT_PASSWORD, { value: 'lena', byEmail: false }, '', ['uid']);
      assert.equal(r.kind, 'wrong-password');
      ts.clock.advance(3600);
    });

    test('LDAP injection in the name never signs anyone in', async () => {
      const hostile = ['*', 'len*', '*ena', 'lena)(uid=*', 'lena)(|(uid=*', '*)(uid=*))(|(uid=*', 'lena\\', 'lena\u0000', 'lena\\2a', '(uid=lena)', 'l*a'];
      for (const [i, name] of hostile.entries()) {
        const res = await grant(name, 'lena-ldap-pw', `10.8.0.${i + 1}`);
        assert.equal(res.statusCode, 400, `${JSON.stringify(name)}: ${res.body}`);
        // A NUL is refused as a parameter already (invalid_request); the others reach the directory.
        assert.equal(res.json().error, name.includes('\u0000') ? 'invalid_request' : 'invalid_grant', name);
        const page = await (await loginForm(`10.7.0.${i + 1}`))(name, 'lena-ldap-pw');
        if (name.includes('\u0000')) {
          assert.equal(page.statusCode, 400, 'a NUL is refused as a form field already');
          continue;
        }
        assert.equal(page.statusCode, 200, name);
        assert.match(page.body, /Invalid username or password/);
      }
      assert.equal((await ts.store.users.list(REALM)).filter((u) => u.federationLink).length <= 2, true);
      ts.clock.advance(3600);
    });

    test('fuzz: LDAP-hostile names with a real password never sign in, never a 5xx', async () => {
      // Names built from filter and DN syntax around real entries' names; the password is lena's.
      const piece = fc.constantFrom('*', '(', ')', '\\', '|', '&', '!', '=', ',', '+', '"', '#', ';', '<', '>', ' ', 'uid=', 'objectClass=', 'lena', 'mo', 'twin', 'le', 'na', '\\2a', '\\28', '%2a', 'ou=People');
      const name = fc.array(piece, { minLength: 1, maxLength: 8 }).map((p) => p.join('')).filter((n) => n.trim().toLowerCase() !== 'lena' && n.trim().toLowerCase() !== 'lena@example.org');
      let n = 0;
      await fc.assert(
        fc.asyncProperty(name, fc.boolean(), async (typed, page) => {
          n++;
          const ip = `10.20.${Math.floor(n / 200)}.${n % 200}`;
          if (page) {
            const res = await (await loginForm(ip))(typed, 'lena-ldap-pw');
            assert.ok(res.statusCode < 500 && res.statusCode !== 303, `${JSON.stringify(typed)}: ${res.statusCode}`);
          } else {
            const res = await grant(typed, 'lena-ldap-pw', ip);
            assert.ok(res.statusCode === 400 || res.statusCode === 401, `${JSON.stringify(typed)}: ${res.statusCode} ${res.body}`);
          }
        }),
        { numRuns: Number(process.env.FUZZ_SCALE ?? 1) * 80, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
      );
      ts.clock.advance(3600);
    });

    test("a first sign-in several times at once imports one user; every attempt signs in", async () => {
      const results = await Promise.all([1, 2, 3].map((i) => grant('pat', 'pat-ldap-pw', `10.2.0.${i}`)));
      assert.deepEqual(results.map((r) => r.statusCode), [200, 200, 200], results.map((r) => r.body).join('\n'));
      assert.equal((await ts.store.users.list(REALM)).filter((u) => u.username === 'pat').length, 1);
    });

    test('two entries found is a failure, even with the right password', async () => {
      assert.equal((await grant('twin', 'twin-pw')).json().error, 'invalid_grant');
      assert.equal(await ts.store.users.findByUsername(REALM, 'twin'), undefined);
    });

    test('LDAP failures count towards the lockout as local ones do', async () => {
      const attempt = await loginForm('10.6.0.1');
      for (let i = 0; i < 5; i++) {
        assert.match((await attempt('lena', 'wrong')).body, /Invalid username or password/);
        ts.clock.advance(10);
      }
      const res = await attempt('lena', 'lena-ldap-pw');
      assert.equal(res.statusCode, 429);
      assert.match(res.body, /locked for/);
      ts.clock.advance(3600);
    });

    test('a directory down or silent: a clear "try again later" within seconds, never a 500; local users unaffected', async () => {
      const down = await freePort();
      for (const url of [`ldap://127.0.0.1:${down}`, `ldap://127.0.0.1:${(silent.address() as net.AddressInfo).port}`]) {
        await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [url] } });
        let t = Date.now();
        const res = await grant('lena', 'lena-ldap-pw', '10.5.0.1');
        assert.ok(Date.now() - t < 4000, `answered in ${Date.now() - t} ms`);
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error, 'temporarily_unavailable');
        assert.ok(Number(res.headers['retry-after']) > 0);
        t = Date.now();
        const page = await (await loginForm('10.5.0.2'))('new-person', 'whatever');
        assert.ok(Date.now() - t < 4000);
        assert.equal(page.statusCode, 503);
        assert.match(page.body, /try again later/i);
        // A local user never waits for the directory.
        assert.equal((await grant('alice', ts.user.password, '10.5.0.3')).statusCode, 200);
      }
      // The outage counted nothing against the name.
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [ldap.url] } });
      assert.equal((await grant('lena', 'lena-ldap-pw', '10.5.0.1')).statusCode, 200);
    });

    test("a federated user's password cannot be set here", async () => {
      const lena = (await ts.store.users.findByUsername(REALM, 'lena'))!;
      await assert.rejects(setUserPassword(ts.store, { realmId: REALM, userId: lena.id, password: 'a-local-password-1' }), (e: Error) => e.message === FEDERATED_PASSWORD_MESSAGE);
      // The update-password and account pages and the reset link's page say so, and change nothing.
      assert.equal(await completePasswordUpdate(ts.store, { realmId: REALM, user: lena, password: 'a-local-password-1', confirmation: 'a-local-password-1' }), FEDERATED_PASSWORD_MESSAGE);
      assert.equal((await ts.store.users.get(lena.id))!.passwordHash, lena.passwordHash);
      assert.equal((await grant('lena', 'a-local-password-1')).json().error, 'invalid_grant');
    });

    test('a disabled provider signs nobody in; local users still sign in', async () => {
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { enabled: ['false'] } });
      assert.equal((await grant('lena', 'lena-ldap-pw', '10.4.0.1')).json().error, 'invalid_grant');
      assert.equal((await grant('alice', ts.user.password, '10.4.0.2')).statusCode, 200);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { enabled: ['true'] } });
      assert.equal((await grant('lena', 'lena-ldap-pw', '10.4.0.1')).statusCode, 200);
      void SUFFIX;
      void tokenRequest;
    });

    test("a federated user's passkey signs in only while the provider is enabled and the directory has the entry; a silent directory: try again later", async () => {
      const pat = (await ts.store.users.findByUsername(REALM, 'pat'))!;
      assert.equal(pat.federationLink, providerId);
      const key = new SoftKey();
      await registerTestKey(ts.store, ts.config.authUrl, pat.id, key, 'pat passkey', { passwordless: true });
      const origin = new URL(ts.config.authUrl);
      const withPasskey = async () => {
        await ts.store.loginFailures.clear(REALM, `otp:${pat.id}`);
        const jar = new CookieJar();
        const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
        const location = start.headers.location as string;
        const html = (await inject(ts.app, jar, 'GET', location)).body;
        const fields = assertWith(key, { challenge: pageOptions(html).challenge, origin: origin.origin, rpId: origin.hostname, userHandle: pat.id });
        return inject(ts.app, jar, 'POST', `${location}/passwordless`, { csrf: parseForm(html).csrf, ...fields });
      };
      assert.equal((await withPasskey()).statusCode, 303);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { enabled: ['false'] } });
      const disabled = await withPasskey();
      assert.equal(disabled.statusCode, 400);
      assert.match(disabled.body, /passkey was not accepted/);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], enabled: ['true'], connectionUrl: [`ldap://127.0.0.1:${(silent.address() as net.AddressInfo).port}`] } });
      const t = Date.now();
      const outage = await withPasskey();
      assert.ok(Date.now() - t < 4000, `answered in ${Date.now() - t} ms`);
      assert.equal(outage.statusCode, 503);
      assert.match(outage.body, /try again later/i);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [ldap.url] } });
      assert.equal((await withPasskey()).statusCode, 303);
      // Removed from the directory: out, passkey or not.
      await ldap.remove(`uid=pat,${PEOPLE}`);
      const removed = await withPasskey();
      assert.equal(removed.statusCode, 400);
      const events = await ts.store.events.list(REALM, { userId: pat.id, types: ['LOGIN_ERROR'] });
      assert.ok(events.some((e) => /user directory no longer has this user/.test(e.reason ?? '')), JSON.stringify(events.map((e) => e.reason)));
    });

    test('editMode WRITABLE: a new password goes into the directory (RFC 3062 password modify, or a userPassword replace), never here', async () => {
      const lena = (await ts.store.users.findByUsername(REALM, 'lena'))!;
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { editMode: ['WRITABLE'], usePasswordModifyExtendedOp: ['true'] } });
      await setUserPassword(ts.store, { realmId: REALM, userId: lena.id, password: 'lena-exop-pw-1' });
      assert.equal((await grant('lena', 'lena-ldap-pw', '10.3.0.1')).json().error, 'invalid_grant');
      assert.equal((await grant('lena', 'lena-exop-pw-1', '10.3.0.2')).statusCode, 200);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { usePasswordModifyExtendedOp: ['false'] } });
      assert.equal(await completePasswordUpdate(ts.store, { realmId: REALM, user: lena, password: 'lena-replace-pw-2', confirmation: 'lena-replace-pw-2' }), undefined);
      assert.equal((await grant('lena', 'lena-replace-pw-2', '10.3.0.3')).statusCode, 200);
      assert.equal((await ts.store.users.get(lena.id))!.passwordHash, lena.passwordHash, 'nothing stored here');
      // The directory down: refused with a clear message, nothing changed.
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [`ldap://127.0.0.1:${await freePort()}`] } });
      await assert.rejects(setUserPassword(ts.store, { realmId: REALM, userId: lena.id, password: 'lena-never-pw-3' }), /cannot be reached right now: the password was not changed/);
      await updateUserStorage(ts.store, cliActor(), REALM, providerId, { config: { bindCredential: [ROOT_PASSWORD], connectionUrl: [ldap.url], editMode: ['READ_ONLY'] } });
      assert.equal((await grant('lena', 'lena-replace-pw-2', '10.3.0.4')).statusCode, 200);
      ts.clock.advance(3600);
    });

    test("a user imported at the first sign-in gets the realm's default required actions and default role, as a user made any other way", async () => {
      await updateRequiredAction(ts.store, { realmId: REALM, alias: 'TERMS_AND_CONDITIONS', changes: { defaultAction: true } });
      const role = { id: 'b7d0c6d4-1b8e-4c59-9a54-000000000002', realmId: REALM, clientId: '', name: 'default-roles-ldap', description: null };
      await ts.store.roles.create(role, 0);
      await updateRealm(ts.store, { realmId: REALM, defaultRole: { id: role.id } });
      ts.services.cache.clear();
      try {
        const res = await (await loginForm())('dee', 'dee-ldap-pw');
        assert.equal(res.statusCode, 303, res.body.slice(0, 300));
        const user = await ts.store.users.findByUsername(REALM, 'dee');
        assert.equal(user?.federationLink, providerId);
        assert.deepEqual(user?.requiredActions, ['TERMS_AND_CONDITIONS']);
        assert.deepEqual((await ts.store.roles.mappedRoles(user!.id)).map((r) => r.name), ['default-roles-ldap']);
      } finally {
        await updateRequiredAction(ts.store, { realmId: REALM, alias: 'TERMS_AND_CONDITIONS', changes: { defaultAction: false } });
        await ts.store.roles.delete(role.id);
        ts.services.cache.clear();
      }
    });
  });
}
