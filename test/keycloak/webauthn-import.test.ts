import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { checkWebAuthnAssertion, issueChallenge } from '../../src/admin/operations/webauthn.js';
import type { ImportReport } from '../../src/admin/keycloak/import-report.js';
import { SoftKey, assertWith, cbor } from '../helpers/webauthn.js';

const actor = { ...cliActor(), via: 'import' as const };
const AAGUID = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';

/** A webauthn credential as a Keycloak export writes it (WebAuthnCredentialData, base64 members). */
function webauthn(key: SoftKey, extra: Record<string, unknown> = {}, data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'webauthn',
    userLabel: 'YubiKey 5',
    createdDate: 1_700_000_000_123,
    secretData: '{}',
    credentialData: JSON.stringify({ aaguid: AAGUID, credentialId: key.credentialId.toString('base64'), credentialPublicKey: key.coseKey().toString('base64'), counter: 5, attestationStatement: 'v2...', attestationStatementFormat: 'packed', transports: ['usb', 'nfc'], ...data }),
    ...extra,
  };
}

// Keycloak's webauthn credentials move with a realm file: a key keeps signing in while the RP ID is the
// same (here the realm's webAuthnPolicyRpId), its counter goes on from the file's; the export writes them
// back in Keycloak's shape, which imports again. What cannot move is a report line saying why.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: webauthn credentials (${dialect})`, () => {
    let ts: AdminTestServer;
    let report: ImportReport;
    const kimKey = new SoftKey('ES256');
    const rsKey = new SoftKey('RS256');
    before(async () => {
      ts = await startAdminServer({ dialect });
      kimKey.signCount = 5;
      const es384 = cbor(new Map<number, number | Buffer>([[1, 2], [3, -35], [-1, 2], [-2, Buffer.alloc(48, 1)], [-3, Buffer.alloc(48, 2)]]));
      const rep = {
        realm: 'wa',
        enabled: true,
        organizationsEnabled: false,
        webAuthnPolicyRpEntityName: 'Example Corp',
        webAuthnPolicySignatureAlgorithms: ['ES256', 'RS256', 'ES384'],
        webAuthnPolicyRpId: 'localhost',
        webAuthnPolicyUserVerificationRequirement: 'preferred',
        webAuthnPolicyExtraOrigins: ['https://app.example.com'],
        webAuthnPolicyPasswordlessRpEntityName: 'keycloak',
        webAuthnPolicyPasswordlessSignatureAlgorithms: ['ES256', 'RS256'],
        webAuthnPolicyPasswordlessRequireResidentKey: 'Yes',
        webAuthnPolicyPasswordlessUserVerificationRequirement: 'required',
        users: [
          { id: '0fb00000-0000-4000-8000-000000000001', username: 'kim', enabled: true, requiredActions: ['webauthn-register'], credentials: [{ type: 'password', value: 'kim password 1' }, webauthn(kimKey), webauthn(rsKey, { userLabel: undefined }, { aaguid: 'not-a-uuid', counter: 0, transports: ['usb', 'carrier-pigeon'] })] },
          {
            id: '0fb00000-0000-4000-8000-000000000002',
            username: 'lou',
            enabled: true,
            credentials: [
              { type: 'password', value: 'lou password 1' },
              { type: 'webauthn', credentialData: '{"credentialId": ', secretData: '{}' },
              webauthn(new SoftKey(), {}, { credentialPublicKey: es384.toString('base64') }),
              { ...webauthn(new SoftKey()), type: 'webauthn-passwordless' },
            ],
          },
        ],
      };
      report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor);
    });
    after(() => ts.close());

    const lines = () => report.realms[0]!.lines;
    const lineOf = (element: string) => lines().find((l) => l.element === element);
    const userOf = async (realm: string, name: string) => (await ts.store.users.findByUsername(realm, name))!;
    /** An assertion of `key` checked as the sign-in page checks it (the realm's RP ID, AUTH_URL's origin). */
    async function signsIn(realmId: string, name: string, key: SoftKey, o: { signCount?: number } = {}): Promise<boolean> {
      const realm = (await ts.store.realms.get(realmId))!;
      const user = await userOf(realmId, name);
      const challenge = await issueChallenge(ts.store, realm, `test:${user.id}`, 'get');
      const a = assertWith(key, { challenge, origin: new URL(ts.config.authUrl).origin, rpId: 'localhost', ...o });
      const b = (k: string): Buffer => Buffer.from(a[k]!, 'base64url');
      const r = await checkWebAuthnAssertion(ts.store, ts.config, { realm, user, boundTo: `test:${user.id}`, credentialId: b('credential_id'), clientDataJSON: b('client_data_json'), authenticatorData: b('authenticator_data'), signature: b('signature') });
      return r.ok;
    }

    test('a key moves with its label, date, AAGUID, counter, format and transports; it signs in (counter on from the file\'s); the policy kept', async () => {
      assert.equal(report.realms[0]!.status, 'imported', report.realms[0]!.reason);
      const kim = await userOf('wa', 'kim');
      const keys = await ts.store.webauthn.list(kim.id);
      assert.equal(keys.length, 2);
      const es = keys.find((k) => k.alg === -7)!;
      assert.deepEqual({ label: es.label, createdAt: es.createdAt, aaguid: es.aaguid, signCount: es.signCount, format: es.attestationFormat, transports: es.transports }, { label: 'YubiKey 5', createdAt: 1_700_000_000, aaguid: AAGUID, signCount: 5, format: 'packed', transports: ['usb', 'nfc'] });
      assert.ok(es.credentialId.equals(kimKey.credentialId));
      const rs = keys.find((k) => k.alg === -257)!;
      assert.deepEqual({ label: rs.label, aaguid: rs.aaguid, transports: rs.transports }, { label: null, aaguid: '00000000-0000-0000-0000-000000000000', transports: ['usb'] });
      assert.deepEqual(kim.requiredActions, ['webauthn-register']);
      assert.match(lineOf('user kim')!.reason!, /2 security key\(s\) \(webauthn\) moved/);
      assert.match(lineOf('user kim')!.reason!, /webauthn-register kept/);
      // The counter must go on from 5.
      assert.equal(await signsIn('wa', 'kim', kimKey, { signCount: 5 }), false);
      assert.equal(await signsIn('wa', 'kim', kimKey), true);
      assert.equal(await signsIn('wa', 'kim', rsKey), true);
      const realm = (await ts.store.realms.get('wa'))!;
      assert.deepEqual(realm.webAuthnPolicy.signatureAlgorithms, ['ES256', 'RS256']);
      assert.equal(realm.webAuthnPolicy.rpId, 'localhost');
      assert.equal(realm.webAuthnPolicy.rpEntityName, 'Example Corp');
      assert.deepEqual(realm.webAuthnPolicy.extraOrigins, ['https://app.example.com']);
      assert.match(lineOf('realm setting webAuthnPolicySignatureAlgorithms')!.reason!, /ES384 not verified by Realmgate/);
      // The passwordless policy moves too (its own fields).
      assert.equal(realm.webAuthnPasswordlessPolicy.requireResidentKey, 'Yes');
      assert.deepEqual(realm.webAuthnPasswordlessPolicy.signatureAlgorithms, ['ES256', 'RS256']);
      assert.match(lineOf('realm setting webAuthnPolicyPasswordless')!.reason!, /passkeys \(passwordless\): .*requireResidentKey/);
    });

    test('bad JSON and an algorithm Realmgate does not verify are skipped, each with why; a webauthn-passwordless key moves as a passkey', async () => {
      const lou = await userOf('wa', 'lou');
      const keys = await ts.store.webauthn.list(lou.id);
      assert.deepEqual(keys.map((k) => k.passwordless), [true]);
      const skipped = lines().filter((l) => l.element.startsWith('user lou webauthn credential'));
      assert.deepEqual(skipped.map((l) => [l.element, l.outcome]), [
        ['user lou webauthn credential 1', 'skipped'],
        ['user lou webauthn credential 2 "YubiKey 5"', 'skipped'],
      ]);
      assert.match(skipped[0]!.reason!, /credentialData is not JSON/);
      assert.match(skipped[1]!.reason!, /algorithm -35 is not supported/);
      assert.match(lineOf('user lou')!.reason!, /1 passkey\(s\) \(webauthn-passwordless\) moved/);
      assert.doesNotMatch(JSON.stringify(report), /credential webauthn(-passwordless)? not moved/);
    });

    test('the export writes them in Keycloak\'s shape (with or without secrets), and they import again and sign in', async () => {
      for (const withSecrets of [false, true]) {
        const out = await exportRealm(ts.store, 'wa', { withSecrets });
        assert.deepEqual(out.webAuthnPolicySignatureAlgorithms, ['ES256', 'RS256']);
        assert.equal(out.webAuthnPolicyRpId, 'localhost');
        const kim = (out.users as Array<Record<string, unknown>>).find((u) => u.username === 'kim')!;
        const creds = (kim.credentials as Array<Record<string, string>>).filter((c) => c.type === 'webauthn');
        assert.equal(creds.length, 2);
        const es = creds.find((c) => c.userLabel === 'YubiKey 5')!;
        assert.equal(es.secretData, '{}');
        const data = JSON.parse(es.credentialData!) as Record<string, unknown>;
        assert.equal(data.credentialId, kimKey.credentialId.toString('base64'));
        assert.equal(data.credentialPublicKey, kimKey.coseKey().toString('base64'));
        assert.equal(data.aaguid, AAGUID);
        assert.equal(data.counter, kimKey.signCount);
        assert.equal(data.attestationStatementFormat, 'packed');
        assert.deepEqual(data.transports, ['usb', 'nfc']);
      }
      const out = await exportRealm(ts.store, 'wa', { withSecrets: true });
      // Another realm of the same server: the users get new ids (ids are unique across realms).
      const users = (out.users as Array<Record<string, unknown>>).map((u) => ({ ...u, id: String(u.id).replace(/^0fb/, '0fc') }));
      const again = await importKeycloakRealms(ts.store, [{ ...out, realm: 'wa2', id: 'wa2', users }], { ifExists: 'fail' }, actor);
      assert.equal(again.realms[0]!.status, 'imported', again.realms[0]!.reason);
      assert.equal(await signsIn('wa2', 'kim', kimKey), true);
    });
  });
}
