import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM, PASSWORD } from '../helpers/server.js';
import { SoftKey, registerTestKey } from '../helpers/webauthn.js';
import { errorOf, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

// Security keys through @keycloak/keycloak-admin-client 26, unchanged: a user's webauthn credentials
// listed as Keycloak shows them (credentialData as its WebAuthnCredentialData), renamed, deleted; the
// webauthn-register required action; the realm's webAuthnPolicy* fields read and changed.
for (const dialect of dialects()) {
  describe(`admin API: security keys (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    const create = async (username: string, extra: Record<string, unknown> = {}): Promise<string> =>
      (await ts.kc.users.create({ realm: REALM, username, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }], ...extra })).id;

    test('webauthn credentials: listed with Keycloak\'s credentialData (no secretData), renamed, deleted (REMOVE_CREDENTIAL, an admin event)', async () => {
      const id = await create('keyra');
      const key = new SoftKey();
      await registerTestKey(ts.store, ts.config.authUrl, id, key, 'Yubikey');
      const listed = await ts.kc.users.getCredentials({ realm: REALM, id });
      assert.deepEqual(listed.map((c) => c.type), ['password', 'webauthn']);
      const wa = listed[1]!;
      assert.equal(wa.userLabel, 'Yubikey');
      assert.equal(wa.secretData, undefined);
      assert.ok(typeof wa.createdDate === 'number' && wa.createdDate > 1e12, 'milliseconds');
      const data = JSON.parse(wa.credentialData!) as Record<string, unknown>;
      assert.deepEqual(Object.keys(data).sort(), ['aaguid', 'attestationStatementFormat', 'counter', 'credentialId', 'credentialPublicKey', 'transports']);
      assert.equal(data.aaguid, '00000000-0000-0000-0000-000000000000');
      assert.equal(Buffer.from(String(data.credentialId), 'base64').toString('hex'), key.credentialId.toString('hex'));
      assert.ok(Buffer.from(String(data.credentialPublicKey), 'base64').equals(key.coseKey()));
      assert.equal(data.counter, 0);
      assert.equal(data.attestationStatementFormat, 'none');
      assert.deepEqual(data.transports, ['usb', 'nfc']);
      await ts.kc.users.updateCredentialLabel({ realm: REALM, id, credentialId: wa.id! }, 'Blue key');
      assert.equal((await ts.store.webauthn.list(id))[0]!.label, 'Blue key');
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: wa.id! });
      assert.deepEqual((await ts.kc.users.getCredentials({ realm: REALM, id })).map((c) => c.type), ['password']);
      assert.equal(await statusOf(ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: wa.id! })), 404);
      const events = await ts.store.events.list(REALM, { userId: id, types: ['REMOVE_CREDENTIAL'] });
      assert.equal(events.length, 1);
      assert.match(events[0]!.reason ?? '', /credential_type webauthn.*by an administrator/);
      // Another user's key is not this user's to delete.
      const other = await create('keyra2');
      await registerTestKey(ts.store, ts.config.authUrl, other, new SoftKey());
      const theirs = (await ts.store.webauthn.list(other))[0]!;
      assert.equal(await statusOf(ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: theirs.id })), 404);
      assert.equal((await ts.store.webauthn.list(other)).length, 1);
    });

    test('a passkey is listed as webauthn-passwordless and deleted the same way', async () => {
      const id = await create('passa');
      await registerTestKey(ts.store, ts.config.authUrl, id, new SoftKey(), 'Laptop', { passwordless: true });
      const listed = await ts.kc.users.getCredentials({ realm: REALM, id });
      assert.deepEqual(listed.map((c) => c.type), ['password', 'webauthn-passwordless']);
      assert.equal(JSON.parse(listed[1]!.credentialData!).attestationStatementFormat, 'none');
      await ts.kc.users.deleteCredential({ realm: REALM, id, credentialId: listed[1]!.id! });
      assert.equal((await ts.store.webauthn.list(id)).length, 0);
      const events = await ts.store.events.list(REALM, { userId: id, types: ['REMOVE_CREDENTIAL'] });
      assert.match(events[0]!.reason ?? '', /credential_type webauthn-passwordless/);
    });

    test('the webauthn-register required action is set and cleared as Keycloak names it', async () => {
      const id = await create('reqa', { requiredActions: ['webauthn-register'] });
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))!.requiredActions, ['webauthn-register']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: ['webauthn-register-passwordless', 'webauthn-register'] });
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, ['webauthn-register', 'webauthn-register-passwordless']);
      await ts.kc.users.update({ realm: REALM, id }, { requiredActions: [] });
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, []);
    });

    test("the realm's webAuthnPolicy* fields: Keycloak's defaults, changed, refused when wrong", async () => {
      // keycloak-admin-client's RealmRepresentation type does not list these fields; Keycloak's JSON has them.
      const realm = (await ts.kc.realms.findOne({ realm: REALM })) as Record<string, unknown>;
      assert.equal(realm.webAuthnPolicyRpEntityName, 'keycloak');
      assert.deepEqual(realm.webAuthnPolicySignatureAlgorithms, ['ES256']);
      assert.equal(realm.webAuthnPolicyRpId, '');
      assert.equal(realm.webAuthnPolicyAttestationConveyancePreference, 'not specified');
      assert.equal(realm.webAuthnPolicyUserVerificationRequirement, 'not specified');
      assert.equal(realm.webAuthnPolicyCreateTimeout, 0);
      assert.equal(realm.webAuthnPolicyAvoidSameAuthenticatorRegister, false);
      assert.deepEqual(realm.webAuthnPolicyAcceptableAaguids, []);
      assert.deepEqual(realm.webAuthnPolicyExtraOrigins, []);
      await ts.kc.realms.update({ realm: REALM }, { ...realm, webAuthnPolicySignatureAlgorithms: ['ES256', 'RS256'], webAuthnPolicyUserVerificationRequirement: 'required', webAuthnPolicyExtraOrigins: ['https://app.example.com'], webAuthnPolicyRpEntityName: 'Example' } as object);
      const after = (await ts.kc.realms.findOne({ realm: REALM })) as Record<string, unknown>;
      assert.deepEqual(after.webAuthnPolicySignatureAlgorithms, ['ES256', 'RS256']);
      assert.equal(after.webAuthnPolicyUserVerificationRequirement, 'required');
      assert.deepEqual(after.webAuthnPolicyExtraOrigins, ['https://app.example.com']);
      assert.equal(after.webAuthnPolicyRpEntityName, 'Example');
      assert.equal(after.webAuthnPolicyAttestationConveyancePreference, 'not specified');
      for (const bad of [{ webAuthnPolicySignatureAlgorithms: ['RS1'] }, { webAuthnPolicyUserVerificationRequirement: 'always' }, { webAuthnPolicyExtraOrigins: ['https://app.example.com/path'] }, { webAuthnPolicyCreateTimeout: -1 }]) {
        const e = await errorOf(ts.kc.realms.update({ realm: REALM }, bad as object));
        assert.equal(e.status, 400, JSON.stringify(bad));
      }
      assert.deepEqual(((await ts.kc.realms.findOne({ realm: REALM })) as Record<string, unknown>).webAuthnPolicySignatureAlgorithms, ['ES256', 'RS256']);
    });
  });
}
