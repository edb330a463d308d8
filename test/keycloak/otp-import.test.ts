import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { hasOathtool, oathtoolCodeWith } from '../helpers/otp.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { verifyUserOtp } from '../../src/admin/operations/otp.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { ImportReport } from '../../src/admin/keycloak/import-report.js';
import type { OtpAlgorithm } from '../../src/storage/types.js';

const actor = { ...cliActor(), via: 'import' as const };
const RP = 'https://rp.example.com/callback';
/** 2026-01-01T00:00:00Z: every code is computed for this moment, by oathtool and by Realmgate. */
const T = 1_767_225_600;

type Settings = { algorithm: OtpAlgorithm; digits: number; period: number };
const otp = (value: string, s: Settings & { secretEncoding?: string; subType?: string }, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'otp',
  createdDate: 1_700_000_000_123,
  secretData: JSON.stringify({ value }),
  credentialData: JSON.stringify({ subType: s.subType ?? 'totp', digits: s.digits, counter: 0, period: s.period, algorithm: s.algorithm, ...(s.secretEncoding ? { secretEncoding: s.secretEncoding } : {}) }),
  ...extra,
});
const password = (username: string): Record<string, unknown> => ({ type: 'password', value: `${username} password 1` });
const user = (n: number, username: string, more: Record<string, unknown>): Record<string, unknown> => ({ id: `0fa00000-0000-4000-8000-00000000000${n}`, username, enabled: true, ...more });

// Keycloak's default: a 20-character key kept as text, used as its UTF-8 bytes.
const ANN_SECRET = 'Xq7mZ2pL9vR4tY8wK3nB';
const ANN: Settings = { algorithm: 'HmacSHA1', digits: 6, period: 30 };
// secretEncoding BASE32: the key is what the base32 text decodes to.
const BO_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const BO: Settings = { algorithm: 'HmacSHA256', digits: 8, period: 60 };
const CY_SECRET = 'sha512-key-of-cy-0123456789';
const CY: Settings = { algorithm: 'HmacSHA512', digits: 6, period: 15 };

