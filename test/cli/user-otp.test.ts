import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

const otp = (value: string, label: string | undefined, createdDate: number, settings = { digits: 6, period: 30, algorithm: 'HmacSHA1' }): Record<string, unknown> => ({
  type: 'otp',
  ...(label !== undefined ? { userLabel: label } : {}),
  createdDate,
  secretData: JSON.stringify({ value }),
  credentialData: JSON.stringify({ subType: 'totp', counter: 0, ...settings }),
});
const user = (n: number, username: string, credentials: unknown[]): Record<string, unknown> => ({
  id: `c1100000-0000-4000-8000-00000000000${n}`,
  username,
  enabled: true,
  email: `${username}@example.com`,
  credentials: [{ type: 'password', value: `${username} password 1` }, ...credentials],
});

// `realmgate user otp list|remove`, `user update --require-otp-setup on|off` and `user list` showing who
// has an authenticator, on the installed command (npm test builds dist/ first). The authenticators come
// from a Keycloak realm file imported with `realmgate realm import`.
for (const dialect of dialects()) {
  describe(`realmgate user otp (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-user-otp-');
    const { ok, fails } = cliRunner(() => database.url);
    const line = (username: string): string => ok(['user', 'list', 'shop', '--search', username]).trim();
    const listed = (username: string): Array<Record<string, unknown>> =>
      ok(['user', 'otp', 'list', 'shop', username, '--json'])
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);

    test('list: id, label, created, settings (text and --json), never a key; user list marks users with an authenticator', () => {
      const file = path.join(database.dir, 'shop.json');
      const realm = {
        realm: 'shop',
        enabled: true,
        organizationsEnabled: false,
        users: [
          user(1, 'bob', [otp('bob-phone-key-0123456789', 'Phone', 1_700_000_000_000), otp('JBSWY3DPEHPK3PXP', 'Tablet', 1_700_000_100_000, { digits: 8, period: 60, algorithm: 'HmacSHA256' })]),
          user(2, 'carol', [otp('carol-key-one-01234567', 'Phone', 1_700_000_000_000), otp('carol-key-two-01234567', 'Phone', 1_700_000_200_000), otp('carol-key-three-0123456', undefined, 1_700_000_300_000)]),
          user(3, 'dan', []),
        ],
      };
      fs.writeFileSync(file, JSON.stringify(realm));
      ok(['realm', 'import', file]);
      const text = ok(['user', 'otp', 'list', 'shop', 'bob']);
      const rows = text.trim().split('\n').map((l) => l.split('\t'));
      assert.equal(rows.length, 2);
      assert.match(rows[0]![0]!, /^[0-9a-f-]{36}$/);
      assert.deepEqual(rows.map((r) => r.slice(1)), [
        ['Phone', '2023-11-14T22:13:20.000Z', 'HmacSHA1/6/30s'],
        ['Tablet', '2023-11-14T22:15:00.000Z', 'HmacSHA256/8/60s'],
      ]);
      assert.doesNotMatch(text, /bob-phone-key|JBSWY3DP/);
      const json = listed('bob');
      assert.deepEqual(json.map((c) => ({ ...c, id: typeof c.id })), [
        { id: 'string', label: 'Phone', created: '2023-11-14T22:13:20.000Z', algorithm: 'HmacSHA1', digits: 6, period: 30 },
        { id: 'string', label: 'Tablet', created: '2023-11-14T22:15:00.000Z', algorithm: 'HmacSHA256', digits: 8, period: 60 },
      ]);
      assert.equal(ok(['user', 'otp', 'list', 'shop', 'dan']), '');
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled,otp');
      assert.equal(line('dan'), 'dan\tdan@example.com\tenabled');
    });

    test('remove by label or id, or --all; a label two share, an unknown one and bad usage: one line, exit 1', () => {
      const [phone] = listed('bob');
      fails(['user', 'otp', 'remove', 'shop', 'carol', 'Phone'], /2 authenticators of carol are labelled "Phone": give the id/, { status: 1 });
      fails(['user', 'otp', 'remove', 'shop', 'bob', 'Laptop'], /user bob has no authenticator with the id or label "Laptop"/, { status: 1 });
      fails(['user', 'otp', 'remove', 'shop', 'bob'], /name the authenticator to remove/, { status: 1 });
      fails(['user', 'otp', 'remove', 'shop', 'bob', 'Phone', '--all'], /either an authenticator .* or --all, not both/, { status: 1 });
      fails(['user', 'otp', 'remove', 'shop', 'nobody', 'Phone'], /user nobody does not exist in realm shop/, { status: 1 });
      fails(['user', 'otp', 'list', 'nope', 'bob'], /realm nope does not exist/, { status: 1 });
      assert.equal(listed('bob').length, 2);
      assert.equal(listed('carol').length, 3);

      assert.equal(ok(['user', 'otp', 'remove', 'shop', 'bob', 'Phone']), `removed authenticator ${String(phone!.id)} (Phone)\n`);
      assert.deepEqual(listed('bob').map((c) => c.label), ['Tablet']);
      const tablet = String(listed('bob')[0]!.id);
      ok(['user', 'otp', 'remove', 'shop', 'bob', tablet]);
      assert.deepEqual(listed('bob'), []);
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled');

      const carolPhones = listed('carol').filter((c) => c.label === 'Phone');
      ok(['user', 'otp', 'remove', 'shop', 'carol', String(carolPhones[0]!.id)]);
      assert.equal(listed('carol').length, 2);
      const out = ok(['user', 'otp', 'remove', 'shop', 'carol', '--all']);
      assert.equal(out.trim().split('\n').length, 2);
      assert.deepEqual(listed('carol'), []);
      assert.equal(ok(['user', 'otp', 'remove', 'shop', 'carol', '--all']), 'carol has no authenticator\n');
      // Each removal is a REMOVE_TOTP event of the user, and an admin event.
      const events = ok(['events', 'shop', '--json']).trim().split('\n').map((l) => JSON.parse(l) as { type: string; username: string });
      assert.equal(events.filter((e) => e.type === 'REMOVE_TOTP' && e.username === 'carol').length, 3);
      assert.match(ok(['admin-events', 'shop']), /ACTION\tUSER\tusers\/c1100000-0000-4000-8000-000000000002\/credentials\//);
    });

    test('update --require-otp-setup on|off adds and removes CONFIGURE_TOTP, other actions kept; a bad value: one line, exit 1', () => {
      const actions = (username: string): unknown => JSON.parse(ok(['realm', 'export', 'shop'])).users.find((u: { username: string }) => u.username === username).requiredActions;
      ok(['user', 'update', 'shop', 'dan', '--require-otp-setup', 'on']);
      assert.deepEqual(actions('dan'), ['CONFIGURE_TOTP']);
      ok(['user', 'update', 'shop', 'dan', '--require-otp-setup', 'on']);
      assert.deepEqual(actions('dan'), ['CONFIGURE_TOTP'], 'once');
      ok(['user', 'set-password', 'shop', 'dan', '--password', 'dan temporary 1', '--temporary']);
      assert.deepEqual(actions('dan'), ['UPDATE_PASSWORD', 'CONFIGURE_TOTP']);
      ok(['user', 'update', 'shop', 'dan', '--require-otp-setup', 'off']);
      assert.deepEqual(actions('dan'), ['UPDATE_PASSWORD']);
      fails(['user', 'update', 'shop', 'dan', '--require-otp-setup', 'maybe'], /--require-otp-setup takes on or off/, { status: 1 });
      assert.deepEqual(actions('dan'), ['UPDATE_PASSWORD']);
      assert.match(ok(['user', 'update', '--help']), /--require-otp-setup <on\|off>/);
      assert.match(ok(['user', 'otp', 'remove', '--help']), /--all/);
    });
  });
}
