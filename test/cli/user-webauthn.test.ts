import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { SoftKey } from '../helpers/webauthn.js';

const webauthn = (key: SoftKey, label: string | undefined, createdDate: number): Record<string, unknown> => ({
  type: 'webauthn',
  ...(label !== undefined ? { userLabel: label } : {}),
  createdDate,
  secretData: '{}',
  credentialData: JSON.stringify({ aaguid: 'cb69481e-8ff7-4039-93ec-0a2729a154a8', credentialId: key.credentialId.toString('base64'), credentialPublicKey: key.coseKey().toString('base64'), counter: 7, attestationStatementFormat: 'none', transports: ['usb'] }),
});
const user = (n: number, username: string, credentials: unknown[]): Record<string, unknown> => ({
  id: `c1200000-0000-4000-8000-00000000000${n}`,
  username,
  enabled: true,
  email: `${username}@example.com`,
  credentials: [{ type: 'password', value: `${username} password 1` }, ...credentials],
});

// `realmgate user webauthn list|remove` and `user update --require-webauthn-setup on|off`, on the
// installed command (npm test builds dist/ first). The keys come from a Keycloak realm file.
for (const dialect of dialects()) {
  describe(`realmgate user webauthn (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-user-webauthn-');
    const { ok, fails } = cliRunner(() => database.url);
    const listed = (username: string): Array<Record<string, unknown>> =>
      ok(['user', 'webauthn', 'list', 'keys', username, '--json'])
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const bobKey = new SoftKey('ES256');
    const bobRs = new SoftKey('RS256');

    test('list: id, label, added, algorithm, AAGUID, counter, transports (text and --json)', () => {
      const file = path.join(database.dir, 'keys.json');
      const realm = {
        realm: 'keys',
        enabled: true,
        organizationsEnabled: false,
        webAuthnPolicySignatureAlgorithms: ['ES256', 'RS256'],
        users: [
          user(1, 'bob', [webauthn(bobKey, 'Blue', 1_700_000_000_000), webauthn(bobRs, 'Laptop', 1_700_000_100_000)]),
          user(2, 'carol', [webauthn(new SoftKey(), 'Key', 1_700_000_000_000), webauthn(new SoftKey(), 'Key', 1_700_000_200_000), webauthn(new SoftKey(), undefined, 1_700_000_300_000)]),
          user(3, 'dan', []),
          user(4, 'erin', [{ ...webauthn(new SoftKey(), 'Pass', 1_700_000_000_000), type: 'webauthn-passwordless' }]),
          { ...user(5, 'fay', []), credentials: [] },
        ],
      };
      fs.writeFileSync(file, JSON.stringify(realm));
      ok(['realm', 'import', file]);
      const rows = ok(['user', 'webauthn', 'list', 'keys', 'bob']).trim().split('\n').map((l) => l.split('\t'));
      assert.equal(rows.length, 2);
      assert.match(rows[0]![0]!, /^[0-9a-f-]{36}$/);
      assert.deepEqual(rows.map((r) => r.slice(1)), [
        ['Blue', '2023-11-14T22:13:20.000Z', 'ES256', 'cb69481e-8ff7-4039-93ec-0a2729a154a8', '7', 'usb'],
        ['Laptop', '2023-11-14T22:15:00.000Z', 'RS256', 'cb69481e-8ff7-4039-93ec-0a2729a154a8', '7', 'usb'],
      ]);
      const json = listed('bob');
      assert.equal(json[0]!.credentialId, bobKey.credentialId.toString('base64url'));
      assert.equal(json[0]!.publicKey, bobKey.coseKey().toString('base64'));
      assert.equal(json[0]!.counter, 7);
      assert.equal(ok(['user', 'webauthn', 'list', 'keys', 'dan']), '');
      // user list marks who has a security key, a passkey, no password.
      const states = Object.fromEntries(ok(['user', 'list', 'keys']).trim().split('\n').map((l) => l.split('\t')).map((r) => [r[0], r[2]]));
      assert.deepEqual(states, { bob: 'enabled,webauthn', carol: 'enabled,webauthn', dan: 'enabled', erin: 'enabled,passkey', fay: 'enabled,no-password' });
    });

    test('remove by label or id, or --all; a label two share, an unknown one and bad usage: one line, exit 1', () => {
      const [blue] = listed('bob');
      fails(['user', 'webauthn', 'remove', 'keys', 'carol', 'Key'], /2 security keys of carol are labelled "Key": give the id/, { status: 1 });
      fails(['user', 'webauthn', 'remove', 'keys', 'bob', 'Phone'], /user bob has no security key with the id or label "Phone"/, { status: 1 });
      fails(['user', 'webauthn', 'remove', 'keys', 'bob'], /name the security key to remove/, { status: 1 });
      fails(['user', 'webauthn', 'remove', 'keys', 'bob', 'Blue', '--all'], /either a security key .* or --all, not both/, { status: 1 });
      fails(['user', 'webauthn', 'remove', 'keys', 'nobody', 'Blue'], /user nobody does not exist in realm keys/, { status: 1 });
      assert.equal(ok(['user', 'webauthn', 'remove', 'keys', 'bob', 'Blue']), `removed security key ${String(blue!.id)} (Blue)\n`);
      assert.deepEqual(listed('bob').map((c) => c.label), ['Laptop']);
      ok(['user', 'webauthn', 'remove', 'keys', 'bob', String(listed('bob')[0]!.id)]);
      assert.deepEqual(listed('bob'), []);
      assert.equal(ok(['user', 'webauthn', 'remove', 'keys', 'carol', '--all']).trim().split('\n').length, 3);
      assert.equal(ok(['user', 'webauthn', 'remove', 'keys', 'carol', '--all']), 'carol has no security key\n');
      const events = ok(['events', 'keys', '--json']).trim().split('\n').map((l) => JSON.parse(l) as { type: string; username: string });
      assert.equal(events.filter((e) => e.type === 'REMOVE_CREDENTIAL' && e.username === 'carol').length, 3);
      assert.match(ok(['admin-events', 'keys']), /ACTION\tUSER\tusers\/c1200000-0000-4000-8000-000000000002\/credentials\//);
    });

    test('update --require-webauthn-setup on|off adds and removes webauthn-register; --help says so', () => {
      const actions = (username: string): unknown => JSON.parse(ok(['realm', 'export', 'keys'])).users.find((u: { username: string }) => u.username === username).requiredActions;
      ok(['user', 'update', 'keys', 'dan', '--require-webauthn-setup', 'on']);
      assert.deepEqual(actions('dan'), ['webauthn-register']);
      ok(['user', 'update', 'keys', 'dan', '--require-otp-setup', 'on']);
      assert.deepEqual(actions('dan'), ['CONFIGURE_TOTP', 'webauthn-register']);
      ok(['user', 'update', 'keys', 'dan', '--require-webauthn-setup', 'off']);
      assert.deepEqual(actions('dan'), ['CONFIGURE_TOTP']);
      fails(['user', 'update', 'keys', 'dan', '--require-webauthn-setup', 'maybe'], /--require-webauthn-setup takes on or off/, { status: 1 });
      assert.match(ok(['user', 'update', '--help']), /--require-webauthn-setup <on\|off>/);
      assert.match(ok(['user', 'webauthn', '--help']), /list .*\n.*remove/s);
      assert.match(ok(['user', 'webauthn', 'remove', '--help']), /--all/);
    });
  });
}