// Keycloak's otp credentials move with a realm file (and the admin API's partialImport): the key read as
// Keycloak reads it (checked against oathtool, an independent TOTP implementation), the settings, the
// label and the date kept; what cannot move is a report line saying why. The export with secrets writes
// them back as Keycloak reads them: imported again, the same codes are accepted.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: OTP credentials (${dialect})`, { skip: hasOathtool() ? false : 'oathtool is not installed (Debian package oathtool): it is the independent oracle of the codes' }, () => {
    let ts: AdminTestServer;
    let report: ImportReport;
    before(async () => {
      ts = await startAdminServer({ dialect });
      const rep = {
        realm: 'otp',
        enabled: true,
        organizationsEnabled: false,
        otpPolicyType: 'totp',
        otpPolicyAlgorithm: 'HmacSHA256',
        otpPolicyDigits: 8,
        otpPolicyPeriod: 30,
        otpPolicyLookAheadWindow: 1,
        clients: [{ clientId: 'app', publicClient: true, redirectUris: [RP] }],
        users: [
          user(1, 'ann', { totp: true, credentials: [password('ann'), otp(ANN_SECRET, ANN, { userLabel: 'Ann phone' })] }),
          user(2, 'bo', { totp: true, credentials: [otp(BO_SECRET, { ...BO, secretEncoding: 'BASE32' }), password('bo')] }),
          user(3, 'cy', {
            totp: true,
            credentials: [
              password('cy'),
              otp('hotp-key-1234567890', { ...ANN, subType: 'hotp' }, { userLabel: 'Token' }),
              otp('md5-key-1234567890', { ...ANN, algorithm: 'HmacMD5' as OtpAlgorithm }),
              { type: 'otp', secretData: '{"value": "x"', credentialData: '{}' },
              otp(CY_SECRET, CY, { userLabel: 'bell\x07' }),
            ],
          }),
          user(4, 'di', { totp: true, requiredActions: ['CONFIGURE_TOTP', 'TERMS_AND_CONDITIONS'], credentials: [password('di')] }),
        ],
      };
      report = await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor);
    });
    after(() => ts.close());

    const lines = () => report.realms[0]!.lines;
    const lineOf = (element: string) => lines().find((l) => l.element === element);
    const userOf = async (realm: string, name: string) => (await ts.store.users.findByUsername(realm, name))!;
    /** Whether Realmgate accepts, at T, the code oathtool computes for this key (each code once). */
    const accepts = async (realm: string, name: string, key: Buffer | { base32: string }, s: Settings, at = T): Promise<boolean> =>
      verifyUserOtp(ts.store, await userOf(realm, name), oathtoolCodeWith(key, s, at), at);

    test('a UTF-8 key (Keycloak\'s default) moves with its label, date and settings: the codes oathtool computes from its bytes are accepted', async () => {
      assert.equal(report.realms[0]!.status, 'imported', report.realms[0]!.reason);
      const ann = await userOf('otp', 'ann');
      const [c] = await ts.store.otp.list(ann.id);
      assert.deepEqual({ label: c!.label, createdAt: c!.createdAt, algorithm: c!.algorithm, digits: c!.digits, period: c!.period }, { label: 'Ann phone', createdAt: 1_700_000_000, ...ANN });
      assert.ok(!c!.sealedSecret.includes(ANN_SECRET) && !c!.sealedSecret.includes(Buffer.from(ANN_SECRET).toString('base64url')), 'sealed, not in clear');
      assert.equal(await accepts('otp', 'ann', Buffer.from(ANN_SECRET, 'utf8'), ANN), true);
      // Once only, and a code of another key is refused.
      assert.equal(await accepts('otp', 'ann', Buffer.from(ANN_SECRET, 'utf8'), ANN), false);
      assert.equal(await accepts('otp', 'ann', Buffer.from('another key entirely', 'utf8'), ANN, T + 300), false);
      assert.match(lineOf('user ann')!.reason!, /1 authenticator app\(s\) \(TOTP\) moved/);
      assert.doesNotMatch(JSON.stringify(report), new RegExp(ANN_SECRET), 'no key in the report');
    });

    test('secretEncoding BASE32: the key is the decoded bytes (oathtool -b), not the text; HmacSHA256, 8 digits, 60 s kept', async () => {
      const bo = await userOf('otp', 'bo');
      const [c] = await ts.store.otp.list(bo.id);
      assert.deepEqual({ algorithm: c!.algorithm, digits: c!.digits, period: c!.period, label: c!.label }, { ...BO, label: null });
      // Read as UTF-8 text, the same value would give other codes: they are refused.
      assert.equal(await accepts('otp', 'bo', Buffer.from(BO_SECRET, 'utf8'), BO), false);
      assert.equal(await accepts('otp', 'bo', { base32: BO_SECRET }, BO), true);
    });

    test('HOTP, an unknown algorithm and bad JSON are skipped, each with why; the user moves with the rest (a bad label left out)', async () => {
      const cy = await userOf('otp', 'cy');
      const stored = await ts.store.otp.list(cy.id);
      assert.equal(stored.length, 1);
      assert.deepEqual({ algorithm: stored[0]!.algorithm, digits: stored[0]!.digits, period: stored[0]!.period, label: stored[0]!.label }, { ...CY, label: null });
      assert.equal(await accepts('otp', 'cy', Buffer.from(CY_SECRET, 'utf8'), CY), true);
      const skipped = lines().filter((l) => l.element.startsWith('user cy otp credential'));
      assert.deepEqual(
        skipped.map((l) => [l.element, l.outcome]),
        [
          ['user cy otp credential 1 "Token"', 'skipped'],
          ['user cy otp credential 2', 'skipped'],
          ['user cy otp credential 3', 'skipped'],
          ['user cy otp credential 4 "bell\\u0007"', 'mapped'],
        ],
      );
      assert.match(skipped[0]!.reason!, /counter-based \(HOTP\)/);
      assert.match(skipped[1]!.reason!, /algorithm "HmacMD5" is not one of HmacSHA1, HmacSHA256, HmacSHA512/);
      assert.match(skipped[2]!.reason!, /secretData is not JSON/);
      assert.match(skipped[3]!.reason!, /label left out: .*control characters/);
      assert.equal(lineOf('user cy')!.outcome, 'mapped');
    });

    test('CONFIGURE_TOTP and TERMS_AND_CONDITIONS are kept; totp true without an otp credential says so; a realm OTP policy other than the defaults is one line', async () => {
      const di = await userOf('otp', 'di');
      assert.deepEqual(di.requiredActions, ['CONFIGURE_TOTP', 'TERMS_AND_CONDITIONS']);
      const reason = lineOf('user di')!.reason!;
      assert.match(reason, /TERMS_AND_CONDITIONS kept: the realm's terms are accepted at the next sign-in/);
      assert.match(reason, /CONFIGURE_TOTP kept: an authenticator app is set up at the next sign-in/);
      assert.match(reason, /totp true in Keycloak, but the file has no otp credential/);
      const policy = lineOf('realm setting otpPolicy')!;
      assert.equal(policy.outcome, 'mapped');
      assert.match(policy.reason!, /^otpPolicyAlgorithm "HmacSHA256", otpPolicyDigits 8: .*new authenticators are set up with HmacSHA1, 6 digits, 30 s.*imported authenticators keep their own/);
    });

    test('export with secrets: otp credentials Keycloak reads (base32, secretEncoding BASE32); imported again, the same codes are accepted; without secrets, no key', async () => {
      const full = await exportRealm(ts.store, 'otp', { withSecrets: true });
      const users = full.users as Array<Record<string, unknown>>;
      const bo = users.find((u) => u.username === 'bo')!;
      assert.equal(bo.totp, true);
      const [cred] = (bo.credentials as Array<Record<string, unknown>>).filter((c) => c.type === 'otp');
      assert.deepEqual(JSON.parse(cred!.credentialData as string), { subType: 'totp', digits: 8, counter: 0, period: 60, algorithm: 'HmacSHA256', secretEncoding: 'BASE32' });
      assert.deepEqual(JSON.parse(cred!.secretData as string), { value: BO_SECRET });
      const ann = users.find((u) => u.username === 'ann')!;
      const [annCred] = (ann.credentials as Array<Record<string, unknown>>).filter((c) => c.type === 'otp');
      assert.equal(annCred!.userLabel, 'Ann phone');
      assert.equal(annCred!.createdDate, 1_700_000_000_000);
      const bare = await exportRealm(ts.store, 'otp', { withSecrets: false });
      const text = JSON.stringify(bare);
      assert.doesNotMatch(text, /secretData|"type":"otp"/);
      assert.equal((bare.users as Array<Record<string, unknown>>).find((u) => u.username === 'ann')!.totp, true);

      const again = await importKeycloakRealms(ts.store, [full], { ifExists: 'overwrite' }, actor);
      assert.equal(again.realms[0]!.status, 'overwritten', again.realms[0]!.reason);
      const later = T + 3600;
      assert.equal(await accepts('otp', 'ann', Buffer.from(ANN_SECRET, 'utf8'), ANN, later), true);
      assert.equal(await accepts('otp', 'bo', { base32: BO_SECRET }, BO, later), true);
      assert.equal(await accepts('otp', 'cy', Buffer.from(CY_SECRET, 'utf8'), CY, later), true);
      const [reimported] = await ts.store.otp.list((await userOf('otp', 'ann')).id);
      assert.deepEqual({ label: reimported!.label, createdAt: reimported!.createdAt }, { label: 'Ann phone', createdAt: 1_700_000_000 });
    });

    test("the admin API's partialImport moves otp credentials too", async () => {
      await ts.kc.realms.create({ realm: 'otp-partial', enabled: true, organizationsEnabled: false } as never);
      const eve = user(5, 'eve', { credentials: [password('eve'), otp(ANN_SECRET, ANN, { userLabel: 'Eve phone' })], requiredActions: ['CONFIGURE_TOTP'] });
      const r = await ts.kc.realms.partialImport({ realm: 'otp-partial', rep: { ifResourceExists: 'FAIL', users: [eve] } as never });
      assert.equal(r.added, 1);
      const stored = await userOf('otp-partial', 'eve');
      assert.deepEqual(stored.requiredActions, ['CONFIGURE_TOTP']);
      assert.deepEqual((await ts.store.otp.list(stored.id)).map((c) => c.label), ['Eve phone']);
      assert.equal(await accepts('otp-partial', 'eve', Buffer.from(ANN_SECRET, 'utf8'), ANN), true);
      assert.equal((await ts.kc.users.findOne({ realm: 'otp-partial', id: stored.id }))!.totp, true);
    });
  });
}
