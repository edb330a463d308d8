import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM, PASSWORD } from '../helpers/server.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { base32 } from '../../src/crypto/totp.js';
import { createRecoveryCodes, useRecoveryCode } from '../../src/admin/operations/recovery-codes.js';
import { createUserStorage } from '../../src/admin/operations/user-storage.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// A user's credentials through @keycloak/keycloak-admin-client 26, unchanged: the password and the
// TOTP authenticators listed (never a key), renamed and removed; `totp` in user representations; the
// CONFIGURE_TOTP required action set and cleared.
for (const dialect of dialects()) {
  describe(`admin API: user credentials (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    const create = async (username: string, extra: Record<string, unknown> = {}): Promise<string> =>
      (await ts.kc.users.create({ realm: REALM, username, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }], ...extra })).id;
    const withOtp = async (username: string, labels: Array<string | undefined>): Promise<{ id: string; keys: Buffer[] }> => {
      const id = await create(username);
      const user = (await ts.store.users.get(id))!;
      const keys: Buffer[] = [];
      for (const label of labels) keys.push(await enrollTestOtp(ts.store, user, label));
      return { id, keys };
    };
    const raw = (path: string, init: RequestInit = {}): Promise<Response> =>
      fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/users/${path}`, { ...init, headers: { authorization: `Bearer ${ts.kc.accessToken}`, ...(init.headers ?? {}) } });

    test('recovery codes: one credential (recovery-authn-codes) with the codes left, removed as a whole; gone with the last authenticator', async () => {
      const { id } = await withOtp('rico', ['phone']);
      const user = (await ts.store.users.get(id))!;
      const codes = await createRecoveryCodes(ts.store, user);
      assert.equal(await useRecoveryCode(ts.store, user, codes[0]!), true);
      const listed = await ts.kc.users.getCredentials({ realm: REALM, id });
      assert.deepEqual(listed.map((c) => c.type), ['password', 'otp', 'recovery-authn-codes']);
      const rc = listed[2]!;
      assert.deepEqual(JSON.parse(rc.credentialData!), { totalCodes: 10, remainingCodes: 9 });
      assert.equal(rc.secretData, undefined);
      // Renaming them is not a thing: 404; removing them: 204, the authenticator stays.
      assert.equal(await statusOf(ts.kc.users.updateCredentialLabel({ realm: REALM, id, credentialId: rc.id! }, 'x')), 404);
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: rc.id! });
      assert.equal(await ts.store.recoveryCodes.remaining(id), 0);
      assert.deepEqual((await ts.kc.users.getCredentials({ realm: REALM, id })).map((c) => c.type), ['password', 'otp']);
      assert.equal(await statusOf(ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: rc.id! })), 404);
      // New codes, then the last authenticator removed: the codes go with it.
      await createRecoveryCodes(ts.store, user);
      const otp = (await ts.kc.users.getCredentials({ realm: REALM, id })).find((c) => c.type === 'otp')!;
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: otp.id! });
      assert.deepEqual((await ts.kc.users.getCredentials({ realm: REALM, id })).map((c) => c.type), ['password']);
    });

    test('a user without an authenticator: the password alone, under the same id each time; totp false', async () => {
      const id = await create('cred-ann');
      const creds = await ts.kc.users.getCredentials({ realm: REALM, id });
      assert.equal(creds.length, 1);
      const [password] = creds;
      assert.equal(password!.type, 'password');
      assert.match(password!.id!, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(password!.userLabel, undefined);
      assert.equal(password!.secretData, undefined);
      const user = await ts.kc.users.findOne({ realm: REALM, id });
      assert.equal(password!.createdDate, user!.createdTimestamp);
      assert.equal((await ts.kc.users.getCredentials({ realm: REALM, id }))[0]!.id, password!.id);
      assert.equal(user!.totp, false);
      assert.deepEqual(user!.disableableCredentialTypes, []);
      const other = await create('cred-ann2');
      assert.notEqual((await ts.kc.users.getCredentials({ realm: REALM, id: other }))[0]!.id, password!.id);
    });

    test('authenticators are listed after the password with their label, date and settings, never their key; totp true in GET and the listings', async () => {
      const { id, keys } = await withOtp('cred-bo', ['Phone', undefined]);
      const res = await raw(`${id}/credentials`);
      assert.equal(res.status, 200);
      const text = await res.text();
      for (const k of keys) {
        assert.ok(!text.includes(base32(k)) && !text.includes(k.toString('hex')) && !text.includes(k.toString('base64')), 'no key in the listing');
      }
      const creds = await ts.kc.users.getCredentials({ realm: REALM, id });
      assert.deepEqual(creds.map((c) => c.type), ['password', 'otp', 'otp']);
      // Oldest first, then by id (these two were set up in the same second).
      const phone = creds.find((c) => c.userLabel === 'Phone');
      const unnamed = creds.find((c) => c.type === 'otp' && c !== phone);
      assert.equal(unnamed!.userLabel, undefined);
      for (const c of [phone!, unnamed!]) {
        assert.equal(c.secretData, undefined);
        assert.deepEqual(JSON.parse(c.credentialData!), { subType: 'totp', digits: 6, counter: 0, period: 30, algorithm: 'HmacSHA1' });
        assert.ok(Math.abs(c.createdDate! - Date.now()) < 120_000, 'createdDate in milliseconds');
        assert.match(c.id!, /^[0-9a-f-]{36}$/);
      }
      const stored = (await ts.store.otp.list(id)).map((c) => c.id);
      assert.deepEqual(creds.slice(1).map((c) => c.id), stored);
      const user = await ts.kc.users.findOne({ realm: REALM, id });
      assert.equal(user!.totp, true);
      assert.deepEqual(user!.disableableCredentialTypes, ['otp']);
      const [listed] = await ts.kc.users.find({ realm: REALM, username: 'cred-bo', exact: true });
      assert.equal(listed!.totp, true);
      const page = await ts.kc.users.find({ realm: REALM, search: 'cred-', max: 100 });
      assert.deepEqual(page.filter((u) => u.totp).map((u) => u.username), ['cred-bo']);
    });

    test('updateCredentialLabel renames an authenticator (text/plain); blank removes the label; bad labels 400, unknown 404, the password 400', async () => {
      const { id } = await withOtp('cred-cy', ['Old']);
      const otpId = (await ts.store.otp.list(id))[0]!.id;
      const label = async (): Promise<string | undefined> => (await ts.kc.users.getCredentials({ realm: REALM, id })).find((c) => c.id === otpId)!.userLabel;
      await ts.kc.users.updateCredentialLabel({ realm: REALM, id, credentialId: otpId }, '  Work phone ');
      assert.equal(await label(), 'Work phone');
      const put = (credentialId: string, body: string): Promise<Response> => raw(`${id}/credentials/${credentialId}/userLabel`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body });
      for (const [body, message] of [['x'.repeat(256), /at most 255 characters/], ['tab\there', /control characters/], ['bell\x07', /control characters/]] as const) {
        const res = await put(otpId, body);
        assert.equal(res.status, 400);
        const err = (await res.json()) as { error: string; errorMessage: string };
        assert.match(err.errorMessage, message);
        assert.equal(typeof err.error, 'string');
      }
      assert.equal(await label(), 'Work phone');
      assert.equal((await put(otpId, 'x'.repeat(255))).status, 204);
      assert.equal(await label(), 'x'.repeat(255));
      assert.equal((await put(otpId, '')).status, 204);
      assert.equal(await label(), undefined);
      assert.equal(await statusOf(ts.kc.users.updateCredentialLabel({ realm: REALM, id, credentialId: '00000000-0000-4000-8000-000000000000' }, 'x')), 404);
      const passwordId = (await ts.kc.users.getCredentials({ realm: REALM, id }))[0]!.id!;
      const res = await put(passwordId, 'My password');
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { errorMessage: string }).errorMessage, /password credential cannot be renamed/);
    });

    test('deleteCredential removes one authenticator (an admin event and REMOVE_TOTP); again 404; the password 400; another user\'s credential 404', async () => {
      const { id } = await withOtp('cred-di', ['A', 'B']);
      const other = await withOtp('cred-ed', ['C']);
      const stored = await ts.store.otp.list(id);
      const a = stored.find((c) => c.label === 'A');
      const b = stored.find((c) => c.label === 'B');
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: a!.id });
      assert.deepEqual((await ts.store.otp.list(id)).map((c) => c.label), ['B']);
      assert.equal(await statusOf(ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: a!.id })), 404);
      const otherId = (await ts.store.otp.list(other.id))[0]!.id;
      assert.equal(await statusOf(ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: otherId })), 404);
      assert.equal((await ts.store.otp.list(other.id)).length, 1, "another user's authenticator stays");
      const passwordId = (await ts.kc.users.getCredentials({ realm: REALM, id }))[0]!.id!;
      const res = await raw(`${id}/credentials/${passwordId}`, { method: 'DELETE' });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { errorMessage: string }).errorMessage, /password credential cannot be removed: reset the password instead/);
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))!.totp, true);
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: b!.id });
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))!.totp, false);
      const admin = await ts.kc.realms.findAdminEvents({ realm: REALM, max: 500 });
      assert.ok(admin.some((e) => e.operationType === 'ACTION' && e.resourcePath === `users/${id}/credentials/${a!.id}`), 'an admin event names the credential');
      const events = await ts.kc.realms.findEvents({ realm: REALM, max: 500 });
      assert.equal(events.filter((e) => e.type === 'REMOVE_TOTP' && e.userId === id).length, 2);
      assert.equal(await statusOf(ts.kc.users.getCredentials({ realm: REALM, id: 'no-such-user' })), 404);
    });

    test('removeTotp removes every authenticator and the recovery codes, each audited; again 204; another user untouched; manage-users', async () => {
      const { id } = await withOtp('cred-gil', ['G1', 'G2']);
      const other = await withOtp('cred-hal', ['H']);
      await createRecoveryCodes(ts.store, (await ts.store.users.get(id))!);
      const viewer = await serviceAccountAdmin(ts, REALM, 'cred-totp-viewer', ['view-users']);
      assert.equal(await statusOf(viewer.kc.users.removeTotp({ realm: REALM, id })), 403);
      assert.equal((await ts.store.otp.list(id)).length, 2, 'nothing removed without manage-users');
      await ts.kc.users.removeTotp({ realm: REALM, id });
      assert.deepEqual((await ts.kc.users.getCredentials({ realm: REALM, id })).map((c) => c.type), ['password']);
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))!.totp, false);
      assert.equal(await ts.store.recoveryCodes.remaining(id), 0);
      assert.equal((await ts.store.otp.list(other.id)).length, 1, "another user's authenticator stays");
      const events = await ts.kc.realms.findEvents({ realm: REALM, max: 500 });
      assert.equal(events.filter((e) => e.type === 'REMOVE_TOTP' && e.userId === id).length, 2, 'one REMOVE_TOTP per authenticator');
      await ts.kc.users.removeTotp({ realm: REALM, id });
      assert.equal(await statusOf(ts.kc.users.removeTotp({ realm: REALM, id: 'no-such-user' })), 404);
    });

    test('getUserStorageCredentialTypes: none for a local user, password for a user of an enabled LDAP provider', async () => {
      const id = await create('cred-ivy');
      assert.deepEqual(await ts.kc.users.getUserStorageCredentialTypes({ realm: REALM, id }), []);
      const p = await createUserStorage(ts.store, cliActor(), REALM, {
        name: 'cred-ldap',
        config: { connectionUrl: ['ldap://127.0.0.1:1'], usersDn: ['ou=People,dc=example,dc=org'], bindDn: ['cn=admin,dc=example,dc=org'], bindCredential: ['x'] },
      });
      await ts.store.users.update(id, { federationLink: p.id });
      assert.deepEqual(await ts.kc.users.getUserStorageCredentialTypes({ realm: REALM, id }), ['password']);
      const component = await ts.kc.components.findOne({ realm: REALM, id: p.id });
      await ts.kc.components.update({ realm: REALM, id: p.id }, { ...component, config: { ...component!.config, enabled: ['false'] } });
      assert.deepEqual(await ts.kc.users.getUserStorageCredentialTypes({ realm: REALM, id }), [], 'a disabled provider checks nothing');
      const querier = await serviceAccountAdmin(ts, REALM, 'cred-querier', ['query-users']);
      assert.equal(await statusOf(querier.kc.users.getUserStorageCredentialTypes({ realm: REALM, id })), 403);
      assert.equal(await statusOf(ts.kc.users.getUserStorageCredentialTypes({ realm: REALM, id: 'no-such-user' })), 404);
    });

    test('view-users reads credentials but cannot remove or rename them (403)', async () => {
      const { id } = await withOtp('cred-fay', ['F']);
      const otpId = (await ts.store.otp.list(id))[0]!.id;
      const viewer = await serviceAccountAdmin(ts, REALM, 'cred-viewer', ['view-users']);
      assert.equal((await viewer.kc.users.getCredentials({ realm: REALM, id })).length, 2);
      assert.equal(await statusOf(viewer.kc.users.deleteCredential({ realm: REALM, id, credentialId: otpId })), 403);
      assert.equal(await statusOf(viewer.kc.users.updateCredentialLabel({ realm: REALM, id, credentialId: otpId }, 'x')), 403);
      assert.equal((await ts.store.otp.list(id)).length, 1);
    });

    test('requiredActions CONFIGURE_TOTP round-trips through create and update', async () => {
      const id = await create('cred-gus', { requiredActions: ['CONFIGURE_TOTP'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, ['CONFIGURE_TOTP']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: [] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, []);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['CONFIGURE_TOTP', 'UPDATE_PASSWORD'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, ['UPDATE_PASSWORD', 'CONFIGURE_TOTP']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['CONFIGURE_TOTP'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, ['CONFIGURE_TOTP']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['UPDATE_PROFILE', 'TERMS_AND_CONDITIONS'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, ['TERMS_AND_CONDITIONS', 'UPDATE_PROFILE']);
      assert.equal(await statusOf(ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['CONFIGURE_RECOVERY_AUTHN_CODES'] })), 400);
    });
  });
}
